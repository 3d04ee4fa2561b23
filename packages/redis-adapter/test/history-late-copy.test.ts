// A recovery delivers each missed message once, however late its live copy arrives. With
// history in Redis, an instance gets a room's messages over pub/sub, on a connection of
// its own, while a recovery reads the stream over another: the read can answer with a
// message whose pub/sub copy has not reached the instance yet. That copy must not reach the
// recovering client a second time after `$recovered`. A TCP proxy between instance A and
// Redis keeps back what Redis pushes to A's subscriber connection, so the read always
// answers first; no ordering is left to chance. The message comes from the other instance
// or from A itself, to a client with a session (the default) or without one.
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

const hasRedisServer = redisServerAvailableSync('@pkg/redis-adapter late live copy test');
const describeRedis = hasRedisServer ? describe : describe.skip;

const ROOM = 'late';

interface Message {
  event: string;
  id?: unknown;
  seq?: number;
  data: { n?: number; recovered?: boolean; replayed?: number; position?: { offset: number } };
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

  /** The room messages received, in order. */
  messages(): Message[] {
    return this.received.filter((m) => m.event === 'msg');
  }

  numbers(): number[] {
    return this.messages().map((m) => m.data.n!);
  }
}

describeRedis('a live copy that arrives after the recovery read answered', () => {
  const env = new RedisUnderTest();
  let proxy: HoldingProxy;
  const servers: Server[] = [];
  const clients: V1Client[] = [];
  let run = 0;

  beforeAll(async () => {
    await env.start();
    proxy = await HoldingProxy.start(env.redis.port);
  });

  afterEach(async () => {
    proxy.releasePushes();
    for (const c of clients.splice(0)) c.ws.terminate();
    for (const s of servers.splice(0)) await s.close();
  });

  afterAll(async () => {
    await proxy?.stop();
    await env.stop();
  });

  const url = (s: Server): string => `ws://127.0.0.1:${s.getPort()}/`;

  async function client(s: Server): Promise<V1Client> {
    const c = await V1Client.open(url(s));
    clients.push(c);
    return c;
  }

  it.each([
    { from: 'the other instance', sessions: true },
    { from: 'the same instance', sessions: true },
    { from: 'the other instance', sessions: false },
    { from: 'the same instance', sessions: false },
  ])('is dropped: message from $from, sessions $sessions', async ({ from, sessions }) => {
    run += 1;
    const keyPrefix = `late${run}`;
    let kept = 0;
    const start = async (redisUrl: string): Promise<Server> => {
      const server = await startHistoryServer({
        room: ROOM,
        size: 10,
        adapter: { url: redisUrl, keyPrefix },
        config: sessions ? {} : { recovery_window: 0 },
      });
      servers.push(server);
      server.onPublished(() => (kept += 1));
      return server;
    };
    const a = await start(proxy.url); // A's subscriber connection passes the proxy
    const b = await start(env.redis.url);
    const publisher = from === 'the same instance' ? a : b;

    // A member on A keeps A subscribed to the room and shows what reached A over pub/sub.
    const watcher = await client(a);
    watcher.join({});
    await waitFor(() => watcher.has((m) => m.id === 'j'), 'the watcher to join');
    await (a.getAdapter() as RedisAdapter).synced();

    for (let n = 1; n <= 2; n++) publisher.broadcast('msg', { n }, { room: ROOM });
    await waitFor(() => watcher.numbers().length === 2, 'the watcher to get 1 and 2');
    const since = watcher.messages()[1]!.pos!;

    // Message 3 is kept in Redis; its pub/sub copy waits in the proxy.
    proxy.holdPushes();
    publisher.broadcast('msg', { n: 3 }, { room: ROOM });
    await waitFor(() => kept === 3, 'message 3 to be kept in Redis');

    // A client comes back to A from offset 2: the read answers with 3 before A has its copy.
    const late = await client(a);
    late.join({ since: { epoch: since.epoch, offset: since.offset } });
    await waitFor(() => late.has((m) => m.event === '$recovered'), '$recovered');
    expect(late.received.find((m) => m.event === '$recovered')!.data).toMatchObject({
      recovered: true,
      replayed: 1,
      position: { offset: 3 },
    });
    expect(watcher.numbers()).toEqual([1, 2]); // the copy of 3 has not reached A yet
    expect(proxy.heldPushBytes).toBeGreaterThan(0);

    // Now A gets its copy of 3, then 4 marks the end of what the late client gets.
    proxy.releasePushes();
    await waitFor(() => watcher.numbers().includes(3), 'the watcher to get 3');
    publisher.broadcast('msg', { n: 4 }, { room: ROOM });
    await waitFor(() => late.numbers().includes(4), 'the late client to get 4');

    expect(late.numbers()).toEqual([3, 4]);
    expect(late.messages().map((m) => m.pos!.offset)).toEqual([3, 4]);
    const at = late.received.findIndex((m) => m.event === '$recovered');
    expect(late.received.slice(at + 1).filter((m) => m.event === 'msg').length).toBe(1);
    if (sessions) {
      // Numbered once each in the session: a resume would not replay 3 twice either.
      const [s3, s4] = late.messages().map((m) => m.seq!);
      expect(s4).toBe(s3! + 1);
    }
    expect(watcher.numbers()).toEqual([1, 2, 3, 4]);
  });
});
