// The admin's JSON views over several instances sharing the Redis at 127.0.0.1:6379 (under a
// key prefix of this run), with real sockets: an instance without the admin is reported, not
// waited for; an action is refused by the instance that holds the connection when that
// instance does not enable it.
import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from '@jest/globals';
import { NullLogger, Server, ServerConfig } from '@pkg/core';
import { RedisAdapter } from '@pkg/redis-adapter';
import type { AdminOptions } from '../src/index';
import { Client, call, closeAll, startInstance, type Instance } from './helpers';

function sharedRedis(): boolean {
  const probe = spawnSync(
    process.execPath,
    [
      '-e',
      "const s=require('net').connect(6379,'127.0.0.1',()=>s.write('PING\\r\\n'));s.setTimeout(1000,()=>process.exit(1));s.on('error',()=>process.exit(1));s.on('data',d=>process.exit(String(d).startsWith('+PONG')?0:1));",
    ],
    { stdio: 'ignore' },
  );
  if (probe.status === 0) return true;
  if (process.env['CI'] === 'true') throw new Error('@pkg/admin cluster test: Redis at 127.0.0.1:6379 is unreachable, and CI=true requires it.'); // prettier-ignore
  console.warn('@pkg/admin cluster test: skipped, no Redis at 127.0.0.1:6379 (start one, or set CI=true to fail instead).'); // prettier-ignore
  return false;
}

const describeRedis = sharedRedis() ? describe : describe.skip;
const bare: Server[] = [];

afterEach(async () => {
  for (const s of bare.splice(0)) await s.close();
  await closeAll();
});

describeRedis('the admin over several instances', () => {
  let run = 0;
  const prefix = (): string => `admin-cluster-${process.pid}-${Date.now()}-${(run += 1)}`;

  async function instance(
    keyPrefix: string,
    options: AdminOptions,
  ): Promise<Instance & { node: string }> {
    // prettier-ignore
    let adapter: RedisAdapter | undefined;
    const started = await startInstance(options, {}, (server) => {
      adapter = new RedisAdapter({ url: 'redis://127.0.0.1:6379', keyPrefix });
      server.setAdapter(adapter);
    });
    await adapter!.ready();
    return { ...started, node: adapter!.nodeId };
  }

  it('names an instance that answers no admin query, and still shows the others', async () => {
    const keyPrefix = prefix();
    const a = await instance(keyPrefix, {});
    const server = new Server(new ServerConfig({ host: '127.0.0.1', port: 0 }), undefined, undefined, undefined, new NullLogger()); // prettier-ignore
    const adapter = new RedisAdapter({ url: 'redis://127.0.0.1:6379', keyPrefix });
    server.setAdapter(adapter);
    await server.run();
    await adapter.ready();
    bare.push(server);
    const { body } = await call(`${a.base}/admin/api/nodes`);
    expect(body['nodes']).toBe(2);
    expect((body['rows'] as Array<{ node: string }>).map((r) => r.node)).toEqual([a.node]);
    expect(body['errors']).toEqual([{ node: adapter.nodeId, error: expect.stringMatching(/no handler/) }]); // prettier-ignore
    const trace = await call(`${a.base}/admin/api/trace`, { body: { id: 'nope', op: 'start' } });
    expect([trace.status, trace.body['code']]).toEqual([404, 'PKG_ERR_ADMIN_NOT_FOUND']);
    expect(trace.body['message']).toContain(adapter.nodeId);
  });

  it('lets the instance holding a connection refuse an action it does not enable', async () => {
    const keyPrefix = prefix();
    const a = await instance(keyPrefix, { actions: { disconnect: true } });
    const b = await instance(keyPrefix, {});
    const client = await Client.open(b.wsUrl, 'bob');
    const [row] = b.server.listConnections().rows;
    const cut = await call(`${a.base}/admin/api/disconnect`, { body: { id: row!.id } });
    expect([cut.status, cut.body['code']]).toEqual([403, 'PKG_ERR_ADMIN_ACTION_DISABLED']);
    expect(cut.body['message']).toContain(b.node);
    expect(b.server.listConnections().total).toBe(1);
    expect(a.admin.audit()[0]).toMatchObject({ action: 'disconnect', target: row!.id });
    expect(client.ws.readyState).toBe(client.ws.OPEN);
  });
});
