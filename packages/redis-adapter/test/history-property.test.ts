// A property over random interleavings of publish (through instance A or B), cut (the
// client's TCP connection dropped), reconnect (to A or B, asking for what it missed) and
// kill (an instance closed and replaced): what the client hands on is in publication order
// with no duplicates, and every message it never gets is announced by a `$recovered` with
// `recovered: false` before the next one it gets. Two servers in this process share a
// private redis-server (history in Redis Streams); the client is a protocol version 1 `ws`
// client that keeps the last position and drops positions seen before.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import WebSocket from 'ws';
import type { Server } from '@pkg/core';
import type { RedisAdapter } from '../src/index';
import { RedisUnderTest, redisServerAvailableSync, startHistoryServer, waitFor } from './helpers';

const hasRedisServer = redisServerAvailableSync('@pkg/redis-adapter history property test');
const describeRedis = hasRedisServer ? describe : describe.skip;

const ROOM = 'p';
const SIZE = 3;

type Entry = { n: number } | 'gap';

/** The client under test: hands on messages by position, reports gaps. */
class Client {
  ws: WebSocket | null = null;
  last: { epoch: string; offset: number } | null = null;
  readonly log: Entry[] = [];

  async connect(url: string): Promise<void> {
    const ws = new WebSocket(url, ['pkg.v1']);
    this.ws = ws;
    let answered: () => void = () => undefined;
    const joined = new Promise<void>((resolve) => (answered = resolve));
    ws.on('error', () => undefined);
    ws.on('close', () => {
      if (this.ws === ws) this.ws = null;
      answered();
    });
    ws.on('message', (raw) => {
      const m = JSON.parse(String(raw)) as {
        event: string;
        id?: unknown;
        data: { n?: number; recovered?: boolean };
        pos?: { epoch: string; offset: number };
      };
      if (m.event === '$welcome') {
        const since = this.last === null ? {} : { since: this.last };
        ws.send(JSON.stringify({ event: 'join_room', data: { room: ROOM, ...since }, id: 'j' }));
      } else if (m.id === 'j') {
        answered();
      } else if (m.event === '$recovered') {
        if (m.data.recovered !== true) this.log.push('gap');
      } else if (m.event === 'msg' && m.pos) {
        const seen =
          this.last !== null && m.pos.epoch === this.last.epoch && m.pos.offset <= this.last.offset;
        if (seen) return;
        this.last = { epoch: m.pos.epoch, offset: m.pos.offset };
        this.log.push({ n: m.data.n! });
      }
    });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send(JSON.stringify({ event: '$hello', data: { v: 1 } }));
    await joined;
  }

  cut(): void {
    this.ws?.terminate();
    this.ws = null;
  }
}

type Command =
  | { kind: 'publish'; via: 0 | 1; count: number }
  | { kind: 'cut' }
  | { kind: 'reconnect'; to: 0 | 1 }
  | { kind: 'kill'; which: 0 | 1 };

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc
      .record({ via: fc.constantFrom<0 | 1>(0, 1), count: fc.integer({ min: 1, max: 3 }) })
      .map((p): Command => ({ kind: 'publish', ...p })),
  },
  { weight: 2, arbitrary: fc.constant<Command>({ kind: 'cut' }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom<0 | 1>(0, 1).map((to): Command => ({ kind: 'reconnect', to })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<0 | 1>(0, 1).map((which): Command => ({ kind: 'kill', which })),
  },
);

describeRedis('recovery over random interleavings (history in Redis Streams)', () => {
  const env = new RedisUnderTest();
  const live = new Set<Server>();
  let run = 0;

  beforeAll(() => env.start());

  afterAll(async () => {
    for (const s of live) await s.close();
    await env.stop();
  });

  async function startServer(keyPrefix: string): Promise<Server> {
    const server = await startHistoryServer({
      room: ROOM,
      size: SIZE,
      adapter: { url: env.redis.url, keyPrefix, unsubscribeGrace: 0 },
    });
    live.add(server);
    return server;
  }

  const url = (s: Server): string => `ws://127.0.0.1:${s.getPort()}/`;

  it('hands on an in-order, duplicate-free subsequence and reports every gap', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(commandArb, { minLength: 1, maxLength: 12 }), async (commands) => {
        run += 1;
        const keyPrefix = `prop${run}`;
        const meta = `${keyPrefix}:hist:{%2F:${ROOM}}:m`;
        const servers = [await startServer(keyPrefix), await startServer(keyPrefix)];
        const client = new Client();
        let published = 0;
        const publish = async (via: 0 | 1): Promise<void> => {
          published += 1;
          servers[via]!.broadcast('msg', { n: published }, { room: ROOM });
          // Numbered before the next step, so publication order is the order of n.
          await waitFor(
            async () => (await env.admin.hGet(meta, 'o')) === String(published),
            `message ${published} to be kept`,
          );
        };
        try {
          await client.connect(url(servers[0]!));
          await (servers[0]!.getAdapter() as RedisAdapter).synced();
          await publish(1);
          await waitFor(() => client.log.length === 1, 'the first message');
          for (const c of commands) {
            if (c.kind === 'publish') for (let i = 0; i < c.count; i++) await publish(c.via);
            else if (c.kind === 'cut') client.cut();
            else if (c.kind === 'reconnect') {
              if (client.ws === null) await client.connect(url(servers[c.to]!));
            } else {
              const old = servers[c.which]!;
              live.delete(old);
              await old.close();
              servers[c.which] = await startServer(keyPrefix);
            }
          }
          // Back for good: one more message must arrive.
          if (client.ws === null) await client.connect(url(servers[0]!));
          for (const s of servers) await (s.getAdapter() as RedisAdapter).synced();
          await publish(0);
          await waitFor(
            () => client.log.some((e) => e !== 'gap' && e.n === published),
            'the last message',
          );

          let last = 0;
          let gap = false;
          for (const entry of client.log) {
            if (entry === 'gap') {
              gap = true;
              continue;
            }
            expect(entry.n).toBeGreaterThan(last); // in order, never twice
            if (entry.n !== last + 1) expect(gap).toBe(true); // a missing message was announced
            last = entry.n;
            gap = false;
          }
          expect(last).toBe(published);
        } finally {
          client.cut();
          for (const s of servers) {
            live.delete(s);
            await s.close();
          }
        }
      }),
      { numRuns: 10 },
    );
  }, 180_000);
});
