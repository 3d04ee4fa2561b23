// Room history and recovery on the real Server over real sockets: positions on broadcasts
// to rooms that keep history, recovery through join_room.since and $hello.positions with
// every answer docs/protocol.md lists, the replay bounds, live messages during a replay,
// and $history. The clients are plain `ws` sockets speaking protocol version 1.
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  LocalAdapter,
  MemoryHistoryStore,
  OnConnect,
  RoomsController,
  SocketController,
  type HistoryPolicy,
  type HistoryQuery,
  type HistoryRead,
  type HistoryStore,
  type KeptTarget,
  type MemoryHistoryStoreOptions,
  type PositionTemplate,
  type PublishedMessage,
  type Server,
  type ServerConfigOptions,
} from '../src/index';
import { TestClient, cleanup, deferred, startServer, type Envelope } from './helpers';

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

/** Joins as a fresh v1 client, sees one message of `room`, leaves; returns its position. */
async function seeOne(server: Server, url: string, room: string): Promise<Pos> {
  const a = await v1(url);
  await join(a, { room });
  server.broadcast('msg', { n: 0 }, { room });
  const seen = (await a.next('msg')) as Message;
  await a.close();
  return seen.pos!;
}

/** Recovers `room` from `pos` on a fresh v1 client; returns what came before `$recovered` and it. */
async function recover(
  url: string,
  room: string,
  since: unknown,
): Promise<{ client: TestClient; before: Message[]; recovered: Message }> {
  const b = await v1(url);
  request(b, 'join_room', { room, since }, 'j');
  const got = await until(b, '$recovered');
  return { client: b, before: got.slice(0, -1), recovered: got.at(-1)! };
}

const at = (pos: Pos) => ({ offset: pos.offset, epoch: pos.epoch });

