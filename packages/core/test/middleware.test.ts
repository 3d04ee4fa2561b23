// Middleware through a running server, on both protocols: order (global minus excluded,
// then route middleware, then handler), short-circuit, exclusion, attributes, class
// middleware, and failures that become a 500 / an `error` event while the server keeps
// serving.
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  HttpRoute,
  Response,
  SocketController,
  SocketOn,
  type HttpMiddlewareFn,
  type Request,
  type WsContext,
  type WsMiddlewareFn,
} from '../src/index';
import { TestClient, cleanup, startServer } from './helpers';

afterEach(cleanup);

const trace: string[] = [];

const httpGlobalA: HttpMiddlewareFn = async (request, next) => {
  trace.push('http:A');
  request.setAttribute('fromA', 'a');
  const response = await next();
  return response.setHeader('X-A', 'after');
};
const httpGlobalB: HttpMiddlewareFn = (_request, next) => {
  trace.push('http:B');
  return next();
};
/** Answers 401 unless a token is given; stores the user for the handler. */
const httpAuth: HttpMiddlewareFn = (request, next) => {
  trace.push('http:auth');
  const token = request.getHeader('authorization');
  if (token !== 'Bearer good') return Response.json({ error: 'Unauthorized' }, 401);
  request.setAttribute('user', 'ada');
  return next();
};
class HttpTiming {
  calls = 0;
  async handle(request: Request, next: () => Promise<Response>): Promise<Response> {
    this.calls += 1;
    trace.push(`http:class#${this.calls}`);
    return next();
  }
}
const httpThrows: HttpMiddlewareFn = () => {
  throw new Error('middleware exploded');
};

const wsGlobalA: WsMiddlewareFn = async (context, next) => {
  trace.push('ws:A');
  context.setAttribute('fromA', 'a');
  await next();
  trace.push('ws:A done');
};
const wsGlobalB: WsMiddlewareFn = async (_context, next) => {
  trace.push('ws:B');
  await next();
};
const wsAuth: WsMiddlewareFn = async (context, next) => {
  trace.push('ws:auth');
  const data = context.data as { token?: string };
  if (data.token !== 'good') return; // stops the message: handler not called
  context.setAttribute('user', 'ada');
  await next();
};
class WsClassMiddleware {
  async handle(context: WsContext, next: () => Promise<void>): Promise<void> {
    trace.push(`ws:class ${context.event}`);
    await next();
  }
}
const wsRejects: WsMiddlewareFn = async () => {
  throw new Error('ws middleware exploded');
};

class MiddlewareController extends SocketController {
  @HttpRoute('GET', '/open')
  open(request: Request): Response {
    trace.push('http:handler');
    return Response.json({ fromA: request.getAttribute('fromA') ?? null });
  }

  @HttpRoute('GET', '/guarded', { middlewares: [httpAuth, HttpTiming] })
  guarded(request: Request): Response {
    trace.push('http:handler');
    return Response.json({
      user: request.getAttribute('user'),
      fromA: request.getAttribute('fromA'),
    });
  }

  @HttpRoute('GET', '/no-a', { excludeGlobalMiddlewares: [httpGlobalA] })
  noA(request: Request): Response {
    trace.push('http:handler');
    return Response.json({ fromA: request.getAttribute('fromA') ?? null });
  }

  @HttpRoute('GET', '/broken', { middlewares: [httpThrows] })
  broken(): Response {
    trace.push('http:handler');
    return Response.text('unreachable');
  }

  @SocketOn('open')
  wsOpen(clientId: string, _data: unknown, context: WsContext): void {
    trace.push('ws:handler');
    this.emit(clientId, 'open', { fromA: context.getAttribute('fromA') ?? null });
  }

  @SocketOn('guarded', { middlewares: [wsAuth, WsClassMiddleware] })
  wsGuarded(clientId: string, _data: unknown, context: WsContext): void {
    trace.push('ws:handler');
    this.emit(clientId, 'guarded', { user: context.getAttribute('user') ?? null });
  }

  @SocketOn('no-a', { excludeGlobalMiddlewares: [wsGlobalA] })
  wsNoA(clientId: string, _data: unknown, context: WsContext): void {
    trace.push('ws:handler');
    this.emit(clientId, 'no-a', { fromA: context.getAttribute('fromA') ?? null });
  }

  @SocketOn('broken', { middlewares: [wsRejects] })
  wsBroken(): void {
    trace.push('ws:handler');
  }

