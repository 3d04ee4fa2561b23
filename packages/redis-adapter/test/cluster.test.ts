// Two servers in two child processes share the Redis at 127.0.0.1:6379; clients on each.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createClient } from 'redis';
import { Instance, TestClient, removeBundle, sharedRedisAvailableSync, waitFor } from './helpers';

const available = sharedRedisAvailableSync('@pkg/redis-adapter cluster tests');
const describeRedis = available ? describe : describe.skip;
const prefix = `pkgtest-${process.pid}-${Date.now()}`;

describeRedis('RedisAdapter: two instances', () => {
  let a: Instance;
  let b: Instance;
  let redis: ReturnType<typeof createClient>;
  const clients: TestClient[] = [];

  beforeAll(async () => {
    const env = { REDIS_URL: 'redis://127.0.0.1:6379', KEY_PREFIX: prefix };
    [a, b] = await Promise.all([Instance.start(env), Instance.start(env)]);
    redis = createClient({ url: 'redis://127.0.0.1:6379' });
    await redis.connect();
  });

  afterAll(async () => {
    for (const c of clients) c.close();
    await Promise.all([a?.stop(), b?.stop()]);
    await redis?.close();
    removeBundle();
  });

  async function connect(instance: Instance): Promise<TestClient> {
    const client = await instance.connect();
    clients.push(client);
    return client;
  }

  /** One broadcast to all from each instance; once every client has both, earlier messages have arrived. */
  async function fence(all: TestClient[], n: number): Promise<void> {
    await a.call('broadcast', { event: `fence${n}`, data: {}, namespace: null, room: null });
    await b.call('broadcast', { event: `fence${n}`, data: {}, namespace: null, room: null });
    await waitFor(() => all.every((c) => c.events(`fence${n}`).length >= 2), `fence ${n}`);
  }

  async function subscribers(channel: string): Promise<number> {
    const reply = await redis.pubSubNumSub(channel);
    return Number(reply[channel] ?? 0);
  }

  it('delivers a broadcast to all, a namespace, a room and with except exactly once', async () => {
    const [a1, a2, b1, b2] = [
      await connect(a),
      await connect(a),
      await connect(b),
      await connect(b),
    ];
    const all = [a1, a2, b1, b2];
    await a.call('join', { clientId: a2.id, room: 'r', namespace: '/' });
    await b.call('join', { clientId: b1.id, room: 'r', namespace: '/' });
    await a.call('join', { clientId: a1.id, room: 'x', namespace: '/chat' });
    await b.call('join', { clientId: b2.id, room: 'y', namespace: '/chat' });
    await Promise.all([a.call('synced'), b.call('synced')]);

    await a.call('broadcast', { event: 'to-all', data: { n: 1 }, namespace: null, room: null });
    await b.call('broadcast', { event: 'to-ns', data: {}, namespace: '/chat', room: null });
    await a.call('broadcast', { event: 'to-room', data: {}, namespace: '/', room: 'r' });
    await b.call('broadcast', {
      event: 'except',
      data: {},
      namespace: '/',
      room: 'r',
      except: [a2.id],
    });
    await a.call('broadcast', {
      event: 'except-all',
      data: {},
      namespace: null,
      room: null,
      except: [a1.id, b2.id],
    });
    await fence(all, 1);

    const count = (c: TestClient, e: string): number => c.events(e).length;
    expect(all.map((c) => count(c, 'to-all'))).toEqual([1, 1, 1, 1]);
    expect(a1.events('to-all')[0]?.data).toEqual({ n: 1 });
    expect(all.map((c) => count(c, 'to-ns'))).toEqual([1, 0, 0, 1]);
    expect(all.map((c) => count(c, 'to-room'))).toEqual([0, 1, 1, 0]);
    expect(all.map((c) => count(c, 'except'))).toEqual([0, 0, 1, 0]);
    expect(all.map((c) => count(c, 'except-all'))).toEqual([0, 1, 1, 0]);
  });

  it('counts and lists clients across both instances', async () => {
    const before = await a.call<number>('count', { target: {} });
    const [c1, c2] = [await connect(a), await connect(b)];
    await a.call('join', { clientId: c1.id, room: 'count-room', namespace: '/count' });
    await b.call('join', { clientId: c2.id, room: 'count-room', namespace: '/count' });
    expect(await b.call('count', { target: {} })).toBe(before + 2);
    expect(await a.call('count', { target: { namespace: '/count' } })).toBe(2);
    expect(await b.call('count', { target: { namespace: '/count', room: 'count-room' } })).toBe(2);
    expect(await a.call('ids', { target: { namespace: '/count', room: 'count-room' } })).toEqual(
      [c1.id, c2.id].sort(),
    );
    expect(await b.call('ids', { target: { namespace: '/nobody' } })).toEqual([]);
  });

  it('sends to, joins, leaves and disconnects a client of the other instance', async () => {
    const [a1, b1] = [await connect(a), await connect(b)];
    expect(await a.call('send', { clientId: b1.id, event: 'direct', data: { from: 'a' } })).toBe(
      true,
    );
    await waitFor(() => b1.events('direct').length === 1, 'the remote send');
    expect(b1.events('direct')[0]?.data).toEqual({ from: 'a' });

    expect(await a.call('join', { clientId: b1.id, room: 'remote', namespace: '/' })).toBe(true);
    await waitFor(
      async () => (await b.call('count', { target: { room: 'remote' } })) === 1,
      'the remote join',
    );
    await b.call('synced');
    await a.call('broadcast', { event: 'in-remote', data: {}, namespace: '/', room: 'remote' });
    await waitFor(() => b1.events('in-remote').length === 1, 'the room broadcast');

    await a.call('leave', { clientId: b1.id, room: 'remote', namespace: '/' });
    await waitFor(
      async () => (await a.call('count', { target: { room: 'remote' } })) === 0,
      'the remote leave',
    );

    await b.call('disconnect', { clientId: a1.id });
    await waitFor(() => a1.closed, 'the remote disconnect');
    expect(a1.ws.readyState).toBe(a1.ws.CLOSED);
    expect(b1.closed).toBe(false);
  });

  it('holds a rate limit shared by both instances under concurrent hits: exactly max succeed', async () => {
    const key = `shared-${Date.now()}`;
    const hits = Array.from({ length: 40 }, (_, i) =>
      (i % 2 === 0 ? a : b).call<boolean>('hit', { key, max: 7, window: 60 }),
    );
    const results = await Promise.all(hits);
    expect(results.filter(Boolean)).toHaveLength(7);
  });

  it('holds a decorated HTTP route limit across both instances, and counts WebSocket events in Redis', async () => {
    // The HTTP key is the route and the client address (127.0.0.1 for every request here),
    // so hits on either instance count against one limit of 5.
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${(i % 2 === 0 ? a : b).base}/limited`).then(async (res) => {
          await res.arrayBuffer();
          return res.status;
        }),
      ),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);

    // A WebSocket event's key is the event and the client id: 3 of 8 pass, the rest are refused.
    const a1 = await connect(a);
    for (let i = 0; i < 8; i++) a1.ws.send(JSON.stringify({ event: 'limited', data: {} }));
    await waitFor(
      () => a1.events('limited_ok').length + a1.events('error').length >= 8,
      'an answer to every limited event',
    );
    expect(a1.events('limited_ok')).toHaveLength(3);
    expect(a1.events('error').map((e) => e.data['code'])).toEqual(Array(5).fill('rate_limited'));
    const keys = await redis.keys(`${prefix}*${a1.id}*`);
    expect(keys.length).toBeGreaterThan(0);
  });

  it('sends nothing to an instance with no member of a room, and unsubscribes after the last member', async () => {
    const a1 = await connect(a);
    const everyone = [a1, await connect(b)];
    await a.call('join', { clientId: a1.id, room: 'only-a', namespace: '/' });
    await a.call('synced');
    const channel = `${prefix}:room:%2F:only-a`;
    expect(await subscribers(channel)).toBe(1);

    const before = await b.call<{ received: number }>('stats');
    for (let i = 0; i < 5; i++) {
      await a.call('broadcast', { event: 'private', data: { i }, namespace: '/', room: 'only-a' });
      await b.call('broadcast', { event: 'private', data: { i }, namespace: '/', room: 'only-a' });
    }
    await fence(everyone, 2);
    const after = await b.call<{ received: number }>('stats');
    // B received the fence from A, and nothing for the room it has no member of.
    expect(after.received - before.received).toBe(1);
    expect(a1.events('private')).toHaveLength(10);

    await a.call('leave', { clientId: a1.id, room: 'only-a', namespace: '/' });
    await a.call('synced');
    // The channel lingers for unsubscribeGrace (1 s by default), then goes.
    expect(await a.call('stats')).toMatchObject({ lingering: 1 });
    await waitFor(async () => (await subscribers(channel)) === 0, 'the room channel to go');
    expect(await a.call('stats')).toMatchObject({ lingering: 0 });
  });

  it('drops foreign, malformed and unknown-version messages with a log line and keeps working', async () => {
    const c = await connect(b);
    await redis.publish(`${prefix}:all`, 'not our format');
    await redis.publish(`${prefix}:all`, `${JSON.stringify({ v: 99, o: 'elsewhere', x: [] })}\n{}`);
    await redis.publish(`${prefix}:req`, '{"v":1,"o":"x","id":"1","b":{"kind":"explode"}}');
    await waitFor(
      () => b.logs.filter((l) => /dropped a message/.test(l.message)).length >= 3,
      'the log lines',
    );
    const reasons = b.logs.map((l) => String(l.context?.['reason'] ?? ''));
    expect(reasons).toEqual(
      expect.arrayContaining(['no header line', 'unknown format version 99']),
    );
    const stats = await b.call<{ dropped: number; pendingRequests: number }>('stats');
    expect(stats.dropped).toBeGreaterThanOrEqual(3);
    await a.call('broadcast', { event: 'still', data: {}, namespace: null, room: null });
    await waitFor(() => c.events('still').length === 1, 'a broadcast after the bad input');
  });

  it('reports the adapter as connected in the health check', async () => {
    const res = await fetch(`${a.base}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'healthy', adapter: 'connected' });
  });

  it('gives up on an instance that does not answer, with PKG_ERR_REDIS_REQUEST_TIMEOUT', async () => {
    // A subscriber that never answers counts as an instance for PUBSUB NUMSUB.
    const silent = redis.duplicate();
    await silent.connect();
    await silent.subscribe(`${prefix}:req`, () => undefined);
    try {
      await expect(a.call('count', { target: {} })).rejects.toMatchObject({
        code: 'PKG_ERR_REDIS_REQUEST_TIMEOUT',
      });
      expect(await a.call('stats')).toMatchObject({ pendingRequests: 0 });
    } finally {
      await silent.close();
    }
  });

  it('drops every room and namespace subscription once the last client is gone', async () => {
    for (const c of clients.splice(0)) c.close();
    await waitFor(
      async () => (await a.call<string[]>('clients')).length === 0,
      'A to have no client',
    );
    await waitFor(
      async () => (await b.call<string[]>('clients')).length === 0,
      'B to have no client',
    );
    // Channels linger for unsubscribeGrace after their last member left.
    for (const instance of [a, b]) {
      await waitFor(
        async () => (await instance.call<{ lingering: number }>('stats')).lingering === 0,
        'the lingering channels to go',
      );
    }
    await Promise.all([a.call('synced'), b.call('synced')]);
    // Only the three fixed channels are left: all, requests, this node's replies.
    expect(await a.call('stats')).toMatchObject({ subscriptions: 3, pendingRequests: 0 });
    expect(await b.call('stats')).toMatchObject({ subscriptions: 3, pendingRequests: 0 });
    expect(await subscribers(`${prefix}:ns:%2F`)).toBe(0);
    expect(await subscribers(`${prefix}:room:%2F:r`)).toBe(0);
    expect(await subscribers(`${prefix}:req`)).toBe(2);
  });
});
