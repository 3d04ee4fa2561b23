import type {
  HttpMiddleware,
  HttpMiddlewareFn,
  SocketEventData,
  WsContext,
  WsMiddleware,
  WsMiddlewareFn,
} from '@pkg/decorators';
import { Response, type Request } from '@pkg/http';
import { createCoreError } from './errors';

/** The per-route part of a chain: the route's own middleware and the globals it skips. */
export interface RouteMiddlewareOptions<M> {
  readonly middlewares?: readonly M[];
  readonly excludeGlobalMiddlewares?: readonly M[];
}

/** The handler at the end of a WebSocket chain. */
export type WsTarget = (context: WsContext) => unknown;
/** The handler at the end of an HTTP chain. */
export type HttpTarget = (request: Request) => Response | Promise<Response>;

/** The context of one inbound WebSocket message, shared by its middleware and handler. */
export class SocketContext implements WsContext {
  readonly clientId: string;
  readonly event: string;
  readonly data: SocketEventData;
  readonly #attributes = new Map<string, unknown>();

  constructor(clientId: string, event: string, data: SocketEventData) {
    this.clientId = clientId;
    this.event = event;
    this.data = data;
  }

  getAttribute<T = unknown>(name: string): T | undefined {
    return this.#attributes.get(name) as T | undefined;
  }

  setAttribute(name: string, value: unknown): void {
    this.#attributes.set(name, value);
  }

  /** Whether a middleware stored a value under the name. */
  hasAttribute(name: string): boolean {
    return this.#attributes.has(name);
  }
}

function describe(value: unknown): string {
  if (typeof value === 'function') return `function ${value.name || '(anonymous)'}`;
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : typeof value;
}

/** True for a class (or constructor function) whose prototype has a `handle` method. */
function isMiddlewareClass(value: unknown): boolean {
  if (typeof value !== 'function') return false;
  const proto: unknown = (value as { prototype?: unknown }).prototype;
  if (typeof proto === 'object' && proto !== null) {
    if (typeof (proto as { handle?: unknown }).handle === 'function') return true;
  }
  return Function.prototype.toString.call(value).startsWith('class');
}

function checkMiddleware(value: unknown, where: string): void {
  const ok =
    typeof value === 'function' &&
    (!isMiddlewareClass(value) ||
      typeof (value.prototype as { handle?: unknown } | undefined)?.handle === 'function');
  if (!ok) {
    throw createCoreError(
      TypeError,
      'PKG_ERR_CORE_INVALID_MIDDLEWARE',
      `${where}: expected a middleware function (context, next) or a class with a handle method, got ${describe(value)}.`,
    );
  }
}

/**
 * The two middleware stacks (WebSocket and HTTP) and the code that runs a chain.
 *
 * A chain is: the global stack minus the route's `excludeGlobalMiddlewares`, then the route's
 * `middlewares` in listed order, then the target. Middleware may be async. To continue it
 * calls `next()`; to stop, an HTTP middleware returns a `Response` and a WebSocket
 * middleware returns without calling `next()`. A class middleware is instantiated once (on
 * first use) and its `handle` method is called with `this` bound to the instance.
 * Exclusion compares references: the same function or the same class.
 */
export class Middleware {
  readonly #wsStack: WsMiddleware[] = [];
  readonly #httpStack: HttpMiddleware[] = [];
  readonly #instances = new WeakMap<object, { handle: (...args: never[]) => unknown }>();
  /** Chains already worked out per route options object, valid while `#version` holds. */
  readonly #chains = new WeakMap<object, { version: number; chain: readonly unknown[] }>();
  /** Bumped whenever a global stack changes, so cached chains are recomputed. */
  #version = 0;

  /** The global WebSocket middleware, in the order added. */
  get wsStack(): readonly WsMiddleware[] {
    return this.#wsStack;
  }

  /** The global HTTP middleware, in the order added. */
  get httpStack(): readonly HttpMiddleware[] {
    return this.#httpStack;
  }

  addWebSocketMiddleware(middleware: WsMiddleware): void {
    checkMiddleware(middleware, 'addWebSocketMiddleware');
    this.#wsStack.push(middleware);
    this.#version += 1;
  }

  addHttpMiddleware(middleware: HttpMiddleware): void {
    checkMiddleware(middleware, 'addHttpMiddleware');
    this.#httpStack.push(middleware);
    this.#version += 1;
  }

