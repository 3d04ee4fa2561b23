import type {
  HttpMiddleware,
  HttpMiddlewareFn,
  WsContext,
  WsMiddleware,
  WsMiddlewareFn,
} from '@pkg/decorators';
import { Response, type Request } from '@pkg/http';
import type { EventData } from '@pkg/ws-protocol';
import { createCoreError } from '../errors';

/** The per-route part of a chain: the route's own middleware and the globals it skips. */
export interface RouteMiddlewareOptions<M> {
  readonly middlewares?: readonly M[];
  readonly excludeGlobalMiddlewares?: readonly M[];
}

/** The handler at the end of a WebSocket chain. */
export type WsTarget = (context: WsContext) => unknown;
/** The handler at the end of an HTTP chain. */
export type HttpTarget = (request: Request) => Response | Promise<Response>;

/** A compiled WebSocket chain: returns a promise only when some step is asynchronous. */
export type CompiledWsChain = (context: WsContext) => unknown;
/**
 * A compiled HTTP chain: returns the `Response` itself when every step answered
 * synchronously, else a promise of it. Throws (or rejects) with the first error of a step.
 */
export type CompiledHttpChain = (request: Request) => Response | Promise<Response>;

/** The context of one inbound WebSocket message, shared by its middleware and handler. */
export class SocketContext implements WsContext {
  readonly clientId: string;
  readonly event: string;
  readonly data: EventData;
  /** Created on the first `setAttribute`: most messages never carry attributes. */
  #attributes: Map<string, unknown> | undefined;

  constructor(clientId: string, event: string, data: EventData) {
    this.clientId = clientId;
    this.event = event;
    this.data = data;
  }

  getAttribute<T = unknown>(name: string): T | undefined {
    return this.#attributes?.get(name) as T | undefined;
  }

