// The admin's JSON views over real sockets on one instance: pages and their bounds, search
// and sort, odd query strings, rooms with presence and history, refusals, actions (off by
// default, audited when on) and one connection's bounded live trace.
import { afterEach, describe, expect, it } from '@jest/globals';
import { Client, call, closeAll, startInstance, type Instance } from './helpers';

afterEach(closeAll);

interface Row {
  id: string;
  identity: string | null;
  node: string;
  key: number;
  bytesIn: number;
}

async function withClients(
  names: string[],
  ...args: Parameters<typeof startInstance>
): Promise<Instance & { clients: Client[] }> {
  const instance = await startInstance(...args);
  const clients: Client[] = [];
  for (const name of names) clients.push(await Client.open(instance.wsUrl, name));
  return { ...instance, clients };
}

describe('connections view', () => {
  it('pages through every connection once, in connect order, with a cursor', async () => {
    const names = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7'];
    const { base } = await withClients(names);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor === null ? '' : `&cursor=${cursor}`;
      const { status, body } = await call(`${base}/admin/api/connections?limit=3${q}`);
      expect(status).toBe(200);
      expect(body['total']).toBe(7);
      expect(body['nodes']).toBe(1);
      expect(body['missing']).toBe(0);
      seen.push(...(body['rows'] as Row[]).map((r) => r.identity!));
      cursor = body['next'] as string | null;
      pages += 1;
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect(seen).toEqual(names);
  });

  it('uses the default page size when none is asked, and searches identities and ids', async () => {
    const names = Array.from({ length: 6 }, (_, i) => `user-${i}`);
    const { base } = await withClients(names, { pageSize: 4 });
    const first = await call(`${base}/admin/api/connections`);
    expect((first.body['rows'] as Row[]).length).toBe(4);
    const found = await call(`${base}/admin/api/connections?search=USER-3`);
    const rows = found.body['rows'] as Row[];
    expect(rows.map((r) => r.identity)).toEqual(['user-3']);
    const byId = await call(`${base}/admin/api/connections?search=${encodeURIComponent(rows[0]!.id)}`); // prettier-ignore
    expect((byId.body['rows'] as Row[]).map((r) => r.identity)).toEqual(['user-3']);
    const none = await call(`${base}/admin/api/connections?search=nobody`);
    expect(none.body).toMatchObject({ rows: [], total: 0, next: null });
  });

  it('sorts by traffic, most bytes first', async () => {
    const { base, clients } = await withClients(['quiet', 'loud']);
    clients[1]!.send('shout', { text: 'x'.repeat(30_000) }, 'r1');
    await clients[1]!.next((m) => m.id === 'r1');
    const rows = (await call(`${base}/admin/api/connections?sort=traffic`)).body['rows'] as Row[];
    expect(rows[0]!.identity).toBe('loud');
    expect(rows[0]!.bytesIn).toBeGreaterThan(30_000);
  });

  it('answers 400 with a message to odd query strings, and nothing else changes', async () => {
    const { base } = await withClients(['ann']);
    const odd = [
      'limit=0',
      'limit=201',
      'limit=-1',
      'limit=1.5',
      'limit=abc',
      'limit=1&limit=2',
      'sort=size',
      'sort=age&sort=traffic',
      'cursor=!!!',
      'cursor=bm90IGpzb24',
      `cursor=${Buffer.from('{"key":"x","id":1}').toString('base64url')}`,
      `search=${'x'.repeat(300)}`,
    ];
    for (const q of odd) {
      const { status, body } = await call(`${base}/admin/api/connections?${q}`);
      expect([q, status, body['code']]).toEqual([q, 400, 'PKG_ERR_ADMIN_BAD_QUERY']);
      expect(typeof body['message']).toBe('string');
    }
    // Bytes that are not a URL never reach the admin: the HTTP layer answers them.
    const malformed = await call(`${base}/admin/api/connections?cursor=%%%`);
    expect([malformed.status, malformed.body['code']]).toEqual([400, 'PKG_ERR_HTTP_MALFORMED_URL']);
    const fine = await call(`${base}/admin/api/connections?limit=200&search=&unknown=1`);
    expect(fine.status).toBe(200);
  });
});

