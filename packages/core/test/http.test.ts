// HTTP through a running server: route matching (parameters, static over parameter,
// encoded parameters, trailing slash, 404, 405 with Allow, HEAD, OPTIONS), rate limits on
// both protocols, CORS, trust proxy (HTTP and the WebSocket handshake), failing handlers on
// both protocols, and the health check.
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  HttpRoute,
  OnConnect,
  RateLimit,
  Response,
  SocketController,
  SocketOn,
  type Server,
  type Request,
} from '../src/index';
import WebSocket from 'ws';
import { RawConnection, TestClient, cleanup, startServer } from './helpers';

afterEach(cleanup);

class ApiController extends SocketController<Server> {
  @HttpRoute('GET', '/users/{id}')
  user(request: Request): Response {
    return Response.json({ route: 'param', id: request.getParam('id') });
  }

  @HttpRoute('GET', '/users/me')
  me(): Response {
    return Response.json({ route: 'static' });
  }

  @HttpRoute('DELETE', '/users/{id}')
  remove(): Response {
    return new Response('', 204);
  }

  @HttpRoute('GET', '/teams/{team}/members/{member}')
  member(request: Request): Response {
    return Response.json(request.getParams());
  }

  @HttpRoute('POST', '/echo')
  echo(request: Request): Response {
    return Response.json({ body: request.getBody(), json: request.isJson() });
  }

  @HttpRoute('GET', '/slash/')
  slash(): Response {
    return Response.text('slash');
  }

  @HttpRoute('GET', '/text')
  text(): Response {
    return Response.text('hello body');
  }

  @HttpRoute('GET', '/ip')
  ip(request: Request): Response {
    return Response.json({
      ip: request.getIpAddress(),
      scheme: request.getScheme(),
      host: request.getHost(),
    });
  }

  @HttpRoute('GET', '/limited')
  @RateLimit(2, 60)
  limited(): Response {
    return Response.json({ ok: true });
  }

  @HttpRoute('GET', '/limited-throws')
  @RateLimit(5, 60)
  limitedThrows(): Response {
    throw new Error('limited failure');
  }

  @HttpRoute('GET', '/throws')
  throws(): Response {
    throw new Error('sync failure');
  }

  @HttpRoute('GET', '/rejects')
  async rejects(): Promise<Response> {
    await Promise.resolve();
    throw new Error('async failure');
  }

  @HttpRoute('GET', '/not-a-response')
  notAResponse(): Response {
    return 'oops' as unknown as Response;
  }

  @OnConnect()
  connected(clientId: string): void {
    const client = this.getServer().getWebSocketHandler().getClient(clientId);
    this.emit(clientId, 'hello', { ip: client?.ip ?? null });
  }

  @SocketOn('limited')
  @RateLimit(2, 60)
  wsLimited(clientId: string, data: { n: number }): void {
    this.emit(clientId, 'limited.ok', { n: data.n });
  }

  @SocketOn('throws')
  wsThrows(): void {
    throw new Error('ws sync failure');
  }

  @SocketOn('rejects')
  async wsRejects(): Promise<void> {
    await Promise.resolve();
    throw new Error('ws async failure');
  }

  @SocketOn('echo')
  wsEcho(clientId: string, data: Record<string, unknown>): void {
    this.emit(clientId, 'echo', data);
  }
}

