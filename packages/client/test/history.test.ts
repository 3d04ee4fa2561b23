// Room history on the client, over real sockets against the scripted server of
// test/history-peer.ts: the client remembers each room's last position, sends it on
// reconnect (`join_room.since` for rooms it joined, `$hello.positions` for rooms the server
// joined it to), hands the missed messages to its listeners in order and once, reports each
// room's recovery with `recovered`, and reads the kept messages with `history()`. The
// scripted server also misbehaves on purpose (duplicates, malformed positions, odd answers).
import { afterEach, describe, expect, it } from '@jest/globals';
import { HISTORY_LIMITS } from '@pkg/wire';
import {
  ClientError,
  type Client,
  type MessageInfo,
  type NetworkEvents,
  type RecoveredInfo,
} from '../src/index';
import { HistoryPeer } from './history-peer';
import { Recorder, cleanup, makeClient, next } from './helpers';

const peers: HistoryPeer[] = [];
afterEach(async () => {
  await cleanup();
  for (const p of peers.splice(0)) await p.close();
});

async function start(): Promise<HistoryPeer> {
  const peer = await HistoryPeer.start();
  peers.push(peer);
  return peer;
}

/** `online` / `offline` on demand: offline holds the client between a cut and its retry. */
class Network implements NetworkEvents {
  readonly #listeners = new Map<string, Array<() => void>>();
  addEventListener(type: string, listener: () => void): void {
    this.#listeners.set(type, [...(this.#listeners.get(type) ?? []), listener]);
  }
  removeEventListener(type: string, listener: () => void): void {
    this.#listeners.set(
      type,
      (this.#listeners.get(type) ?? []).filter((l) => l !== listener),
    );
  }
  fire(type: 'online' | 'offline'): void {
    for (const l of this.#listeners.get(type) ?? []) l();
  }
}

interface Events {
  'chat.said': (data: { n: number }) => void;
}

/** A connected client with a recorder of `chat.said` (n and position) and of `recovered`. */
async function connected(peer: HistoryPeer, options: { recovery?: boolean } = {}) {
  const network = new Network();
  const client = makeClient<Record<string, never>, Events>(peer.url, { network, ...options });
  const said = new Recorder<{ n: number; offset: number | undefined }>();
  const recovered = new Recorder<RecoveredInfo>();
  client.on('chat.said', (data, info: MessageInfo) =>
    said.push({ n: data.n, offset: info.position?.offset }),
  );
  client.on('recovered', recovered.push);
  await client.connect();
  const id = client.id!;
  return { client, network, said, recovered, id };
}

/** Cuts the client's TCP connection and holds it offline until `back()` is called. */
async function cut(
  peer: HistoryPeer,
  c: { client: Client<Record<string, never>, Events>; network: Network; id: string },
): Promise<{ back: () => Promise<string> }> {
  const lost = new Promise<void>((resolve) =>
    c.client.once('disconnect', () => {
      c.network.fire('offline');
      resolve();
    }),
  );
  peer.cut(c.id);
  await lost;
  return {
    back: async () => {
      const welcomed = next(c.client, 'connect');
      c.network.fire('online');
      await welcomed;
      return c.client.id!;
    },
  };
}

/** Waits until the client's position read after a join ($history, limit 1) was answered. */
async function waitForHistoryRequest(peer: HistoryPeer): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (peer.received.some((m) => m.event === '$history')) {
      await new Promise((r) => setTimeout(r, 20)); // its answer is on the way back
      return;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('no $history after the join');
}

const lastHello = (peer: HistoryPeer): Record<string, unknown> =>
  peer.received.filter((m) => m.event === '$hello').pop()!.data;

describe('recovery of a room joined with joinRoom', () => {
  it('sends since on the rejoin, delivers the missed messages once and in order, then reports recovered', async () => {
    const peer = await start();
    const c = await connected(peer);
    await c.client.joinRoom('r');
    for (let n = 1; n <= 3; n++) peer.publish('r', 'chat.said', { n });
    await c.said.waitFor(3);
    const away = await cut(peer, c);
    for (let n = 4; n <= 6; n++) peer.publish('r', 'chat.said', { n });
    const recovered = next<RecoveredInfo>(c.client, 'recovered');
    await away.back();
    expect(await recovered).toEqual({ room: 'r', namespace: '/', recovered: true, replayed: 3 });
    const epoch = peer.stream('r').epoch;
    const join = peer.received.filter((m) => m.event === 'join_room').pop()!;
    expect(join.data).toEqual({ room: 'r', namespace: '/', since: { offset: 3, epoch } });
    peer.publish('r', 'chat.said', { n: 7 });
    expect(await c.said.waitFor(7)).toEqual([1, 2, 3, 4, 5, 6, 7].map((n) => ({ n, offset: n })));
    // joinRoom rooms recover through since, not through $hello.positions.
    expect(lastHello(peer)['positions']).toBeUndefined();
  });

  it('recovers a room it joined before any of its messages reached it (the position read at the join)', async () => {
    const peer = await start();
    const c = await connected(peer);
    peer.publish('r', 'chat.said', { n: 0 }); // before the client is in the room
    await c.client.joinRoom('r');
    await waitForHistoryRequest(peer);
    const away = await cut(peer, c);
    peer.publish('r', 'chat.said', { n: 1 });
    peer.publish('r', 'chat.said', { n: 2 });
    const recovered = next<RecoveredInfo>(c.client, 'recovered');
    await away.back();
    expect(await recovered).toEqual({ room: 'r', namespace: '/', recovered: true, replayed: 2 });
    const join = peer.received.filter((m) => m.event === 'join_room').pop()!;
    expect(join.data).toEqual({
      room: 'r',
      namespace: '/',
      since: { offset: 1, epoch: peer.stream('r').epoch },
    });
    expect((await c.said.waitFor(2)).map((s) => s.n)).toEqual([1, 2]);
  });

  it('says recovered: false after a move when it never learnt the room position (its read got no answer)', async () => {
    const peer = await start();
    peer.answersHistory = false;
    const c = await connected(peer);
    peer.publish('r', 'chat.said', { n: 0 }); // before the client is in the room
    await c.client.joinRoom('r');
    await waitForHistoryRequest(peer);
    const away = await cut(peer, c);
    peer.publish('r', 'chat.said', { n: 1 });
    const recovered = next<RecoveredInfo>(c.client, 'recovered');
    await away.back();
    expect(await recovered).toEqual({
      room: 'r',
      namespace: '/',
      recovered: false,
      reason: 'epoch_changed',
      replayed: 0,
    });
    const join = peer.received.filter((m) => m.event === 'join_room').pop()!;
    expect(join.data).toEqual({ room: 'r', namespace: '/', since: { offset: 0, epoch: '-' } });
    peer.publish('r', 'chat.said', { n: 2 });
    expect((await c.said.waitFor(1)).map((s) => s.n)).toEqual([2]);
  });

  it('drops a message the server sends again (same epoch, offset not above the last)', async () => {
    const peer = await start();
    const c = await connected(peer);
    await c.client.joinRoom('r');
    const first = peer.publish('r', 'chat.said', { n: 1 });
    const second = peer.publish('r', 'chat.said', { n: 2 });
    peer.sendRaw(c.id, second);
    peer.sendRaw(c.id, first);
    peer.publish('r', 'chat.said', { n: 3 });
    await c.said.waitFor(3);
    await c.client.history('r'); // a round trip: everything sent before it has arrived
    expect(c.said.items.map((s) => s.n)).toEqual([1, 2, 3]);
  });

  it('takes a message of a new epoch even with a lower offset, and keeps the new epoch', async () => {
    const peer = await start();
    const c = await connected(peer);
    await c.client.joinRoom('r');
    for (let n = 1; n <= 3; n++) peer.publish('r', 'chat.said', { n });
    peer.lose('r');
    peer.publish('r', 'chat.said', { n: 4 }); // offset 1 of a new epoch
    peer.publish('r', 'chat.said', { n: 5 });
    expect((await c.said.waitFor(5)).map((s) => [s.n, s.offset])).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 1],
      [5, 2],
    ]);
  });

  it.each([
    ['epoch_changed', (peer: HistoryPeer) => peer.lose('r'), 6],
    [
      'too_far_behind',
      (peer: HistoryPeer) => {
        peer.size = 3;
      },
      7,
    ],
  ])(
    'reports recovered: false with %s, replays nothing and takes the live messages after it',
    async (reason, lose, after) => {
      const peer = await start();
      const c = await connected(peer);
      await c.client.joinRoom('r');
      peer.publish('r', 'chat.said', { n: 1 });
      await c.said.waitFor(1);
      const away = await cut(peer, c);
      lose(peer);
      for (let n = 2; n <= 6; n++) peer.publish('r', 'chat.said', { n });
      const recovered = next<RecoveredInfo>(c.client, 'recovered');
      await away.back();
      expect(await recovered).toEqual({
        room: 'r',
        namespace: '/',
        recovered: false,
        reason,
        replayed: 0,
      });
      peer.publish('r', 'chat.said', { n: 7 });
      expect((await c.said.waitFor(2)).map((s) => [s.n, s.offset])).toEqual([
        [1, 1],
        [7, after],
      ]);
    },
  );

  it('stands at the position $recovered gives when the client was ahead of the stream (invalid_position)', async () => {
    const peer = await start();
    const c = await connected(peer);
    await c.client.joinRoom('r');
    peer.publish('r', 'chat.said', { n: 1 });
    const epoch = peer.stream('r').epoch;
    // A position far past the stream's end, as a server that lost its tail could leave.
    peer.sendRaw(
      c.id,
      JSON.stringify({
        event: 'chat.said',
        data: { n: 0 },
        pos: { room: 'r', namespace: '/', epoch, offset: 50 },
      }),
    );
    await c.said.waitFor(2);
    const away = await cut(peer, c);
    const recovered = next<RecoveredInfo>(c.client, 'recovered');
    await away.back();
    expect(await recovered).toMatchObject({ recovered: false, reason: 'invalid_position' });
    peer.publish('r', 'chat.said', { n: 2 }); // offset 2: not dropped, the client moved back
    expect((await c.said.waitFor(3)).map((s) => s.n)).toEqual([1, 0, 2]);
  });

  it('forgets the position of a room it leaves, and everything on disconnect()', async () => {
    const peer = await start();
    const c = await connected(peer);
    await c.client.joinRoom('r');
    await c.client.joinRoom('s');
    peer.publish('r', 'chat.said', { n: 1 });
    peer.publish('s', 'chat.said', { n: 2 });
    await c.said.waitFor(2);
    await c.client.leaveRoom('r');
    await c.client.joinRoom('r');
    const joins = (): Array<Record<string, unknown>> =>
      peer.received.filter((m) => m.event === 'join_room').map((m) => m.data);
    expect(joins().pop()).toEqual({ room: 'r', namespace: '/' });
    c.client.disconnect();
    await c.client.connect();
    await c.client.joinRoom('s');
    expect(joins().pop()).toEqual({ room: 's', namespace: '/' });
    expect(lastHello(peer)['positions']).toBeUndefined();
  });

  it('sends no position with recovery: false, but still drops a message seen twice', async () => {
    const peer = await start();
    const c = await connected(peer, { recovery: false });
    await c.client.joinRoom('r');
    const text = peer.publish('r', 'chat.said', { n: 1 });
    peer.sendRaw(c.id, text);
    peer.publish('r', 'chat.said', { n: 2 });
    await c.said.waitFor(2);
    const away = await cut(peer, c);
    await away.back();
    await c.client.joinRoom('r');
    const join = peer.received.filter((m) => m.event === 'join_room').pop()!;
    expect(join.data).toEqual({ room: 'r', namespace: '/' });
    expect(c.said.items.map((s) => s.n)).toEqual([1, 2]);
  });
});