  setAttribute(name: string, value: unknown): void {
    (this.#attributes ??= new Map()).set(name, value);
  }

  /** Whether a middleware stored a value under the name. */
  hasAttribute(name: string): boolean {
    return this.#attributes?.has(name) ?? false;
  }
}

/** Names a value for an error message. */
export function describeValue(value: unknown): string {
  if (typeof value === 'function') return `function ${value.name || '(anonymous)'}`;
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : typeof value;
}

/** True for a promise or any other object with a `then` method. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as { then?: unknown }).then === 'function'
  );
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

/** Throws `PKG_ERR_CORE_INVALID_MIDDLEWARE` unless `value` is a middleware function or class. */
export function checkMiddleware(value: unknown, where: string): void {
  const ok =
    typeof value === 'function' &&
    (!isMiddlewareClass(value) ||
      typeof (value.prototype as { handle?: unknown } | undefined)?.handle === 'function');
  if (!ok) {
    throw createCoreError(
      TypeError,
      'PKG_ERR_CORE_INVALID_MIDDLEWARE',
      `${where}: expected a middleware function (context, next) or a class with a handle method, got ${describeValue(value)}.`,
    );
  }
}

function expectResponse(value: unknown, from: string): Response {
  if (value instanceof Response) return value;
  throw createCoreError(
    TypeError,
    'PKG_ERR_CORE_INVALID_RESPONSE',
    `${from} resolved to ${describeValue(value)} instead of a Response: return a Response (for example Response.json(...)) or return next(). ` +
      '(A route handler may also return a WHATWG Response, a plain object or array, or nothing.)',
  );
}

/** The response of a step, checked now when it is one, or when its promise settles. */
function checkedResponse(value: unknown, from: string): Response | Promise<Response> {
  if (value instanceof Response) return value;
  if (isThenable(value)) {
    return Promise.resolve(value).then((resolved) => expectResponse(resolved, from));
  }
  return expectResponse(value, from);
}

function nextCalledTwice(): Error {
  return createCoreError(
    Error,
    'PKG_ERR_CORE_NEXT_CALLED_TWICE',
    'A middleware called next() more than once; call it at most once per message or request.',
  );
}

/** Runs `step` and always gives a promise: a synchronous throw becomes a rejection. */
function asPromise<T>(step: () => T | PromiseLike<T>): Promise<T> {
  try {
    return Promise.resolve(step());
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * The two middleware stacks (WebSocket and HTTP) and the code that builds a chain.
 *
 * A chain is: the global stack minus the route's `excludeGlobalMiddlewares`, then the route's
 * `middlewares` in listed order, then the target. Middleware may be async. To continue it
 * calls `next()`; to stop, an HTTP middleware returns a `Response` and a WebSocket
 * middleware returns without calling `next()`. A class middleware is instantiated once (on
 * first use) and its `handle` method is called with `this` bound to the instance.
 * Exclusion compares references: the same function or the same class.
 *
 * The router compiles each route's chain once (`compileHttpChain`, `compileWebSocketChain`)
 * and compiles again when a global middleware is added (`onChange`). A compiled chain adds
 * no promise when every step is synchronous.
 */
export class Middleware {
  readonly #wsStack: WsMiddleware[] = [];
  readonly #httpStack: HttpMiddleware[] = [];
  readonly #instances = new WeakMap<object, { handle: (...args: never[]) => unknown }>();
  /** Chains compiled by runWebSocketStack / runHttpStack per route options object. */
  readonly #compiled = new WeakMap<object, { version: number; target: unknown; run: unknown }>();
  readonly #listeners: Array<() => void> = [];
  /** Bumped whenever a global stack changes, so compiled chains are rebuilt. */
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
    this.#changed();
  }

  addHttpMiddleware(middleware: HttpMiddleware): void {
    checkMiddleware(middleware, 'addHttpMiddleware');
    this.#httpStack.push(middleware);
    this.#changed();
  }

  /** Calls `listener` whenever a global middleware is added (compiled chains are stale then). */
  onChange(listener: () => void): void {
    this.#listeners.push(listener);
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
    data: EventData,
    target: WsTarget,
    route: RouteMiddlewareOptions<WsMiddleware> = {},
    context: WsContext = new SocketContext(clientId, event, data),
  ): Promise<void> {
    const run = this.#cached(route, target, () => this.compileWebSocketChain(route, target));
    await run(context);
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
    const run = this.#cached(route, target, () => this.compileHttpChain(route, target));
    return run(request);
  }

  /**
   * Builds a route's WebSocket chain once: a function that runs the middleware in order and
   * then `target`, returning whatever the last step returned (a promise only when some step
   * is asynchronous). Throws synchronously for invalid route middleware.
   */
  compileWebSocketChain(
    route: RouteMiddlewareOptions<WsMiddleware>,
    target: WsTarget,
  ): CompiledWsChain {
    const chain = this.#chain(this.#wsStack, route);
    let run: CompiledWsChain = target;
    for (let i = chain.length - 1; i >= 0; i -= 1) {
      const middleware = chain[i]!;
      const next = run;
      let fn: WsMiddlewareFn | undefined;
      run = (context) => {
        fn ??= this.#resolve<WsMiddlewareFn>(middleware);
        let called = false;
        return fn(context, () => {
          if (called) return Promise.reject(nextCalledTwice());
          called = true;
          return asPromise(() => next(context)).then(() => undefined);
        });
      };
    }
    return run;
  }

  /**
   * Builds a route's HTTP chain once: a function that runs the middleware in order and then
   * `target`, and gives the `Response` (synchronously when every step was synchronous).
   * Throws synchronously for invalid route middleware.
   */
  compileHttpChain(
    route: RouteMiddlewareOptions<HttpMiddleware>,
    target: (request: Request) => unknown,
  ): CompiledHttpChain {
    const chain = this.#chain(this.#httpStack, route);
    let run: CompiledHttpChain = (request) => checkedResponse(target(request), 'the route handler');
    for (let i = chain.length - 1; i >= 0; i -= 1) {
      const middleware = chain[i]!;
      const label = `HTTP middleware ${describeValue(middleware)}`;
      const next = run;
      let fn: HttpMiddlewareFn | undefined;
      run = (request) => {
        fn ??= this.#resolve<HttpMiddlewareFn>(middleware);
        let called = false;
        const result = fn(request, () => {
          if (called) return Promise.reject(nextCalledTwice());
          called = true;
          return asPromise(() => next(request));
        });
        return checkedResponse(result, label);
      };
    }
    return run;
  }

  #changed(): void {
    this.#version += 1;
    for (const listener of this.#listeners) listener();
  }

  #cached<R>(route: object, target: unknown, compile: () => R): R {
    const cached = this.#compiled.get(route);
    if (cached !== undefined && cached.version === this.#version && cached.target === target) {
      return cached.run as R;
    }
    const run = compile();
    this.#compiled.set(route, { version: this.#version, target, run });
    return run;
  }

  #chain<M>(global: readonly M[], route: RouteMiddlewareOptions<M>): M[] {
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
}