describe('route matching through the server', () => {
  it('gives parameters, static wins over a parameter, parameters are percent-decoded', async () => {
    const { base } = await startServer([new ApiController()]);
    expect(await (await fetch(`${base}/users/42`)).json()).toEqual({ route: 'param', id: '42' });
    expect(await (await fetch(`${base}/users/me`)).json()).toEqual({ route: 'static' });
    expect(await (await fetch(`${base}/users/a%20b%2Fc`)).json()).toEqual({
      route: 'param',
      id: 'a b/c',
    });
    expect(await (await fetch(`${base}/teams/t%C3%A9/members/7`)).json()).toEqual({
      team: 'té',
      member: '7',
    });
  });

  it('ignores one trailing slash on routes and requests', async () => {
    const { base } = await startServer([new ApiController()]);
    expect(await (await fetch(`${base}/slash`)).text()).toBe('slash');
    expect(await (await fetch(`${base}/slash/`)).text()).toBe('slash');
    expect(await (await fetch(`${base}/users/42/`)).json()).toEqual({ route: 'param', id: '42' });
  });

  it('answers 404 JSON for an unknown path', async () => {
    const { base } = await startServer([new ApiController()]);
    const res = await fetch(`${base}/nothing/here`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: 'Not Found' });
  });

  it('answers 400 for a malformed percent-escape in the path, and keeps serving', async () => {
    const { base } = await startServer([new ApiController()]);
    const res = await fetch(`${base}/users/%E0%A4%A`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: 'Bad Request',
      code: 'PKG_ERR_HTTP_MALFORMED_URL',
    });
    expect(await (await fetch(`${base}/users/%E0%A4%A4`)).json()).toEqual({
      route: 'param',
      id: '\u0924',
    });
  });

  it('answers 405 with Allow when the path exists under other methods', async () => {
    const { base } = await startServer([new ApiController()]);
    const res = await fetch(`${base}/users/42`, { method: 'PUT' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, DELETE, OPTIONS');
    expect(await res.json()).toEqual({
      error: 'Method Not Allowed',
      code: 'PKG_ERR_CORE_METHOD_NOT_ALLOWED',
    });
    expect((await fetch(`${base}/users/42`, { method: 'DELETE' })).status).toBe(204);
  });

  it('answers a plain OPTIONS request with 204 and Allow', async () => {
    const { base } = await startServer([new ApiController()]);
    const res = await fetch(`${base}/echo`, { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.get('allow')).toBe('POST, OPTIONS');
  });

  it('answers HEAD through the GET route with its headers and no body', async () => {
    const { port } = await startServer([new ApiController()]);
    const conn = await RawConnection.open(port);
    conn.write(
      'HEAD /text HTTP/1.1\r\nHost: localhost\r\n\r\nGET /text HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
    );
    const data = await conn.waitFor((d) => d.includes('hello body'));
    const [head, rest] = data.split(/\r\n\r\n(.*)/s) as [string, string];
    expect(head).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(head).toMatch(/content-length: 10/i);
    // The next bytes after the HEAD answer are the GET answer: the HEAD answer had no body.
    expect(rest.startsWith('HTTP/1.1 200 OK')).toBe(true);
  });

  it('parses a JSON body', async () => {
    const { base } = await startServer([new ApiController()]);
    const res = await fetch(`${base}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ a: [1, 2] }),
    });
    expect(await res.json()).toEqual({ body: { a: [1, 2] }, json: true });
  });
});

describe('request errors keep their status', () => {
  it('answers 400 for a malformed JSON body that the handler reads', async () => {
    const { base, logger } = await startServer([new ApiController()]);
    const res = await fetch(`${base}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: 'Bad Request',
      code: 'PKG_ERR_HTTP_INVALID_JSON',
    });
    expect(logger.exceptions).toHaveLength(0);
  });

  it('answers 413 for a body over max_body_size', async () => {
    const { base } = await startServer([new ApiController()], { max_body_size: 16 });
    const res = await fetch(`${base}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'x'.repeat(100) }),
    });
    expect(res.status).toBe(413);
  });

  it('answers Expect: 100-continue with 413 and no invitation when the body is too large', async () => {
    const { port } = await startServer([new ApiController()], { max_body_size: 16 });
    const conn = await RawConnection.open(port);
    conn.write(
      'POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
        'Content-Length: 1000\r\nExpect: 100-continue\r\n\r\n',
    );
    const data = await conn.waitFor((d) => d.includes('\r\n\r\n'));
    expect(data.startsWith('HTTP/1.1 413 ')).toBe(true);
    expect(data).not.toContain('100 Continue');
    await conn.ended;
  });

  it('invites a body that fits with 100 Continue, then answers the request', async () => {
    const { port } = await startServer([new ApiController()], { max_body_size: 1024 });
    const conn = await RawConnection.open(port);
    const body = JSON.stringify({ text: 'hi' });
    conn.write(
      'POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
        `Content-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
    );
    await conn.waitFor((d) => d.includes('100 Continue'));
    conn.write(body);
    const data = await conn.waitFor((d) => /HTTP\/1\.1 200 [\s\S]*\r\n\r\n[\s\S]*hi/.test(d));
    expect(data.startsWith('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 ')).toBe(true);
  });
});

