import { describe, expect, it } from '@jest/globals';
import type { HttpMiddlewareFn, WsContext, WsMiddlewareFn } from '@pkg/decorators';
import { Request, Response } from '@pkg/http';
import { Middleware, SocketContext } from './middleware';

const request = (): Request => new Request({ method: 'GET', url: '/x', headers: {} });

describe('Middleware: WebSocket chains', () => {
  it('runs global minus excluded, then route middleware in order, then the target', async () => {
    const order: string[] = [];
    const make =
      (name: string): WsMiddlewareFn =>
      async (_ctx, next) => {
        order.push(`${name}>`);
        await next();
        order.push(`<${name}`);
      };
    const g1 = make('g1');
    const g2 = make('g2');
    const g3 = make('g3');
    const r1 = make('r1');
    const r2 = make('r2');
    const m = new Middleware();
    m.addWebSocketMiddleware(g1);
    m.addWebSocketMiddleware(g2);
    m.addWebSocketMiddleware(g3);
    await m.runWebSocketStack('c1', 'e', {}, () => void order.push('handler'), {
      middlewares: [r1, r2],
      excludeGlobalMiddlewares: [g2],
    });
    expect(order).toEqual(['g1>', 'g3>', 'r1>', 'r2>', 'handler', '<r2', '<r1', '<g3', '<g1']);
  });

  it('applies a global middleware added after a route has already run (chains are cached per route)', async () => {
    const order: string[] = [];
    const m = new Middleware();
    const route = { middlewares: [], excludeGlobalMiddlewares: [] };
    const target = (): void => void order.push('handler');
    await m.runWebSocketStack('c1', 'e', {}, target, route);
    m.addWebSocketMiddleware(async (_ctx, next) => {
      order.push('late');
      await next();
    });
    await m.runWebSocketStack('c1', 'e', {}, target, route);
    const httpRoute = { middlewares: [], excludeGlobalMiddlewares: [] };
    await m.runHttpStack(request(), () => Response.text('a'), httpRoute);
    m.addHttpMiddleware(async (_req, next) => {
      order.push('late http');
      return next();
    });
    await m.runHttpStack(request(), () => Response.text('b'), httpRoute);
    expect(order).toEqual(['handler', 'late', 'handler', 'late http']);
  });

  it('stops when a middleware does not call next', async () => {
    const m = new Middleware();
    let ran = false;
    m.addWebSocketMiddleware(() => undefined);
    await m.runWebSocketStack('c1', 'e', {}, () => {
      ran = true;
    });
    expect(ran).toBe(false);
  });

  it('shares attributes between middleware and handler through the context', async () => {
    const m = new Middleware();
    m.addWebSocketMiddleware(async (ctx, next) => {
      ctx.setAttribute('user', { name: 'ada' });
      await next();
    });
    let seen: unknown;
    let context: WsContext | undefined;
    await m.runWebSocketStack('c1', 'chat', { a: 1 }, (ctx) => {
      context = ctx;
      seen = ctx.getAttribute('user');
    });
    expect(seen).toEqual({ name: 'ada' });
    expect(context).toMatchObject({ clientId: 'c1', event: 'chat', data: { a: 1 } });
  });

  it('uses class middleware once instantiated, with this bound, and excludes by class', async () => {
    let instances = 0;
    class Counter {
      count = 0;
      constructor() {
        instances += 1;
      }
      async handle(ctx: WsContext, next: () => Promise<void>): Promise<void> {
        this.count += 1;
        ctx.setAttribute('count', this.count);
        await next();
      }
    }
    const m = new Middleware();
    m.addWebSocketMiddleware(Counter);
    const counts: unknown[] = [];
    for (let i = 0; i < 3; i += 1) {
      await m.runWebSocketStack('c', 'e', {}, (ctx) => void counts.push(ctx.getAttribute('count')));
    }
    await m.runWebSocketStack('c', 'e', {}, (ctx) => void counts.push(ctx.getAttribute('count')), {
      excludeGlobalMiddlewares: [Counter],
    });
    expect(counts).toEqual([1, 2, 3, undefined]);
    expect(instances).toBe(1);
  });

  it('rejects with the error of a throwing or rejecting middleware or target', async () => {
    const m = new Middleware();
    m.addWebSocketMiddleware(() => {
      throw new Error('sync boom');
    });
    await expect(m.runWebSocketStack('c', 'e', {}, () => undefined)).rejects.toThrow('sync boom');
    const m2 = new Middleware();
    await expect(
      m2.runWebSocketStack('c', 'e', {}, async () => {
        throw new Error('async boom');
      }),
    ).rejects.toThrow('async boom');
  });

  it('refuses a second call of next', async () => {
    const m = new Middleware();
    m.addWebSocketMiddleware(async (_ctx, next) => {
      await next();
      await next();
    });
    await expect(m.runWebSocketStack('c', 'e', {}, () => undefined)).rejects.toMatchObject({
      code: 'PKG_ERR_CORE_NEXT_CALLED_TWICE',
    });
  });

  it('accepts a context built by the caller', async () => {
    const m = new Middleware();
    const ctx = new SocketContext('c', 'e', []);
    ctx.setAttribute('pre', 1);
    let seen: unknown;
    await m.runWebSocketStack('c', 'e', [], (c) => void (seen = c.getAttribute('pre')), {}, ctx);
    expect(seen).toBe(1);
    expect(ctx.hasAttribute('pre')).toBe(true);
  });
});

