// A property of presence across instances: after any interleaving of joins, leaves,
// disconnects, meta updates and instance kills (SIGKILL), once quiet for the node timeout,
// every live instance lists exactly the live connections of each room. Instances run in
// child processes sharing one Redis; few runs with a fixed seed keep it short.
import { afterAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import {
  Instance,
  removeBundle,
  sharedRedisAvailableSync,
  waitFor,
  type TestClient,
} from './helpers';

const NODE_TIMEOUT = 1200;
const ROOMS = ['chat:0', 'chat:1'];
const suite = sharedRedisAvailableSync('presence property') ? describe : describe.skip;
afterAll(removeBundle);

type Op =
  | { t: 'connect'; node: number }
  | { t: 'join' | 'leave' | 'update'; client: number; room: number }
  | { t: 'disconnect'; client: number }
  | { t: 'kill'; node: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ t: fc.constant('connect' as const), node: fc.nat(2) }),
  fc.record({ t: fc.constant('join' as const), client: fc.nat(9), room: fc.nat(1) }),
  fc.record({ t: fc.constant('join' as const), client: fc.nat(9), room: fc.nat(1) }),
  fc.record({ t: fc.constant('leave' as const), client: fc.nat(9), room: fc.nat(1) }),
  fc.record({ t: fc.constant('update' as const), client: fc.nat(9), room: fc.nat(1) }),
  fc.record({ t: fc.constant('disconnect' as const), client: fc.nat(9) }),
  fc.record({ t: fc.constant('kill' as const), node: fc.nat(2) }),
);

interface Conn {
  node: number;
  client: TestClient;
  alive: boolean;
  rooms: Set<string>;
}

const isAlive = (i: Instance): boolean => i.child.exitCode === null && i.child.signalCode === null;

async function play(ops: Op[]): Promise<void> {
  const env = {
    KEY_PREFIX: `pprop-${randomBytes(4).toString('hex')}`,
    PRESENCE_NODE_TIMEOUT: String(NODE_TIMEOUT),
  };
  const nodes = await Promise.all([0, 1, 2].map(() => Instance.start(env, 'presence-instance')));
  const conns: Conn[] = [];
  try {
    for (const o of ops) {
      if (o.t === 'connect' || o.t === 'kill') {
        const node = nodes[o.node]!;
        if (!isAlive(node)) continue;
        if (o.t === 'connect') {
          conns.push({ node: o.node, client: await node.connect(), alive: true, rooms: new Set() });
          continue;
        }
        if (nodes.filter(isAlive).length < 2) continue; // keep one instance to look at
        const exited = new Promise((resolve) => node.child.once('exit', resolve));
        node.child.kill('SIGKILL');
        await exited;
        for (const c of conns) if (c.node === o.node) c.alive = false;
        continue;
      }
      const c = conns.length === 0 ? undefined : conns[o.client % conns.length];
      if (c === undefined || !c.alive) continue;
      const node = nodes[c.node]!;
      if (o.t === 'disconnect') {
        c.client.close();
        c.alive = false;
        continue;
      }
      const room = ROOMS[o.room]!;
      if (o.t === 'join') {
        await node.call('join', { clientId: c.client.id, room });
        c.rooms.add(room);
      } else if (o.t === 'leave') {
        await node.call('leave', { clientId: c.client.id, room });
        c.rooms.delete(room);
      } else {
        await node.call('update', { clientId: c.client.id, room, meta: { n: o.client } });
      }
    }
    // Quiet for the node timeout, then every live instance must list the live connections.
    await new Promise((r) => setTimeout(r, NODE_TIMEOUT));
    for (const room of ROOMS) {
      const want = JSON.stringify(
        conns
          .filter((c) => c.alive && c.rooms.has(room))
          .map((c) => c.client.id)
          .sort(),
      );
      for (const node of nodes.filter(isAlive)) {
        let got = '';
        await waitFor(
          async () => {
            got = JSON.stringify(await node.call<string[]>('presence', { room }));
            return got === want;
          },
          `${room} at ${node.nodeId} to settle`,
          NODE_TIMEOUT,
        ).catch(() => undefined);
        expect(got).toBe(want);
      }
    }
  } finally {
    for (const c of conns) c.client.close();
    await Promise.all(nodes.filter(isAlive).map((n) => n.stop()));
  }
}

suite('presence converges after any interleaving', () => {
  it('lists exactly the live connections on every live instance once quiet', async () => {
    await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 4, maxLength: 16 }), play), {
      numRuns: 4,
      seed: 18,
      endOnFailure: true,
    });
  }, 180_000);
});
