// RedisAdapter on a Redis Cluster of its own (3 masters, 3 replicas, started and stopped
// here): two servers in this process with the adapter in cluster mode, `ws` clients on
// each. Delivery across instances, history and recovery on any instance, presence, the
// subscribe connections at 10,000 rooms (counted with CLIENT LIST on every node), a slot
// migration during traffic, a manual failover during traffic (nothing lost, one epoch), a
// forced failover that loses writes (exactly those reported as a gap, one epoch), and the
// whole cluster down and back (degraded, local service, resumption, close() bounded), and
// binary messages beside JSON ones (bytes across instances, kept, recovered, replayed).
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { decodeBinaryFrame, type BinaryFrame } from '@pkg/wire';
import { NullLogger, RoomsController, Server, ServerConfig, type PresenceState } from '@pkg/core';
import { RedisAdapter, type RedisAdapterOptions } from '../src/index';
import { ClusterConnection } from '../src/cluster-connection';
import { keySlot } from '../src/key-slot';
import { waitFor } from './helpers';
import { LocalCluster, clusterToolsAvailableSync } from './local-cluster';

const suite = clusterToolsAvailableSync('@pkg/redis-adapter Redis Cluster tests')
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

/**
 * A protocol version 1 `ws` client: says $hello, then keeps what it receives (binary frames
 * apart, and `all` in the order they came). Opened with version 0, a JSON-only client.
 */
class V1Client {
  readonly received: Message[] = [];
  readonly frames: BinaryFrame[] = [];
  readonly all: Array<Message | BinaryFrame> = [];
  id = '';

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (raw: Buffer, isBinary: boolean) => {
      if (isBinary) {
        const read = decodeBinaryFrame(new Uint8Array(raw));
        if (read.ok) this.frames.push(read.frame);
        if (read.ok) this.all.push(read.frame);
        return;
      }
      const message = JSON.parse(String(raw)) as Message;
      this.received.push(message);
      this.all.push(message);
    });
  }

  static async open(url: string, version: 0 | 1 = 1): Promise<V1Client> {
    const ws = new WebSocket(url, version === 1 ? ['pkg.v1'] : []);
    const client = new V1Client(ws);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    if (version === 0) return client;
    ws.send(JSON.stringify({ event: '$hello', data: { v: 1 } }));
    await waitFor(() => client.received.some((m) => m.event === '$welcome'), '$welcome');
    client.id = String(client.received.find((m) => m.event === '$welcome')!.data['clientId']);
    return client;
  }

  send(event: string, data: unknown, id?: unknown): void {
    this.ws.send(JSON.stringify(id === undefined ? { event, data } : { event, data, id }));
  }

  /** Joins a room (optionally recovering from a position) and waits for the answer. */
  async join(room: string, since?: { epoch: string; offset: number }): Promise<Message[]> {
    const id = randomBytes(4).toString('hex');
    this.send('join_room', since ? { room, since } : { room }, id);
    const done = since ? (m: Message) => m.event === '$recovered' : (m: Message) => m.id === id;
    await waitFor(() => this.received.some(done), `the join of ${room}`);
    return this.received.slice();
  }

  events(name: string): Message[] {
    return this.received.filter((m) => m.event === name);
  }
}

