// Room history and recovery on the real Server over real sockets: positions on broadcasts
// to rooms that keep history, recovery through join_room.since and $hello.positions with
// every answer docs/protocol.md lists, the replay bounds, live messages during a replay,
// and $history. The clients are plain `ws` sockets speaking protocol version 1.
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  OnConnect,
  RoomsController,
  SocketController,
  type Server,
  type ServerConfigOptions,
} from '../src/index';
import { TestClient, cleanup, startServer, type Envelope } from './helpers';

afterEach(cleanup);

interface Pos {
  room: string;
  namespace: string;
  epoch: string;
  offset: number;
}

interface Message extends Envelope {
  id?: unknown;
  seq?: number;
  pos?: Pos;
}

const CHAT = { match: 'chat:*', size: 5, ttl: 60_000 };

async function setup(
  config: ServerConfigOptions = {},
  controllers: SocketController[] = [],
): Promise<{ server: Server; url: string }> {
  const { server, wsUrl } = await startServer([new RoomsController(), ...controllers], {
    shutdown_timeout: 200,
    history: [CHAT],
    ...config,
  });
  return { server, url: wsUrl };
}

/** A version 1 client that said $hello (with `data`) and got $welcome. */
async function v1(url: string, data: Record<string, unknown> = { v: 1 }): Promise<TestClient> {
  const client = await TestClient.connect(url, {}, ['pkg.v1']);
  client.sendRaw(JSON.stringify({ event: '$hello', data }));
  const welcome = await client.next();
  expect(welcome.event).toBe('$welcome');
  return client;
}

const request = (client: TestClient, event: string, data: unknown, id: unknown): void =>
  client.sendRaw(JSON.stringify({ event, data, id }));

/** Joins a room through RoomsController and waits for the answer. */
async function join(client: TestClient, data: Record<string, unknown>, id = 'j'): Promise<Message> {
  request(client, 'join_room', data, id);
  for (;;) {
    const m = (await client.next()) as Message;
    if (m.id === id) return m;
  }
}

/** The next envelopes up to and including the first of `event`. */
async function until(client: TestClient, event: string): Promise<Message[]> {
  const out: Message[] = [];
  for (;;) {
    const m = (await client.next()) as Message;
    out.push(m);
    if (m.event === event) return out;
  }
}

describe('positions on broadcasts', () => {
  it('numbers every broadcast to a room with history, from 1, in one epoch, and leaves other rooms alone', async () => {
    const { server, url } = await setup();
    const a = await v1(url);
    await join(a, { room: 'chat:1' });
    await join(a, { room: 'plain' }, 'j2');
    server.broadcast('msg', { n: 1 }, { room: 'chat:1' });
    server.broadcast('msg', { n: 2 }, { room: 'chat:1' });
    server.broadcast('msg', { n: 3 }, { room: 'plain' });
    const got = [
      (await a.next('msg')) as Message,
      (await a.next('msg')) as Message,
      (await a.next('msg')) as Message,
    ];
    expect(got[0]!.pos).toEqual({
      room: 'chat:1',
      namespace: '/',
      epoch: expect.any(String),
      offset: 1,
    });
    expect(got[1]!.pos).toEqual({ ...got[0]!.pos, offset: 2 });
    expect(got[2]!.pos).toBeUndefined();
    expect(got.map((m) => m.data['n'])).toEqual([1, 2, 3]);
    // pos and the session's seq coexist on one envelope.
    expect(typeof got[0]!.seq).toBe('number');
  });

  it('reports each position to onPublished while broadcast still returns the local count', async () => {
    const published: unknown[] = [];
    const { server, url } = await setup();
    server.onPublished((p) => published.push(p));
    const a = await v1(url);
    await join(a, { room: 'chat:x' });
    expect(server.broadcast('msg', { n: 1 }, { room: 'chat:x' })).toBe(1);
    const m = (await a.next('msg')) as Message;
    expect(published).toEqual([
      {
        event: 'msg',
        room: 'chat:x',
        namespace: '/',
        position: { epoch: m.pos!.epoch, offset: 1 },
        delivered: 1,
      },
    ]);
  });

  it('keeps the last size messages only', async () => {
    const { server } = await setup();
    for (let n = 1; n <= 8; n += 1) server.broadcast('msg', { n }, { room: 'chat:s' });
    const h = await server.history('chat:s');
    expect(h.messages.map((m) => (m.data as { n: number }).n)).toEqual([4, 5, 6, 7, 8]);
    expect(h.messages.map((m) => m.pos.offset)).toEqual([4, 5, 6, 7, 8]);
    expect(h.position).toEqual({ offset: 8, epoch: h.messages[0]!.pos.epoch });
  });
});

describe('recovery through join_room.since', () => {
  it('replays what was missed, in order, then $recovered true, then live traffic', async () => {
    const { server, url } = await setup();
    const a = await v1(url);
    await join(a, { room: 'chat:r' });
    server.broadcast('msg', { n: 1 }, { room: 'chat:r' });
    const seen = (await a.next('msg')) as Message;
    await a.close();
    server.broadcast('msg', { n: 2 }, { room: 'chat:r' });
    server.broadcast('msg', { n: 3 }, { room: 'chat:r' });

    const b = await v1(url);
    const since = { offset: seen.pos!.offset, epoch: seen.pos!.epoch };
    request(b, 'join_room', { room: 'chat:r', since }, 'j');
    const got = await until(b, '$recovered');
    expect(got.filter((m) => m.event === 'msg').map((m) => m.data['n'])).toEqual([2, 3]);
    expect(got.at(-1)!.data).toEqual({
      room: 'chat:r',
      namespace: '/',
      recovered: true,
      replayed: 2,
      position: { offset: 3, epoch: seen.pos!.epoch },
    });
    server.broadcast('msg', { n: 4 }, { room: 'chat:r' });
    const live = (await b.next('msg')) as Message;
    expect(live.data['n']).toBe(4);
    expect(live.pos!.offset).toBe(4);
  });
});

/** Joins every client to `chat:auto` in OnConnect, as an application that owns membership. */
class AutoJoin extends SocketController {
  @OnConnect()
  enter(clientId: string): void {
    this.joinRoom(clientId, 'chat:auto');
  }
}

describe('recovery through $hello.positions', () => {
  it('recovers a room the application joins the client to in OnConnect', async () => {
    const { server, url } = await setup({}, [new AutoJoin()]);
    const a = await v1(url);
    server.broadcast('msg', { n: 1 }, { room: 'chat:auto' });
    const seen = (await a.next('msg')) as Message;
    await a.close();
    server.broadcast('msg', { n: 2 }, { room: 'chat:auto' });

    const b = await v1(url, { v: 1, positions: [seen.pos] });
    const got = await until(b, '$recovered');
    expect(got.map((m) => m.event)).toEqual(['msg', '$recovered']);
    expect(got[0]!.data).toEqual({ n: 2 });
    expect(got[1]!.data).toMatchObject({ room: 'chat:auto', recovered: true, replayed: 1 });
  });
});
