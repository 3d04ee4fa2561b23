// Room history while Redis is down (the adapter's `history` store), against a private
// redis-server on a free port that is stopped and started again (empty), with a server in
// this process and a real `ws` client: broadcasts still reach the instance's clients, failed
// writes and reads are counted and logged once, reads answer `complete: false`, and the
// first message after Redis is back starts a new epoch.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { NullLogger, Server, ServerConfig } from '@pkg/core';
import { RedisAdapter } from '../src/index';
import { PrivateRedis, waitFor, redisServerAvailableSync } from './helpers';
import { Logs, POLICY, template } from './history-kit';

const hasRedisServer = redisServerAvailableSync('@pkg/redis-adapter history outage test');
const describeRedis = hasRedisServer ? describe : describe.skip;

interface Received {
  event: string;
  data: { n: number };
}

describeRedis('RedisHistoryStore while Redis is down', () => {
  let redis: PrivateRedis;
  const servers: Server[] = [];
  const sockets: WebSocket[] = [];

  beforeAll(async () => {
    redis = await PrivateRedis.start();
  });

  afterAll(async () => {
    for (const ws of sockets) ws.terminate();
    for (const s of servers) await s.close();
    await redis?.stop();
  });

  it('keeps delivering locally, counts and logs failures once, then starts a new epoch', async () => {
    const logs = new Logs();
    const server = new Server(
      new ServerConfig({ host: '127.0.0.1', port: 0, heartbeat_interval: 0 }),
      undefined,
      undefined,
      undefined,
      new NullLogger(),
    );
    const adapter = new RedisAdapter({
      url: redis.url,
      keyPrefix: 'out',
      logger: logs,
      maxReconnectDelay: 100,
    });
    server.setAdapter(adapter);
    await server.run();
    await adapter.ready();
    servers.push(server);
    const history = adapter.history!;
    const ws = new WebSocket(`ws://127.0.0.1:${server.getPort()}/`);
    sockets.push(ws);
    const received: Received[] = [];
    ws.on('message', (raw) => received.push(JSON.parse(String(raw)) as Received));
    await new Promise((resolve) => ws.once('open', resolve));
    await waitFor(() => server.getAllClients().length === 1, 'the client');
    server.joinRoom(server.getAllClients()[0]!, 'o');
    await adapter.synced();

    const before = await history.publish({ namespace: '/', room: 'o' }, template('o', 1), POLICY);
    // Delivered when Redis hands it back: wait for it before Redis goes.
    await waitFor(() => received.length === 1, 'the first delivery');
    await redis.stop();
    await waitFor(() => adapter.getState() === 'degraded', 'the adapter to see the outage');
    const during = [];
    for (let n = 2; n <= 6; n += 1) {
      during.push(await history.publish({ namespace: '/', room: 'o' }, template('o', n), POLICY));
    }
    expect(during.map((p) => p.delivered)).toEqual([1, 1, 1, 1, 1]);
    expect(during.map((p) => p.position.offset)).toEqual([1, 2, 3, 4, 5]);
    expect(during[0]!.position.epoch).not.toBe(before.position.epoch);
    await waitFor(() => received.length === 6, 'six deliveries');
    expect(received.map((m) => m.data.n)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(adapter.stats()).toMatchObject({ historyWrites: 1, historyWriteFailures: 5 });
    const warnings = logs.lines.filter((l) => /history writes are failing/.test(l.message));
    expect(warnings).toHaveLength(1);

    const read = await history.read('/', 'o', {
      since: before.position,
      limit: 10,
      policy: POLICY,
    });
    // Not readable: the client is told to reload, never an error.
    expect(read).toEqual({
      position: null,
      messages: [],
      complete: false,
      reason: 'epoch_changed',
    });
    // A read that needs Redis fails the same way, counted.
    expect(await history.read('/', 'o', { limit: 10, policy: POLICY })).toEqual({
      position: null,
      messages: [],
      complete: false,
      reason: 'epoch_changed',
    });
    expect(adapter.stats().historyReadFailures).toBe(1);

    await redis.start(); // comes back empty
    await waitFor(() => adapter.getState() === 'connected', 'the adapter to reconnect');
    const after = await history.publish({ namespace: '/', room: 'o' }, template('o', 7), POLICY);
    expect(after.position.offset).toBe(1);
    expect([before.position.epoch, during[0]!.position.epoch]).not.toContain(after.position.epoch);
    expect(
      await history.read('/', 'o', { since: before.position, limit: 10, policy: POLICY }),
    ).toMatchObject({
      complete: false,
      reason: 'epoch_changed',
    });
    expect(logs.lines.filter((l) => /history writes work again/.test(l.message))).toHaveLength(1);
    await waitFor(() => received.length === 7, 'the seventh delivery');
  });
});