  /**
   * Runs a WebSocket chain for one message. Resolves when the chain is done (also when a
   * middleware stopped it); rejects with the first error thrown anywhere in it.
   *
   * @param context the message's context; created from `clientId`, `event` and `data` if omitted.
   */
  async runWebSocketStack(
    clientId: string,
    event: string,
    data: SocketEventData,
    target: WsTarget,
    route: RouteMiddlewareOptions<WsMiddleware> = {},
    context: WsContext = new SocketContext(clientId, event, data),
  ): Promise<void> {
    const chain = this.#chain(this.#wsStack, route);
    if (chain.length === 0) {
      await target(context);
      return;
    }
    const run = async (index: number): Promise<void> => {
      if (index === chain.length) {
        await target(context);
        return;
      }
      const fn = this.#resolve<WsMiddlewareFn>(chain[index]!);
      await fn(
        context,
        this.#once(() => run(index + 1)),
      );
    };
    await run(0);
  }

  /**
   * Runs an HTTP chain for one request and resolves to the response: the target's, or the
   * one a middleware returned early. Rejects with the first error thrown anywhere in it, or
   * when a middleware resolves to something that is not a `Response`.
   */
  async runHttpStack(
    request: Request,
    target: HttpTarget,
    route: RouteMiddlewareOptions<HttpMiddleware> = {},
  ): Promise<Response> {
    const chain = this.#chain(this.#httpStack, route);
    if (chain.length === 0) return expectResponse(await target(request), 'the route handler');
    const run = async (index: number): Promise<Response> => {
      if (index === chain.length) {
        return expectResponse(await target(request), 'the route handler');
      }
      const middleware = chain[index]!;
      const fn = this.#resolve<HttpMiddlewareFn>(middleware);
      const result = await fn(
        request,
        this.#once(() => run(index + 1)),
      );
      return expectResponse(result, `HTTP middleware ${describe(middleware)}`);
    };
    return run(0);
  }

  #chain<M>(global: readonly M[], route: RouteMiddlewareOptions<M>): readonly M[] {
    const cached = this.#chains.get(route);
    if (cached !== undefined && cached.version === this.#version) return cached.chain as M[];
    const chain = this.#buildChain(global, route);
    this.#chains.set(route, { version: this.#version, chain });
    return chain;
  }

  #buildChain<M>(global: readonly M[], route: RouteMiddlewareOptions<M>): M[] {
    const excluded = route.excludeGlobalMiddlewares;
    const kept =
      excluded && excluded.length > 0 ? global.filter((m) => !excluded.includes(m)) : [...global];
    const own = route.middlewares ?? [];
    own.forEach((m, i) => checkMiddleware(m, `route middlewares[${i}]`));
    return own.length > 0 ? [...kept, ...own] : kept;
  }

  #resolve<F extends (...args: never[]) => unknown>(middleware: unknown): F {
    if (!isMiddlewareClass(middleware)) return middleware as F;
    const ctor = middleware as new () => { handle: F };
    let instance = this.#instances.get(ctor);
    if (!instance) {
      instance = new ctor();
      if (typeof instance.handle !== 'function') {
        throw createCoreError(
          TypeError,
          'PKG_ERR_CORE_INVALID_MIDDLEWARE',
          `Middleware class ${ctor.name || '(anonymous)'} has no handle method: declare handle(context, next) on the class.`,
        );
      }
      this.#instances.set(ctor, instance);
    }
    return instance.handle.bind(instance) as F;
  }

  #once<T>(next: () => Promise<T>): () => Promise<T> {
    let called = false;
    return () => {
      if (called) {
        return Promise.reject(
          createCoreError(
            Error,
            'PKG_ERR_CORE_NEXT_CALLED_TWICE',
            'A middleware called next() more than once; call it at most once per message or request.',
          ),
        );
      }
      called = true;
      return next();
    };
  }
}

function expectResponse(value: unknown, from: string): Response {
  if (value instanceof Response) return value;
  throw createCoreError(
    TypeError,
    'PKG_ERR_CORE_INVALID_RESPONSE',
    `${from} resolved to ${describe(value)} instead of a Response: return a Response (for example Response.json(...)) or return next().`,
  );
}
