// server.revoke across two instances sharing a real Redis (a private redis-server on a free
// port), with real sockets: an identity revoked on one instance leaves the room, or is sent
// away, on the other too, within a second; other identities are untouched.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { NullLogger, RoomsController, Server, ServerConfig } from '@pkg/core';
import { RedisAdapter } from '../src/index';
import { RedisUnderTest, V1Client as Client, redisServerAvailableSync } from './helpers';

const hasRedisServer = redisServerAvailableSync('@pkg/redis-adapter revoke test');
const describeRedis = hasRedisServer ? describe : describe.skip;

describeRedis('server.revoke across instances', () => {
  const env = new RedisUnderTest();
  const servers: Server[] = [];
  const clients: Client[] = [];

  beforeAll(() => env.start());
  afterEach(async () => {
    for (const c of clients.splice(0)) c.ws.terminate();
    for (const s of servers.splice(0)) await s.close();
  });
  afterAll(() => env.stop());

  async function start(keyPrefix: string): Promise<{ server: Server; url: string }> {
    const server = new Server(
      new ServerConfig({ host: '127.0.0.1', port: 0, heartbeat_interval: 0 }),
      undefined,
      undefined,
      undefined,
      new NullLogger(),
    );
    const adapter = new RedisAdapter({ url: env.redis.url, keyPrefix });
    server.setAdapter(adapter);
    server.registerController(new RoomsController());
    server.addAuthHandler((ctx) => (ctx.auth ? { identity: ctx.auth } : false));
    await server.run();
    await adapter.ready();
    servers.push(server);
    return { server, url: `ws://127.0.0.1:${server.getPort()}/` };
  }

  async function member(url: string, identity: string, room: string): Promise<Client> {
    const client = await Client.open(url, identity);
    clients.push(client);
    client.request('join_room', { room }, 'j');
    await client.next((m) => m.id === 'j');
    return client;
  }

  it('takes the identity out of the room on the other instance too, within a second', async () => {
    const a = await start('revoke1');
    const b = await start('revoke1');
    const annA = await member(a.url, 'ann', 'r');
    const annB = await member(b.url, 'ann', 'r');
    const bobB = await member(b.url, 'bob', 'r');
    const started = Date.now();
    expect(await a.server.revoke('ann', 'r')).toBe(2);
    for (const c of [annA, annB]) {
      const m = await c.next((x) => x.event === '$revoked');
      expect(m.data).toEqual({ room: 'r', namespace: '/', reason: 'revoked' });
    }
    expect(Date.now() - started).toBeLessThan(1000);
    expect(b.server.getNamespaceManager().getClientsInRoom('r')).toHaveLength(1);
    // A broadcast to the room reaches bob only.
    a.server.broadcast('news', { n: 1 }, null, 'r');
    expect((await bobB.next((m) => m.event === 'news')).data).toEqual({ n: 1 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(annB.pending().some((m) => m.event === 'news')).toBe(false);
  });

  it('sends the identity away on every instance (revoked, 4403)', async () => {
    const a = await start('revoke2');
    const b = await start('revoke2');
    const annB = await member(b.url, 'ann', 'x');
    const bobB = await member(b.url, 'bob', 'x');
    expect(await a.server.revoke('ann')).toBe(1);
    expect((await annB.next((m) => m.event === 'error')).data).toMatchObject({ code: 'revoked' });
    expect(await annB.closed).toBe(4403);
    expect(bobB.ws.readyState).toBe(WebSocket.OPEN);
  });
});