describe('rate limits', () => {
  it('answers 429 with Retry-After and rate-limit headers over an HTTP route limit', async () => {
    const { base } = await startServer([new ApiController()]);
    const first = await fetch(`${base}/limited`);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('2');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('1');
    expect((await fetch(`${base}/limited`)).status).toBe(200);
    const third = await fetch(`${base}/limited`);
    expect(third.status).toBe(429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(third.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(await third.json()).toMatchObject({ error: 'Too Many Requests' });
    // Other routes are not affected.
    expect((await fetch(`${base}/users/1`)).status).toBe(200);
  });

  it('puts the rate-limit headers on the 500 of a limited route whose handler throws', async () => {
    const { base } = await startServer([new ApiController()]);
    const res = await fetch(`${base}/limited-throws`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: 'Internal Server Error' });
    expect(res.headers.get('x-ratelimit-limit')).toBe('5');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('4');
    expect(res.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
  });

  it('counts per client IP, which trust proxy resolves from X-Forwarded-For', async () => {
    const { base } = await startServer([new ApiController()], { trust_proxy: ['127.0.0.1'] });
    const from = (ip: string) => fetch(`${base}/limited`, { headers: { 'x-forwarded-for': ip } });
    expect((await from('203.0.113.1')).status).toBe(200);
    expect((await from('203.0.113.1')).status).toBe(200);
    expect((await from('203.0.113.1')).status).toBe(429);
    expect((await from('203.0.113.2')).status).toBe(200);
  });

  it('answers rate_limited over a SocketOn limit, per client address, and keeps the connection', async () => {
    const { wsUrl } = await startServer([new ApiController()]);
    const a = await TestClient.connect(wsUrl);
    const b = await TestClient.connect(wsUrl);
    for (const n of [1, 2, 3]) a.send('limited', { n });
    expect((await a.next('limited.ok')).data).toEqual({ n: 1 });
    expect((await a.next('limited.ok')).data).toEqual({ n: 2 });
    const error = await a.next('error');
    expect(error.data['code']).toBe('rate_limited');
    expect(error.data['event']).toBe('limited');
    expect(error.data['retryAfter']).toEqual(expect.any(Number));
    expect(String(error.data['message'])).toMatch(/at most 2 per 60 s/);
    // A second connection from the same address shares the budget.
    b.send('limited', { n: 9 });
    expect((await b.next('error')).data['code']).toBe('rate_limited');
    a.send('echo', { still: 'open' });
    expect((await a.next('echo')).data).toEqual({ still: 'open' });
  });
});

describe('CORS through the server', () => {
  const cors = {
    allowed_origins: ['https://app.example'],
    allowed_methods: ['GET', 'POST'],
    allowed_headers: ['Content-Type', 'Authorization'],
  };

  it('answers a preflight from an allowed origin', async () => {
    const { base } = await startServer([new ApiController()], { cors });
    const res = await fetch(`${base}/echo`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(res.headers.get('access-control-allow-methods')).toMatch(/POST/);
    expect(res.headers.get('access-control-max-age')).toBe('86400');
  });

  it('grants nothing to another origin', async () => {
    const { base } = await startServer([new ApiController()], { cors });
    const preflight = await fetch(`${base}/echo`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const res = await fetch(`${base}/users/1`, { headers: { origin: 'https://evil.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('adds CORS headers to actual responses, errors included', async () => {
    const { base } = await startServer([new ApiController()], { cors });
    const headers = { origin: 'https://app.example' };
    const ok = await fetch(`${base}/users/1`, { headers });
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example');
    const missing = await fetch(`${base}/missing`, { headers });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('access-control-allow-origin')).toBe('https://app.example');
  });

  it('allows the same origins as the WebSocket handshake, however the list spells them', async () => {
    const { base, wsUrl } = await startServer([new ApiController()], {
      cors: { allowed_origins: ['https://app.example.com:443', 'HTTP://Local.Example:80', 'https://*.example.org:443'] }, // prettier-ignore
    });
    const corsGrant = async (origin: string): Promise<string | null> => {
      const res = await fetch(`${base}/users/1`, { headers: { origin } });
      return res.headers.get('access-control-allow-origin');
    };
    const upgrades = (origin: string): Promise<boolean> =>
      new Promise((resolve) => {
        const ws = new WebSocket(wsUrl, { origin });
        ws.once('open', () => {
          ws.close();
          resolve(true);
        });
        ws.once('unexpected-response', (_req, res) => {
          res.resume();
          ws.terminate();
          resolve(false);
        });
        ws.once('error', () => undefined);
      });
    // What browsers send, and a default port spelt out: allowed by both, echoed as sent.
    for (const origin of [
      'https://app.example.com',
      'http://local.example',
      'https://a.example.org',
      'https://app.example.com:443',
    ]) {
      expect([origin, await corsGrant(origin), await upgrades(origin)]).toEqual([origin, origin, true]); // prettier-ignore
    }
    // Another port, scheme or host: refused by both.
    for (const origin of [
      'https://app.example.com:8443',
      'http://app.example.com',
      'https://example.org',
    ]) {
      expect([origin, await corsGrant(origin), await upgrades(origin)]).toEqual([origin, null, false]); // prettier-ignore
    }
  });

  it('allows every origin by default', async () => {
    const { base } = await startServer([new ApiController()]);
    const res = await fetch(`${base}/users/1`, { headers: { origin: 'https://any.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('trust proxy through the server', () => {
  const forwarded = {
    'x-forwarded-for': '198.51.100.7, 10.0.0.2',
    'x-forwarded-proto': 'https',
    'x-forwarded-host': 'api.example',
  };

  it('ignores forwarded headers by default', async () => {
    const { base } = await startServer([new ApiController()]);
    const body = (await (await fetch(`${base}/ip`, { headers: forwarded })).json()) as Record<
      string,
      string
    >;
    expect(body['ip']).toBe('127.0.0.1');
    expect(body['scheme']).toBe('http');
    expect(body['host']).toBe('127.0.0.1');
  });

  it('believes them from a trusted peer (true, or a matching CIDR)', async () => {
    for (const trust_proxy of [true, ['127.0.0.0/8', '10.0.0.0/8']] as const) {
      const { base } = await startServer([new ApiController()], {
        trust_proxy: trust_proxy === true ? true : [...trust_proxy],
      });
      const body = (await (await fetch(`${base}/ip`, { headers: forwarded })).json()) as Record<
        string,
        string
      >;
      expect(body).toEqual({ ip: '198.51.100.7', scheme: 'https', host: 'api.example' });
      await cleanup();
    }
  });

  it('does not believe them from a peer outside the list', async () => {
    const { base } = await startServer([new ApiController()], { trust_proxy: ['10.0.0.1'] });
    const body = (await (await fetch(`${base}/ip`, { headers: forwarded })).json()) as Record<
      string,
      string
    >;
    expect(body['ip']).toBe('127.0.0.1');
  });

  it('resolves the WebSocket client IP with the same setting', async () => {
    const trusted = await startServer([new ApiController()], { trust_proxy: true });
    const a = await TestClient.connect(trusted.wsUrl, {
      headers: { 'x-forwarded-for': '198.51.100.9' },
    });
    expect((await a.next('hello')).data).toEqual({ ip: '198.51.100.9' });
    const untrusted = await startServer([new ApiController()]);
    const b = await TestClient.connect(untrusted.wsUrl, {
      headers: { 'x-forwarded-for': '198.51.100.9' },
    });
    expect((await b.next('hello')).data).toEqual({ ip: '127.0.0.1' });
  });
});

describe('failing handlers', () => {
  it('answers 500 for a throwing or rejecting HTTP handler, logs it, and keeps serving', async () => {
    const { base, logger, wsUrl } = await startServer([new ApiController()]);
    const client = await TestClient.connect(wsUrl);
    for (const path of ['/throws', '/rejects', '/not-a-response']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ error: 'Internal Server Error' });
    }
    expect(logger.exceptions.map((e) => (e.error as Error).message)).toEqual([
      'sync failure',
      'async failure',
      expect.stringMatching(/resolved to string, which cannot be sent/),
    ]);
    expect((await fetch(`${base}/users/1`)).status).toBe(200);
    client.send('echo', { alive: true });
    expect((await client.next('echo')).data).toEqual({ alive: true });
  });

  it('gives the error message in debug mode only', async () => {
    const { base } = await startServer([new ApiController()], { debug: true });
    const body = (await (await fetch(`${base}/throws`)).json()) as Record<string, unknown>;
    expect(body['error']).toBe('Internal Server Error');
    expect(body['message']).toBe('sync failure');
  });

  it('answers internal_error in debug mode also for a thrown value that cannot become text', async () => {
    class OddThrows extends SocketController {
      @SocketOn('odd')
      odd(): void {
        throw Object.create(null) as unknown;
      }
    }
    const { wsUrl } = await startServer([new ApiController(), new OddThrows()], { debug: true });
    const client = await TestClient.connect(wsUrl);
    await client.next('hello');
    client.send('odd');
    expect((await client.next('error')).data).toEqual({
      code: 'internal_error',
      message: 'Handling "odd" failed: a value that cannot be shown as text',
    });
    client.send('echo', { n: 1 });
    expect((await client.next('echo')).data).toEqual({ n: 1 });
  });

  it('answers internal_error for a throwing or rejecting SocketOn handler, and keeps serving', async () => {
    const { base, wsUrl, logger } = await startServer([new ApiController()]);
    const a = await TestClient.connect(wsUrl);
    const b = await TestClient.connect(wsUrl);
    a.send('throws');
    expect((await a.next('error')).data).toEqual({
      code: 'internal_error',
      message: 'Handling "throws" failed on the server.',
    });
    a.send('rejects');
    expect((await a.next('error')).data['code']).toBe('internal_error');
    expect(logger.exceptions.map((e) => (e.error as Error).message)).toEqual([
      'ws sync failure',
      'ws async failure',
    ]);
    a.send('echo', { n: 1 });
    expect((await a.next('echo')).data).toEqual({ n: 1 });
    b.send('echo', { n: 2 });
    expect((await b.next('echo')).data).toEqual({ n: 2 });
    expect((await fetch(`${base}/users/1`)).status).toBe(200);
  });
});

describe('health check', () => {
  it('is off unless health_check_path is set', async () => {
    const { base } = await startServer([new ApiController()]);
    expect((await fetch(`${base}/health`)).status).toBe(404);
  });

  it('answers the spec document with the client count', async () => {
    const { base, wsUrl } = await startServer([new ApiController()], {
      health_check_path: '/health',
    });
    await TestClient.connect(wsUrl);
    await TestClient.connect(wsUrl);
    const before = Math.floor(Date.now() / 1000);
    const res = await fetch(`${base}/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const doc = (await res.json()) as {
      status: string;
      timestamp: number;
      server: { clients: number; uptime: number; uptime_human: string };
    };
    expect(doc.status).toBe('healthy');
    expect(Number.isInteger(doc.timestamp)).toBe(true);
    expect(doc.timestamp).toBeGreaterThanOrEqual(before);
    expect(doc.server.clients).toBe(2);
    expect(Number.isInteger(doc.server.uptime)).toBe(true);
    expect(doc.server.uptime_human).toMatch(/^\d+h \d+m \d+s$/);
  });

  it('is answered before global middleware (a load balancer sends no credentials)', async () => {
    const { base } = await startServer(
      [new ApiController()],
      { health_check_path: '/healthz' },
      (s) => s.addHttpMiddleware(() => Response.json({ error: 'Unauthorized' }, 401)),
    );
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/users/1`)).status).toBe(401);
  });
});