describe('recovery of a room the server joined the client to', () => {
  it('sends the position in $hello.positions and recovers when the server joins it again', async () => {
    const peer = await start();
    const c = await connected(peer);
    peer.serverJoin(c.id, 'lobby');
    peer.publish('lobby', 'chat.said', { n: 1 });
    await c.said.waitFor(1);
    const away = await cut(peer, c);
    peer.publish('lobby', 'chat.said', { n: 2 });
    peer.publish('lobby', 'chat.said', { n: 3 });
    const id = await away.back();
    const epoch = peer.stream('lobby').epoch;
    expect(lastHello(peer)['positions']).toEqual([
      { room: 'lobby', namespace: '/', offset: 1, epoch },
    ]);
    const recovered = next<RecoveredInfo>(c.client, 'recovered');
    peer.serverJoin(id, 'lobby');
    expect(await recovered).toEqual({
      room: 'lobby',
      namespace: '/',
      recovered: true,
      replayed: 2,
    });
    expect((await c.said.waitFor(3)).map((s) => s.n)).toEqual([1, 2, 3]);
  });

  it(`sends at most ${HISTORY_LIMITS.maxHelloPositions} positions, the most recently updated`, async () => {
    const peer = await start();
    const c = await connected(peer);
    const count = HISTORY_LIMITS.maxHelloPositions + 5;
    for (let i = 0; i < count; i++) {
      peer.serverJoin(c.id, `room-${i}`);
      peer.publish(`room-${i}`, 'chat.said', { n: i });
    }
    await c.said.waitFor(count);
    const away = await cut(peer, c);
    await away.back();
    const positions = lastHello(peer)['positions'] as Array<{ room: string }>;
    expect(positions).toHaveLength(HISTORY_LIMITS.maxHelloPositions);
    expect(positions[0]!.room).toBe(`room-${count - 1}`);
    expect(positions.map((p) => p.room)).not.toContain('room-4');
    expect(positions.map((p) => p.room)).toContain('room-5');
  });
});

