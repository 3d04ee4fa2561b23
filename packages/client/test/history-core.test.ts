// Room history with the real @pkg/core Server (history kept in memory) over real sockets:
// the client recovers a room after a fresh session (session recovery off on the server, so
// every reconnect starts a new session and only the room positions carry it), for rooms it
// joined with joinRoom and for rooms a controller joined it to; the failures come back as
// `recovered: false` with the server's reason; `history()` reads what the server kept; and a
// resumed session with history does not deliver anything twice.
import { afterEach, describe, expect, it } from '@jest/globals';
import { RoomsController, SocketController, SocketOn } from '@pkg/core';
import type { Client, MessageInfo, RecoveredInfo } from '../src/index';
import { Recorder, cleanup, makeClient, next, startCoreServer, type CoreServer } from './helpers';
import { Network } from './history-kit';

afterEach(cleanup);

const CHAT = { match: 'chat:*', size: 5, ttl: 60_000 };

/** The application's own way into a room: the server joins the client (no joinRoom). */
class EnterController extends SocketController {
  @SocketOn('enter')
  enter(clientId: string, data: unknown): void {
    this.joinRoom(clientId, (data as { room: string }).room);
    this.emit(clientId, 'entered', { room: (data as { room: string }).room });
  }
}

interface Listen {
  'chat.said': (data: { n: number }) => void;
  entered: (data: { room: string }) => void;
}
type Emit = { enter: (data: { room: string }) => void };
type TestClient = Client<Emit, Listen>;

async function start(config: Record<string, unknown> = {}): Promise<CoreServer> {
  return startCoreServer(() => [new RoomsController(), new EnterController()], undefined, {
    history: [CHAT],
    recovery_window: 0, // no session recovery: a reconnect is a fresh session
    ...config,
  });
}

async function connected(core: CoreServer) {
  const network = new Network();
  const client: TestClient = makeClient<Emit, Listen>(core.url, { network });
  const said = new Recorder<number>();
  const offsets: Array<number | undefined> = [];
  client.on('chat.said', (data, info: MessageInfo) => {
    offsets.push(info.position?.offset);
    said.push(data.n);
  });
  await client.connect();
  return { client, network, said, offsets };
}

/** Cuts the TCP connection on the server's side and keeps the client offline until back(). */
async function cut(core: CoreServer, c: { client: TestClient; network: Network }) {
  const lost = new Promise<void>((resolve) =>
    c.client.once('disconnect', () => {
      c.network.fire('offline');
      resolve();
    }),
  );
  core.server.clients.get(c.client.id!)?.socket.terminate();
  await lost;
  return async (): Promise<void> => {
    const welcomed = next(c.client, 'connect');
    c.network.fire('online');
    await welcomed;
  };
}

const say = (core: CoreServer, room: string, from: number, to: number): void => {
  for (let n = from; n <= to; n++) core.server.broadcast('chat.said', { n }, '/', room);
};

