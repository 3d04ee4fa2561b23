import { beforeEach, describe, expect, it } from '@jest/globals';
import {
  HttpRoute,
  OnConnect,
  OnDisconnect,
  RateLimit,
  SocketOn,
  type WsContext,
} from '@pkg/decorators';
import { RateLimiter, Request, Response } from '@pkg/http';
import { NullLogger } from '@pkg/logger';
import { Middleware } from './middleware';
import { allowHeader } from './http-dispatch';
import { Router, type RouterDependencies } from './router';
import type { UnknownEventPolicy } from '../config/server-config';
import { SocketController } from './socket-controller';

interface SentError {
  clientId: string;
  code: string;
  message: string;
  extra?: Record<string, unknown>;
}

class RecordingLogger extends NullLogger {
  readonly exceptions: Array<{ error: unknown; context: unknown }> = [];
  override exception(error: unknown, context?: Record<string, unknown>): void {
    this.exceptions.push({ error, context });
  }
}

function host(policy: UnknownEventPolicy = 'error') {
  const errors: SentError[] = [];
  const logger = new RecordingLogger();
  const middleware = new Middleware();
  const limiter = new RateLimiter();
  const h: RouterDependencies = {
    middleware,
    logger,
    rateLimiter: limiter,
    debug: false,
    unknownEvent: policy,
    sendEventError: (clientId, code, message, extra) =>
      void errors.push({ clientId, code, message, ...(extra ? { extra } : {}) }),
  };
  return { h, errors, logger, middleware };
}

const get = (url: string, method = 'GET'): Request =>
  new Request({ method, url, headers: { host: 'localhost' }, remoteAddress: '127.0.0.1' });

const calls: unknown[][] = [];

class ChatController extends SocketController {
  @SocketOn('chat.message')
  message(clientId: string, data: Record<string, unknown>, context: WsContext): void {
    calls.push(['message', clientId, data, context.event]);
  }

  @SocketOn('chat.fail')
  fail(): void {
    throw new Error('handler failed');
  }

  @SocketOn('chat.limited')
  @RateLimit(2, 60)
  limited(clientId: string): void {
    calls.push(['limited', clientId]);
  }

  @OnConnect()
  connected(clientId: string): void {
    calls.push(['chat.connect', clientId]);
  }

  @OnDisconnect()
  async disconnected(clientId: string): Promise<void> {
    await Promise.resolve();
    calls.push(['chat.disconnect', clientId]);
  }
}

class UsersController extends SocketController {
  @HttpRoute('GET', '/users/{id}')
  show(request: Request): Response {
    return Response.json({ id: request.getParam('id') });
  }

  @HttpRoute('GET', '/users/me')
  me(): Response {
    return Response.json({ me: true });
  }

  @HttpRoute('DELETE', '/users/{id}')
  remove(): Response {
    return new Response('', 204);
  }

  @HttpRoute('GET', '/limited')
  @RateLimit(1, 60)
  limited(): Response {
    return Response.text('ok');
  }

  @HttpRoute('GET', '/boom')
  boom(): Response {
    throw new Error('boom');
  }
}

class OtherConnect extends SocketController {
  @OnConnect()
  first(): void {
    throw new Error('connect handler failed');
  }

  @OnConnect()
  second(clientId: string): void {
    calls.push(['other.connect', clientId]);
  }
}

