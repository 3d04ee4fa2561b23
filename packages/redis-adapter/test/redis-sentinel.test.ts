// RedisAdapter on a master named by Redis Sentinel (one master, one replica, three
// sentinels, started and stopped here): two servers in this process with the adapter's
// `sentinel` option, `ws` clients on each. Delivery across instances, history, recovery and
// presence through the sentinel-managed master; a manual failover (SENTINEL FAILOVER) during
// traffic (every message delivered once, one epoch, what the old master took after the
// promotion reported as lost); a forced failover (the master killed) that lost writes
// (exactly those reported as a gap, one epoch); the master killed during traffic (every
// message delivered, or reported to a client that recovers across it); the master restarted
// in place without a failover; and close() while no master answers.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import {
  AbstractLogger,
  NullLogger,
  RoomsController,
  Server,
  ServerConfig,
  type PresenceState,
} from '@pkg/core';
import { RedisAdapter } from '../src/index';
import { redisServerAvailableSync, waitFor } from './helpers';
import { LocalSentinel, MASTER_NAME } from './local-sentinel';

const suite = redisServerAvailableSync('@pkg/redis-adapter Redis Sentinel tests')
  ? describe
  : describe.skip;

interface Pos {
  room: string;
  epoch: string;
  offset: number;
}

interface Message {
  event: string;
  data: Record<string, unknown>;
  id?: unknown;
  pos?: Pos;
}

/** A logger that keeps the adapter's lines. */
class Recording extends AbstractLogger {
  readonly lines: string[] = [];
  log(level: string, message: string, context?: Record<string, unknown>): void {
    this.lines.push(`${level} ${message}${context ? ` ${JSON.stringify(context)}` : ''}`);
  }
}

/** A protocol version 1 `ws` client: says $hello, then keeps what it receives. */
class Client {
  readonly received: Message[] = [];
  /** Binary frames received. */
  readonly binary: Buffer[] = [];
  id = '';

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (raw, isBinary) => {
      if (isBinary) this.binary.push(raw as Buffer);
      else this.received.push(JSON.parse(String(raw)) as Message);
    });
  }

  static async open(url: string): Promise<Client> {
    const ws = new WebSocket(url, ['pkg.v1']);
    const client = new Client(ws);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send(JSON.stringify({ event: '$hello', data: { v: 1 } }));
    await waitFor(() => client.received.some((m) => m.event === '$welcome'), '$welcome');
    client.id = String(client.received.find((m) => m.event === '$welcome')!.data['clientId']);
    return client;
  }

  /** Joins a room (optionally recovering from a position) and waits for the answer. */
  async join(room: string, since?: { epoch: string; offset: number }): Promise<void> {
    const id = randomBytes(4).toString('hex');
    this.ws.send(
      JSON.stringify({ event: 'join_room', data: since ? { room, since } : { room }, id }),
    );
    const done = since ? (m: Message) => m.event === '$recovered' : (m: Message) => m.id === id;
    await waitFor(() => this.received.some(done), `the join of ${room}`);
  }

  events(name: string): Message[] {
    return this.received.filter((m) => m.event === name);
  }

  /** The offsets of the room messages this client got. */
  offsets(room: string): number[] {
    return this.events('msg')
      .filter((m) => m.pos?.room === room)
      .map((m) => m.pos!.offset);
  }
}

