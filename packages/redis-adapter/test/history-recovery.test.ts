// Recovery on any instance: two server instances in child processes share a Redis (history
// in Redis Streams, the adapter's default); a protocol version 1 client on A is in a room,
// its TCP connection is cut, messages go to the room through B, A is killed with SIGKILL,
// and the client comes back on B asking for what it missed (join_room.since). It gets every
// missed message once, in order, then `$recovered`; or `recovered: false` with the reason
// when the stream was deleted (`epoch_changed`) or more than `size` were missed
// (`too_far_behind`).
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { createClient } from 'redis';
import WebSocket from 'ws';
import { Instance, removeBundle, sharedRedisAvailableSync, waitFor } from './helpers';

const describeRedis = sharedRedisAvailableSync('@pkg/redis-adapter recovery test')
  ? describe
  : describe.skip;

interface Pos {
  room: string;
  namespace: string;
  epoch: string;
  offset: number;
}

interface Message {
  event: string;
  data: Record<string, unknown>;
  id?: unknown;
  pos?: Pos;
}

const SIZE = 5;
const HISTORY = JSON.stringify([{ match: 'r*', size: SIZE, ttl: 60_000 }]);

/** A protocol version 1 `ws` client: says $hello, then queues what it receives. */
class V1Client {
  readonly received: Message[] = [];
  #read = 0;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (raw) => this.received.push(JSON.parse(String(raw)) as Message));
  }

  static async open(url: string): Promise<V1Client> {
    const ws = new WebSocket(url, ['pkg.v1']);
    const client = new V1Client(ws);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send(JSON.stringify({ event: '$hello', data: { v: 1 } }));
    expect((await client.next()).event).toBe('$welcome');
    return client;
  }

  send(event: string, data: unknown, id?: unknown): void {
    this.ws.send(JSON.stringify(id === undefined ? { event, data } : { event, data, id }));
  }

  /** The next message not read yet. */
  async next(): Promise<Message> {
    await waitFor(() => this.received.length > this.#read, 'a message');
    return this.received[this.#read++]!;
  }

  /** The messages up to and including the first that matches. */
  async until(match: string | ((m: Message) => boolean)): Promise<Message[]> {
    const test = typeof match === 'string' ? (m: Message) => m.event === match : match;
    const out: Message[] = [];
    for (;;) {
      const m = await this.next();
      out.push(m);
      if (test(m)) return out;
    }
  }

  /** Cuts the TCP connection: no close frame, the server sees the socket drop. */
  cut(): void {
    this.ws.terminate();
  }
}

describeRedis('recovery of a room on another instance (history in Redis Streams)', () => {
  let admin: ReturnType<typeof createClient>;
  const instances: Instance[] = [];
  const clients: V1Client[] = [];
  let keyPrefix = '';

  beforeAll(async () => {
    admin = createClient({ url: 'redis://127.0.0.1:6379' });
    admin.on('error', () => undefined);
    await admin.connect();
  });

  afterEach(async () => {
    for (const c of clients.splice(0)) c.ws.terminate();
    await Promise.all(instances.splice(0).map((i) => i.stop()));
    const keys = await admin.keys(`${keyPrefix}:*`);
    if (keys.length > 0) await admin.del(keys);
  });

  afterAll(async () => {
    if (admin?.isOpen) await admin.close();
    removeBundle();
  });

  /**
   * Both instances up; a client on A in room `room` that saw `seen` messages sent through B;
   * its connection cut; `missed` more sent through B; A killed. Returns B, the position the
   * client saw last, and the texts of the missed messages.
   */
  async function cutAndKill(room: string, seen: number, missed: number) {
    keyPrefix = `recovery-${randomBytes(4).toString('hex')}`;
    const env = { KEY_PREFIX: keyPrefix, HISTORY };
    const a = await Instance.start(env);
    instances.push(a);
    const b = await Instance.start(env);
    instances.push(b);
    const onA = await V1Client.open(a.wsUrl);
    clients.push(onA);
    onA.send('join_room', { room }, 'j');
    const answer = (await onA.until((m) => m.id === 'j')).at(-1)!;
    expect(answer.event).not.toBe('error');
    await a.call('synced');
    for (let n = 1; n <= seen; n += 1) {
      await b.call('broadcast', { event: 'msg', data: { n }, namespace: '/', room });
    }
    const before = [];
    for (let n = 1; n <= seen; n += 1) before.push(await onA.next());
    expect(before.map((m) => m.data['n'])).toEqual(Array.from({ length: seen }, (_, i) => i + 1));
    const last = before.at(-1)!.pos!;
    expect(last).toMatchObject({ room, namespace: '/', offset: seen });

    onA.cut();
    for (let n = seen + 1; n <= seen + missed; n += 1) {
      await b.call('broadcast', { event: 'msg', data: { n }, namespace: '/', room });
    }
    const exited = new Promise((resolve) => a.child.once('exit', resolve));
    a.child.kill('SIGKILL');
    await exited;
    return { b, last };
  }

  /** A new client on B that joins `room` asking for what came after `since`. */
  async function recoverOn(b: Instance, room: string, since: Pos) {
    const client = await V1Client.open(b.wsUrl);
    clients.push(client);
    client.send('join_room', { room, since: { offset: since.offset, epoch: since.epoch } }, 'j');
    const got = await client.until('$recovered');
    return { client, got };
  }

  it('replays every missed message once, in order, then $recovered true, then live traffic', async () => {
    const { b, last } = await cutAndKill('r1', 2, 4);
    const { client, got } = await recoverOn(b, 'r1', last);
    const replayed = got.filter((m) => m.event === 'msg');
    expect(replayed.map((m) => m.data['n'])).toEqual([3, 4, 5, 6]);
    expect(replayed.map((m) => m.pos!.offset)).toEqual([3, 4, 5, 6]);
    expect(new Set(replayed.map((m) => m.pos!.epoch))).toEqual(new Set([last.epoch]));
    expect(got.at(-1)!.data).toEqual({
      room: 'r1',
      namespace: '/',
      recovered: true,
      replayed: 4,
      position: { offset: 6, epoch: last.epoch },
    });
    // The join itself was answered, and nothing of the room came twice.
    expect(got.filter((m) => m.id === 'j')).toHaveLength(1);
    await b.call('synced');
    await b.call('broadcast', { event: 'msg', data: { n: 7 }, namespace: '/', room: 'r1' });
    const live = await client.next();
    expect(live.data).toEqual({ n: 7 });
    expect(live.pos).toEqual({ room: 'r1', namespace: '/', epoch: last.epoch, offset: 7 });
  });

  it('says epoch_changed when the stream was deleted meanwhile', async () => {
    const { b, last } = await cutAndKill('r2', 2, 2);
    expect(await admin.del(`${keyPrefix}:hist:{%2F:r2}:s`)).toBe(1);
    const { got } = await recoverOn(b, 'r2', last);
    expect(got.filter((m) => m.event === 'msg')).toEqual([]);
    expect(got.at(-1)!.data).toMatchObject({
      room: 'r2',
      recovered: false,
      reason: 'epoch_changed',
      replayed: 0,
    });
    // The next message starts a new epoch, which the client takes as it is.
    await b.call('broadcast', { event: 'msg', data: { n: 5 }, namespace: '/', room: 'r2' });
    const { got: again } = await recoverOn(b, 'r2', last);
    expect(again.at(-1)!.data).toMatchObject({ recovered: false, reason: 'epoch_changed' });
    const position = (again.at(-1)!.data as { position: { epoch: string; offset: number } })
      .position;
    expect(position.offset).toBe(1);
    expect(position.epoch).not.toBe(last.epoch);
  });

  it('says too_far_behind when more than size messages were missed', async () => {
    const { b, last } = await cutAndKill('r3', 1, SIZE + 2);
    const { got } = await recoverOn(b, 'r3', last);
    expect(got.filter((m) => m.event === 'msg')).toEqual([]);
    expect(got.at(-1)!.data).toMatchObject({
      room: 'r3',
      recovered: false,
      reason: 'too_far_behind',
      replayed: 0,
      position: { offset: SIZE + 3, epoch: last.epoch },
    });
  });

  it('answers a position the room never had with recovered: false, and the client stays', async () => {
    const { b, last } = await cutAndKill('r4', 1, 1);
    const { client, got } = await recoverOn(b, 'r4', { ...last, offset: 99 });
    expect(got.at(-1)!.data).toMatchObject({ recovered: false, reason: 'invalid_position' });
    const { got: foreign } = await recoverOn(b, 'r4', { ...last, epoch: 'not-an-epoch' });
    expect(foreign.at(-1)!.data).toMatchObject({ recovered: false, reason: 'epoch_changed' });
    await b.call('synced');
    await b.call('broadcast', { event: 'msg', data: { n: 3 }, namespace: '/', room: 'r4' });
    expect((await client.next()).pos).toMatchObject({ offset: 3, epoch: last.epoch });
  });
});
