// What an operator's page reads from core, over real sockets: listConnections (search, sort,
// keyset pages, odd queries), getRefusals, and cluster queries on a server without a
// cluster adapter.
import { afterEach, describe, expect, it } from '@jest/globals';
import type { ConnectionInfo, Server } from '../src/index';
import { TestClient, cleanup, startServer } from './helpers';

afterEach(cleanup);

async function hello(url: string, auth: string): Promise<TestClient> {
  const client = await TestClient.connect(url, {}, ['pkg.v1']);
  client.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1, auth } }));
  await client.next('$welcome');
  return client;
}

async function threeClients(): Promise<{ server: Server; clients: TestClient[] }> {
  const { server, wsUrl } = await startServer([], {}, (s) =>
    s.addAuthHandler((ctx) => (typeof ctx.auth === 'string' ? { identity: ctx.auth } : false)),
  );
  const clients: TestClient[] = [];
  for (const name of ['ann', 'bob', 'cyd']) clients.push(await hello(wsUrl, name));
  return { server, clients };
}

describe('server.listConnections', () => {
  it('lists every connection with its identity, address, state and rooms, oldest first', async () => {
    const { server } = await threeClients();
    const page = server.listConnections();
    expect(page.total).toBe(3);
    expect(page.next).toBeNull();
    expect(page.rows.map((r) => r.identity)).toEqual(['ann', 'bob', 'cyd']);
    const bob = page.rows[1]!;
    expect(server.joinRoom(bob.id, 'lobby')).toBe(true);
    const again = server.listConnections({ search: 'bob' });
    expect(again.total).toBe(1);
    expect(again.rows[0]).toMatchObject({
      id: bob.id,
      identity: 'bob',
      address: '127.0.0.1',
      state: 'open',
      version: 1,
      rooms: [{ namespace: '/', room: 'lobby' }],
      roomCount: 1,
    });
    const times = page.rows.map((r) => r.connectedAt);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });

  it('searches the id, the identity and the address, case-insensitively', async () => {
    const { server } = await threeClients();
    const [first] = server.listConnections().rows as [ConnectionInfo];
    expect(server.listConnections({ search: 'BOB' }).rows.map((r) => r.identity)).toEqual(['bob']);
    expect(server.listConnections({ search: first.id }).rows.map((r) => r.id)).toEqual([first.id]);
    expect(server.listConnections({ search: '127.0.0' }).total).toBe(3);
    expect(server.listConnections({ search: 'nobody' })).toEqual({
      rows: [],
      total: 0,
      next: null,
    });
  });

  it('pages with a cursor: every connection once, in order, and no next page after the last', async () => {
    const { server } = await threeClients();
    const seen: string[] = [];
    let page = server.listConnections({ limit: 2 });
    expect(page.rows).toHaveLength(2);
    seen.push(...page.rows.map((r) => r.id));
    expect(page.next).not.toBeNull();
    page = server.listConnections({ limit: 2, after: page.next });
    seen.push(...page.rows.map((r) => r.id));
    expect(page.next).toBeNull();
    expect(page.total).toBe(3);
    expect(seen).toEqual(server.listConnections().rows.map((r) => r.id));
  });

  it('pages of any size list the same rows as one page of the whole table, for both sorts', async () => {
    const { server, wsUrl } = await startServer();
    const clients: TestClient[] = [];
    for (let i = 0; i < 25; i += 1) clients.push(await TestClient.connect(wsUrl));
    // Different traffic per client, so that the traffic sort has keys to order.
    for (let i = 0; i < clients.length; i += 3) clients[i]!.send('noise', { n: 'x'.repeat(i * 100) }); // prettier-ignore
    for (let i = 0; i < clients.length; i += 3) await clients[i]!.next('error');
    for (const sort of ['age', 'traffic'] as const) {
      const whole = server.listConnections({ sort, limit: 500 }).rows.map((r) => r.id);
      expect(whole).toHaveLength(25);
      for (const limit of [1, 3, 7, 25, 30]) {
        const seen: string[] = [];
        let page = server.listConnections({ sort, limit });
        seen.push(...page.rows.map((r) => r.id));
        while (page.next !== null) {
          page = server.listConnections({ sort, limit, after: page.next });
          seen.push(...page.rows.map((r) => r.id));
        }
        expect([sort, limit, seen]).toEqual([sort, limit, whole]);
      }
    }
  });

  it('sorts by traffic: the client that sent the most bytes comes first', async () => {
    const { server, clients } = await threeClients();
    const bob = clients[1]!;
    bob.send('noise', { text: 'x'.repeat(20_000) });
    await bob.next('error'); // no handler: the server read the message and answered
    const rows = server.listConnections({ sort: 'traffic' }).rows;
    expect(rows[0]!.identity).toBe('bob');
    expect(rows[0]!.bytesIn).toBeGreaterThan(20_000);
    expect(rows[0]!.key).toBe(rows[0]!.bytesIn + rows[0]!.bytesOut);
    for (let i = 1; i < rows.length; i += 1) expect(rows[i - 1]!.key).toBeGreaterThanOrEqual(rows[i]!.key); // prettier-ignore
  });

  it('refuses a query it cannot read with a TypeError that says what to fix', async () => {
    const { server } = await startServer();
    const bad: unknown[] = [
      { limit: 0 },
      { limit: 501 },
      { limit: 1.5 },
      { sort: 'size' },
      { search: 5 },
      { after: { key: 'x', id: 'a' } },
      { after: { key: Infinity, id: 'a' } },
      null,
    ];
    for (const query of bad) {
      expect(() => server.listConnections(query as never)).toThrow(
        expect.objectContaining({ name: 'TypeError', code: 'PKG_ERR_CORE_INVALID_ARGUMENT' }),
      );
    }
  });
});

describe('server.getRefusals', () => {
  it('counts refused connections by code, without metrics turned on', async () => {
    const { server, wsUrl } = await startServer([], { max_connections_per_ip: 1 });
    expect(server.getRefusals()).toEqual({});
    await TestClient.connect(wsUrl);
    await expect(TestClient.connect(wsUrl)).rejects.toThrow();
    expect(server.getRefusals()).toEqual({ too_many_connections_per_ip: 1 });
  });
});

describe('cluster queries without a cluster adapter', () => {
  it('this instance answers alone; a topic without a handler answers with an error', async () => {
    const { server } = await startServer();
    server.answerClusterQuery('echo', (payload) => ({ echo: payload }));
    const result = await server.queryCluster('echo', { a: 1 });
    expect(result.missing).toBe(0);
    expect(result.answers).toEqual([{ node: expect.any(String), data: { echo: { a: 1 } } }]);
    const none = await server.queryCluster('other');
    expect(none.answers[0]!.error).toMatch(/no handler for the cluster query "other"/);
    server.answerClusterQuery('echo', undefined);
    expect((await server.queryCluster('echo')).answers[0]!.error).toMatch(/no handler/);
    expect(() => server.answerClusterQuery('', () => 1)).toThrow(TypeError);
    await expect(server.queryCluster('echo', null, { timeout: 0 })).rejects.toThrow(TypeError);
  });
});
