import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { HttpHandler, RateLimiter, Response, type HttpHandlerOptions } from '../src/index';
import { rawExchange, recordingLogger, startServer, type TestServer } from './helpers';

let current: TestServer | undefined;

async function serve(options: HttpHandlerOptions): Promise<TestServer> {
  current = await startServer(new HttpHandler({ logger: recordingLogger(), ...options }));
  return current;
}

afterEach(async () => {
  await current?.close();
  current = undefined;
});

describe('HttpHandler over a real socket', () => {
  it('serves a dispatched JSON answer with Content-Length', async () => {
    const { url } = await serve({
      dispatch: (request) =>
        Response.json({
          path: request.getPath(),
          q: request.getQuery('q'),
          ip: request.getIpAddress(),
        }),
    });
    const res = await fetch(`${url}/items?q=a+b`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const text = await res.text();
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(text)));
    expect(JSON.parse(text)).toEqual({ path: '/items', q: 'a b', ip: '127.0.0.1' });
  });

  it("reads Node's headers case-insensitively, and never a name from Object.prototype", async () => {
    const { url } = await serve({
      dispatch: (request) =>
        Response.json({
          custom: request.getHeader('X-Custom'),
          constructor: request.hasHeader('constructor'),
          proto: request.getHeader('__proto__') ?? null,
          headers: Object.keys(request.getHeaders()).includes('x-custom'),
        }),
    });
    const res = await fetch(`${url}/`, { headers: { 'X-Custom': 'yes' } });
    expect(await res.json()).toEqual({
      custom: 'yes',
      constructor: false,
      proto: null,
      headers: true,
    });
  });

  it('writes the answer before handle() returns when the request has no body and dispatch is synchronous', async () => {
    const handler = new HttpHandler({
      logger: recordingLogger(),
      dispatch: (request) =>
        request.getPath() === '/later'
          ? Promise.resolve(Response.text('later'))
          : Response.text('now'),
    });
    const endedOnReturn: Record<string, boolean> = {};
    const server = createServer((req, res) => {
      const done = handler.handle(req, res);
      endedOnReturn[`${req.method} ${req.url}`] = res.writableEnded;
      void done;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    current = {
      server,
      port: (server.address() as AddressInfo).port,
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
    expect(await (await fetch(`${current.url}/now`)).text()).toBe('now');
    expect(await (await fetch(`${current.url}/later`)).text()).toBe('later');
    const posted = await fetch(`${current.url}/now`, { method: 'POST', body: 'x' });
    expect(await posted.text()).toBe('now');
    expect(endedOnReturn).toEqual({ 'GET /now': true, 'GET /later': false, 'POST /now': false });
  });

  it('answers 404 JSON when no dispatcher is set', async () => {
    const { url } = await serve({});
    const res = await fetch(`${url}/nothing`);
    expect(res.status).toBe(404);
    expect(await res.text()).toBe('{"error":"Not Found"}');
  });

  it('reads JSON, form and text bodies', async () => {
    const { url } = await serve({
      dispatch: (request) => Response.json({ body: request.getBody() }),
    });
    const post = (body: string, type: string): Promise<unknown> =>
      fetch(`${url}/`, { method: 'POST', body, headers: { 'content-type': type } }).then((r) =>
        r.json(),
      );
    expect(await post('{"a":[1,2]}', 'application/json')).toEqual({ body: { a: [1, 2] } });
    expect(await post('a=1&a=2&b=x', 'application/x-www-form-urlencoded')).toEqual({
      body: { a: ['1', '2'], b: 'x' },
    });
    expect(await post('plain', 'text/plain')).toEqual({ body: 'plain' });
  });

  it('refuses a JSON body with __proto__ or constructor.prototype keys with 400 by default', async () => {
    let dispatched = 0;
    const { url } = await serve({
      dispatch: (request) => {
        dispatched += 1;
        return Response.json({ body: request.getBody() });
      },
    });
    for (const body of [
      '{"a":1,"__proto__":{"polluted":1}}',
      '{"a":{"constructor":{"prototype":{"admin":true}}}}',
      '{"\\u005f_proto__":{"polluted":1}}',
    ]) {
      const res = await fetch(`${url}/`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(400);
      const answer = (await res.json()) as { code: string; message: string };
      expect(answer.code).toBe('PKG_ERR_HTTP_INVALID_JSON');
      expect(answer.message).toContain('__proto__');
      expect(answer.message).toContain("prototypeKeys: 'remove'");
    }
    const ok = await fetch(`${url}/`, {
      method: 'POST',
      body: '{"constructor":"plain","proto":1}',
      headers: { 'content-type': 'application/json' },
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ body: { constructor: 'plain', proto: 1 } });
    expect(dispatched).toBe(4);
  });

  it("with prototypeKeys 'remove', lets no JSON or form body pollute prototypes, even through a naive deep merge", async () => {
    const merge = (target: Record<string, unknown>, source: Record<string, unknown>): void => {
      for (const key in source) {
        const value = source[key];
        if (value !== null && typeof value === 'object') {
          target[key] ??= {};
          merge(target[key] as Record<string, unknown>, value as Record<string, unknown>);
        } else {
          target[key] = value;
        }
      }
    };
    const { url } = await serve({
      prototypeKeys: 'remove',
      dispatch: (request) => {
        const merged: Record<string, unknown> = {};
        merge(merged, request.all());
        const probe = {} as Record<string, unknown>;
        return Response.json({
          polluted: [probe[0], probe.polluted, probe.admin].filter((v) => v !== undefined),
          ownProto: Object.getPrototypeOf(Object.assign({}, request.all())) === Object.prototype,
          keys: Object.keys(merged),
        });
      },
    });
    const post = (body: string, type: string): Promise<unknown> =>
      fetch(`${url}/?__proto__=q&__proto__=r&constructor[prototype][admin]=1`, {
        method: 'POST',
        body,
        headers: { 'content-type': type },
      }).then((r) => r.json());
    expect(
      await post(
        '{"__proto__":{"polluted":1},"constructor":{"prototype":{"admin":true}},"a":{"__proto__":[1]}}',
        'application/json',
      ),
    ).toEqual({ polluted: [], ownProto: true, keys: ['constructor[prototype][admin]', 'a'] });
    expect(
      await post(
        '__proto__=a&__proto__=b&%5F_proto__[polluted]=1&constructor[prototype][admin]=1',
        'application/x-www-form-urlencoded',
      ),
    ).toEqual({
      polluted: [],
      ownProto: true,
      keys: ['constructor[prototype][admin]', '__proto__[polluted]'],
    });
    expect(({} as Record<string, unknown>)[0]).toBeUndefined();
  });

  it('reads a chunked body', async () => {
    const { port } = await serve({
      dispatch: (request) => Response.text(String(request.getBody())),
    });
    const res = await rawExchange(
      port,
      'POST / HTTP/1.1\r\nHost: h\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n' +
        '5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n',
      { keepAlive: true },
    );
    expect(res.status).toBe(200);
    expect(res.body).toBe('hello world');
  });

  it('answers 400 for a malformed JSON body', async () => {
    const { url } = await serve({ dispatch: (request) => Response.json(request.getBody()) });
    const res = await fetch(`${url}/`, {
      method: 'POST',
      body: '{"name": "unterminated',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: 'Bad Request',
      code: 'PKG_ERR_HTTP_INVALID_JSON',
    });
  });

  it('answers 500 when the handler throws, logs it, and keeps serving', async () => {
    const logger = recordingLogger();
    const { url } = await serve({
      logger,
      dispatch: (request) => {
        if (request.getPath() === '/boom') throw new Error('exploded');
        return Response.text('still here');
      },
    });
    const res = await fetch(`${url}/boom`);
    expect(res.status).toBe(500);
    expect(await res.text()).toBe('{"error":"Internal Server Error"}');
    expect(logger.lines).toEqual([
      expect.objectContaining({
        level: 'exception',
        message: 'exploded',
        context: expect.objectContaining({ code: 'PKG_ERR_HTTP_HANDLER_FAILED', path: '/boom' }),
      }),
    ]);
    const next = await fetch(`${url}/ok`);
    expect(next.status).toBe(200);
    expect(await next.text()).toBe('still here');
  });

  it('answers 500 for a rejected promise and for a body that cannot be serialised', async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const { url } = await serve({
      dispatch: async (request) => {
        if (request.getPath() === '/reject') throw new TypeError('bad');
        return Response.json(circular);
      },
    });
    expect((await fetch(`${url}/reject`)).status).toBe(500);
    const res = await fetch(`${url}/circular`);
    expect(res.status).toBe(500);
    expect(await res.text()).toBe('{"error":"Internal Server Error"}');
  });

  it('refuses header injection: the handler gets a TypeError and the client a 500 without the header', async () => {
    const logger = recordingLogger();
    const { port } = await serve({
      logger,
      dispatch: (request) =>
        Response.text('hi').setHeader('X-Name', String(request.getQuery('name', ''))),
    });
    const res = await rawExchange(
      port,
      'GET /?name=a%0d%0aSet-Cookie:%20session=evil HTTP/1.1\r\nHost: h\r\n\r\n',
      { keepAlive: true },
    );
    expect(res.status).toBe(500);
    expect(res.headers['set-cookie']).toBeUndefined();
    expect(res.headers['x-name']).toBeUndefined();
    expect(res.text).not.toContain('session=evil');
    expect(logger.lines[0]?.error).toBeInstanceOf(TypeError);
    expect((logger.lines[0]?.error as { code: string }).code).toBe('PKG_ERR_HTTP_INVALID_HEADER');
  });

  it('answers 500 when the dispatcher returns something other than a Response', async () => {
    const { url } = await serve({ dispatch: () => 'text' as unknown as Response });
    expect((await fetch(url)).status).toBe(500);
  });

  it('sends headers but no body for HEAD, and no body for 204', async () => {
    const { port } = await serve({
      dispatch: (request) =>
        request.getPath() === '/empty' ? Response.noContent() : Response.text('twelve bytes'),
    });
    const head = await rawExchange(port, 'HEAD / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n');
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe('12');
    expect(head.body).toBe('');
    const empty = await rawExchange(
      port,
      'GET /empty HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n',
    );
    expect(empty.status).toBe(204);
    expect(empty.headers['content-length']).toBeUndefined();
    expect(empty.body).toBe('');
  });

  it('writes repeated headers as separate lines', async () => {
    const { port } = await serve({
      dispatch: () =>
        new Response('ok').appendHeader('Set-Cookie', 'a=1').appendHeader('Set-Cookie', 'b=2'),
    });
    const res = await rawExchange(port, 'GET / HTTP/1.1\r\nHost: h\r\n\r\n', { keepAlive: true });
    expect(res.text).toContain('\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\n');
  });

  it('rate-limits a route per client with 429, Retry-After and the rate-limit headers', async () => {
    const limiter = new RateLimiter();
    const rule = { maxCount: 2, timeWindow: 60 };
    const { url } = await serve({
      dispatch: async (request) => {
        const result = await limiter.check(RateLimiter.keyFor('GET /limited', request), rule);
        if (!result.allowed) return RateLimiter.tooManyRequests(result);
        return RateLimiter.applyHeaders(Response.json({ ok: true }), result);
      },
    });
    const first = await fetch(`${url}/limited`);
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit')).toBe('2');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('1');
    const reset = Number(first.headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThan(Date.now() / 1000);
    const second = await fetch(`${url}/limited`);
    expect(second.headers.get('x-ratelimit-remaining')).toBe('0');
    // A forged X-Forwarded-For from an untrusted peer does not give a fresh counter.
    const third = await fetch(`${url}/limited`, {
      headers: { 'x-forwarded-for': '198.51.100.99' },
    });
    expect(third.status).toBe(429);
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(third.headers.get('x-ratelimit-limit')).toBe('2');
    expect(third.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(third.headers.get('x-ratelimit-reset')).toBe(String(reset));
    expect(await third.json()).toMatchObject({
      error: 'Too Many Requests',
      code: 'PKG_ERR_HTTP_RATE_LIMITED',
    });
  });
});
