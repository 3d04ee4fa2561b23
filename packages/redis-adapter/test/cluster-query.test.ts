// server.queryCluster across instances sharing a real Redis (a private redis-server on a free
// port), with real sockets: every instance answers for itself, the asker merges, and an
// instance that does not answer in time is counted as missing instead of hanging the asker.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { NullLogger, Server, ServerConfig } from '@pkg/core';
import { RedisAdapter } from '../src/index';
import { RedisUnderTest, redisServerAvailableSync } from './helpers';

const hasRedisServer = redisServerAvailableSync('@pkg/redis-adapter cluster query test');
const describeRedis = hasRedisServer ? describe : describe.skip;

describeRedis('server.queryCluster across instances', () => {
  const env = new RedisUnderTest();
  const servers: Server[] = [];

  beforeAll(() => env.start());
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });
  afterAll(() => env.stop());

  async function start(keyPrefix: string): Promise<{ server: Server; adapter: RedisAdapter }> {
    const server = new Server(
      new ServerConfig({ host: '127.0.0.1', port: 0, heartbeat_interval: 0 }),
      undefined,
      undefined,
      undefined,
      new NullLogger(),
    );
    const adapter = new RedisAdapter({ url: env.redis.url, keyPrefix });
    server.setAdapter(adapter);
    await server.run();
    await adapter.ready();
    servers.push(server);
    return { server, adapter };
  }

  it('merges one answer per instance, each naming its node', async () => {
    const a = await start('query1');
    const b = await start('query1');
    a.server.answerClusterQuery('who', (payload) => ({ me: 'a', payload }));
    b.server.answerClusterQuery('who', (payload) => Promise.resolve({ me: 'b', payload }));
    const result = await b.server.queryCluster('who', { page: 1 });
    expect(result.missing).toBe(0);
    const byNode = new Map(result.answers.map((x) => [x.node, x.data]));
    expect(byNode).toEqual(
      new Map([
        [a.adapter.nodeId, { me: 'a', payload: { page: 1 } }],
        [b.adapter.nodeId, { me: 'b', payload: { page: 1 } }],
      ]),
    );
  });

  it('an instance without the topic, or whose handler fails, answers with an error', async () => {
    const a = await start('query2');
    const b = await start('query2');
    a.server.answerClusterQuery('t', () => {
      throw new Error('broken here');
    });
    const result = await b.server.queryCluster('t');
    const errors = new Map(result.answers.map((x) => [x.node, x.error]));
    expect(errors.get(a.adapter.nodeId)).toBe('broken here');
    expect(errors.get(b.adapter.nodeId)).toMatch(/no handler/);
    b.server.answerClusterQuery('cycle', () => {
      const o: Record<string, unknown> = {};
      o['self'] = o;
      return o;
    });
    const cyclic = await a.server.queryCluster('cycle');
    const fromB = cyclic.answers.find((x) => x.node === b.adapter.nodeId);
    expect(fromB?.error).toMatch(/not JSON/);
  });

  it('counts an instance that does not answer within the timeout as missing', async () => {
    const a = await start('query3');
    const b = await start('query3');
    a.server.answerClusterQuery('slow', () => 'a');
    let release: () => void = () => undefined;
    b.server.answerClusterQuery('slow', () => new Promise((r) => (release = () => r('b'))));
    const result = await a.server.queryCluster('slow', null, { timeout: 200 });
    expect(result).toEqual({ answers: [{ node: a.adapter.nodeId, data: 'a' }], missing: 1 });
    release();
  });
});