describe('Middleware: HTTP chains', () => {
  it('runs in the documented order and returns the handler response', async () => {
    const order: string[] = [];
    const make =
      (name: string): HttpMiddlewareFn =>
      async (_req, next) => {
        order.push(name);
        const res = await next();
        res.setHeader(`X-${name}`, '1');
        return res;
      };
    const g1 = make('g1');
    const g2 = make('g2');
    const r1 = make('r1');
    const m = new Middleware();
    m.addHttpMiddleware(g1);
    m.addHttpMiddleware(g2);
    const res = await m.runHttpStack(
      request(),
      () => {
        order.push('handler');
        return Response.text('ok');
      },
      { middlewares: [r1], excludeGlobalMiddlewares: [g1] },
    );
    expect(order).toEqual(['g2', 'r1', 'handler']);
    expect(res.getBodyString()).toBe('ok');
    expect(res.getHeader('X-g2')).toBe('1');
    expect(res.getHeader('X-g1')).toBeUndefined();
  });

  it('short-circuits when a middleware returns a Response', async () => {
    const m = new Middleware();
    let ran = false;
    m.addHttpMiddleware(() => Response.json({ error: 'no' }, 401));
    const res = await m.runHttpStack(request(), () => {
      ran = true;
      return Response.text('ok');
    });
    expect(res.getStatusCode()).toBe(401);
    expect(ran).toBe(false);
  });

  it('passes attributes set on the request to the handler', async () => {
    const m = new Middleware();
    m.addHttpMiddleware(async (req, next) => {
      req.setAttribute('user', 'ada');
      return next();
    });
    const res = await m.runHttpStack(request(), (req) =>
      Response.text(String(req.getAttribute('user'))),
    );
    expect(res.getBodyString()).toBe('ada');
  });

  it('supports class middleware', async () => {
    class Tag {
      handle(_req: Request, next: () => Promise<Response>): Promise<Response> {
        return next().then((r) => r.setHeader('X-Tag', 'yes'));
      }
    }
    const m = new Middleware();
    const res = await m.runHttpStack(request(), () => Response.text('ok'), { middlewares: [Tag] });
    expect(res.getHeader('X-Tag')).toBe('yes');
  });

  it('rejects when a middleware or handler gives something that is not a Response', async () => {
    const m = new Middleware();
    m.addHttpMiddleware((() => undefined) as unknown as HttpMiddlewareFn);
    await expect(m.runHttpStack(request(), () => Response.text('ok'))).rejects.toMatchObject({
      code: 'PKG_ERR_CORE_INVALID_RESPONSE',
    });
    const m2 = new Middleware();
    await expect(
      m2.runHttpStack(request(), (() => 'text') as unknown as () => Response),
    ).rejects.toThrow(/route handler resolved to string instead of a Response/);
  });

  it('rejects with the error of a failing middleware', async () => {
    const m = new Middleware();
    m.addHttpMiddleware(async () => {
      throw new Error('nope');
    });
    await expect(m.runHttpStack(request(), () => Response.text('ok'))).rejects.toThrow('nope');
  });
});

describe('Middleware: registration', () => {
  it('refuses values that are not middleware', () => {
    const m = new Middleware();
    expect(() => m.addHttpMiddleware('auth' as unknown as HttpMiddlewareFn)).toThrow(
      /addHttpMiddleware: expected a middleware function/,
    );
    class NoHandle {}
    expect(() => m.addWebSocketMiddleware(NoHandle as unknown as WsMiddlewareFn)).toThrow(
      TypeError,
    );
  });

  it('exposes the stacks in order', () => {
    const m = new Middleware();
    const a: WsMiddlewareFn = (_c, n) => n();
    const b: HttpMiddlewareFn = (_r, n) => n();
    m.addWebSocketMiddleware(a);
    m.addHttpMiddleware(b);
    expect(m.wsStack).toEqual([a]);
    expect(m.httpStack).toEqual([b]);
  });
});
