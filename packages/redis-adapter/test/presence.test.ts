// Presence across instances over a real Redis: two servers in this process see the same
// entries and their members get the other instance's joins and leaves; instances in child
// processes lose a SIGKILLed peer's entries within the node timeout; a Redis restarted
// under them leaves the views correct again.
import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { NullLogger, RoomsController, Server, ServerConfig, type PresenceState } from '@pkg/core';
import { RedisAdapter } from '../src/index';
import { Instance, PrivateRedis, removeBundle, sharedRedisAvailableSync, waitFor } from './helpers';

const SHARED_URL = 'redis://127.0.0.1:6379';
const NODE_TIMEOUT = 1200;
const suite = sharedRedisAvailableSync('presence') ? describe : describe.skip;

const closers: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(removeBundle);

interface Node {
  server: Server;
  adapter: RedisAdapter;
  url: string;
}

async function startNode(redisUrl: string, keyPrefix: string): Promise<Node> {
  const server = new Server(
    new ServerConfig({
      host: '127.0.0.1',
      port: 0,
      heartbeat_interval: 0,
      presence: [{ match: 'chat:*' }],
      presence_node_timeout: NODE_TIMEOUT,
    }),
    undefined,
    undefined,
    undefined,
    new NullLogger(),
  );
  const adapter = new RedisAdapter({ url: redisUrl, keyPrefix, maxReconnectDelay: 100 });
  server.setAdapter(adapter);
  server.registerController(new RoomsController());
  await server.run();
  await adapter.ready();
  closers.push(() => server.close());
  return { server, adapter, url: `ws://127.0.0.1:${server.getPort()}` };
}

interface Envelope {
  event: string;
  data: Record<string, unknown>;
}

/** A protocol version 1 client: says `$hello`, keeps what it receives. */
async function member(url: string): Promise<{ ws: WebSocket; id: string; got: Envelope[] }> {
  const ws = new WebSocket(url, ['pkg.v1']);
  const got: Envelope[] = [];
  ws.on('message', (raw) => got.push(JSON.parse(String(raw)) as Envelope));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  closers.push(() => ws.close());
  ws.send(JSON.stringify({ event: '$hello', data: { v: 1 } }));
  await waitFor(() => got.some((e) => e.event === '$welcome'), '$welcome');
  const id = String(got.find((e) => e.event === '$welcome')!.data['clientId']);
  return { ws, id, got };
}

const ids = (state: PresenceState): string[] =>
  Object.values(state)
    .flatMap((e) => e.metas.map((m) => m.clientId))
    .sort();

async function sameView(nodes: Node[], room: string, expected: string[]): Promise<void> {
  const want = [...expected].sort();
  await waitFor(async () => {
    for (const n of nodes) {
      if (JSON.stringify(ids(await n.server.presence(room))) !== JSON.stringify(want)) return false;
    }
    return true;
  }, `every instance to list ${want.length} entries in ${room}`);
}

suite('presence across instances', () => {
  it('gives both instances the same view and sends each member the other instance’s joins and leaves', async () => {
    const prefix = `ptest-${randomBytes(4).toString('hex')}`;
    const a = await startNode(SHARED_URL, prefix);
    const b = await startNode(SHARED_URL, prefix);
    const onA = await member(a.url);
    const onB = await member(b.url);
    onA.ws.send(JSON.stringify({ event: 'join_room', data: { room: 'chat:1' } }));
    await sameView([a, b], 'chat:1', [onA.id]);
    await waitFor(() => onA.got.some((e) => e.event === '$presence'), 'the state at A');
    onB.ws.send(JSON.stringify({ event: 'join_room', data: { room: 'chat:1' } }));
    await sameView([a, b], 'chat:1', [onA.id, onB.id]);

    // A's member hears of B's join through A's own batched diff; B's member got the state.
    await waitFor(
      () =>
        onA.got.some(
          (e) =>
            e.event === '$presence_diff' &&
            Object.keys((e.data['joins'] as PresenceState) ?? {}).includes(onB.id),
        ),
      'the join of the member of B at A',
    );
    await waitFor(() => onB.got.some((e) => e.event === '$presence'), 'the state at B');
    const stateAtB = onB.got.find((e) => e.event === '$presence')!.data['state'] as PresenceState;
    expect(ids(stateAtB)).toEqual([onA.id, onB.id].sort());

    onB.ws.close();
    await sameView([a, b], 'chat:1', [onA.id]);
    await waitFor(
      () =>
        onA.got.some(
          (e) =>
            e.event === '$presence_diff' &&
            Object.keys((e.data['leaves'] as PresenceState) ?? {}).includes(onB.id),
        ),
      'the leave of the member of B at A',
    );
    expect(await b.server.presenceStats('chat:1')).toEqual({ connections: 1, keys: 1 });
    // A join costs two Redis commands (HSET, PUBLISH), a leave three (HDEL, HSET, PUBLISH).
    expect(b.adapter.presence.stats().remoteEntries).toBe(1);
  });

  it('writes an instance’s hash again when Redis lost it while connected, without a storm of reads', async () => {
    const prefix = `ptest-${randomBytes(4).toString('hex')}`;
    const a = await startNode(SHARED_URL, prefix);
    const b = await startNode(SHARED_URL, prefix);
    const onA = await member(a.url);
    const onB = await member(b.url);
    onA.ws.send(JSON.stringify({ event: 'join_room', data: { room: 'chat:lost' } }));
    onB.ws.send(JSON.stringify({ event: 'join_room', data: { room: 'chat:lost' } }));
    await sameView([a, b], 'chat:lost', [onA.id, onB.id]);
    // Both hashes go, as with a Redis that restarted without its data under connected clients.
    const { createClient } = await import('redis');
    const admin = createClient({ url: SHARED_URL });
    await admin.connect();
    try {
      const keys = await admin.keys(`${prefix}:presence:node:*`);
      expect(keys).toHaveLength(2);
      await admin.del(keys);
      const syncsBefore = a.adapter.presence.stats().syncs + b.adapter.presence.stats().syncs;
      // Each instance finds its hash gone at its next heartbeat and writes it again.
      await waitFor(
        async () => (await admin.keys(`${prefix}:presence:node:*`)).length === 2,
        'both hashes written again',
      );
      await new Promise((r) => setTimeout(r, NODE_TIMEOUT));
      await sameView([a, b], 'chat:lost', [onA.id, onB.id]);
      // Reads of the hashes are spaced (100 ms at least), not repeated at once.
      const syncs =
        a.adapter.presence.stats().syncs + b.adapter.presence.stats().syncs - syncsBefore;
      expect(syncs).toBeLessThan(60);
    } finally {
      admin.destroy();
    }
  });
});