describe('every answer of a recovery', () => {
  it('not_kept: a room without history, and the join still succeeds', async () => {
    const { url } = await setup();
    const { client, before, recovered } = await recover(url, 'plain', { offset: 3, epoch: 'e' });
    expect(before).toEqual([]);
    expect(recovered.data).toEqual({
      room: 'plain',
      namespace: '/',
      recovered: false,
      reason: 'not_kept',
      replayed: 0,
    });
    const answer = (await client.next('join_room')) as Message;
    expect(answer).toMatchObject({ id: 'j', data: { room: 'plain', namespace: '/' } });
  });

  it('epoch_changed: a position of another stream, answered with the current position', async () => {
    const { server, url } = await setup();
    const pos = await seeOne(server, url, 'chat:e');
    const { before, recovered } = await recover(url, 'chat:e', { offset: 1, epoch: 'gone-epoch' });
    expect(before).toEqual([]);
    expect(recovered.data).toEqual({
      room: 'chat:e',
      namespace: '/',
      recovered: false,
      reason: 'epoch_changed',
      replayed: 0,
      position: at(pos),
    });
  });

  it('invalid_position: an offset past the end (also the largest safe integer), then a normal join answer', async () => {
    const { server, url } = await setup();
    const pos = await seeOne(server, url, 'chat:i');
    let last = pos.offset;
    for (const far of [false, true]) {
      const offset = far ? Number.MAX_SAFE_INTEGER : last + 1;
      const { client, recovered } = await recover(url, 'chat:i', { offset, epoch: pos.epoch });
      expect(recovered.data).toMatchObject({
        recovered: false,
        reason: 'invalid_position',
        replayed: 0,
        position: { offset: last, epoch: pos.epoch },
      });
      expect(((await client.next('join_room')) as Message).id).toBe('j');
      // A member like any other: live traffic flows, no error, no second $recovered.
      server.broadcast('msg', { n: offset }, { room: 'chat:i' });
      last += 1;
      const live = (await client.next('msg')) as Message;
      expect(live.data['n']).toBe(offset);
      expect(client.pending().map((m) => m.event)).toEqual(['room_joined']);
      await client.close();
    }
  });

  it('too_far_behind: more missed than the room keeps (size)', async () => {
    const { server, url } = await setup();
    const pos = await seeOne(server, url, 'chat:z');
    for (let n = 1; n <= CHAT.size + 1; n += 1) server.broadcast('msg', { n }, { room: 'chat:z' });
    const { before, recovered } = await recover(url, 'chat:z', at(pos));
    expect(before).toEqual([]);
    expect(recovered.data).toMatchObject({
      recovered: false,
      reason: 'too_far_behind',
      replayed: 0,
      position: { offset: pos.offset + CHAT.size + 1, epoch: pos.epoch },
    });
  });

  it('too_far_behind: a missed message older than the ttl', async () => {
    const { server, url } = await setup({ history: [{ match: 'short', size: 50, ttl: 400 }] });
    const pos = await seeOne(server, url, 'short');
    server.broadcast('msg', { n: 1 }, { room: 'short' });
    // n 2 keeps the room alive while n 1 grows older than the ttl.
    await new Promise((r) => setTimeout(r, 250));
    server.broadcast('msg', { n: 2 }, { room: 'short' });
    await new Promise((r) => setTimeout(r, 250));
    const { before, recovered } = await recover(url, 'short', at(pos));
    expect(before).toEqual([]);
    expect(recovered.data).toMatchObject({ recovered: false, reason: 'too_far_behind' });
  });

  it('too_far_behind: more than history_max_replay missed, or more than history_max_replay_bytes', async () => {
    const { server, url } = await setup({
      history: [{ match: '*', size: 100, ttl: 60_000 }],
      history_max_replay: 3,
      history_max_replay_bytes: 500,
    });
    const count = await seeOne(server, url, 'count');
    for (let n = 1; n <= 4; n += 1) server.broadcast('msg', { n }, { room: 'count' });
    const many = await recover(url, 'count', at(count));
    expect(many.recovered.data).toMatchObject({ recovered: false, reason: 'too_far_behind' });
    expect(many.before).toEqual([]);

    const bytes = await seeOne(server, url, 'bytes');
    server.broadcast('msg', { text: 'x'.repeat(300) }, { room: 'bytes' });
    server.broadcast('msg', { text: 'y'.repeat(300) }, { room: 'bytes' });
    const big = await recover(url, 'bytes', at(bytes));
    expect(big.recovered.data).toMatchObject({ recovered: false, reason: 'too_far_behind' });
    expect(big.before).toEqual([]);

    // Exactly at the bounds: recovered.
    server.broadcast('msg', { n: 5 }, { room: 'count' });
    const fits = await recover(url, 'count', { offset: count.offset + 2, epoch: count.epoch });
    expect(fits.before.map((m) => m.data['n'])).toEqual([3, 4, 5]);
    expect(fits.recovered.data).toMatchObject({ recovered: true, replayed: 3 });
  });

  it('recovered with nothing missed: replayed 0 and the position the client already has', async () => {
    const { server, url } = await setup();
    const pos = await seeOne(server, url, 'chat:n');
    const { before, recovered } = await recover(url, 'chat:n', at(pos));
    expect(before).toEqual([]);
    expect(recovered.data).toEqual({
      room: 'chat:n',
      namespace: '/',
      recovered: true,
      replayed: 0,
      position: at(pos),
    });
  });
});

/**
 * A history store that answers reads later, as a store across the network does: reads wait
 * for `release()`; `snapshot` says whether the read sees the stream as it was when asked
 * (`asked`) or when released (`released`). Publications are kept and delivered at once.
 */
class LaterStore implements HistoryStore {
  readonly memory: MemoryHistoryStore;
  readonly #gate = deferred();
  readonly reads: number[] = [];

  constructor(
    deliver: MemoryHistoryStoreOptions['deliver'],
    readonly snapshot: 'asked' | 'released',
  ) {
    this.memory = new MemoryHistoryStore({ deliver });
  }

  release(): void {
    this.#gate.resolve();
  }

  publish(target: KeptTarget, template: PositionTemplate, policy: HistoryPolicy): PublishedMessage {
    return this.memory.publish(target, template, policy);
  }