describe('odd messages from the server', () => {
  it('delivers a message with a malformed pos as one without, and keeps the last good position', async () => {
    const peer = await start();
    const c = await connected(peer);
    await c.client.joinRoom('r');
    peer.publish('r', 'chat.said', { n: 1 });
    const bad = [
      { room: 'r', namespace: '/', epoch: 'x', offset: '2' },
      { room: 'r', namespace: '/', epoch: 'x'.repeat(65), offset: 2 },
      { room: 'r', epoch: 'x', offset: 2 },
      'r:2',
    ];
    bad.forEach((pos, i) =>
      peer.sendRaw(c.id, JSON.stringify({ event: 'chat.said', data: { n: 10 + i }, pos })),
    );
    peer.publish('r', 'chat.said', { n: 2 });
    expect((await c.said.waitFor(6)).map((s) => [s.n, s.offset])).toEqual([
      [1, 1],
      [10, undefined],
      [11, undefined],
      [12, undefined],
      [13, undefined],
      [2, 2],
    ]);
  });

  it('ignores a malformed $recovered, and reports one that nobody asked for', async () => {
    const peer = await start();
    const c = await connected(peer);
    peer.sendRaw(c.id, '{"event":"$recovered","data":{"room":"r","recovered":"yes"}}');
    peer.sendRaw(c.id, '{"event":"$recovered","data":[]}');
    peer.sendRaw(
      c.id,
      '{"event":"$recovered","data":{"room":"q","namespace":"/","recovered":false,"reason":"not_kept","replayed":0}}',
    );
    expect(await c.recovered.waitFor(1)).toEqual([
      { room: 'q', namespace: '/', recovered: false, reason: 'not_kept', replayed: 0 },
    ]);
    // A server event named like a lifecycle event is not delivered to listeners.
    const own = new Recorder<unknown>();
    c.client.on('recovered', own.push);
    peer.sendRaw(c.id, '{"event":"recovered","data":{"room":"q"}}');
    peer.sendRaw(
      c.id,
      '{"event":"$recovered","data":{"room":"z","namespace":"/","recovered":true,"replayed":0}}',
    );
    expect(await own.waitFor(1)).toEqual([
      { room: 'z', namespace: '/', recovered: true, replayed: 0 },
    ]);
  });
});