describe('nodes, rooms, presence, history and refusals views', () => {
  it('shows the node with its load', async () => {
    const { base } = await withClients(['ann', 'bob']);
    const { body } = await call(`${base}/admin/api/nodes`);
    const rows = body['rows'] as Array<Record<string, unknown>>;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ connections: 2, openClients: 2, adapter: 'local', pid: process.pid }); // prettier-ignore
  });

  it('lists rooms with member counts, searched and paged by name', async () => {
    const { base, server } = await withClients(['a', 'b', 'c']);
    const ids = server.listConnections().rows.map((r) => r.id);
    for (const id of ids) server.joinRoom(id, 'lobby');
    server.joinRoom(ids[0]!, 'game:1');
    server.joinRoom(ids[1]!, 'game:2');
    const all = await call(`${base}/admin/api/rooms`);
    expect(all.body['rows']).toEqual([
      { namespace: '/', room: 'game:1', members: 1, instances: 1, presence: null, history: null },
      { namespace: '/', room: 'game:2', members: 1, instances: 1, presence: null, history: null },
      { namespace: '/', room: 'lobby', members: 3, instances: 1, presence: null, history: null },
    ]);
    const games = await call(`${base}/admin/api/rooms?search=game&limit=1`);
    expect((games.body['rows'] as Array<{ room: string }>).map((r) => r.room)).toEqual(['game:1']);
    const next = await call(`${base}/admin/api/rooms?search=game&limit=1&cursor=${games.body['next'] as string}`); // prettier-ignore
    expect((next.body['rows'] as Array<{ room: string }>).map((r) => r.room)).toEqual(['game:2']);
    expect(next.body['next']).toBeNull();
  });

  it('lists rooms with presence and their members, and rooms with history and what they keep', async () => {
    const { base, server } = await withClients(
      ['ann', 'bob'],
      {},
      {
        presence: [{ match: 'p:*' }],
        history: [{ match: 'h:*', size: 10, ttl: 60_000 }],
      },
    );
    const ids = server.listConnections().rows.map((r) => r.id);
    for (const id of ids) {
      server.joinRoom(id, 'p:1');
      server.joinRoom(id, 'h:1');
      server.joinRoom(id, 'plain');
    }
    for (let i = 0; i < 3; i += 1) server.broadcast('note', { i }, { room: 'h:1' });
    const presence = await call(`${base}/admin/api/rooms?only=presence`);
    expect(presence.body['rows']).toEqual([
      expect.objectContaining({ room: 'p:1', presence: { connections: 2, keys: 2 } }),
    ]);
    const members = await call(`${base}/admin/api/presence?room=p:1`);
    expect(members.body).toMatchObject({ room: 'p:1', namespace: '/', keys: 2 });
    expect((members.body['entries'] as Array<{ key: string }>).map((e) => e.key).sort()).toEqual(['ann', 'bob']); // prettier-ignore
    const notTracked = await call(`${base}/admin/api/presence?room=plain`);
    expect(notTracked.status).toBe(400);
    const history = await call(`${base}/admin/api/rooms?only=history`);
    const rows = history.body['rows'] as Array<{ room: string; history: { kept: number; bytes: number } }>; // prettier-ignore
    expect(rows.map((r) => [r.room, r.history.kept])).toEqual([['h:1', 3]]);
    expect(rows[0]!.history.bytes).toBeGreaterThan(0);
  });

  it('counts refusals by code beside the limits they come from', async () => {
    const { base, server, clients } = await withClients(['ann'], {}, { ws_max_messages_per_second: 2 }); // prettier-ignore
    for (let i = 0; i < 10; i += 1) clients[0]!.send('spam', {}, `s${i}`);
    await clients[0]!.next((m) => m.id === 's9' || m.event === 'error');
    const { body } = await call(`${base}/admin/api/refusals`);
    expect(Object.keys(body['total'] as object).length).toBeGreaterThan(0);
    expect(body['total']).toEqual(server.getRefusals());
    const [node] = body['rows'] as Array<{ limits: Record<string, unknown> }>;
    expect(node!.limits['ws_max_messages_per_second']).toBe(2);
  });
});