suite('RedisAdapter on a Redis Cluster', () => {
  let cluster: LocalCluster;
  const closers: Array<() => unknown> = [];

  beforeAll(async () => {
    cluster = await LocalCluster.start();
  }, 30_000);

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  }, 30_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  async function startServer(
    keyPrefix: string,
    extra: Partial<RedisAdapterOptions> = {},
  ): Promise<{ server: Server; adapter: RedisAdapter; url: string }> {
    const server = new Server(
      new ServerConfig({
        host: '127.0.0.1',
        port: 0,
        heartbeat_interval: 0,
        shutdown_timeout: 200,
        max_rooms_per_client: 0,
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
      cluster: { rootNodes: cluster.rootNodes, checkInterval: 200 },
      keyPrefix,
      maxReconnectDelay: 200,
      maxSubscribesPerSecond: 0,
      unsubscribeGrace: 0,
      ...extra,
    });
    server.setAdapter(adapter);
    server.registerController(new RoomsController());
    await server.run();
    await adapter.ready();
    closers.push(() => server.close());
    return { server, adapter, url: `ws://127.0.0.1:${server.getPort()}` };
  }

  async function client(url: string, version: 0 | 1 = 1): Promise<V1Client> {
    const c = await V1Client.open(url, version);
    closers.push(() => c.ws.terminate());
    return c;
  }

  const same = (a: Uint8Array | undefined, b: Uint8Array): boolean =>
    a !== undefined && Buffer.from(a).equals(Buffer.from(b));

  function prefix(): string {
    return `ct${randomBytes(3).toString('hex')}`;
  }

  it('delivers to all, a namespace, a room and with except once each, across instances', async () => {
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
    expect([a1, a2, b1, b2].map((c) => c.events('to-room').length)).toEqual([0, 1, 1, 0]);
    expect([a1, a2, b1, b2].map((c) => c.events('except').length)).toEqual([0, 1, 0, 0]);
    // Cluster-wide requests go over sharded channels too.
    expect(await a.server.countClients({ room: 'r' })).toBe(2);
    expect((await b.server.fetchClientIds({ room: 'r' })).sort()).toEqual([a2.id, b1.id].sort());
    expect(a.adapter.getState()).toBe('connected');
  });

  /** The slot of a room of the default namespace (its channel and history keys share it). */
  function roomSlot(room: string): number {
    return keySlot(`{%2F:${room}}`);
  }

  /** The room messages a client got, as [offset, n]. */
  function offsets(c: V1Client, room: string): number[] {
    return c.received
      .filter((m) => m.event === 'msg' && m.pos?.room === room)
      .map((m) => m.pos!.offset);
  }

  it('keeps history in the room’s shard and recovers a client on the other instance', async () => {
    const p = prefix();
    const a = await startServer(p);
    const b = await startServer(p);
    const onA = await client(a.url);
    await onA.join('h1');
    await a.adapter.synced();
    for (let n = 1; n <= 3; n++) b.server.broadcast('msg', { n }, '/', 'h1');
    await waitFor(() => offsets(onA, 'h1').length === 3, 'three messages on A');
    const seen = onA.received.filter((m) => m.event === 'msg').at(-1)!.pos!;
    onA.ws.terminate();
    for (let n = 4; n <= 6; n++) b.server.broadcast('msg', { n }, '/', 'h1');
    await waitFor(async () => (await b.server.history('h1')).messages.length === 6, 'six kept');

    const back = await client(b.url);
    await back.join('h1', { epoch: seen.epoch, offset: seen.offset });
    expect(back.events('msg').map((m) => m.data['n'])).toEqual([4, 5, 6]);
    expect(back.events('$recovered')[0]!.data).toMatchObject({ recovered: true, replayed: 3 });
    // The room's keys and channel are on the master that serves the room's slot.
    const master = await cluster.masterOf(roomSlot('h1'));
    const keys = (await cluster.command(master.port, ['KEYS', `${p}:hist:*`])) as string[];
    expect(keys.sort()).toEqual([`${p}:hist:{%2F:h1}:m`, `${p}:hist:{%2F:h1}:s`]);
  });

  it('carries binary messages beside JSON ones: bytes across instances, kept in the room’s shard, recovered and replayed as bytes', async () => {
    const p = prefix();
    const a = await startServer(p);
    const b = await startServer(p);
    const room = 'hbin';
    const [a1, a0, b1, b0] = await Promise.all([
      client(a.url),
      client(a.url, 0),
      client(b.url),
      client(b.url, 0),
    ]);
    for (const c of [a1, a0, b1, b0]) await c.join(room);
    await Promise.all([a.adapter.synced(), b.adapter.synced()]);
    // 64 KiB of random bytes, and a short payload made of the bytes the position line and
    // the header line are cut at.
    const sent = [new Uint8Array(randomBytes(64 * 1024)), Uint8Array.of(0x23, 0x0a, 0x3a, 0, 0xff)];
    a.server.broadcast('doc.update', sent[0]!, '/', room);
    // Broadcasts of two instances are numbered in the order Redis runs them: B's wait for A's.
    await waitFor(() => [a1, b1].every((c) => c.frames.length === 1), 'the first frame');
    b.server.broadcast('doc.note', { text: 'hi' }, '/', room);
    b.server.broadcast('doc.update', sent[1]!, '/', room);
    await waitFor(() => [a1, b1].every((c) => c.frames.length === 2), 'two frames on A and B');
    await waitFor(
      () => [a1, a0, b1, b0].every((c) => c.events('doc.note').length === 1),
      'the JSON note everywhere',
    );
    for (const c of [a1, b1]) {
      expect(c.frames.map((f, i) => same(f.data, sent[i]!))).toEqual([true, true]);
      expect(c.frames.map((f) => f.pos?.offset)).toEqual([1, 3]);
      expect(c.events('doc.note')[0]!.pos?.offset).toBe(2);
    }
    expect([a0.frames.length, b0.frames.length]).toEqual([0, 0]);
    for (const { adapter } of [a, b]) {
      expect(adapter.stats()).toMatchObject({ historyWriteFailures: 0, dropped: 0 });
    }
    expect(a.adapter.stats().historyWrites + b.adapter.stats().historyWrites).toBe(3);
    const epoch = a1.frames[0]!.pos!.epoch;

    // A client of A comes back on B, from before the first message: bytes, text, bytes.
    const back = await client(b.url);
    await back.join(room, { epoch, offset: 0 });
    const end = back.all.findIndex((m) => 'event' in m && m.event === '$recovered');
    const replay = back.all.slice(0, end).filter((m) => m.pos !== undefined);
    expect(
      replay.map((m) => ('data' in m && m.data instanceof Uint8Array ? 'bytes' : 'json')),
    ).toEqual(['bytes', 'json', 'bytes']);
    const bytes = replay.flatMap((m) => (m.data instanceof Uint8Array ? [m.data] : []));
    expect(bytes.map((d, i) => same(d, sent[i]!))).toEqual([true, true]);
    expect(back.events('$recovered')[0]!.data).toMatchObject({ recovered: true, replayed: 3 });

    // $history on A: the binary parts (with the request's id), then the answer pointing at them.
    a1.send('$history', { room }, 'hist');
    await waitFor(() => a1.received.some((m) => m.id === 'hist'), 'the $history answer');
    const parts = a1.frames.filter((f) => f.id === 'hist');
    expect(parts.map((f) => f.pos?.offset)).toEqual([1, 3]);
    expect(parts.map((f, i) => same(f.data, sent[i]!))).toEqual([true, true]);
    const answer = a1.received.find((m) => m.id === 'hist')!;
    const messages = answer.data['messages'] as Array<Record<string, unknown>>;
    expect(messages.map((m) => m['binary'] ?? m['data'])).toEqual([0, { text: 'hi' }, 1]);

    // Bytes to one client of the other instance go over the sharded request channel.
    const direct = Uint8Array.of(0x0a, 0x23, 0, 0xff);
    expect(a.server.send(b1.id, 'direct', direct)).toBe(true);
    await waitFor(() => b1.frames.some((f) => f.event === 'direct'), 'the direct frame on B');
    expect(same(b1.frames.find((f) => f.event === 'direct')!.data, direct)).toBe(true);
  });

  it('holds a buffer-mode sharded subscription as such: bytes handed on as they are, never subscribed again', async () => {
    const link = new ClusterConnection(
      {
        rootNodes: cluster.rootNodes,
        maxReconnectDelay: 200,
        name: 'pkg-buffer-mode',
        checkInterval: 60_000,
        commandTimeout: 5000,
        missed: () => Promise.resolve(null),
      },
      () => undefined,
    );
    closers.push(() => link.close());
    await link.connect();
    const channel = `${prefix()}:room:{bytes}`;
    const got: unknown[] = [];
    await link.subscribe(channel, (message) => got.push(message), true);
    const sent = Buffer.from([0x7b, 0x0a, 0xff, 0, 0x80]); // not UTF-8
    await link.publish(channel, sent);
    await waitFor(() => got.length === 1, 'the message');
    expect(Buffer.isBuffer(got[0]) && sent.equals(got[0])).toBe(true);
    // The check finds the channel held in buffer mode on its master: nothing to do again.
    link.check();
    link.check();
    expect(link.resubscribed).toBe(0);
  });

  it('shares presence between the instances', async () => {
    const p = prefix();
    const a = await startServer(p);
    const b = await startServer(p);
    const onA = await client(a.url);
    const onB = await client(b.url);
    await onA.join('chat:1');
    await onB.join('chat:1');
    const ids = (state: PresenceState): string[] =>
      Object.values(state)
        .flatMap((e) => e.metas.map((m) => m.clientId))
        .sort();
    const both = [onA.id, onB.id].sort();
    await waitFor(async () => {
      const views = await Promise.all([a.server.presence('chat:1'), b.server.presence('chat:1')]);
      return views.every((v) => JSON.stringify(ids(v)) === JSON.stringify(both));
    }, 'both instances to list both members');
    onB.ws.close();
    await waitFor(
      async () =>
        JSON.stringify(ids(await a.server.presence('chat:1'))) === JSON.stringify([onA.id]),
      'the leave of the member of B at A',
    );
  });

  it('holds 10,000 rooms on one subscribe connection per master', async () => {
    const p = prefix();
    const a = await startServer(p);
    const c = await client(a.url);
    for (let i = 0; i < 10_000; i++) a.server.joinRoom(c.id, `many-${i}`);
    await a.adapter.synced();
    const mine = await cluster.clientsNamed(`pkg-${a.adapter.nodeId}`);
    const subscribing = mine.filter((x) => x.ssub > 0 || x.sub > 0);
    const masters = (await cluster.nodes(cluster.ports[0]!)).filter(
      (n) => n.master && n.slots.length > 0,
    ).length;
    expect(masters).toBe(3);
    expect(subscribing.length).toBeLessThanOrEqual(masters + 1);
    // Every room channel is held, spread over the masters.
    expect(subscribing.reduce((sum, x) => sum + x.ssub, 0)).toBeGreaterThanOrEqual(10_000);
    expect(new Set(subscribing.map((x) => x.port)).size).toBe(masters);
  }, 60_000);

  /** Broadcasts `count` messages to a room from `server`, one every `everyMs`, while `during` runs. */
  async function traffic(
    server: Server,
    room: string,
    count: number,
    during: () => Promise<void>,
    everyMs = 5,
  ): Promise<void> {
    let n = 0;
    const sending = (async () => {
      while (n < count) {
        n += 1;
        await server.broadcast('msg', { n }, '/', room);
        await new Promise((r) => setTimeout(r, everyMs));
      }
    })();
    await during();
    await sending;
  }

  it('loses no room and no message when the room’s slot migrates during traffic', async () => {
    const p = prefix();
    const a = await startServer(p);
    const b = await startServer(p);
    const onB = await client(b.url);
    await onB.join('hm');
    await b.adapter.synced();
    const slot = roomSlot('hm');
    const from = await cluster.masterOf(slot);
    const to = (await cluster.nodes(from.port)).find(
      (n) => n.master && !n.failed && n.port !== from.port && n.slots.length > 0,
    )!;
    await traffic(a.server, 'hm', 200, async () => {
      await new Promise((r) => setTimeout(r, 100));
      await cluster.migrateSlot(slot, to.port);
    });
    expect((await cluster.masterOf(slot)).port).toBe(to.port);
    await waitFor(() => offsets(onB, 'hm').length >= 200, 'every message at B');
    expect(offsets(onB, 'hm')).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(new Set(onB.events('msg').map((m) => m.pos!.epoch)).size).toBe(1);
    // After it, a client recovers from any position, and live traffic still reaches B.
    const epoch = onB.events('msg')[0]!.pos!.epoch;
    const back = await client(a.url);
    await back.join('hm', { epoch, offset: 150 });
    expect(back.events('msg').map((m) => m.pos!.offset)).toEqual(
      Array.from({ length: 50 }, (_, i) => i + 151),
    );
    a.server.broadcast('msg', { n: 201 }, '/', 'hm');
    await waitFor(() => offsets(onB, 'hm').length === 201, 'a message after the migration');
  }, 60_000);

  /** The room's hash (epoch `e`, last offset `o`, lost ranges `l`) on the master of its slot. */
  async function roomHash(p: string, room: string): Promise<Record<string, string>> {
    const master = await cluster.masterOf(roomSlot(room));
    const reply = await cluster.command(master.port, ['HGETALL', `${p}:hist:{%2F:${room}}:m`]);
    if (!Array.isArray(reply)) return { ...(reply as Record<string, string>) };
    const out: Record<string, string> = {};
    for (let k = 0; k < reply.length; k += 2) out[String(reply[k])] = String(reply[k + 1]);
    return out;
  }

  it('after a manual failover during traffic, goes on in the same epoch with nothing missing', async () => {
    const p = prefix();
    const a = await startServer(p);
    const b = await startServer(p);
    const onB = await client(b.url);
    await onB.join('hf');
    await b.adapter.synced();
    const master = await cluster.masterOf(roomSlot('hf'));
    const replica = await cluster.replicaOf(master);
    await traffic(
      a.server,
      'hf',
      150,
      async () => {
        await new Promise((r) => setTimeout(r, 200));
        // The replica catches up with its master, then takes over: nothing is lost.
        await cluster.command(replica.port, ['CLUSTER', 'FAILOVER']);
        await waitFor(
          async () =>
            (await cluster.masterOf(roomSlot('hf')).catch(() => null))?.port === replica.port,
          'the replica to take over',
        );
        await cluster.waitHealthy();
      },
      10,
    );
    await waitFor(() => offsets(onB, 'hf').length >= 150, 'every message at B', 20_000).catch(
      () => undefined,
    );
    expect(offsets(onB, 'hf')).toEqual(Array.from({ length: 150 }, (_, i) => i + 1));
    const epochs = new Set(onB.events('msg').map((m) => m.pos!.epoch));
    expect(epochs.size).toBe(1);
    const [epoch] = [...epochs] as [string];
    // No lost range was recorded, and a client recovers from before the failover in full.
    expect(await roomHash(p, 'hf')).toMatchObject({ e: epoch, o: '150' });
    expect((await roomHash(p, 'hf'))['l']).toBeUndefined();
    const back = await client(b.url);
    await back.join('hf', { epoch, offset: 20 });
    expect(back.events('$recovered')[0]!.data).toMatchObject({ recovered: true, replayed: 130 });
    expect(back.events('msg').map((m) => m.pos!.offset)).toEqual(
      Array.from({ length: 130 }, (_, i) => i + 21),
    );
    // The old master is a replica of the new one now.
    expect((await cluster.replicaOf(await cluster.masterOf(roomSlot('hf')))).port).toBe(
      master.port,
    );
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
      await waitFor(() => offsets(onB, 'hg').length === to, `message ${to} at B`);
    };
    await send(1, 5);
    const master = await cluster.masterOf(roomSlot('hg'));
    const replica = await cluster.replicaOf(master);
    /** The room's last offset as the replica holds it. */
    const onReplica = async (): Promise<unknown> => {
      const admin = await cluster.admin(replica.port);
      try {
        await admin.sendCommand(['READONLY']);
        return await admin.sendCommand(['HGET', `${p}:hist:{%2F:hg}:m`, 'o']);
      } finally {
        admin.destroy();
      }
    };
    await waitFor(async () => (await onReplica()) === '5', 'the replica to hold message 5');
    // The replica stops hearing its master: messages 6 to 10 are kept, published and
    // delivered by the master alone, then the master dies with them.
    cluster.pauseNode(replica.port, true);
    await cluster.command(master.port, ['CLIENT', 'KILL', 'TYPE', 'replica']);
    await send(6, 10);
    await cluster.killNode(master.port);
    cluster.pauseNode(replica.port, false);
    // What the replica holds: up to 5.
    expect(await onReplica()).toBe('5');
    // Messages 11 to 20 are sent while the replica takes over (forced: its master is dead).
    const during = (async () => {
      for (let n = 11; n <= 20; n++) {
        await a.server.broadcast('msg', { n }, '/', 'hg');
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await cluster.command(replica.port, ['CLUSTER', 'FAILOVER', 'TAKEOVER']);
    await waitFor(
      async () => (await cluster.masterOf(roomSlot('hg')).catch(() => null))?.port === replica.port,
      'the replica to take over',
    );
    await cluster.waitHealthy();
    await during;
    await waitFor(() => offsets(onB, 'hg').length === 20, 'messages 11 to 20 at B');
    // Traffic goes on: the messages after the lost ones come after them, in the same epoch.
    await send(21, 25);
    expect(offsets(onB, 'hg')).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    expect(a.adapter.stats()).toMatchObject({ historyWriteFailures: 0 });
    const epochs = new Set(onB.events('msg').map((m) => m.pos!.epoch));
    expect(epochs.size).toBe(1);
    const [epoch] = [...epochs] as [string];
    expect(await roomHash(p, 'hg')).toMatchObject({ e: epoch, o: '25', l: '6-10 ' });
    // The room's history shows the gap: 1 to 5, then 11 to 25.
    const kept = await b.server.history('hg');
    expect(kept).toMatchObject({ reason: 'messages_lost', lost: [{ from: 6, to: 10 }] });
    expect(kept.messages.map((m) => m.pos?.offset)).toEqual([
      1,
      2,
      3,
      4,
      5,
      ...Array.from({ length: 15 }, (_, i) => i + 11),
    ]);
    // A client that recovers from before the lost range gets every kept message and is told
    // the offsets it cannot have, not that the room started over; one that had them all
    // recovers the rest.
    const keptAfter = (since: number): number[] =>
      [1, 2, 3, 4, 5, ...Array.from({ length: 15 }, (_, i) => i + 11)].filter((o) => o > since);
    for (const since of [2, 5, 7]) {
      const c = await client(b.url);
      await c.join('hg', { epoch, offset: since });
      expect(c.events('$recovered')[0]!.data).toMatchObject({
        recovered: false,
        reason: 'messages_lost',
        replayed: keptAfter(since).length,
        lost: [{ from: Math.max(6, since + 1), to: 10 }],
      });
      expect(c.events('msg').map((m) => m.pos!.offset)).toEqual(keptAfter(since));
    }
    const after = await client(a.url);
    await after.join('hg', { epoch, offset: 10 });
    expect(after.events('$recovered')[0]!.data).toMatchObject({ recovered: true, replayed: 15 });
    expect(after.events('msg').map((m) => m.pos!.offset)).toEqual(
      Array.from({ length: 15 }, (_, i) => i + 11),
    );
    // The killed node comes back as a replica.
    await cluster.startNode(master.port);
    await cluster.waitHealthy();
  }, 60_000);

  it('after a forced failover, an instance subscribed to the room moves its offset past the lost messages it received', async () => {
    const p = prefix();
    const a = await startServer(p);
    const b = await startServer(p);
    const c = await startServer(p); // publishes only after the failover: it knows nothing of before
    const onB = await client(b.url);
    await onB.join('hk');
    await b.adapter.synced();
    const send = async (server: Server, from: number, to: number): Promise<void> => {
      for (let n = from; n <= to; n++) await server.broadcast('msg', { n }, '/', 'hk');
      await waitFor(() => offsets(onB, 'hk').length === to, `message ${to} at B`);
    };
    await send(a.server, 1, 5);
    const master = await cluster.masterOf(roomSlot('hk'));
    const replica = await cluster.replicaOf(master);
    const onReplica = async (): Promise<unknown> => {
      const admin = await cluster.admin(replica.port);
      try {
        await admin.sendCommand(['READONLY']);
        return await admin.sendCommand(['HGET', `${p}:hist:{%2F:hk}:m`, 'o']);
      } finally {
        admin.destroy();
      }
    };
    await waitFor(async () => (await onReplica()) === '5', 'the replica to hold message 5');
    cluster.pauseNode(replica.port, true);
    await cluster.command(master.port, ['CLIENT', 'KILL', 'TYPE', 'replica']);
    await send(a.server, 6, 10);
    await cluster.killNode(master.port);
    cluster.pauseNode(replica.port, false);
    await cluster.command(replica.port, ['CLUSTER', 'FAILOVER', 'TAKEOVER']);
    await waitFor(
      async () => (await cluster.masterOf(roomSlot('hk')).catch(() => null))?.port === replica.port,
      'the replica to take over',
    );
    await cluster.waitHealthy();
    // B subscribes the room again on its new master and moves the room past 10.
    await waitFor(async () => (await roomHash(p, 'hk'))['o'] === '10', 'the room to be at 10');
    expect((await roomHash(p, 'hk'))['l']).toBe('6-10 ');
    // C's messages come after the lost ones: B delivers them, none taken for one it had.
    await send(c.server, 11, 13);
    expect(offsets(onB, 'hk')).toEqual(Array.from({ length: 13 }, (_, i) => i + 1));
    expect(new Set(onB.events('msg').map((m) => m.pos!.epoch)).size).toBe(1);
    await cluster.startNode(master.port);
    await cluster.waitHealthy();
  }, 60_000);

  /** Resolves with what `work` gave, or rejects once `ms` passed. */
  async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        work,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  it('closes within a bounded time while the whole cluster is down', async () => {
    const p = prefix();
    const a = await startServer(p);
    const onA = await client(a.url);
    await onA.join('hc');
    await onA.join('chat:c');
    await a.adapter.synced();
    await a.server.broadcast('msg', { n: 1 }, '/', 'hc');
    const ports = cluster.alive;
    try {
      await Promise.all(ports.map((port) => cluster.killNode(port)));
      await waitFor(() => a.adapter.getState() === 'degraded', 'the adapter to see the outage');
      // Traffic while it is down: local clients are still served, nothing throws.
      for (let n = 2; n <= 5; n++) await a.server.broadcast('msg', { n }, '/', 'hc');
      await waitFor(() => offsets(onA, 'hc').length === 5, 'local delivery during the outage');
      await new Promise((r) => setTimeout(r, 1500)); // reconnection attempts and topology refreshes run
      await within(5000, 'adapter.close() with the cluster down', a.adapter.close());
      expect(a.adapter.getState()).toBe('closed');
    } finally {
      await Promise.all(ports.map((port) => cluster.startNode(port)));
      await cluster.waitHealthy(30_000);
    }
  }, 60_000);

  it('Redis Cluster down and back: says degraded, keeps serving locally, resumes delivery, history and presence, then closes', async () => {
    const p = prefix();
    const a = await startServer(p);
    const b = await startServer(p);
    const onA = await client(a.url);
    const onB = await client(b.url);
    await onB.join('hd');
    await onA.join('chat:d');
    await onB.join('chat:d');
    await Promise.all([a.adapter.synced(), b.adapter.synced()]);
    const members = async (server: Server): Promise<string[]> =>
      Object.values(await server.presence('chat:d'))
        .flatMap((e) => e.metas.map((m) => m.clientId))
        .sort();
    const both = [onA.id, onB.id].sort();
    await waitFor(
      async () => JSON.stringify(await members(a.server)) === JSON.stringify(both),
      'both members listed before the outage',
    );
    const errors: unknown[] = [];
    const onUnhandled = (err: unknown): void => void errors.push(err);
    process.on('unhandledRejection', onUnhandled);
    const ports = cluster.alive;
    try {
      // Traffic from A to the room of B while every node of the cluster goes down.
      await traffic(
        a.server,
        'hd',
        60,
        async () => {
          await new Promise((r) => setTimeout(r, 50));
          await Promise.all(ports.map((port) => cluster.killNode(port)));
          await waitFor(
            () => a.adapter.getState() === 'degraded' && b.adapter.getState() === 'degraded',
            'both adapters to say degraded',
          );
        },
        10,
      );
      const beforeOutage = onB.events('msg').at(-1)!.pos!;
      // Down: local clients are still served.
      const local = await client(a.url);
      await local.join('hd');
      a.server.broadcast('msg', { n: 'local' }, '/', 'hd');
      await waitFor(
        () => local.events('msg').some((m) => m.data['n'] === 'local'),
        'local delivery during the outage',
      );
      await new Promise((r) => setTimeout(r, 1500)); // reconnection attempts run meanwhile

      // Back: the same nodes start again (their data is gone: the test's nodes keep none).
      await Promise.all(ports.map((port) => cluster.startNode(port)));
      await cluster.waitHealthy(30_000);
      await waitFor(
        () => a.adapter.getState() === 'connected' && b.adapter.getState() === 'connected',
        'both adapters connected again',
        20_000,
      );
      // Delivery across instances resumes, on the room channel subscribed again.
      const seen = onB.events('msg').length;
      await waitFor(
        async () => {
          await a.server.broadcast('msg', { n: 'back' }, '/', 'hd');
          await new Promise((r) => setTimeout(r, 100));
          return onB.events('msg').length > seen;
        },
        'a message from A at B after the cluster is back',
        20_000,
      );
      // History: kept again, and a client recovers from a position taken after the return.
      const after = onB.events('msg').at(-1)!.pos!;
      for (let n = 1; n <= 3; n++) await a.server.broadcast('msg', { n: `later-${n}` }, '/', 'hd');
      const back = await client(b.url);
      await back.join('hd', { epoch: after.epoch, offset: after.offset });
      expect(back.events('$recovered')[0]!.data).toMatchObject({ recovered: true, replayed: 3 });
      expect(back.events('msg').map((m) => m.data['n'])).toEqual(['later-1', 'later-2', 'later-3']);
      // The kept messages of before went with the nodes' data: a position from then is of
      // another epoch now.
      const old = await client(a.url);
      await old.join('hd', { epoch: beforeOutage.epoch, offset: beforeOutage.offset });
      expect(old.events('$recovered')[0]!.data).toMatchObject({
        recovered: false,
        reason: 'epoch_changed',
      });
      // Presence: both members are listed again (their keys were lost with the data).
      await waitFor(
        async () =>
          JSON.stringify(await members(a.server)) === JSON.stringify(both) &&
          JSON.stringify(await members(b.server)) === JSON.stringify(both),
        'both members listed again on both instances',
        20_000,
      );
      // And close() finishes.
      await within(5000, 'adapter.close() of A', a.adapter.close());
      await within(5000, 'adapter.close() of B', b.adapter.close());
      expect([a.adapter.getState(), b.adapter.getState()]).toEqual(['closed', 'closed']);
      expect(errors).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await Promise.all(
        ports.filter((port) => !cluster.alive.includes(port)).map((p) => cluster.startNode(p)),
      );
    }
  }, 120_000);
});