suite('RedisAdapter on a master named by Redis Sentinel', () => {
  let set: LocalSentinel;
  const closers: Array<() => unknown> = [];

  beforeAll(async () => {
    set = await LocalSentinel.start();
  }, 30_000);

  beforeEach(async () => {
    // Each test starts from a master and a synced replica, whatever the one before left.
    await set.heal();
  }, 50_000);

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  }, 30_000);

  afterAll(async () => {
    await set?.stop();
  });

  async function startServer(
    keyPrefix: string,
    logger?: Recording,
  ): Promise<{ server: Server; adapter: RedisAdapter; url: string }> {
    const server = new Server(
      new ServerConfig({
        host: '127.0.0.1',
        port: 0,
        heartbeat_interval: 0,
        shutdown_timeout: 200,
        history: [{ match: 'h*', size: 1000, ttl: 60_000 }],
        presence: [{ match: 'chat:*' }],
        presence_node_timeout: 3000,
      }),
      undefined,
      undefined,
      undefined,
      new NullLogger(),
    );
    const adapter = new RedisAdapter({
      sentinel: { name: MASTER_NAME, sentinelRootNodes: set.rootNodes, scanInterval: 1000 },
      keyPrefix,
      maxReconnectDelay: 200,
      maxSubscribesPerSecond: 0,
      unsubscribeGrace: 0,
      ...(logger ? { logger } : {}),
    });
    server.setAdapter(adapter);
    server.registerController(new RoomsController());
    await server.run();
    await adapter.ready();
    closers.push(() => server.close());
    return { server, adapter, url: `ws://127.0.0.1:${server.getPort()}` };
  }

  async function client(url: string): Promise<Client> {
    const c = await Client.open(url);
    closers.push(() => c.ws.terminate());
    return c;
  }

  function prefix(): string {
    return `st${randomBytes(3).toString('hex')}`;
  }

  /** The room's hash (`e` epoch, `o` last offset, `l` lost ranges) on the master of now. */
  async function roomHash(p: string, room: string): Promise<Record<string, string>> {
    const reply = await set.command(await set.master(), ['HGETALL', `${p}:hist:{%2F:${room}}:m`]);
    if (!Array.isArray(reply)) return { ...(reply as Record<string, string>) };
    const out: Record<string, string> = {};
    const list = reply as unknown[];
    for (let k = 0; k < list.length; k += 2) out[String(list[k])] = String(list[k + 1]);
    return out;
  }

  /** Waits until the sentinels name a master other than `old` and both adapters are connected again. */
  async function failedOver(old: number, adapters: RedisAdapter[]): Promise<number> {
    await waitFor(async () => (await set.master()) !== old, 'a new master', 20_000).catch(
      (err: Error) => {
        throw new Error(`${err.message}; the sentinels said:\n${set.events()}`);
      },
    );
    const master = await set.master();
    await waitFor(
      () => adapters.every((a) => a.getState() === 'connected'),
      'the adapters to follow the new master',
      20_000,
    );
    return master;
  }

  it('delivers across instances, keeps history and presence on the master the sentinels name', async () => {
    const p = prefix();
    const a = await startServer(p);
    const b = await startServer(p);
    const [a1, a2, b1, b2] = await Promise.all([
      client(a.url),
      client(a.url),
      client(b.url),
      client(b.url),
    ]);
    await a2.join('r');
    await b1.join('r');
    await Promise.all([a.adapter.synced(), b.adapter.synced()]);
    a.server.broadcast('to-all', { n: 1 });
    b.server.broadcast('to-room', { n: 2 }, '/', 'r');
    a.server.broadcast('except', { n: 3 }, '/', 'r', { except: [b1.id] });
    b.server.broadcast('fence', {});
    const all = [a1, a2, b1, b2];
    await waitFor(() => all.every((c) => c.events('fence').length === 1), 'the fence');
    for (const c of all) expect(c.events('to-all')).toHaveLength(1);
    expect(all.map((c) => c.events('to-room').length)).toEqual([0, 1, 1, 0]);
    expect(all.map((c) => c.events('except').length)).toEqual([0, 1, 0, 0]);
    expect(await a.server.countClients({ room: 'r' })).toBe(2);
    expect((await b.server.fetchClientIds({ room: 'r' })).sort()).toEqual([a2.id, b1.id].sort());

    // History on the master: a client that left A recovers on B.
    await a1.join('h1');
    await a.adapter.synced();
    for (let n = 1; n <= 3; n++) b.server.broadcast('msg', { n }, '/', 'h1');
    await waitFor(() => a1.offsets('h1').length === 3, 'three messages on A');
    const seen = a1.events('msg').at(-1)!.pos!;
    a1.ws.terminate();
    for (let n = 4; n <= 6; n++) b.server.broadcast('msg', { n }, '/', 'h1');
    await waitFor(async () => (await b.server.history('h1')).messages.length === 6, 'six kept');
    const back = await client(b.url);
    await back.join('h1', { epoch: seen.epoch, offset: seen.offset });
    expect(back.events('msg').map((m) => m.data['n'])).toEqual([4, 5, 6]);
    expect(back.events('$recovered')[0]!.data).toMatchObject({ recovered: true, replayed: 3 });
    const keys = (await set.command(await set.master(), ['KEYS', `${p}:hist:*`])) as string[];
    expect(keys.sort()).toEqual([`${p}:hist:{%2F:h1}:m`, `${p}:hist:{%2F:h1}:s`]);

    // A burst of broadcasts sent together reaches the other instance in the order sent,
    // kept (h2) or not (r).
    await b2.join('h2');
    await b.adapter.synced();
    for (let n = 1; n <= 30; n++) {
      void a.server.broadcast('burst', { n }, '/', 'h2');
      a.server.broadcast('burst', { n }, '/', 'r');
    }
    const burst = (c: Client): unknown[] => c.events('burst').map((m) => m.data['n']);
    await waitFor(() => burst(b2).length === 30 && burst(b1).length === 30, 'the bursts at B');
    const inOrder = Array.from({ length: 30 }, (_, i) => i + 1);
    expect([burst(b2), burst(b1)]).toEqual([inOrder, inOrder]);

    // Presence across both.
    await a2.join('chat:1');
    await b2.join('chat:1');
    await waitFor(async () => {
      const views = await Promise.all([a.server.presence('chat:1'), b.server.presence('chat:1')]);
      return views.every((v) => members(v) === [a2.id, b2.id].sort().join());
    }, 'both instances to list both members');
    // Each instance holds two connections to the master: one for commands, and one that
    // holds every channel it subscribes to (sharded channels, none plain).
    const clients = String(await set.command(await set.master(), ['CLIENT', 'LIST']))
      .trim()
      .split('\n')
      .filter((line) => line.includes(` name=pkg-${a.adapter.nodeId} `));
    expect(clients).toHaveLength(2);
    const count = (line: string, kind: string): number =>
      Number(new RegExp(` ${kind}=(\\d+)`).exec(line)?.[1]);
    const ssub = clients.map((line) => count(line, 'ssub')).sort((x, y) => x - y);
    expect(ssub[0]).toBe(0);
    expect(ssub[1]).toBeGreaterThanOrEqual(a.adapter.stats().subscriptions);
    expect(clients.map((line) => count(line, 'sub') + count(line, 'psub'))).toEqual([0, 0]);
    expect(a.adapter.getState()).toBe('connected');
  });

  function members(state: PresenceState): string {
    return Object.values(state)
      .flatMap((e) => e.metas.map((m) => m.clientId))
      .sort()
      .join();
  }

  /** The lost ranges of a room's hash (`l`: `<from>-<to> ` each). */
  function lostRanges(hash: Record<string, string>): Array<{ from: number; to: number }> {
    return (hash['l'] ?? '')
      .trim()
      .split(' ')
      .filter((r) => r !== '')
      .map((r) => {
        const [from, to] = r.split('-').map(Number) as [number, number];
        return { from, to };
      });
  }

  it('after SENTINEL FAILOVER during traffic, delivers every message once in one epoch, and reports what the old master took after the promotion as a gap', async () => {
    const p = prefix();
    const a = await startServer(p);
    const b = await startServer(p);
    const onB = await client(b.url);
    const onA = await client(a.url);
    await onB.join('hf');
    await onA.join('chat:f');
    await b.adapter.synced();
    const old = await set.master();
    let n = 0;
    const sending = (async () => {
      while (n < 120) {
        n += 1;
        await a.server.broadcast('msg', { n }, '/', 'hf');
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    await new Promise((r) => setTimeout(r, 200));
    await set.command(set.sentinelPorts[0]!, ['SENTINEL', 'FAILOVER', MASTER_NAME]);
    const now = await failedOver(old, [a.adapter, b.adapter]);
    await sending;
    await waitFor(() => onB.offsets('hf').length >= 120, 'every message at B', 20_000).catch(
      () => undefined,
    );
    // Every message reached B once, in the order of its position, in one epoch: the
    // failover did not start the room over.
    expect(onB.offsets('hf')).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
    expect(new Set(onB.events('msg').map((m) => m.data['n'])).size).toBe(120);
    const epochs = new Set(onB.events('msg').map((m) => m.pos!.epoch));
    expect(epochs.size).toBe(1);
    const [epoch] = [...epochs] as [string];
    const hash = await roomHash(p, 'hf');
    expect(hash).toMatchObject({ e: epoch, o: '120' });
    // Sentinel does not stop the old master while it promotes the replica: what the old
    // master kept until it was made a replica is gone from the new one, and recorded as
    // lost (the offsets B got from the old master). A client that recovers from before the
    // failover gets every kept message and is told exactly those offsets.
    const lost = lostRanges(hash);
    const isLost = (o: number): boolean => lost.some((r) => o >= r.from && o <= r.to);
    const keptAfter20 = Array.from({ length: 100 }, (_, i) => i + 21).filter((o) => !isLost(o));
    // What a recovery from offset 20 is told it cannot have: the lost offsets after 20.
    const lostAfter20 = lost
      .filter((r) => r.to > 20)
      .map((r) => ({ from: Math.max(r.from, 21), to: r.to }));
    const back = await client(a.url);
    await back.join('hf', { epoch, offset: 20 });
    expect(back.offsets('hf')).toEqual(keptAfter20);
    expect(back.events('$recovered')[0]!.data).toMatchObject(
      lostAfter20.length === 0
        ? { recovered: true, replayed: 100 }
        : {
            recovered: false,
            reason: 'messages_lost',
            replayed: keptAfter20.length,
            lost: lostAfter20,
          },
    );
    // Presence goes on: a member who joins after the failover is seen on the other instance.
    const late = await client(b.url);
    await late.join('chat:f');
    await waitFor(
      async () => members(await a.server.presence('chat:f')) === [onA.id, late.id].sort().join(),
      'A to list the member who joined B after the failover',
    );
    // The old master is a replica of the new one.
    await set.waitSettled(now);
  }, 60_000);

  it('after a forced failover that lost writes, reports exactly the lost messages as a gap, in the same epoch', async () => {
    const p = prefix();
    const a = await startServer(p);
    const b = await startServer(p);
    const onB = await client(b.url);
    await onB.join('hg');
    await b.adapter.synced();
    const send = async (from: number, to: number): Promise<void> => {
      for (let n = from; n <= to; n++) await a.server.broadcast('msg', { n }, '/', 'hg');
      await waitFor(() => onB.offsets('hg').length === to, `message ${to} at B`);
    };
    await send(1, 5);
    const master = await set.master();
    const replica = set.dataPorts.find((port) => port !== master)!;
    const onReplica = async (): Promise<unknown> =>
      set.command(replica, ['HGET', `${p}:hist:{%2F:hg}:m`, 'o']);
    await waitFor(async () => (await onReplica()) === '5', 'the replica to hold message 5');
    // The replica stops hearing its master: messages 6 to 10 are kept, published and
    // delivered by the master alone, then the master dies with them.
    set.pause(replica, true);
    await set.command(master, ['CLIENT', 'KILL', 'TYPE', 'replica']);
    await send(6, 10);
    await set.kill(master);
    set.pause(replica, false);
    expect(await onReplica()).toBe('5');
    await failedOver(master, [a.adapter, b.adapter]);
    // Traffic goes on after the lost messages, in the same epoch.
    await send(11, 15);
    expect(onB.offsets('hg')).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    const epochs = new Set(onB.events('msg').map((m) => m.pos!.epoch));
    expect(epochs.size).toBe(1);
    const [epoch] = [...epochs] as [string];
    expect(await roomHash(p, 'hg')).toMatchObject({ e: epoch, o: '15', l: '6-10 ' });
    const kept = await b.server.history('hg');
    expect(kept).toMatchObject({ reason: 'messages_lost', lost: [{ from: 6, to: 10 }] });
    expect(kept.messages.map((m) => m.pos?.offset)).toEqual([1, 2, 3, 4, 5, 11, 12, 13, 14, 15]);
    // From before the gap: every kept message, and the lost offsets; from after it: complete.
    const early = await client(b.url);
    await early.join('hg', { epoch, offset: 3 });
    expect(early.events('$recovered')[0]!.data).toMatchObject({
      recovered: false,
      reason: 'messages_lost',
      replayed: 7,
      lost: [{ from: 6, to: 10 }],
    });
    expect(early.offsets('hg')).toEqual([4, 5, 11, 12, 13, 14, 15]);
    const after = await client(a.url);
    await after.join('hg', { epoch, offset: 10 });
    expect(after.events('$recovered')[0]!.data).toMatchObject({ recovered: true, replayed: 5 });
  }, 60_000);

  it('with the master killed during traffic, says so, delivers every message or reports it to a client that recovers', async () => {
    const p = prefix();
    const log = new Recording();
    const a = await startServer(p, log);
    const b = await startServer(p);
    const onB = await client(b.url);
    await onB.join('hk');
    await b.adapter.synced();
    await a.server.broadcast('msg', { n: 0 }, '/', 'hk');
    await waitFor(() => onB.offsets('hk').length === 1, 'the first message at B');
    const start = onB.events('msg')[0]!.pos!;
    const master = await set.master();
    let n = 0;
    const sending = (async () => {
      while (n < 80) {
        n += 1;
        await a.server.broadcast('msg', { n }, '/', 'hk');
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    await new Promise((r) => setTimeout(r, 300));
    await set.kill(master);
    await sending;
    await failedOver(master, [a.adapter, b.adapter]);
    // node-redis holds the commands sent while there was no master and runs them on the new
    // one (or the adapter gives up after requestTimeout): wait until every broadcast so far
    // was kept or failed, so that the room's history is final.
    await waitFor(() => {
      const { historyWrites, historyWriteFailures } = a.adapter.stats();
      return historyWrites + historyWriteFailures === 81;
    }, 'every broadcast to be kept or to fail');
    a.server.broadcast('msg', { n: 81 }, '/', 'hk');
    await waitFor(
      () => onB.events('msg').some((m) => m.data['n'] === 81),
      'the message after the failover at B',
    );
    // The outage and the return were logged once each.
    const outage = log.lines.filter((l) => l.includes('serving local clients only'));
    const returned = log.lines.filter((l) => l.includes('reachable again'));
    expect([outage.length, returned.length]).toEqual([1, 1]);
    expect(log.lines.indexOf(outage[0]!)).toBeLessThan(log.lines.indexOf(returned[0]!));
    // B never got a message twice, and each epoch's offsets go up.
    const got = onB.events('msg').filter((m) => m.pos?.room === 'hk');
    const ns = got.map((m) => m.data['n'] as number);
    expect(new Set(ns).size).toBe(ns.length);
    for (const epoch of new Set(got.map((m) => m.pos!.epoch))) {
      const offsets = got.filter((m) => m.pos!.epoch === epoch).map((m) => m.pos!.offset);
      expect(offsets).toEqual([...offsets].sort((x, y) => x - y));
    }
    // A client that recovers from before the failover either gets every message, or is told
    // what it cannot have: what messages were lost, or that the room started a new epoch.
    const back = await client(a.url);
    await back.join('hk', { epoch: start.epoch, offset: start.offset });
    const recovered = back.events('$recovered')[0]!.data;
    if (recovered['recovered'] === true) {
      // Every message, in the order every instance delivered them: their positions, which
      // can differ from the order of sending (node-redis runs the commands it held during
      // the failover in an order of its own).
      const replayed = back.events('msg').map((m) => m.data['n'] as number);
      expect([...replayed].sort((x, y) => x - y)).toEqual(
        Array.from({ length: 81 }, (_, i) => i + 1),
      );
      expect(replayed).toEqual(ns.filter((k) => k >= 1 && k <= 81));
    } else {
      expect(['messages_lost', 'epoch_changed']).toContain(recovered['reason']);
    }
    // After the failover, delivery and recovery go on in full.
    const last = onB.events('msg').at(-1)!.pos!;
    for (let k = 82; k <= 84; k++) a.server.broadcast('msg', { n: k }, '/', 'hk');
    await waitFor(() => onB.events('msg').some((m) => m.data['n'] === 84), 'messages 82-84 at B');
    const later = await client(b.url);
    await later.join('hk', { epoch: last.epoch, offset: last.offset });
    expect(later.events('$recovered')[0]!.data).toMatchObject({ recovered: true, replayed: 3 });
    expect(later.events('msg').map((m) => m.data['n'])).toEqual([82, 83, 84]);
  }, 60_000);
  it('with the master restarted in place (no failover), says so, resumes delivery, and starts a new epoch for what Redis lost', async () => {
    const p = prefix();
    const log = new Recording();
    const a = await startServer(p, log);
    const b = await startServer(p);
    const onB = await client(b.url);
    await onB.join('hr');
    await b.adapter.synced();
    await a.server.broadcast('msg', { n: 1 }, '/', 'hr');
    await waitFor(() => onB.offsets('hr').length === 1, 'the first message at B');
    const before = onB.events('msg')[0]!.pos!;
    // Killed and started again on its port at once, with no data (no persistence): too
    // short for the sentinels to fail over, so only the connections see it.
    const master = await set.master();
    await set.kill(master);
    await set.startData(master, null);
    await waitFor(
      () => log.lines.some((l) => l.includes('reachable again')),
      'the adapter to say Redis is reachable again',
    );
    expect(await set.master()).toBe(master);
    await waitFor(
      () => [a.adapter, b.adapter].every((x) => x.getState() === 'connected'),
      'both adapters connected',
    );
    // Subscriptions are back: the next message reaches B, in a new epoch (the room's keys
    // went with the restart), and a client holding the old position is told so.
    await a.server.broadcast('msg', { n: 2 }, '/', 'hr');
    await waitFor(() => onB.offsets('hr').length === 2, 'the second message at B');
    const after = onB.events('msg')[1]!.pos!;
    expect(after.epoch).not.toBe(before.epoch);
    expect(after.offset).toBe(1);
    const back = await client(a.url);
    await back.join('hr', { epoch: before.epoch, offset: before.offset });
    expect(back.events('$recovered')[0]!.data).toMatchObject({
      recovered: false,
      reason: 'epoch_changed',
    });
    expect(log.lines.filter((l) => l.includes('serving local clients only'))).toHaveLength(1);
  }, 60_000);

  it('carries binary broadcasts between instances byte for byte, and replays them from history', async () => {
    const p = prefix();
    const a = await startServer(p);
    const b = await startServer(p);
    const [onA, onB] = [await client(a.url), await client(b.url)];
    await onA.join('hbin');
    await onB.join('hbin');
    await Promise.all([a.adapter.synced(), b.adapter.synced()]);
    for (let k = 0; k < 2; k++) {
      void a.server.broadcast('blob', Uint8Array.of(0, 0xff, 0x0a, 0x23, k), { room: 'hbin' });
    }
    a.server.broadcast('fence', {}, '/', 'hbin');
    await waitFor(
      () => onA.events('fence').length === 1 && onB.events('fence').length === 1,
      'the fence on both instances',
    );
    expect([onA.binary.length, onB.binary.length]).toEqual([2, 2]);
    // The same frames (positions included) on both instances, the payload unchanged.
    expect(onB.binary.map((f) => [...f])).toEqual(onA.binary.map((f) => [...f]));
    expect(onB.binary.map((f) => [...f.subarray(-5)])).toEqual([
      [0, 0xff, 0x0a, 0x23, 0],
      [0, 0xff, 0x0a, 0x23, 1],
    ]);
    expect(a.adapter.stats()).toMatchObject({ historyWriteFailures: 0 });
    // A client that comes back on B from before them is replayed the same bytes.
    const epoch = onB.events('fence')[0]!.pos!.epoch;
    const back = await client(b.url);
    await back.join('hbin', { epoch, offset: 0 });
    expect(back.events('$recovered')[0]!.data).toMatchObject({ recovered: true, replayed: 3 });
    expect(back.binary.map((f) => [...f])).toEqual(onA.binary.map((f) => [...f]));
  });

  it('closes while the master is gone, with a broadcast waiting for it', async () => {
    const p = prefix();
    const a = await startServer(p);
    const onA = await client(a.url);
    await onA.join('hc');
    await a.adapter.synced();
    const master = await set.master();
    await set.kill(master);
    a.server.broadcast('msg', { n: 1 }, '/', 'hc');
    await a.server.close();
    expect(a.adapter.getState()).toBe('closed');
    expect(a.adapter.stats().pendingRequests).toBe(0);
  }, 60_000);
});

suite('RedisAdapter on a master named by Redis Sentinel, with passwords', () => {
  let set: LocalSentinel;
  const closers: Array<() => unknown> = [];
  const passwords = { password: 'data-secret', sentinelPassword: 'sentinel-secret' };

  beforeAll(async () => {
    set = await LocalSentinel.start(passwords);
  }, 30_000);

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  }, 30_000);

  afterAll(async () => {
    await set?.stop();
  });

  async function startServer(
    credentials: { password?: string; sentinelPassword?: string },
    log = new Recording(),
  ): Promise<{ server: Server; adapter: RedisAdapter; url: string }> {
    const server = new Server(
      new ServerConfig({
        host: '127.0.0.1',
        port: 0,
        heartbeat_interval: 0,
        shutdown_timeout: 200,
        history: [{ match: 'h*', size: 100, ttl: 60_000 }],
        backend_connect_timeout: 500,
      }),
      undefined,
      undefined,
      undefined,
      new NullLogger(),
    );
    const adapter = new RedisAdapter({
      sentinel: { name: MASTER_NAME, sentinelRootNodes: set.rootNodes, ...credentials },
      keyPrefix: 'pw',
      maxReconnectDelay: 200,
      unsubscribeGrace: 0,
      logger: log,
    });
    server.setAdapter(adapter);
    server.registerController(new RoomsController());
    closers.push(() => server.close());
    await server.run().catch(() => undefined); // without Redis, the server still serves
    return { server, adapter, url: `ws://127.0.0.1:${server.getPort()}` };
  }

  it('delivers across instances and keeps history with the right passwords', async () => {
    const a = await startServer(passwords);
    const b = await startServer(passwords);
    await Promise.all([a.adapter.ready(), b.adapter.ready()]);
    const onB = await Client.open(b.url);
    closers.push(() => onB.ws.terminate());
    await onB.join('h1');
    await b.adapter.synced();
    // The first broadcasts of a fresh instance, sent together onto an empty script cache:
    // they reach B in the order sent (node-redis's sentinel client reorders them unless the
    // adapter reserves its master connection).
    for (let n = 1; n <= 3; n++) a.server.broadcast('msg', { n }, '/', 'h1');
    await waitFor(() => onB.offsets('h1').length === 3, 'three messages at B');
    expect(onB.events('msg').map((m) => m.data['n'])).toEqual([1, 2, 3]);
    expect((await b.server.history('h1')).messages).toHaveLength(3);
    expect([a.adapter.getState(), b.adapter.getState()]).toEqual(['connected', 'connected']);
  });

  it('says why it cannot connect with a wrong or missing password, and still closes', async () => {
    for (const credentials of [
      { ...passwords, password: 'wrong' },
      { password: passwords.password },
    ]) {
      const log = new Recording();
      const { adapter, server } = await startServer(credentials, log);
      await waitFor(
        () => log.lines.some((l) => /WRONGPASS|NOAUTH|invalid username-password/i.test(l)),
        'the refusal in the log',
      );
      expect(adapter.getState()).not.toBe('connected');
      await server.close();
      expect(adapter.getState()).toBe('closed');
    }
  }, 30_000);
});