describe('Router', () => {
  let router: Router;
  let ctx: ReturnType<typeof host>;

  beforeEach(() => {
    calls.length = 0;
    router = new Router();
    ctx = host();
    router.setServer(ctx.h);
    router.register(new ChatController());
    router.register(new UsersController());
  });

  it('lists routes as (controller, method name) pairs', () => {
    const ws = router.getWebSocketRoutes();
    expect([...ws.keys()]).toEqual(['chat.message', 'chat.fail', 'chat.limited']);
    const [controller, method] = ws.get('chat.message')!;
    expect(controller).toBeInstanceOf(ChatController);
    expect(method).toBe('message');
    expect([...router.getHttpRoutes().keys()]).toEqual([
      'GET /users/{id}',
      'GET /users/me',
      'DELETE /users/{id}',
      'GET /limited',
      'GET /boom',
    ]);
    expect(router.specialEventHandlers.connect).toHaveLength(1);
  });

  it('refuses a duplicate event and names both controllers', () => {
    class Dup extends SocketController {
      @SocketOn('chat.message')
      again(): void {}
    }
    expect(() => router.register(new Dup())).toThrow(
      /"chat\.message" is declared twice: by ChatController\.message and by Dup\.again/,
    );
  });

  it('refuses a duplicate method and path (parameter names aside) and registers nothing of it', () => {
    class Dup extends SocketController {
      @SocketOn('dup.fresh')
      fresh(): void {}

      @HttpRoute('GET', '/users/{userId}/')
      again(): Response {
        return Response.text('');
      }
    }
    expect(() => router.register(new Dup())).toThrow(
      /HTTP route GET \/users\/\{userId\}\/ is declared twice: by UsersController\.show \(GET \/users\/\{id\}\) and by Dup\.again/,
    );
    expect(router.hasWebSocketRoute('dup.fresh')).toBe(false);
  });

  it('refuses something that is not a controller instance', () => {
    expect(() => router.register(ChatController as unknown as SocketController)).toThrow(
      /use new MyController\(\)/,
    );
  });

  it('dispatches an event to its handler with client id, data and context', async () => {
    await router.dispatch('c1', 'chat.message', { text: 'hi' });
    expect(calls).toEqual([['message', 'c1', { text: 'hi' }, 'chat.message']]);
  });

  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'nope'])(
    'treats the event %p as unknown',
    async (event) => {
      await router.dispatch('c1', event, {});
      expect(ctx.errors).toEqual([
        {
          clientId: 'c1',
          code: 'unknown_event',
          message: `No handler for event "${event}".`,
          extra: { event },
        },
      ]);
    },
  );

  it('only logs unknown events with the ignore policy', async () => {
    const quiet = host('ignore');
    router.setServer(quiet.h);
    await router.dispatch('c1', 'nope', {});
    expect(quiet.errors).toEqual([]);
  });

  it('turns a failing handler into an internal_error event and a log entry', async () => {
    await router.dispatch('c1', 'chat.fail', {});
    expect(ctx.errors).toEqual([
      {
        clientId: 'c1',
        code: 'internal_error',
        message: 'Handling "chat.fail" failed on the server.',
      },
    ]);
    expect(ctx.logger.exceptions).toHaveLength(1);
  });

  it('limits events per client with rate_limited', async () => {
    for (let i = 0; i < 3; i += 1) await router.dispatch('a', 'chat.limited', {});
    await router.dispatch('b', 'chat.limited', {});
    expect(calls).toEqual([
      ['limited', 'a'],
      ['limited', 'a'],
      ['limited', 'b'],
    ]);
    expect(ctx.errors).toHaveLength(1);
    expect(ctx.errors[0]).toMatchObject({
      clientId: 'a',
      code: 'rate_limited',
      extra: { event: 'chat.limited' },
    });
  });

  it('runs connect and disconnect handlers of all controllers in order, despite failures', async () => {
    router.register(new OtherConnect());
    await router.dispatchSpecialEvent('c9', 'connect');
    await router.dispatchSpecialEvent('c9', 'disconnect');
    expect(calls).toEqual([
      ['chat.connect', 'c9'],
      ['other.connect', 'c9'],
      ['chat.disconnect', 'c9'],
    ]);
    expect(ctx.logger.exceptions).toHaveLength(1);
    await expect(router.dispatchSpecialEvent('c9', 'other' as 'connect')).rejects.toThrow(
      TypeError,
    );
  });

  it('matches HTTP routes: parameters, static precedence, null when unknown', () => {
    expect(router.matchHttpRoute('GET', '/users/7')?.params).toEqual({ id: '7' });
    expect(router.matchHttpRoute('get', '/users/me')?.route.handler).toBe('me');
    expect(router.matchHttpRoute('GET', '/nope')).toBeNull();
    expect(router.matchHttpRoute('GET', '/users/%zz')).toBeNull();
    expect(router.extractPathParameters('/users/{id}', '/users/a%2Fb')).toEqual({ id: 'a/b' });
  });

  it('gives each caller of matchHttpRoute its own plain, writable parameters', () => {
    const first = router.matchHttpRoute('GET', '/users/me')!.params;
    expect(Object.getPrototypeOf(first)).toBe(Object.prototype);
    expect(first).toEqual({});
    first.extra = 'mine';
    expect(router.matchHttpRoute('GET', '/users/me')!.params).toEqual({});
    const withId = router.matchHttpRoute('GET', '/users/7')!.params;
    expect(Object.getPrototypeOf(withId)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(withId, 'id')).toBe(true);
    expect(`${String(withId)}`).toBe('[object Object]');
  });

  it('answers HTTP: handler, 404, 405 with Allow, OPTIONS 204 with Allow', async () => {
    expect(await (await router.dispatchHttp(get('/users/a%20b'))).getBody()).toEqual({ id: 'a b' });
    const notFound = await router.dispatchHttp(get('/nothing'));
    expect(notFound.getStatusCode()).toBe(404);
    expect(notFound.getBody()).toEqual({ error: 'Not Found' });
    const notAllowed = await router.dispatchHttp(get('/users/7', 'POST'));
    expect(notAllowed.getStatusCode()).toBe(405);
    expect(notAllowed.getHeader('Allow')).toBe('GET, HEAD, DELETE, OPTIONS');
    const options = await router.dispatchHttp(get('/users/7', 'OPTIONS'));
    expect(options.getStatusCode()).toBe(204);
    expect(options.getHeader('Allow')).toBe('GET, HEAD, DELETE, OPTIONS');
  });

  it('answers HEAD through the GET route', async () => {
    const res = await router.dispatchHttp(get('/users/me', 'HEAD'));
    expect(res.getStatusCode()).toBe(200);
  });

  it('applies HTTP rate limits per client IP with 429 and headers', async () => {
    const first = await router.dispatchHttp(get('/limited'));
    expect(first.getStatusCode()).toBe(200);
    expect(first.getHeader('X-RateLimit-Limit')).toBe('1');
    expect(first.getHeader('X-RateLimit-Remaining')).toBe('0');
    const second = await router.dispatchHttp(get('/limited'));
    expect(second.getStatusCode()).toBe(429);
    expect(second.getHeader('Retry-After')).toMatch(/^\d+$/);
  });

  it('lets HTTP handler errors propagate to the server', async () => {
    await expect(router.dispatchHttp(get('/boom'))).rejects.toThrow('boom');
  });

  it('says clearly when it has no server', async () => {
    const lonely = new Router();
    await expect(lonely.dispatch('c', 'e', {})).rejects.toMatchObject({
      code: 'PKG_ERR_CORE_NO_SERVER',
    });
  });
});

describe('allowHeader', () => {
  it('orders methods, adds HEAD for GET and always OPTIONS', () => {
    expect(allowHeader(['POST', 'GET'])).toBe('GET, HEAD, POST, OPTIONS');
    expect(allowHeader(['DELETE'])).toBe('DELETE, OPTIONS');
  });
});