describe('recovery with the real server', () => {
  it('recovers a joinRoom room after a fresh session: every missed message once, in order', async () => {
    const core = await start();
    const c = await connected(core);
    await c.client.joinRoom('chat:r');
    say(core, 'chat:r', 1, 2);
    await c.said.waitFor(2);
    const back = await cut(core, c);
    say(core, 'chat:r', 3, 5);
    const recovered = next<RecoveredInfo>(c.client, 'recovered');
    await back();
    expect(await recovered).toEqual({
      room: 'chat:r',
      namespace: '/',
      recovered: true,
      replayed: 3,
    });
    say(core, 'chat:r', 6, 6);
    expect(await c.said.waitFor(6)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(c.offsets).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('recovers a room that was quiet when the client entered it (its stream starts on a read)', async () => {
    const core = await start();
    const c = await connected(core);
    await c.client.joinRoom('chat:quiet');
    const before = await c.client.history('chat:quiet', { limit: 1 });
    expect(before.messages).toEqual([]);
    expect(before.position?.offset).toBe(0);
    const back = await cut(core, c);
    say(core, 'chat:quiet', 1, 3);
    const recovered = next<RecoveredInfo>(c.client, 'recovered');
    await back();
    expect(await recovered).toEqual({
      room: 'chat:quiet',
      namespace: '/',
      recovered: true,
      replayed: 3,
    });
    expect(await c.said.waitFor(3)).toEqual([1, 2, 3]);
  });

  it('recovers a room the application joined it to, through $hello.positions', async () => {
    const core = await start();
    const c = await connected(core);
    c.client.emit('enter', { room: 'chat:lobby' });
    await next(c.client, 'entered');
    say(core, 'chat:lobby', 1, 1);
    await c.said.waitFor(1);
    const back = await cut(core, c);
    say(core, 'chat:lobby', 2, 4);
    await back();
    const recovered = next<RecoveredInfo>(c.client, 'recovered');
    c.client.emit('enter', { room: 'chat:lobby' }); // the application joins it again
    expect(await recovered).toEqual({
      room: 'chat:lobby',
      namespace: '/',
      recovered: true,
      replayed: 3,
    });
    expect(await c.said.waitFor(4)).toEqual([1, 2, 3, 4]);
  });

  it('reports too_far_behind when more was missed than the room keeps, then carries on live', async () => {
    const core = await start();
    const c = await connected(core);
    await c.client.joinRoom('chat:r');
    say(core, 'chat:r', 1, 1);
    await c.said.waitFor(1);
    const back = await cut(core, c);
    say(core, 'chat:r', 2, 2 + CHAT.size);
    const recovered = next<RecoveredInfo>(c.client, 'recovered');
    await back();
    expect(await recovered).toEqual({
      room: 'chat:r',
      namespace: '/',
      recovered: false,
      reason: 'too_far_behind',
      replayed: 0,
    });
    say(core, 'chat:r', 100, 100);
    expect(await c.said.waitFor(2)).toEqual([1, 100]);
    // What is kept can be loaded instead: the last `size` messages.
    const kept = await c.client.history('chat:r');
    expect(kept.messages.map((m) => m.data)).toEqual([4, 5, 6, 7, 100].map((n) => ({ n })));
  });

  it('reports epoch_changed after the server restarted and lost its history', async () => {
    const core = await start();
    const c = await connected(core);
    await c.client.joinRoom('chat:r');
    say(core, 'chat:r', 1, 2);
    await c.said.waitFor(2);
    const recovered = next<RecoveredInfo>(c.client, 'recovered');
    await core.restart();
    say(core, 'chat:r', 3, 3); // kept in the new process's history, a new epoch
    expect(await recovered).toMatchObject({
      room: 'chat:r',
      recovered: false,
      reason: 'epoch_changed',
    });
    say(core, 'chat:r', 4, 4);
    expect(await c.said.waitFor(3)).toEqual([1, 2, 4]);
  });
});

describe('history() with the real server', () => {
  it('reads the last messages of a room, typed, with positions that match the live ones', async () => {
    const core = await start();
    const c = await connected(core);
    await c.client.joinRoom('chat:r');
    say(core, 'chat:r', 1, 3);
    await c.said.waitFor(3);
    const answer = await c.client.history('chat:r', { limit: 2 });
    // The entries are typed by the Listen map: the event narrows the data.
    const n = (m: (typeof answer.messages)[number]): number | undefined =>
      m.event === 'chat.said' ? m.data.n : undefined;
    expect(answer.messages.map((m) => [m.event, n(m), m.pos.offset])).toEqual([
      ['chat.said', 2, 2],
      ['chat.said', 3, 3],
    ]);
    expect(answer.complete).toBe(false);
    expect(answer.position).toEqual({ offset: 3, epoch: answer.messages[0]!.pos.epoch });
    const since = await c.client.history('chat:r', {
      since: { offset: 1, epoch: answer.position!.epoch },
    });
    expect(since.messages.map(n)).toEqual([2, 3]);
    expect(since.complete).toBe(true);
  });

  it('rejects forbidden for a room the client is not in', async () => {
    const core = await start();
    const c = await connected(core);
    await expect(c.client.history('chat:elsewhere')).rejects.toMatchObject({
      code: 'PKG_ERR_CLIENT_REMOTE',
      remoteCode: 'forbidden',
    });
  });
});

describe('session recovery and history together', () => {
  it('resumes the session and delivers the missed messages once', async () => {
    const core = await start({ recovery_window: 60_000 });
    const c = await connected(core);
    await c.client.joinRoom('chat:r');
    say(core, 'chat:r', 1, 2);
    await c.said.waitFor(2);
    const resumed = next<{ resumed: boolean }>(c.client, 'connect');
    const back = await cut(core, c);
    say(core, 'chat:r', 3, 4);
    await back();
    expect((await resumed).resumed).toBe(true);
    say(core, 'chat:r', 5, 5);
    expect(await c.said.waitFor(5)).toEqual([1, 2, 3, 4, 5]);
    await c.client.history('chat:r'); // a round trip: nothing else was on its way
    expect(c.said.items).toEqual([1, 2, 3, 4, 5]);
  });
});