  async read(namespace: string, room: string, query: HistoryQuery): Promise<HistoryRead> {
    this.reads.push(Date.now());
    const early = this.snapshot === 'asked' ? this.memory.read(namespace, room, query) : undefined;
    await this.#gate.promise;
    return early ?? this.memory.read(namespace, room, query);
  }
}

class LaterAdapter extends LocalAdapter {
  readonly history: LaterStore;

  constructor(snapshot: 'asked' | 'released') {
    super();
    this.history = new LaterStore((text, target) => this.broadcast(text, target), snapshot);
  }

  override close(): void {
    this.history.memory.close();
    super.close();
  }
}

describe('live messages during a replay', () => {
  for (const snapshot of ['asked', 'released'] as const) {
    it(`are held until $recovered and sent once each (read sees the stream as ${snapshot})`, async () => {
      const adapter = new LaterAdapter(snapshot);
      const { server: s2, wsUrl } = await startServer(
        [new RoomsController()],
        {
          shutdown_timeout: 200,
          history: [CHAT],
        },
        (srv) => srv.setAdapter(adapter),
      );
      const pos = await seeOne(s2, wsUrl, 'chat:l');
      s2.broadcast('msg', { n: 1 }, { room: 'chat:l' });
      s2.broadcast('msg', { n: 2 }, { room: 'chat:l' });

      const b = await v1(wsUrl);
      request(b, 'join_room', { room: 'chat:l', since: at(pos) }, 'j');
      await b.next('join_room');
      while (adapter.history.reads.length === 0) await new Promise((r) => setTimeout(r, 5));
      // Live while the read is pending: held, not sent.
      s2.broadcast('msg', { n: 3 }, { room: 'chat:l' });
      s2.broadcast('msg', { n: 4 }, { room: 'chat:l' });
      expect(s2.getLoad().recoveries).toBe(1);
      adapter.history.release();
      const got = await until(b, '$recovered');
      s2.broadcast('msg', { n: 5 }, { room: 'chat:l' });
      const replayed = got.filter((m) => m.event === 'msg').map((m) => m.data['n']);
      expect(replayed).toEqual(snapshot === 'asked' ? [1, 2] : [1, 2, 3, 4]);
      expect(got.at(-1)!.data).toMatchObject({ recovered: true, replayed: replayed.length });
      // After $recovered: what the replay did not carry, each once, then live traffic.
      const live = snapshot === 'asked' ? [3, 4, 5] : [5];
      const after: Message[] = [];
      for (const _ of live) after.push((await b.next('msg')) as Message);
      expect(after.map((m) => m.data['n'])).toEqual(live);
      expect(b.pending()).toEqual([]);
      const offsets = [...got, ...after].filter((m) => m.pos).map((m) => m.pos!.offset);
      expect(offsets).toEqual([...offsets].sort((x, y) => x - y));
      expect(new Set(offsets).size).toBe(offsets.length);
      expect(s2.getLoad().recoveries).toBe(0);
    });
  }

  it('drops what was held when the client leaves during the read (no leak)', async () => {
    const adapter = new LaterAdapter('asked');
    const { server, wsUrl } = await startServer(
      [new RoomsController()],
      {
        shutdown_timeout: 200,
        history: [CHAT],
      },
      (srv) => srv.setAdapter(adapter),
    );
    const pos = await seeOne(server, wsUrl, 'chat:g');
    const b = await v1(wsUrl);
    request(b, 'join_room', { room: 'chat:g', since: at(pos) }, 'j');
    await b.next('join_room');
    server.broadcast('msg', { n: 1 }, { room: 'chat:g' });
    expect(server.getLoad().recoveries).toBe(1);
    await b.close();
    while (server.getLoad().webSocketClients > 0) await new Promise((r) => setTimeout(r, 5));
    expect(server.getLoad().recoveries).toBe(0);
    adapter.history.release();
  });

  it('applies max_pending_requests to $history like any request', async () => {
    const adapter = new LaterAdapter('asked');
    const { server, wsUrl } = await startServer(
      [new RoomsController()],
      {
        shutdown_timeout: 200,
        history: [CHAT],
        max_pending_requests: 2,
      },
      (srv) => srv.setAdapter(adapter),
    );
    void server;
    const b = await v1(wsUrl);
    await join(b, { room: 'chat:p' });
    for (const id of ['h1', 'h2']) request(b, '$history', { room: 'chat:p' }, id);
    // The join's answer was sent: two pending now, a third is refused.
    request(b, '$history', { room: 'chat:p' }, 'h3');
    const refused = (await b.next('error')) as Message;
    expect(refused).toMatchObject({ id: 'h3', data: { code: 'too_many_pending' } });
    adapter.history.release();
    const answers = [(await b.next('$history')) as Message, (await b.next('$history')) as Message];
    expect(answers.map((m) => m.id)).toEqual(['h1', 'h2']);
  });
});

