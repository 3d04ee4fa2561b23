import { describe, expect, it } from '@jest/globals';
import { HttpRoute, RateLimit } from '@pkg/decorators';
import { RateLimiter, Request, Response } from '@pkg/http';
import { NullLogger } from '@pkg/logger';
import { ControllerRegistry } from './controller-registry';
import { HttpDispatcher } from './http-dispatch';
import { Middleware } from './middleware';
import { SocketController } from './socket-controller';

const get = (url: string, method = 'GET'): Request =>
  new Request({ method, url, headers: { host: 'localhost' }, remoteAddress: '127.0.0.1' });

class Api extends SocketController {
  @HttpRoute('GET', '/sync')
  sync(): Response {
    return Response.json({ sync: true });
  }

  @HttpRoute('GET', '/items/{id}')
  item(request: Request): Response {
    return Response.json({ id: request.getParam('id') });
  }

  @HttpRoute('GET', '/async')
  async later(): Promise<Response> {
    await Promise.resolve();
    return Response.json({ async: true });
  }

  @HttpRoute('GET', '/throws')
  throws(): Response {
    throw new Error('handler failed');
  }

  @HttpRoute('GET', '/limited')
  @RateLimit(5, 60)
  limited(): Response {
    return Response.text('ok');
  }
}

function setup() {
  const registry = new ControllerRegistry();
  const middleware = new Middleware();
  const dispatcher = new HttpDispatcher(registry, {
    middleware,
    rateLimiter: new RateLimiter(),
    logger: new NullLogger(),
  });
  registry.register(new Api());
  return { dispatcher, middleware };
}

describe('HttpDispatcher', () => {
  it('answers a synchronous handler with an empty chain synchronously, without a promise', () => {
    const { dispatcher } = setup();
    const response = dispatcher.dispatch(get('/sync'));
    expect(response).toBeInstanceOf(Response);
    expect((response as Response).getBody()).toEqual({ sync: true });
    const param = dispatcher.dispatch(get('/items/a%20b'));
    expect((param as Response).getBody()).toEqual({ id: 'a b' });
  });

  it('gives a promise when a step is asynchronous (handler, rate limit or middleware)', async () => {
    const { dispatcher, middleware } = setup();
    const later = dispatcher.dispatch(get('/async'));
    expect(later).toBeInstanceOf(Promise);
    expect((await later).getBody()).toEqual({ async: true });
    const limited = dispatcher.dispatch(get('/limited'));
    expect(limited).toBeInstanceOf(Promise);
    expect((await limited).getHeader('X-RateLimit-Limit')).toBe('5');

    // A global middleware added after registration recompiles every route's chain.
    const seen: string[] = [];
    middleware.addHttpMiddleware(async (request, next) => {
      seen.push(request.getPath());
      return next();
    });
    const wrapped = dispatcher.dispatch(get('/sync'));
    expect(wrapped).toBeInstanceOf(Promise);
    expect((await wrapped).getBody()).toEqual({ sync: true });
    expect(seen).toEqual(['/sync']);
  });

  it('does not catch: a throwing handler reaches the caller (HttpHandler answers the 500)', () => {
    const { dispatcher } = setup();
    expect(() => dispatcher.dispatch(get('/throws'))).toThrow('handler failed');
  });

  it('answers 404, 405 with Allow, and 204 for a plain OPTIONS', () => {
    const { dispatcher } = setup();
    const notFound = dispatcher.dispatch(get('/nothing')) as Response;
    expect(notFound.getStatusCode()).toBe(404);
    expect(notFound.getBody()).toEqual({ error: 'Not Found' });
    const notAllowed = dispatcher.dispatch(get('/sync', 'DELETE')) as Response;
    expect(notAllowed.getStatusCode()).toBe(405);
    expect(notAllowed.getHeader('Allow')).toBe('GET, HEAD, OPTIONS');
    const options = dispatcher.dispatch(get('/sync', 'OPTIONS')) as Response;
    expect(options.getStatusCode()).toBe(204);
  });
});
