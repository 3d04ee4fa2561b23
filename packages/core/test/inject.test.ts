// server.inject(): the same answers as the listening server (routing, schemas, middleware,
// CORS, body limit, rate limit, health check, errors), without a port.
import { describe, expect, it } from '@jest/globals';
import * as v from 'valibot';
import { z } from 'zod';
import {
  HttpRoute,
  NullLogger,
  RateLimit,
  Response,
  Server,
  ServerConfig,
  SocketController,
  type Request,
  type ServerConfigOptions,
} from '../src/index';

class Api extends SocketController {
  @HttpRoute('POST', '/items/{id}', {
    params: z.object({ id: z.coerce.number() }),
    body: v.object({ name: v.pipe(v.string(), v.minLength(1), v.toUpperCase()) }),
  })
  save(_request: Request, input: { params: { id: number }; body: { name: string } }) {
    return { id: input.params.id, name: input.body.name };
  }

  @HttpRoute('GET', '/who')
  who(request: Request) {
    return { ip: request.getIpAddress(), user: request.getAttribute('user') ?? null };
  }

  @RateLimit(1, 60)
  @HttpRoute('GET', '/once')
  once() {
    return undefined;
  }

  @HttpRoute('GET', '/fails')
  fails(): Response {
    throw new Error('boom');
  }
}

function server(config: ServerConfigOptions = {}): Server {
  const s = new Server(
    new ServerConfig({ port: 0, ...config }),
    undefined,
    undefined,
    undefined,
    new NullLogger(),
  );
  s.registerController(new Api());
  s.addHttpMiddleware((request, next) => {
    request.setAttribute('user', request.getHeader('x-user') ?? null);
    return next();
  });
  return s;
}

describe('server.inject()', () => {
  it('validates and answers without run(), with middleware', async () => {
    const s = server();
    const ok = await s.inject({ method: 'POST', url: '/items/5', body: { name: 'pen' } });
    expect([ok.statusCode, ok.json()]).toEqual([200, { id: 5, name: 'PEN' }]);
    const bad = await s.inject({ method: 'POST', url: '/items/x', body: { name: '' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({
      code: 'validation_failed',
      issues: [{ path: ['params', 'id'] }, { path: ['body', 'name'] }],
    });
    const who = await s.inject({
      url: '/who',
      headers: { 'x-user': 'ada' },
      remoteAddress: '10.1.2.3',
    });
    expect(who.json()).toEqual({ ip: '10.1.2.3', user: 'ada' });
    expect(s.getPort()).toBe(0);
  });

  it('gives the server answers: 404, 405, 413, 429, 500, health, CORS', async () => {
    const s = server({
      health_check_path: '/health',
      max_body_size: 16,
      cors: { allowed_origins: ['https://app.example'] },
    });
    expect((await s.inject({ url: '/nope' })).statusCode).toBe(404);
    const notAllowed = await s.inject({ method: 'DELETE', url: '/who' });
    expect([notAllowed.statusCode, notAllowed.headers['allow']]).toEqual([
      405,
      'GET, HEAD, OPTIONS',
    ]);
    const large = await s.inject({
      method: 'POST',
      url: '/items/1',
      body: { name: 'x'.repeat(100) },
    });
    expect(large.statusCode).toBe(413);
    expect((await s.inject({ url: '/once' })).statusCode).toBe(204);
    expect((await s.inject({ url: '/once' })).statusCode).toBe(429);
    expect((await s.inject({ url: '/fails' })).statusCode).toBe(500);
    expect((await s.inject({ url: '/health' })).json()).toMatchObject({ status: 'healthy' });
    const preflight = await s.inject({
      method: 'OPTIONS',
      url: '/who',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' },
    });
    expect(preflight.headers['access-control-allow-origin']).toBe('https://app.example');
  });

  it('refuses a request without a url', async () => {
    await expect(server().inject({} as never)).rejects.toMatchObject({
      code: 'PKG_ERR_CORE_INVALID_ARGUMENT',
    });
  });
});