describe('adversarial recoveries', () => {
  it('refuses a malformed since with invalid_payload and joins nothing', async () => {
    const { server, url } = await setup();
    const c = await v1(url);
    const bad: unknown[] = [
      { offset: -1, epoch: 'e' },
      { offset: 1.5, epoch: 'e' },
      { offset: '3', epoch: 'e' },
      { offset: 2 ** 53, epoch: 'e' },
      { offset: 1 },
      { offset: 1, epoch: '' },
      { offset: 1, epoch: 'e'.repeat(65) },
      'since',
      [1, 'e'],
    ];
    for (const [i, since] of bad.entries()) {
      const answer = await join(c, { room: 'chat:bad', since }, `b${i}`);
      expect([i, answer.event, answer.data['code']]).toEqual([i, 'error', 'invalid_payload']);
    }
    expect(await server.countClients({ room: 'chat:bad' })).toBe(0);
  });

  it('refuses an epoch of 1 MB in join_room.since and in $hello.positions', async () => {
    const { url } = await setup({ max_message_size: 4 * 1024 * 1024 });
    const epoch = 'e'.repeat(1024 * 1024);
    const c = await v1(url);
    const answer = await join(c, { room: 'chat:big', since: { offset: 1, epoch } });
    expect(answer.data['code']).toBe('invalid_payload');
    const h = await TestClient.connect(url, {}, ['pkg.v1']);
    h.sendRaw(
      JSON.stringify({
        event: '$hello',
        data: { v: 1, positions: [{ room: 'chat:big', namespace: '/', offset: 1, epoch }] },
      }),
    );
    expect(((await h.next('error')) as Message).data['code']).toBe('invalid_payload');
    expect((await h.closed).code).toBe(1008);
  });

  it('closes with 1008 a $hello with 10,000 positions, a lone surrogate, or a negative offset', async () => {
    const { url } = await setup();
    const many = Array.from({ length: 10_000 }, (_, i) => ({
      room: `chat:${i}`,
      namespace: '/',
      offset: 1,
      epoch: 'e',
    }));
    const one = { room: 'chat:1', namespace: '/', offset: 1, epoch: 'e' };
    for (const positions of [
      many,
      [{ ...one, room: 'chat:\ud800' }],
      [{ ...one, offset: -1 }],
      [{ ...one, namespace: 'no-slash' }],
      { room: 'chat:1' },
    ]) {
      const h = await TestClient.connect(url, {}, ['pkg.v1']);
      h.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1, positions } }));
      const error = (await h.next('error')) as Message;
      expect(error.data['code']).toBe('invalid_payload');
      expect(String(error.data['message'])).toMatch(/positions/);
      expect((await h.closed).code).toBe(1008);
    }
  });

  it('refuses a lone surrogate in the room of join_room and of $history', async () => {
    const { url } = await setup();
    const c = await v1(url);
    const answer = await join(c, { room: 'chat:\udc00', since: { offset: 1, epoch: 'e' } });
    expect(answer.data['code']).toBe('invalid_payload');
    request(c, '$history', { room: 'chat:\udc00' }, 'h');
    const refused = (await c.next('error')) as Message;
    expect(refused).toMatchObject({ id: 'h', data: { code: 'invalid_payload' } });
  });

  it('ignores since from a client that did not say $hello (sent before it, as version 0)', async () => {
    const { server, url } = await setup({ hello_wait: 5000 });
    const pos = await seeOne(server, url, 'chat:v0');
    server.broadcast('msg', { n: 1 }, { room: 'chat:v0' });
    // A pkg.v1 connection whose first message is join_room is served as version 0.
    const early = await TestClient.connect(url, {}, ['pkg.v1']);
    const answer = await join(early, { room: 'chat:v0', since: at(pos) });
    expect(answer.data).toEqual({ room: 'chat:v0', namespace: '/' });
    server.broadcast('msg', { n: 2 }, { room: 'chat:v0' });
    const next = (await early.next('msg')) as Message;
    expect(next.data['n']).toBe(2);
    expect(early.received.some((m) => m.event === '$recovered')).toBe(false);
  });

  it('recovers once per membership: a second join_room with since replays nothing', async () => {
    const { server, url } = await setup();
    const pos = await seeOne(server, url, 'chat:twice');
    server.broadcast('msg', { n: 1 }, { room: 'chat:twice' });
    const { client } = await recover(url, 'chat:twice', at(pos));
    await client.next('join_room');
    request(client, 'join_room', { room: 'chat:twice', since: at(pos) }, 'again');
    await client.next('join_room');
    server.broadcast('msg', { n: 2 }, { room: 'chat:twice' });
    const next = (await client.next('msg')) as Message;
    expect(next.data['n']).toBe(2);
    expect(client.received.filter((m) => m.event === '$recovered')).toHaveLength(1);
  });

  it('uses a $hello position once, only for its room, and only when the client joins it', async () => {
    class Later extends SocketController {
      @OnConnect()
      enter(clientId: string): void {
        this.joinRoom(clientId, 'chat:other');
      }
    }
    const { server, url } = await setup({}, [new Later()]);
    const pos = await seeOne(server, url, 'chat:later');
    server.broadcast('msg', { n: 1 }, { room: 'chat:later' });
    const b = await v1(url, { v: 1, positions: [pos] });
    // Joined to chat:other in OnConnect: nothing recovered for it (no position).
    server.broadcast('msg', { n: 'other' }, { room: 'chat:other' });
    expect(((await b.next()) as Message).data['n']).toBe('other');
    // The application joins chat:later later: recovered from the hello position.
    const id = [...server.getAllClients()].find((x) =>
      server.namespaceManager.isInRoom(x, 'chat:other'),
    )!;
    server.joinRoom(id, 'chat:later');
    const got = await until(b, '$recovered');
    expect(got.map((m) => m.event)).toEqual(['msg', '$recovered']);
    expect(got[1]!.data).toMatchObject({ room: 'chat:later', recovered: true, replayed: 1 });
    // Leave and join again: the position was used up.
    server.leaveRoom(id, 'chat:later');
    server.joinRoom(id, 'chat:later');
    server.broadcast('msg', { n: 2 }, { room: 'chat:later' });
    expect(((await b.next()) as Message).data['n']).toBe(2);
  });
});