  @SocketOn('ping.me')
  ping(clientId: string): void {
    this.emit(clientId, 'pong.you', {});
  }
}

async function setup() {
  trace.length = 0;
  return startServer([new MiddlewareController()], {}, (server) => {
    server.addHttpMiddleware(httpGlobalA).addHttpMiddleware(httpGlobalB);
    server.addWebSocketMiddleware(wsGlobalA).addWebSocketMiddleware(wsGlobalB);
  });
}

describe('HTTP middleware through the server', () => {
  it('runs the global stack, then the route middleware in order, then the handler', async () => {
    const { base } = await setup();
    const res = await fetch(`${base}/guarded`, { headers: { authorization: 'Bearer good' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ user: 'ada', fromA: 'a' });
    expect(res.headers.get('x-a')).toBe('after');
    expect(trace).toEqual(['http:A', 'http:B', 'http:auth', 'http:class#1', 'http:handler']);
  });

  it('short-circuits when a middleware returns a Response', async () => {
    const { base } = await setup();
    const res = await fetch(`${base}/guarded`);
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'Unauthorized' });
    expect(trace).toEqual(['http:A', 'http:B', 'http:auth']);
  });

  it('skips excluded global middleware for that route only', async () => {
    const { base } = await setup();
    expect(await (await fetch(`${base}/no-a`)).json()).toEqual({ fromA: null });
    expect(trace).toEqual(['http:B', 'http:handler']);
    trace.length = 0;
    expect(await (await fetch(`${base}/open`)).json()).toEqual({ fromA: 'a' });
    expect(trace).toEqual(['http:A', 'http:B', 'http:handler']);
  });

  it('instantiates a class middleware once and keeps it across requests', async () => {
    const { base } = await setup();
    for (let i = 0; i < 2; i += 1) {
      await fetch(`${base}/guarded`, { headers: { authorization: 'Bearer good' } });
    }
    expect(trace.filter((t) => t.startsWith('http:class'))).toEqual([
      'http:class#1',
      'http:class#2',
    ]);
  });

  it('turns a throwing middleware into a 500, logs it and keeps serving', async () => {
    const { base, logger } = await setup();
    const res = await fetch(`${base}/broken`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: 'Internal Server Error' });
    expect(trace).not.toContain('http:handler');
    expect(
      logger.exceptions.some((e) => (e.error as Error).message === 'middleware exploded'),
    ).toBe(true);
    expect((await fetch(`${base}/open`)).status).toBe(200);
  });
});

describe('WebSocket middleware through the server', () => {
  it('runs the global stack, then the route middleware in order, then the handler', async () => {
    const { wsUrl } = await setup();
    const client = await TestClient.connect(wsUrl);
    client.send('guarded', { token: 'good' });
    expect((await client.next('guarded')).data).toEqual({ user: 'ada' });
    expect(trace).toEqual([
      'ws:A',
      'ws:B',
      'ws:auth',
      'ws:class guarded',
      'ws:handler',
      'ws:A done',
    ]);
  });

  it('stops the message when a middleware does not call next', async () => {
    const { wsUrl } = await setup();
    const client = await TestClient.connect(wsUrl);
    client.send('guarded', { token: 'bad' });
    client.send('ping.me');
    await client.next('pong.you');
    expect(client.received.map((e) => e.event)).toEqual(['pong.you']);
    expect(trace.slice(0, 3)).toEqual(['ws:A', 'ws:B', 'ws:auth']);
    expect(trace).not.toContain('ws:handler');
  });

  it('skips excluded global middleware and passes attributes to the handler', async () => {
    const { wsUrl } = await setup();
    const client = await TestClient.connect(wsUrl);
    client.send('no-a');
    expect((await client.next('no-a')).data).toEqual({ fromA: null });
    expect(trace).toEqual(['ws:B', 'ws:handler']);
    client.send('open');
    expect((await client.next('open')).data).toEqual({ fromA: 'a' });
  });

  it('turns a rejecting middleware into an internal_error event and keeps serving', async () => {
    const { wsUrl, logger } = await setup();
    const client = await TestClient.connect(wsUrl);
    client.send('broken');
    const error = await client.next('error');
    expect(error.data).toEqual({
      code: 'internal_error',
      message: 'Handling "broken" failed on the server.',
    });
    expect(trace).not.toContain('ws:handler');
    expect(logger.exceptions).toHaveLength(1);
    client.send('ping.me');
    await client.next('pong.you');
  });
});
