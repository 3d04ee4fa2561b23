import { describe, expect, it } from '@jest/globals';
import { useDemo } from './helpers/app';

const start = useDemo();

async function json(res: globalThis.Response): Promise<Record<string, unknown>> {
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return (await res.json()) as Record<string, unknown>;
}

describe('chat page', () => {
  it('serves the page at / with a CSP that allows only its own script and style', async () => {
    const { http } = await start();
    const res = await fetch(`${http}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self';");
    expect(res.headers.get('content-security-policy')).toMatch(/style-src 'sha256-[^']+'/);
    const html = await res.text();
    expect(html).toContain('<title>Chat demo</title>');
    expect(html).toContain('<script src="/chat.js"></script>');
    expect(html).toContain('id="client-count"');
  });

  it('serves the bundled page script at /chat.js from the same port', async () => {
    const { http } = await start({}, { pageScript: '"use strict";/* bundle */' });
    const res = await fetch(`${http}/chat.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await res.text()).toBe('"use strict";/* bundle */');
  });

  it('answers /chat.js with 404 and a script that says so when the demo is not built', async () => {
    const { http } = await start();
    const res = await fetch(`${http}/chat.js`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await res.text()).toContain('The page script is not built');
  });

  it('serves the operator page at /admin to this machine, read-only, with the nodes view', async () => {
    const { http } = await start();
    const page = await fetch(`${http}/admin`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const nodes = await json(await fetch(`${http}/admin/api/nodes`));
    expect(Array.isArray(nodes['rows'])).toBe(true);
    expect((nodes['rows'] as unknown[]).length).toBe(1);
    // Actions are off: a disconnect is refused whatever it names.
    const res = await fetch(`${http}/admin/api/disconnect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ clientId: 'anyone' }),
    });
    expect(res.status).toBe(403);
  });

  it('answers 404 JSON for a path no controller serves', async () => {
    const { http } = await start();
    const res = await fetch(`${http}/nope`);
    expect(res.status).toBe(404);
    expect(await json(res)).toEqual({ error: 'Not Found' });
  });
});

describe('GET /api/status and /api/clients', () => {
  it('reports the status, the WebSocket client count and a Unix timestamp', async () => {
    const { http, join } = await start();
    const before = Math.floor(Date.now() / 1000);
    const empty = await json(await fetch(`${http}/api/status`));
    expect(empty).toEqual({ status: 'ok', clients: 0, timestamp: expect.any(Number) });
    expect(Number.isInteger(empty.timestamp)).toBe(true);
    expect(empty.timestamp as number).toBeGreaterThanOrEqual(before);

    await join();
    await join();
    const two = await json(await fetch(`${http}/api/status`));
    expect(two.clients).toBe(2);
  });

  it('counts against a budget of 60 per 60 s by default', async () => {
    const { http } = await start();
    const first = await fetch(`${http}/api/status`);
    expect(first.headers.get('x-ratelimit-limit')).toBe('60');
    await first.arrayBuffer();
  });

  it.each(['/api/status', '/api/clients'])('limits %s per address', async (path) => {
    const { http } = await start({ rateLimitScale: 0.1 });
    for (let i = 0; i < 6; i += 1) {
      const res = await fetch(`${http}${path}`);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const limited = await fetch(`${http}${path}`);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    await limited.arrayBuffer();
  });

  it('lists the connected client ids', async () => {
    const { http, join } = await start();
    expect(await json(await fetch(`${http}/api/clients`))).toEqual({ count: 0, clients: [] });
    const [, a] = await join();
    const [, b] = await join();
    const body = await json(await fetch(`${http}/api/clients`));
    expect(body.count).toBe(2);
    expect([...(body.clients as string[])].sort()).toEqual(
      [a.data.clientId as string, b.data.clientId as string].sort(),
    );
  });
});

describe('health check', () => {
  it('serves the health document at /health by default', async () => {
    const { http, join } = await start();
    await join();
    const res = await fetch(`${http}/health`);
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body.status).toBe('healthy');
    expect(body.server).toMatchObject({ clients: 1, uptime: expect.any(Number) });
  });

  it('moves to HEALTH_CHECK_PATH', async () => {
    const { http } = await start({ healthCheckPath: '/healthz' });
    expect((await json(await fetch(`${http}/healthz`))).status).toBe('healthy');
    expect((await fetch(`${http}/health`)).status).toBe(404);
  });
});

describe('versioned routes', () => {
  it('serves v1 and v2 from two controllers with different shapes', async () => {
    const { http } = await start();
    expect(await json(await fetch(`${http}/api/v1/greeting/Ada`))).toEqual({
      version: 1,
      message: 'Hello, Ada!',
    });
    expect(await json(await fetch(`${http}/api/v2/greeting/Ada`))).toEqual({
      version: 2,
      greeting: { text: 'Hello, Ada!', name: 'Ada', lang: 'en' },
    });
    expect(await json(await fetch(`${http}/api/v2/greeting/Ada?lang=fr`))).toEqual({
      version: 2,
      greeting: { text: 'Bonjour, Ada!', name: 'Ada', lang: 'fr' },
    });
  });

  it('answers 400 {error} for a language v2 does not know', async () => {
    const { http } = await start();
    const res = await fetch(`${http}/api/v2/greeting/Ada?lang=xx`);
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({ error: expect.stringContaining('lang') });
  });
});

describe('GET /api/me (auth middleware)', () => {
  it('answers 401 without a token', async () => {
    const { http } = await start();
    const res = await fetch(`${http}/api/me`);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await json(res)).toEqual({ error: expect.stringContaining('Authorization') });
  });

  it.each([
    ['an unknown bearer token', { authorization: 'Bearer nope' }, ''],
    ['a non-Bearer scheme', { authorization: 'Basic YWxpY2U6eA==' }, ''],
    ['an unknown ?key=', {}, '?key=nope'],
  ])('answers 401 for %s', async (_case, headers: Record<string, string>, query) => {
    const { http } = await start();
    const res = await fetch(`${http}/api/me${query}`, { headers });
    expect(res.status).toBe(401);
    expect(await json(res)).toEqual({ error: 'Invalid token.' });
  });

  it('passes the user to the handler for a Bearer token', async () => {
    const { http } = await start();
    const res = await fetch(`${http}/api/me`, { headers: { authorization: 'Bearer alice-token' } });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ user: { id: 'alice', name: 'Alice', role: 'user' } });
  });

  it('accepts the token as ?key=', async () => {
    const { http } = await start();
    const res = await fetch(`${http}/api/me?key=bob-token`);
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ user: { id: 'bob', name: 'Bob', role: 'user' } });
  });
});

describe('GET /api/limited (RateLimit 5 per 60 s)', () => {
  it('keeps its own budget whatever RATE_LIMIT_SCALE says', async () => {
    const { http } = await start({ rateLimitScale: 10 });
    const res = await fetch(`${http}/api/limited`);
    expect(res.headers.get('x-ratelimit-limit')).toBe('5');
    await res.arrayBuffer();
  });

  it('counts down, then answers 429 with Retry-After', async () => {
    const { http } = await start();
    for (let i = 1; i <= 5; i += 1) {
      const res = await fetch(`${http}/api/limited`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('5');
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(5 - i));
      await res.arrayBuffer();
    }
    const limited = await fetch(`${http}/api/limited`);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await json(limited)).toEqual(expect.objectContaining({ error: expect.any(String) }));
  });
});

describe('CORS', () => {
  const preflightFrom = (http: string, origin: string) =>
    fetch(`${http}/api/broadcast`, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, authorization',
      },
    });

  it('grants no other site by default (same-origin only)', async () => {
    const { http } = await start();
    const preflight = await preflightFrom(http, 'https://evil.example');
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    expect(preflight.headers.get('access-control-allow-methods')).toBeNull();
    const res = await fetch(`${http}/api/status`, { headers: { origin: 'https://evil.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    await res.arrayBuffer();
  });

  it('allows any origin with CORS_ORIGINS=*', async () => {
    const { http } = await start({ corsOrigins: ['*'] });
    const preflight = await preflightFrom(http, 'https://evil.example');
    expect(preflight.headers.get('access-control-allow-origin')).toMatch(
      /^(\*|https:\/\/evil\.example)$/,
    );
  });

  it('answers a preflight from an allowed origin and withholds the headers from others', async () => {
    const { http } = await start({ corsOrigins: ['http://allowed.test'] });
    const preflight = (origin: string) =>
      fetch(`${http}/api/broadcast`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
    const ok = await preflight('http://allowed.test');
    expect(ok.status).toBeLessThan(300);
    expect(ok.headers.get('access-control-allow-origin')).toBe('http://allowed.test');
    expect(ok.headers.get('access-control-allow-methods')).toMatch(/POST/);
    const other = await preflight('http://evil.test');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();

    const simple = await fetch(`${http}/api/status`, {
      headers: { origin: 'http://allowed.test' },
    });
    expect(simple.headers.get('access-control-allow-origin')).toBe('http://allowed.test');
    const denied = await fetch(`${http}/api/status`, { headers: { origin: 'http://evil.test' } });
    expect(denied.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('trust proxy', () => {
  const forwarded = {
    'x-forwarded-for': '203.0.113.9',
    'x-forwarded-proto': 'https',
    'x-forwarded-host': 'chat.example.com',
  };

  it('ignores forwarded headers by default', async () => {
    const { http } = await start();
    const body = await json(await fetch(`${http}/api/whoami`, { headers: forwarded }));
    expect(body.ip).toBe('127.0.0.1');
    expect(body.scheme).toBe('http');
  });

  it('believes them from a trusted proxy address', async () => {
    // The forwarded host has to be an allowed host too (DNS rebinding), as in production.
    const { http } = await start({
      trustProxy: ['127.0.0.1'],
      allowedHosts: ['127.0.0.1', 'chat.example.com'],
    });
    const body = await json(await fetch(`${http}/api/whoami`, { headers: forwarded }));
    expect(body).toMatchObject({ ip: '203.0.113.9', scheme: 'https', host: 'chat.example.com' });
    expect(body.url).toMatch(/^https:\/\/chat\.example\.com(:443)?\/api\/whoami$/);
  });

  it('ignores them from a peer outside the trusted ranges', async () => {
    const { http } = await start({ trustProxy: ['10.0.0.0/8'] });
    const body = await json(await fetch(`${http}/api/whoami`, { headers: forwarded }));
    expect(body.ip).toBe('127.0.0.1');
  });
});

describe('API documents', () => {
  it('serves OpenAPI and AsyncAPI documents of its routes and events', async () => {
    const { http } = await start();
    const openapi = await json(await fetch(`${http}/openapi.json`));
    expect(openapi).toMatchObject({ openapi: '3.1.0', info: { title: 'pkg demo' } });
    expect(Object.keys(openapi.paths as object)).toEqual(
      expect.arrayContaining(['/api/status', '/api/broadcast']),
    );
    const asyncapi = await json(await fetch(`${http}/asyncapi.json`));
    const messages = (asyncapi.components as { messages: Record<string, { payload: unknown }> })
      .messages;
    expect(messages['client.chat.message']!.payload).toMatchObject({
      properties: { data: { properties: { message: { type: 'string', maxLength: 2000 } } } },
    });
  });
});