describe('$history', () => {
  it('answers the kept messages of a room the client is in, with its id, decoded', async () => {
    const { server, url } = await setup();
    const c = await v1(url);
    await join(c, { room: 'chat:h' });
    for (let n = 1; n <= 3; n += 1) server.broadcast('msg', { n }, { room: 'chat:h' });
    const live = [(await c.next('msg')) as Message];
    request(c, '$history', { room: 'chat:h', limit: 2 }, 7);
    const answer = (await c.next('$history')) as Message;
    expect(answer.id).toBe(7);
    expect(answer.data).toEqual({
      messages: [
        { event: 'msg', data: { n: 2 }, pos: { ...live[0]!.pos, offset: 2 } },
        { event: 'msg', data: { n: 3 }, pos: { ...live[0]!.pos, offset: 3 } },
      ],
      position: { offset: 3, epoch: live[0]!.pos!.epoch },
      complete: false,
      reason: 'too_far_behind',
    });
    request(c, '$history', { room: 'chat:h', since: at(live[0]!.pos!) }, 8);
    const since = (await c.next('$history')) as Message;
    expect(since.data).toMatchObject({ complete: true });
    expect((since.data['messages'] as unknown[]).length).toBe(2);
  });

  it('caps limit at history_max_replay', async () => {
    const { server, url } = await setup({ history_max_replay: 2 });
    const c = await v1(url);
    await join(c, { room: 'chat:cap' });
    for (let n = 1; n <= 4; n += 1) server.broadcast('msg', { n }, { room: 'chat:cap' });
    request(c, '$history', { room: 'chat:cap', limit: 1000 }, 'h');
    const answer = (await c.next('$history')) as Message;
    const messages = answer.data['messages'] as Array<{ data: { n: number } }>;
    expect(messages.map((m) => m.data.n)).toEqual([3, 4]);
    expect(answer.data['complete']).toBe(false);
  });

  it('refuses a room the client is not in with forbidden and the id', async () => {
    const { server, url } = await setup();
    server.broadcast('msg', { n: 1 }, { room: 'chat:secret' });
    const c = await v1(url);
    request(c, '$history', { room: 'chat:secret' }, 'h');
    const refused = (await c.next('error')) as Message;
    expect(refused).toMatchObject({
      id: 'h',
      data: { code: 'forbidden', room: 'chat:secret', namespace: '/' },
    });
  });

  it('answers not_kept for a room without history, and refuses $history without an id', async () => {
    const { url } = await setup();
    const c = await v1(url);
    await join(c, { room: 'plain' });
    request(c, '$history', { room: 'plain' }, 'h');
    const answer = (await c.next('$history')) as Message;
    expect(answer.data).toEqual({ messages: [], complete: false, reason: 'not_kept' });
    c.send('$history', { room: 'plain' });
    const refused = (await c.next('error')) as Message;
    expect(refused.data['code']).toBe('invalid_payload');
    expect(refused.id).toBeUndefined();
    for (const data of [
      { room: 'plain', limit: 0 },
      { room: 'plain', since: { offset: -1, epoch: 'e' } },
      [],
    ]) {
      request(c, '$history', data, 'bad');
      expect(((await c.next('error')) as Message).data['code']).toBe('invalid_payload');
    }
  });
});