describe('actions', () => {
  it('refuses disconnect and revoke by default, and the client stays', async () => {
    const { base, server, admin } = await withClients(['ann']);
    const [row] = server.listConnections().rows;
    const cut = await call(`${base}/admin/api/disconnect`, { body: { id: row!.id } });
    expect([cut.status, cut.body['code']]).toEqual([403, 'PKG_ERR_ADMIN_ACTION_DISABLED']);
    const revoke = await call(`${base}/admin/api/revoke`, { body: { identity: 'ann' } });
    expect([revoke.status, revoke.body['code']]).toEqual([403, 'PKG_ERR_ADMIN_ACTION_DISABLED']);
    expect(server.listConnections().total).toBe(1);
    expect(admin.audit()).toEqual([]);
    const session = await call(`${base}/admin/api/session`);
    expect(session.body['actions']).toEqual({ disconnect: false, revoke: false });
  });

  it('disconnects and revokes when enabled, each audited in the list and the log', async () => {
    const { base, server, admin, logger, clients } = await withClients(['ann', 'bob', 'bob'], {
      actions: { disconnect: true, revoke: true },
    });
    const ann = server.listConnections({ search: 'ann' }).rows[0]!;
    const cut = await call(`${base}/admin/api/disconnect`, { body: { id: ann.id } });
    expect(cut.status).toBe(200);
    expect(await clients[0]!.closed).toBe(1000);
    const revoke = await call(`${base}/admin/api/revoke`, { body: { identity: 'bob' } });
    expect(revoke.body).toEqual({ revoked: 'bob', reached: 2 });
    expect(await clients[1]!.closed).toBe(4403);
    const missing = await call(`${base}/admin/api/disconnect`, { body: { id: 'no-such-id' } });
    expect([missing.status, missing.body['code']]).toEqual([404, 'PKG_ERR_ADMIN_NOT_FOUND']);
    const bad = await call(`${base}/admin/api/disconnect`, { body: { id: 7 } });
    expect(bad.status).toBe(400);
    const entries = admin.audit();
    expect(entries.map((e) => [e.action, e.target])).toEqual([
      ['disconnect', 'no-such-id'],
      ['revoke', 'bob'],
      ['disconnect', ann.id],
    ]);
    expect(entries[1]).toMatchObject({ who: '127.0.0.1', outcome: '2 connection(s)' });
    const lines = logger.lines.filter((l) => l.context?.['audit'] === true);
    expect(lines.map((l) => l.message)).toEqual([
      `admin: disconnect ${ann.id} by 127.0.0.1: ok on ${entries[2]!.outcome.slice(6)}`,
      'admin: revoke bob by 127.0.0.1: 2 connection(s)',
      expect.stringMatching(/^admin: disconnect no-such-id by 127\.0\.0\.1: No instance/),
    ]);
    const listed = await call(`${base}/admin/api/audit`);
    expect((listed.body['entries'] as unknown[]).length).toBe(3);
  });

  it('keeps at most auditSize entries, the newest', async () => {
    const { base, admin } = await startInstance({ actions: { disconnect: true }, auditSize: 2 });
    for (const id of ['x1', 'x2', 'x3']) await call(`${base}/admin/api/disconnect`, { body: { id } }); // prettier-ignore
    expect(admin.audit().map((e) => e.target)).toEqual(['x3', 'x2']);
  });
});

