// Redis goes away while clients are connected, then comes back: a private redis-server on a
// free port, two instances in child processes.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  Instance,
  PrivateRedis,
  TestClient,
  removeBundle,
  waitFor,
  redisServerAvailableSync,
} from './helpers';

const hasRedisServer = redisServerAvailableSync('@pkg/redis-adapter fault test');
const describeRedis = hasRedisServer ? describe : describe.skip;

async function health(
  instance: Instance,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${instance.base}/health`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describeRedis('RedisAdapter: Redis goes away and comes back', () => {
  let redis: PrivateRedis;
  let a: Instance;
  let b: Instance;
  const clients: TestClient[] = [];

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    const env = { REDIS_URL: redis.url, KEY_PREFIX: 'fault' };
    [a, b] = await Promise.all([Instance.start(env), Instance.start(env)]);
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.stop();
    removeBundle();
  });

  it('keeps local traffic flowing, says degraded with 200, and recovers by itself', async () => {
    const [a1, a2, b1] = [await a.connect(), await a.connect(), await b.connect()];
    clients.push(a1, a2, b1);
    await b.call('join', { clientId: b1.id, room: 'before', namespace: '/' });
    await b.call('synced');
    await a.call('broadcast', { event: 'warm-up', data: {}, namespace: null, room: null });
    await waitFor(() => b1.events('warm-up').length === 1, 'the first cross-instance broadcast');

    await redis.stop();
    await waitFor(
      async () => (await health(a)).body['adapter'] === 'degraded',
      'A to say degraded',
    );
    await waitFor(
      async () => (await health(b)).body['adapter'] === 'degraded',
      'B to say degraded',
    );
    const during = await health(a);
    expect(during.status).toBe(200);
    expect(during.body['status']).toBe('healthy');

    // Local traffic: a broadcast on A reaches A's clients; the copy for B is counted as lost.
    const lostBefore = (await a.call<{ lost: number }>('stats')).lost;
    await a.call('broadcast', { event: 'local', data: {}, namespace: null, room: null });
    await waitFor(
      () => a1.events('local').length === 1 && a2.events('local').length === 1,
      'local delivery',
    );
    expect((await a.call<{ lost: number }>('stats')).lost).toBe(lostBefore + 1);
    expect(
      a.logs.some((l) => /messages for other instances are being dropped/.test(l.message)),
    ).toBe(true);

    // Cluster-wide requests fail fast with a code instead of hanging.
    await expect(a.call('count', { target: {} })).rejects.toMatchObject({
      code: 'PKG_ERR_REDIS_UNAVAILABLE',
    });
    // The rate limit fails open, with a warning.
    expect(await a.call('hit', { key: 'outage', max: 1, window: 60 })).toBe(true);
    expect(await a.call('hit', { key: 'outage', max: 1, window: 60 })).toBe(true);
    expect(a.logs.some((l) => /RedisRateLimitStore/.test(l.message) && l.level === 'warning')).toBe(
      true,
    );

    // A room joined during the outage is subscribed once Redis is back.
    await b.call('join', { clientId: b1.id, room: 'during', namespace: '/' });

    await redis.start();
    await waitFor(async () => (await health(a)).body['adapter'] === 'connected', 'A to reconnect');
    await waitFor(async () => (await health(b)).body['adapter'] === 'connected', 'B to reconnect');
    await b.call('synced');

    await a.call('broadcast', { event: 'after', data: {}, namespace: null, room: null });
    await a.call('broadcast', { event: 'room-before', data: {}, namespace: '/', room: 'before' });
    await a.call('broadcast', { event: 'room-during', data: {}, namespace: '/', room: 'during' });
    await waitFor(
      () => ['after', 'room-before', 'room-during'].every((e) => b1.events(e).length === 1),
      'cross-instance broadcasts after the outage',
    );
    expect(b1.events('local')).toHaveLength(0);
    expect(await b.call('count', { target: {} })).toBe(3);
    const stats = await a.call<{ pendingRequests: number; state: string }>('stats');
    expect(stats).toMatchObject({ pendingRequests: 0, state: 'connected' });
  });
});