describe('history()', () => {
  it('resolves with the kept messages, typed and oldest first, and the room position', async () => {
    const peer = await start();
    const c = await connected(peer);
    await c.client.joinRoom('r');
    for (let n = 1; n <= 5; n++) peer.publish('r', 'chat.said', { n });
    const epoch = peer.stream('r').epoch;
    const answer = await c.client.history('r', { limit: 2 });
    expect(answer).toEqual({
      messages: [
        {
          event: 'chat.said',
          data: { n: 4 },
          pos: { room: 'r', namespace: '/', epoch, offset: 4 },
        },
        {
          event: 'chat.said',
          data: { n: 5 },
          pos: { room: 'r', namespace: '/', epoch, offset: 5 },
        },
      ],
      position: { offset: 5, epoch },
      complete: false,
    });
    const n: number = answer.messages[0]!.data.n; // typed by the Listen map
    expect(n).toBe(4);
    const request = peer.received.filter((m) => m.event === '$history').pop()!;
    expect(request).toMatchObject({ data: { room: 'r', namespace: '/', limit: 2 } });
    expect(typeof request.id).toBe('number');
    expect((await c.client.history('r')).complete).toBe(true);
  });

  it('rejects with the server code for a room the client is not in', async () => {
    const peer = await start();
    const c = await connected(peer);
    await expect(c.client.history('elsewhere')).rejects.toMatchObject({
      code: 'PKG_ERR_CLIENT_REMOTE',
      remoteCode: 'forbidden',
    });
  });

  it.each([
    ['an empty room', '', {}],
    ['a namespace without "/"', 'r', { namespace: 'chat' }],
    ['a limit of 0', 'r', { limit: 0 }],
    ['a fractional limit', 'r', { limit: 1.5 }],
    ['a since without epoch', 'r', { since: { offset: 1 } }],
    ['a since with a negative offset', 'r', { since: { offset: -1, epoch: 'e' } }],
    ['a timeout of 0', 'r', { timeout: 0 }],
  ])('throws nothing and rejects with a TypeError for %s', async (_case, room, options) => {
    const peer = await start();
    const c = await connected(peer);
    const sent = peer.received.length;
    const result = c.client.history(room, options as never);
    await expect(result).rejects.toBeInstanceOf(TypeError);
    await expect(result).rejects.toMatchObject({ code: 'PKG_ERR_CLIENT_INVALID_ARGUMENT' });
    expect(peer.received.length).toBe(sent);
  });

  it.each([
    ['no messages list', { rows: [] }],
    ['null', null],
    ['a string', 'messages'],
  ])('rejects an answer with %s, saying the server does not keep history', async (_c, data) => {
    const peer = await start();
    const c = await connected(peer);
    await c.client.joinRoom('r');
    peer.historyAnswer = data;
    const err = await c.client.history('r').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClientError);
    expect(err).toMatchObject({
      code: 'PKG_ERR_CLIENT_REMOTE',
      message: expect.stringMatching(/does not keep history/),
    });
  });

  it('waits for the connection when asked while disconnected, like emitWithAck', async () => {
    const peer = await start();
    const c = await connected(peer);
    await c.client.joinRoom('r');
    peer.publish('r', 'chat.said', { n: 1 });
    await c.said.waitFor(1);
    const away = await cut(peer, c);
    const answer = c.client.history('r');
    await away.back();
    expect((await answer).messages.map((m) => m.data)).toEqual([{ n: 1 }]);
  });

  it('rejects with PKG_ERR_CLIENT_REMOTE unsupported against a server of version 0', async () => {
    const peer = await start();
    const client = makeClient(peer.url, { protocol: 'basic' });
    await client.connect();
    const err = await client.history('r').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClientError);
    expect(err).toMatchObject({ code: 'PKG_ERR_CLIENT_REMOTE', remoteCode: 'unsupported' });
  });
});
