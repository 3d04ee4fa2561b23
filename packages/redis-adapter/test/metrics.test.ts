// The adapter's metrics across two instances on a real Redis (a private redis-server): a
// broadcast on one instance moves its published counter, the other's received counter and
// delivered messages, both report the link as connected, and a publish while Redis is down
// is counted as a publish error and the state leaves `connected`.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { NullLogger, Server, ServerConfig } from '@pkg/core';
import { RedisAdapter } from '../src/index';
import { PrivateRedis, waitFor, redisServerAvailableSync } from './helpers';

const hasRedisServer = redisServerAvailableSync('@pkg/redis-adapter metrics test');
const describeRedis = hasRedisServer ? describe : describe.skip;

let redis: PrivateRedis;
const servers: Server[] = [];
const sockets: WebSocket[] = [];

beforeAll(async () => {
  if (hasRedisServer) redis = await PrivateRedis.start();
});
afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  for (const server of servers.splice(0)) await server.close();
});
afterAll(async () => {
  await redis?.stop();
});

async function instance(): Promise<Server> {
  const server = new Server(
    new ServerConfig({ host: '127.0.0.1', port: 0, heartbeat_interval: 0, shutdown_timeout: 200, metrics_path: '/metrics' }), // prettier-ignore
    undefined,
    undefined,
    undefined,
    new NullLogger(),
  );
  server.setAdapter(new RedisAdapter({ url: redis.url, keyPrefix: 'metrics-test' }));
  await server.run();
  servers.push(server);
  return server;
}

/** A sample's value from the server's metrics text (0 when absent). */
async function sample(server: Server, series: string): Promise<number> {
  const text = await server.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

function connect(server: Server): Promise<{ ws: WebSocket; received: string[] }> {
  const ws = new WebSocket(`ws://127.0.0.1:${server.getPort()}`);
  sockets.push(ws);
  const received: string[] = [];
  ws.on('message', (raw) => received.push(String(raw)));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, received }));
    ws.once('error', reject);
  });
}

describeRedis('adapter metrics across two instances', () => {
  it('counts a broadcast published on one instance and received and delivered on the other', async () => {
    const a = await instance();
    const b = await instance();
    expect(await sample(a, 'pkg_adapter_state{state="connected"}')).toBe(1);
    expect(await sample(b, 'pkg_adapter_state{state="connected"}')).toBe(1);
    expect(await sample(b, 'pkg_adapter_state{state="local"}')).toBe(0);
    const onB = await connect(b);
    await waitFor(async () => (await a.countClients()) === 1, 'the client of b counted by a');
    a.broadcast('news', { n: 1 });
    await waitFor(() => onB.received.length === 1, 'the broadcast delivered on b');
    expect(await sample(a, 'pkg_adapter_published_total')).toBe(1);
    await waitFor(async () => (await sample(b, 'pkg_adapter_received_total')) === 1, 'b counts it');
    expect(await sample(b, 'pkg_ws_messages_sent_total{event="news"}')).toBe(1);
    expect(await sample(a, 'pkg_ws_messages_sent_total{event="news"}')).toBe(0);
    expect(await sample(a, 'pkg_adapter_publish_errors_total')).toBe(0);
    // The publish-to-delivery time across instances: one observation on b, none on a.
    expect(await sample(b, 'pkg_adapter_delivery_latency_seconds_count')).toBe(1);
    expect(await sample(a, 'pkg_adapter_delivery_latency_seconds_count')).toBe(0);
    const seconds = await sample(b, 'pkg_adapter_delivery_latency_seconds_sum');
    expect(seconds).toBeGreaterThanOrEqual(0);
    expect(seconds).toBeLessThan(5);
  });

  it('counts a publish lost while Redis is down, and the state leaves connected', async () => {
    const a = await instance();
    await redis.stop();
    try {
      await waitFor(
        async () => (await sample(a, 'pkg_adapter_state{state="connected"}')) === 0,
        'the link is no longer connected',
      );
      a.broadcast('news', { n: 2 });
      await waitFor(
        async () => (await sample(a, 'pkg_adapter_publish_errors_total')) >= 1,
        'the lost publish counted',
      );
    } finally {
      await redis.start();
    }
    await waitFor(
      async () => (await sample(a, 'pkg_adapter_state{state="connected"}')) === 1,
      'connected again',
      20000,
    );
  }, 40000);
});
