// Who may open the admin page and its endpoints, over real sockets: loopback by default (the
// metrics endpoint's rule, from core), a bearer token, a forwarded request from an untrusted
// proxy, the application's authorize hook, and actions from another site.
import { afterEach, describe, expect, it } from '@jest/globals';
import { mountAdmin } from '../src/index';
import { Client, call, closeAll, startInstance } from './helpers';

afterEach(closeAll);

const TOKEN = 'a-long-random-admin-token';

describe('access to the admin page', () => {
  it('serves the page, its script and its stylesheet to loopback, with a strict policy', async () => {
    const { base } = await startInstance();
    const page = await fetch(`${base}/admin`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('cache-control')).toBe('no-store');
    const html = await page.text();
    expect(html).toContain('<script src="./admin/admin.js" defer></script>');
    const script = await fetch(`${base}/admin/admin.js`);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await script.text()).toContain("location.pathname.replace(/\\/+$/, '') + '/api/'");
    const style = await fetch(`${base}/admin/admin.css`);
    expect(style.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect((await call(`${base}/admin/api/nodes`)).status).toBe(200);
  });

  it('names its files after a custom path', async () => {
    const { base } = await startInstance({ path: '/ops/console' });
    const html = await (await fetch(`${base}/ops/console`)).text();
    expect(html).toContain('href="./console/admin.css"');
    expect((await fetch(`${base}/ops/console/admin.css`)).status).toBe(200);
    expect((await fetch(`${base}/admin`)).status).toBe(404);
  });

  it('refuses every address outside the allow list without the token, and takes the token from any', async () => {
    const { base } = await startInstance({ allow: [], token: TOKEN });
    const refused = await call(`${base}/admin/api/connections`);
    expect(refused.status).toBe(403);
    expect(refused.body['code']).toBe('PKG_ERR_ADMIN_FORBIDDEN');
    const wrong = await call(`${base}/admin/api/connections`, {
      headers: { Authorization: 'Bearer not-the-token-at-all' },
    });
    expect(wrong.status).toBe(403);
    const right = await call(`${base}/admin/api/connections`, {
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    expect(right.status).toBe(200);
    // The page holds no data: with a token set it loads anywhere and asks for the token.
    expect((await fetch(`${base}/admin`)).status).toBe(200);
  });

  it('refuses the page itself outside the allow list when no token is set', async () => {
    const { base } = await startInstance({ allow: ['10.0.0.0/8'] });
    expect((await fetch(`${base}/admin`)).status).toBe(403);
    expect((await call(`${base}/admin/api/nodes`)).status).toBe(403);
  });

  it('refuses a request a loopback proxy forwarded for a remote client, unless the proxy is trusted', async () => {
    const untrusted = await startInstance();
    const forwarded = { 'X-Forwarded-For': '203.0.113.9' };
    expect((await call(`${untrusted.base}/admin/api/nodes`, { headers: forwarded })).status).toBe(403); // prettier-ignore
    await closeAll();
    const trusted = await startInstance({}, { trust_proxy: ['loopback'] });
    // Judged by the forwarded client address, which is not loopback.
    expect((await call(`${trusted.base}/admin/api/nodes`, { headers: forwarded })).status).toBe(403); // prettier-ignore
    const local = { 'X-Forwarded-For': '127.0.0.1' };
    expect((await call(`${trusted.base}/admin/api/nodes`, { headers: local })).status).toBe(200);
  });

  it('lets the authorize hook decide alone, and names the operator in the audit', async () => {
    const { base, admin, wsUrl } = await startInstance({
      authorize: (request) => (request.getHeader('x-operator') === 'ops' ? 'ops-team' : false),
      actions: { disconnect: true },
    });
    expect((await call(`${base}/admin/api/nodes`)).status).toBe(403);
    const headers = { 'x-operator': 'ops' };
    expect((await call(`${base}/admin/api/session`, { headers })).body['who']).toBe('ops-team');
    const client = await Client.open(wsUrl, 'ann');
    const [row] = (await call(`${base}/admin/api/connections`, { headers })).body['rows'] as Array<{ id: string }>; // prettier-ignore
    const done = await call(`${base}/admin/api/disconnect`, { headers, body: { id: row!.id } });
    expect(done.status).toBe(200);
    expect(await client.closed).toBe(1000);
    expect(admin.audit()[0]).toMatchObject({ who: 'ops-team', action: 'disconnect', target: row!.id }); // prettier-ignore
  });

  it('needs both the address rule and the hook when both are given', async () => {
    const { base } = await startInstance({ allow: ['loopback'], authorize: () => false });
    expect((await call(`${base}/admin/api/nodes`)).status).toBe(403);
  });

  it('refuses an action from another site, or without a JSON body', async () => {
    const { base, wsUrl, server } = await startInstance({ actions: { disconnect: true } });
    await Client.open(wsUrl, 'ann');
    const [row] = server.listConnections().rows;
    const foreign = await call(`${base}/admin/api/disconnect`, {
      body: { id: row!.id },
      headers: { Origin: 'http://evil.example' },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body['code']).toBe('PKG_ERR_ADMIN_CROSS_SITE');
    const form = await fetch(`${base}/admin/api/disconnect`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `id=${encodeURIComponent(row!.id)}`,
    });
    expect(form.status).toBe(403);
    expect(server.listConnections().total).toBe(1);
  });

  it('checks its options once, with a TypeError naming the option', async () => {
    const { server } = await startInstance();
    const bad: unknown[] = [
      { path: 'admin' },
      { path: '/admin/' },
      { path: '/a b' },
      { token: 'short' },
      { allow: 'loopback' },
      { allow: ['not an address'] },
      { actions: { delete: true } },
      { actions: { disconnect: 'yes' } },
      { pageSize: 0 },
      { maxPageSize: 501 },
      { pageSize: 100, maxPageSize: 50 },
      { trace: { duration: 0 } },
      { trace: { colour: 'red' } },
      { colour: 'red' },
    ];
    for (const options of bad) {
      expect(() => mountAdmin(server, options as never)).toThrow(
        expect.objectContaining({ name: 'TypeError', code: 'PKG_ERR_ADMIN_INVALID_OPTION' }),
      );
    }
  });
});