/** Instances in child processes with presence on `chat:*`. */
async function instances(n: number, redisUrl: string, prefix: string): Promise<Instance[]> {
  const env = {
    REDIS_URL: redisUrl,
    KEY_PREFIX: prefix,
    PRESENCE_NODE_TIMEOUT: String(NODE_TIMEOUT),
  };
  const started = await Promise.all(
    Array.from({ length: n }, () => Instance.start(env, 'presence-instance')),
  );
  // A killed instance has nothing left to stop.
  for (const i of started) closers.push(() => (i.child.signalCode === null ? i.stop() : undefined));
  return started;
}

async function viewsEqual(nodes: Instance[], room: string, expected: string[], limitMs?: number) {
  const want = JSON.stringify([...expected].sort());
  await waitFor(
    async () => {
      for (const n of nodes) {
        if (JSON.stringify(await n.call<string[]>('presence', { room })) !== want) return false;
      }
      return true;
    },
    `every instance to list exactly ${expected.length} entries in ${room}`,
    limitMs,
  );
}

suite('presence across processes', () => {
  it('drops the entries of a SIGKILLed instance everywhere within presence_node_timeout, and members get the leaves', async () => {
    const prefix = `ptest-${randomBytes(4).toString('hex')}`;
    const [a, b, c] = await instances(3, SHARED_URL, prefix);
    const watcher = await member(a!.wsUrl);
    await a!.call('join', { clientId: watcher.id, room: 'chat:k' });
    const doomed = [await b!.connect(), await b!.connect()];
    const kept = await c!.connect();
    for (const d of doomed) await b!.call('join', { clientId: d.id, room: 'chat:k' });
    await c!.call('join', { clientId: kept.id, room: 'chat:k' });
    const everyone = [watcher.id, kept.id, ...doomed.map((d) => d.id)];
    await viewsEqual([a!, b!, c!], 'chat:k', everyone);
    await waitFor(
      () =>
        watcher.got.some(
          (e) =>
            (e.event === '$presence' || e.event === '$presence_diff') &&
            JSON.stringify(e.data).includes(doomed[1]!.id),
        ),
      'the watcher to hear of the doomed instance’s members',
    );

    b!.child.kill('SIGKILL');
    // The bound is the contract: gone everywhere within the node timeout of the kill.
    await viewsEqual([a!, c!], 'chat:k', [watcher.id, kept.id], NODE_TIMEOUT);
    await waitFor(
      () =>
        watcher.got.some(
          (e) =>
            e.event === '$presence_diff' &&
            doomed.every((d) => Object.keys(e.data['leaves'] as PresenceState).includes(d.id)),
        ),
      'the leaves of the killed instance’s members at the watcher',
    );
    expect((await a!.call<{ expiredNodes: number }>('stats')).expiredNodes).toBe(1);
  }, 60_000);

  it('keeps local presence through a Redis restart and converges when Redis returns', async () => {
    const redis = await PrivateRedis.start();
    closers.push(() => redis.stop());
    const [a, b] = await instances(2, redis.url, 'restart');
    const [a1, a2, b1] = [await a!.connect(), await a!.connect(), await b!.connect()];
    await a!.call('join', { clientId: a1.id, room: 'chat:r' });
    await b!.call('join', { clientId: b1.id, room: 'chat:r' });
    await viewsEqual([a!, b!], 'chat:r', [a1.id, b1.id]);

    await redis.stop();
    // Local presence goes on without Redis; the view of the other instance is kept as it was.
    await a!.call('leave', { clientId: a1.id, room: 'chat:r' });
    await a!.call('join', { clientId: a2.id, room: 'chat:r' });
    await viewsEqual([a!], 'chat:r', [a2.id, b1.id]);

    await redis.start();
    await viewsEqual([a!, b!], 'chat:r', [a2.id, b1.id], 20_000);
    const b2 = await b!.connect();
    await b!.call('join', { clientId: b2.id, room: 'chat:r' });
    await viewsEqual([a!, b!], 'chat:r', [a2.id, b1.id, b2.id]);
  }, 60_000);
});