describe('live trace of one connection', () => {
  it('records what the client sends and what it is sent, then stops', async () => {
    const { base, server, clients } = await withClients(['ann', 'bob'], {}, {}, (s) => {
      s.on('echo', (_id, data) => data);
    });
    const ann = server.listConnections({ search: 'ann' }).rows[0]!;
    const started = await call(`${base}/admin/api/trace`, { body: { id: ann.id, op: 'start' } });
    expect(started.status).toBe(200);
    expect(started.body['active']).toBe(true);
    clients[0]!.send('echo', { n: 1 }, 'e1');
    await clients[0]!.next((m) => m.id === 'e1');
    clients[1]!.send('echo', { n: 2 }, 'e2'); // another connection: not in the trace
    await clients[1]!.next((m) => m.id === 'e2');
    const read = await call(`${base}/admin/api/trace?id=${encodeURIComponent(ann.id)}`);
    const entries = read.body['entries'] as Array<{ seq: number; dir: string; text: string }>;
    expect(entries.map((e) => e.dir)).toEqual(['in', 'out']);
    expect(JSON.parse(entries[0]!.text)).toEqual({ event: 'echo', data: { n: 1 }, id: 'e1' });
    expect(entries[1]!.text).toContain('"e1"');
    const after = await call(`${base}/admin/api/trace?id=${encodeURIComponent(ann.id)}&since=${entries[1]!.seq}`); // prettier-ignore
    expect(after.body['entries']).toEqual([]);
    const stopped = await call(`${base}/admin/api/trace`, { body: { id: ann.id, op: 'stop' } });
    expect(stopped.body['active']).toBe(false);
    clients[0]!.send('echo', { n: 3 }, 'e3');
    await clients[0]!.next((m) => m.id === 'e3');
    const gone = await call(`${base}/admin/api/trace?id=${encodeURIComponent(ann.id)}`);
    expect(gone.status).toBe(404);
  });

  it('shows text frames as text, sent to one client or broadcast', async () => {
    const { base, server, clients } = await withClients(['ann'], {}, {}, () => undefined);
    const { id } = server.listConnections().rows[0]!;
    await call(`${base}/admin/api/trace`, { body: { id, op: 'start' } });
    server.send(id, 'direct', { word: 'héllo' });
    await clients[0]!.next((m) => m.event === 'direct');
    server.broadcast('news', { word: 'wörld' });
    await clients[0]!.next((m) => m.event === 'news');
    const read = await call(`${base}/admin/api/trace?id=${encodeURIComponent(id)}`);
    const entries = read.body['entries'] as Array<{ dir: string; text: string }>;
    const out = entries.filter((e) => e.dir === 'out').map((e) => e.text);
    expect(out).toHaveLength(2);
    expect(JSON.parse(out[0]!)).toMatchObject({ event: 'direct', data: { word: 'héllo' } });
    expect(JSON.parse(out[1]!)).toMatchObject({ event: 'news', data: { word: 'wörld' } });
  });

  it('keeps only the newest messages within its bounds, cut to maxMessageChars', async () => {
    const { base, server, clients } = await withClients(['ann'], {
      trace: { maxMessages: 4, maxMessageChars: 16 },
    }, {}, (s) => s.on('echo', () => 'ok')); // prettier-ignore
    const { id } = server.listConnections().rows[0]!;
    await call(`${base}/admin/api/trace`, { body: { id, op: 'start' } });
    for (let i = 0; i < 5; i += 1) {
      clients[0]!.send('echo', { long: 'y'.repeat(100) }, `q${i}`);
      await clients[0]!.next((m) => m.id === `q${i}`);
    }
    const read = await call(`${base}/admin/api/trace?id=${encodeURIComponent(id)}`);
    const entries = read.body['entries'] as Array<{ seq: number; text: string; bytes: number }>;
    expect(entries.map((e) => e.seq)).toEqual([7, 8, 9, 10]);
    expect(read.body['dropped']).toBe(6);
    for (const e of entries) expect(e.text.length).toBeLessThanOrEqual(16 + '… (cut)'.length);
    expect(entries.some((e) => e.bytes > 100)).toBe(true);
  });

  it('turns itself off after its duration, and leaves the socket as it was', async () => {
    const { base, server, clients } = await withClients(['ann'], { trace: { duration: 30 } }, {}, (s) => s.on('echo', () => 'ok')); // prettier-ignore
    const { id } = server.listConnections().rows[0]!;
    const socket = server.getWebSocketHandler().getClient(id)!.socket;
    await call(`${base}/admin/api/trace`, { body: { id, op: 'start' } });
    expect(Object.hasOwn(socket, 'send')).toBe(true);
    for (;;) {
      const read = await call(`${base}/admin/api/trace?id=${encodeURIComponent(id)}`);
      if (read.body['active'] === false) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(Object.hasOwn(socket, 'send')).toBe(false);
    expect(socket.listenerCount('message')).toBe(1);
    clients[0]!.send('echo', {}, 'after');
    await clients[0]!.next((m) => m.id === 'after');
    const read = await call(`${base}/admin/api/trace?id=${encodeURIComponent(id)}`);
    expect(read.body['entries']).toEqual([]);
  });

  it('keeps at most maxBytes of text, the newest', async () => {
    const { base, server, clients } = await withClients(['ann'], { trace: { maxBytes: 1024 } }, {}, (s) => s.on('echo', () => 'ok')); // prettier-ignore
    const { id } = server.listConnections().rows[0]!;
    await call(`${base}/admin/api/trace`, { body: { id, op: 'start' } });
    for (let i = 0; i < 4; i += 1) {
      clients[0]!.send('echo', { text: 'z'.repeat(400) }, `b${i}`);
      await clients[0]!.next((m) => m.id === `b${i}`);
    }
    const read = await call(`${base}/admin/api/trace?id=${encodeURIComponent(id)}`);
    const entries = read.body['entries'] as Array<{ seq: number; text: string }>;
    expect(entries.reduce((n, e) => n + e.text.length, 0)).toBeLessThanOrEqual(1024);
    expect(entries.at(-1)!.seq).toBe(8);
    expect(read.body['dropped']).toBe(8 - entries.length);
  });

  it('takes a start twice (a restart), and answers a second stop or disconnect with 404', async () => {
    const { base, server, clients } = await withClients(['ann'], { actions: { disconnect: true } }); // prettier-ignore
    const { id } = server.listConnections().rows[0]!;
    const socket = server.getWebSocketHandler().getClient(id)!.socket;
    for (let i = 0; i < 2; i += 1) {
      const started = await call(`${base}/admin/api/trace`, { body: { id, op: 'start' } });
      expect(started.status).toBe(200);
    }
    expect(socket.listenerCount('message')).toBe(2); // one tap, not two
    expect((await call(`${base}/admin/api/trace`, { body: { id, op: 'stop' } })).status).toBe(200);
    expect((await call(`${base}/admin/api/trace`, { body: { id, op: 'stop' } })).status).toBe(404);
    expect((await call(`${base}/admin/api/disconnect`, { body: { id } })).status).toBe(200);
    await clients[0]!.closed;
    expect((await call(`${base}/admin/api/disconnect`, { body: { id } })).status).toBe(404);
  });

  it('records the close, refuses more than maxTraced, and 404s an unknown id', async () => {
    const { base, server, clients } = await withClients(['ann', 'bob'], { trace: { maxTraced: 1 } }); // prettier-ignore
    const [ann, bob] = server.listConnections().rows;
    await call(`${base}/admin/api/trace`, { body: { id: ann!.id, op: 'start' } });
    const second = await call(`${base}/admin/api/trace`, { body: { id: bob!.id, op: 'start' } });
    expect([second.status, second.body['code']]).toEqual([429, 'PKG_ERR_ADMIN_TOO_MANY_TRACES']);
    clients[0]!.ws.close(4000, 'bye');
    await clients[0]!.closed;
    const read = await call(`${base}/admin/api/trace?id=${encodeURIComponent(ann!.id)}`);
    const entries = read.body['entries'] as Array<{ dir: string; text: string }>;
    expect(entries.at(-1)).toMatchObject({ dir: 'close', text: '4000 bye' });
    expect(read.body['active']).toBe(false);
    const unknown = await call(`${base}/admin/api/trace`, { body: { id: 'nope', op: 'start' } });
    expect([unknown.status, unknown.body['code']]).toEqual([404, 'PKG_ERR_ADMIN_NOT_FOUND']);
    const badOp = await call(`${base}/admin/api/trace`, { body: { id: ann!.id, op: 'pause' } });
    expect(badOp.status).toBe(400);
  });
});
