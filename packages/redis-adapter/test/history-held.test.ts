// A live message that reaches instance A while a client's recovery read is on its way to
// Redis is held for that client until `$recovered`. When Redis reads the room after that
// message was kept and the recovery fails (more missed than the room keeps), the read's
// position already counts that message, yet nothing replayed it: the client must still get
// it after `$recovered` (which then stands just before it), as it would have had Redis read
// the room a moment earlier. A TCP
// proxy between A and Redis holds A's commands, so the read reaches Redis only after B's
// message went out; no ordering is left to chance. Two servers in this process, one private
// redis-server, real `ws` clients.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import type { Server } from '@pkg/core';
import type { RedisAdapter } from '../src/index';
import {
  HoldingProxy,
  RedisUnderTest,
  redisServerAvailableSync,
  startHistoryServer,
  waitFor,
} from './helpers';

const hasRedisServer = redisServerAvailableSync('@pkg/redis-adapter held live message test');
const describeRedis = hasRedisServer ? describe : describe.skip;

const ROOM = 'h';
const SIZE = 3;

interface Message {
  event: string;
  id?: unknown;
  data: { n?: number; recovered?: boolean; reason?: string; position?: { offset: number } };
  pos?: { epoch: string; offset: number };
}

/** A protocol version 1 client that keeps what it receives. */
class V1Client {
  readonly received: Message[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (raw) => this.received.push(JSON.parse(String(raw)) as Message));
  }

  static async open(url: string): Promise<V1Client> {
    const ws = new WebSocket(url, ['pkg.v1']);
    ws.on('error', () => undefined);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const client = new V1Client(ws);
    ws.send(JSON.stringify({ event: '$hello', data: { v: 1 } }));
    await waitFor(() => client.has((m) => m.event === '$welcome'), '$welcome');
    return client;
  }

  has(test: (m: Message) => boolean): boolean {
    return this.received.some(test);
  }

  join(data: Record<string, unknown>): void {
    this.ws.send(JSON.stringify({ event: 'join_room', data: { room: ROOM, ...data }, id: 'j' }));
  }

  /** The `n` of the room messages received, in order. */
  numbers(from = 0): number[] {
    return this.received
      .slice(from)
      .filter((m) => m.event === 'msg')
      .map((m) => m.data.n!);
  }
}

describeRedis('a live message held during a recovery that fails', () => {
  const env = new RedisUnderTest();
  let proxy: HoldingProxy;
  const servers: Server[] = [];
  const clients: V1Client[] = [];

  beforeAll(async () => {
    await env.start();
    proxy = await HoldingProxy.start(env.redis.port);
  });

  afterEach(async () => {
    for (const c of clients.splice(0)) c.ws.terminate();
    for (const s of servers.splice(0)) await s.close();
  });

  afterAll(async () => {
    await proxy?.stop();
    await env.stop();
  });

  async function startServer(redisUrl: string): Promise<Server> {
    const server = await startHistoryServer({
      room: ROOM,
      size: SIZE,
      adapter: { url: redisUrl, keyPrefix: 'held' },
    });
    servers.push(server);
    return server;
  }

  const url = (s: Server): string => `ws://127.0.0.1:${s.getPort()}/`;

  async function client(s: Server): Promise<V1Client> {
    const c = await V1Client.open(url(s));
    clients.push(c);
    return c;
  }

  it('is sent after $recovered although the position Redis reported includes it', async () => {
    const a = await startServer(proxy.url); // every command of A passes the proxy
    const b = await startServer(env.redis.url);

    // A member on A keeps A subscribed to the room, and shows when A has handled a message.
    const watcher = await client(a);
    watcher.join({});
    await waitFor(() => watcher.has((m) => m.id === 'j'), 'the watcher to join');
    await (a.getAdapter() as RedisAdapter).synced();

    // Five messages through B; the room keeps the last 3, so a client at offset 1 is too far behind.
    for (let n = 1; n <= 5; n++) b.broadcast('msg', { n }, { room: ROOM });
    await waitFor(() => watcher.numbers().length === 5, 'the watcher to get 1..5');
    const first = watcher.received.find((m) => m.event === 'msg' && m.data.n === 1)!.pos!;

    // A client comes back to A from offset 1; its read waits in the proxy.
    proxy.hold();
    const late = await client(a);
    late.join({ since: { epoch: first.epoch, offset: first.offset } });
    await waitFor(
      () => a.getLoad().recoveries === 1 && proxy.heldBytes > 0,
      "the recovery to start and A's history read to be held",
    );

    // Message 6 through B: A gets it (the watcher sees it) while the late client's read waits.
    b.broadcast('msg', { n: 6 }, { room: ROOM });
    await waitFor(() => watcher.numbers().includes(6), 'the watcher to get 6');
    expect(late.has((m) => m.event === '$recovered')).toBe(false);
    expect(a.getLoad().recoveries).toBe(1);

    // Redis now reads the room after message 6 was kept.
    proxy.release();
    await waitFor(() => late.has((m) => m.event === '$recovered'), '$recovered');
    const at = late.received.findIndex((m) => m.event === '$recovered');
    // Redis stands at 6, but 6 is still to come: the client is told it stands just before it.
    expect(late.received[at]!.data).toMatchObject({
      recovered: false,
      reason: 'too_far_behind',
      replayed: 0,
      position: { epoch: first.epoch, offset: 5 },
    });

    // A message after the recovery marks the end of what the late client gets for the room.
    b.broadcast('msg', { n: 7 }, { room: ROOM });
    await waitFor(() => late.numbers().includes(7), 'the late client to get 7');
    expect(late.numbers(at + 1)).toEqual([6, 7]);
    expect(late.numbers(0)).toEqual([6, 7]); // nothing before $recovered: the replay failed
    // Each comes after the position, so a client that drops what it has seen by position keeps it.
    const after = late.received.slice(at + 1).filter((m) => m.event === 'msg');
    expect(after.map((m) => m.pos!.offset)).toEqual([6, 7]);
  });
});