describe('server.history and bounds', () => {
  it('reads through the store, validates its arguments, and forgets idle rooms (no leak)', async () => {
    const { server } = await setup({ history: [{ match: 'idle:*', size: 3, ttl: 150 }] });
    for (let i = 0; i < 50; i += 1) server.broadcast('msg', { i }, { room: `idle:${i}` });
    expect(server.getLoad().historyRooms).toBe(50);
    const h = await server.history('idle:7');
    expect(h.messages).toEqual([
      { event: 'msg', data: { i: 7 }, pos: { room: 'idle:7', namespace: '/', ...h.position! } },
    ]);
    expect(await server.history('other')).toEqual({
      messages: [],
      complete: false,
      reason: 'not_kept',
    });
    expect(() => server.history('')).toThrow(TypeError);
    expect(() => server.history('idle:1', { limit: 0 })).toThrow(/limit/);
    const deadline = Date.now() + 5000;
    while (server.getLoad().historyRooms > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(server.getLoad().historyRooms).toBe(0);
  });

  it('keepHistory keeps one room, checked like the config', async () => {
    const { server } = await setup({ history: [] });
    expect(() => server.keepHistory('r', { size: 0, ttl: 10 })).toThrow(/size/);
    expect(() => server.keepHistory('r', { size: 1, ttl: 10, namespace: 'x' })).toThrow(
      /namespace/,
    );
    server.keepHistory('r', { size: 2, ttl: 60_000 });
    for (let n = 1; n <= 3; n += 1) server.broadcast('msg', { n }, { room: 'r' });
    const h = await server.history('r');
    expect(h.messages.map((m) => m.pos.offset)).toEqual([2, 3]);
  });
});
