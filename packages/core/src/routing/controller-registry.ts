import {
  getControllerMetadata,
  type AnySchema,
  type HttpSchemas,
  type HttpMethod,
  type HttpMiddleware,
  type WsMiddleware,
} from '@pkg/decorators';
import type { RateLimitRule } from '@pkg/http';
import { createCoreError } from '../errors';
import { checkMiddleware } from './middleware';
import { RouteTable, routeShape } from './route-table';
import { SocketController } from './socket-controller';

/** A handler as the spec describes it: the controller instance and the method name. */
export type RouteHandler = readonly [controller: SocketController, method: string | symbol];

/** The method a route calls, looked up once at registration. */
type HandlerFn = (...args: unknown[]) => unknown;

/** What every registered route has: its handler, its middleware and its rate limit. */
interface RegisteredRoute<M> {
  readonly controller: SocketController;
  readonly handler: string | symbol;
  readonly middlewares: readonly M[];
  readonly excludeGlobalMiddlewares: readonly M[];
  readonly rateLimit?: RateLimitRule;
}

/** A registered WebSocket event route. */
export interface RegisteredSocketRoute extends RegisteredRoute<WsMiddleware> {
  readonly event: string;
  /** Checks the envelope's `data` before the handler runs. */
  readonly schema?: AnySchema;
}

/** A registered HTTP route. */
export interface RegisteredHttpRoute extends RegisteredRoute<HttpMiddleware> {
  readonly method: HttpMethod;
  readonly path: string;
  /** Check parts of the request before the handler runs. */
  readonly schemas?: HttpSchemas;
}

/** The result of matching a request against the HTTP routes. */
export interface HttpRouteMatch {
  readonly route: RegisteredHttpRoute;
  /** Path parameters, percent-decoded. */
  readonly params: Record<string, string>;
}

/** The connection lifecycle events dispatched to `OnConnect` / `OnDisconnect` handlers. */
export type SpecialEvent = 'connect' | 'disconnect';

/** The `OnConnect` / `OnDisconnect` methods of one controller. */
export interface ControllerHooks {
  readonly controller: SocketController;
  readonly connect: readonly HandlerFn[];
  readonly disconnect: readonly HandlerFn[];
  readonly names: Readonly<Record<SpecialEvent, readonly (string | symbol)[]>>;
}

/** Routes added by one `register` call. */
export interface AddedRoutes {
  readonly ws: readonly RegisteredSocketRoute[];
  readonly http: readonly RegisteredHttpRoute[];
}

/** `Controller.method`, for messages and log lines. */
export function handlerLabel(controller: SocketController, handler: string | symbol): string {
  const name = controller.constructor.name || '(anonymous controller)';
  return `${name}.${typeof handler === 'symbol' ? `[${handler.toString()}]` : handler}`;
}

function methodOf(controller: SocketController, handler: string | symbol): HandlerFn {
  const fn: unknown = (controller as unknown as Record<string | symbol, unknown>)[handler];
  if (typeof fn !== 'function') {
    throw createCoreError(
      TypeError,
      'PKG_ERR_CORE_MISSING_HANDLER',
      `${handlerLabel(controller, handler)} is declared as a handler but is not a method of the controller.`,
    );
  }
  return fn as HandlerFn;
}

function checkRouteMiddleware(
  controller: SocketController,
  handler: string | symbol,
  middlewares: readonly unknown[],
): void {
  middlewares.forEach((m, i) =>
    checkMiddleware(m, `${handlerLabel(controller, handler)}: route middlewares[${i}]`),
  );
}

/** The method a registered route calls (checked at registration). */
export function handlerOf(route: RegisteredSocketRoute | RegisteredHttpRoute): HandlerFn {
  return methodOf(route.controller, route.handler);
}

/**
 * The routes of every registered controller: reads a controller's decorators, checks them
 * (handlers exist, paths start with "/", no event or method + path declared twice) and
 * records them. A controller is registered whole or not at all. Lookups never reach
 * inherited object members: events live in a `Map` and HTTP paths in a tree of `Map`s.
 */
export class ControllerRegistry {
  readonly #wsRoutes = new Map<string, RegisteredSocketRoute>();
  readonly #httpRoutes: RegisteredHttpRoute[] = [];
  readonly #httpTable = new RouteTable<RegisteredHttpRoute>();
  readonly #httpShapes = new Map<string, RegisteredHttpRoute>();
  readonly #hooks: ControllerHooks[] = [];
  readonly #listeners: Array<(added: AddedRoutes) => void> = [];

  /** event -> route. */
  get wsRoutes(): ReadonlyMap<string, RegisteredSocketRoute> {
    return this.#wsRoutes;
  }

  /** Every HTTP route, in registration order. */
  get httpRoutes(): readonly RegisteredHttpRoute[] {
    return this.#httpRoutes;
  }

  /** The controllers with `OnConnect` / `OnDisconnect` handlers, in registration order. */
  get hooks(): readonly ControllerHooks[] {
    return this.#hooks;
  }

  /** Calls `listener` with the routes of every later `register` call. */
  onRoutesAdded(listener: (added: AddedRoutes) => void): void {
    this.#listeners.push(listener);
  }

  /**
   * Registers a controller's routes from its decorators. A WebSocket event or an HTTP
   * method + path that is already registered is an error naming both handlers, and nothing
   * of the controller is registered then.
   */
  register(controller: SocketController): AddedRoutes {
    if (!(controller instanceof SocketController)) {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_CONTROLLER',
        `register() needs an instance of a class that extends SocketController, got ${
          typeof controller === 'function' ? 'a class (use new MyController())' : typeof controller
        }.`,
      );
    }
    const meta = getControllerMetadata(
      controller.constructor as abstract new (...args: never[]) => unknown,
    );

    const wsAdded = new Map<string, RegisteredSocketRoute>();
    for (const r of meta.socketRoutes) {
      methodOf(controller, r.handler);
      checkRouteMiddleware(controller, r.handler, r.middlewares);
      const existing = this.#wsRoutes.get(r.event) ?? wsAdded.get(r.event);
      if (existing) {
        throw createCoreError(
          Error,
          'PKG_ERR_CORE_DUPLICATE_ROUTE',
          `WebSocket event "${r.event}" is declared twice: by ${handlerLabel(existing.controller, existing.handler)} and by ${handlerLabel(controller, r.handler)}. An event has one handler; rename one of them.`,
        );
      }
      wsAdded.set(r.event, {
        event: r.event,
        controller,
        handler: r.handler,
        middlewares: [...r.middlewares],
        excludeGlobalMiddlewares: [...r.excludeGlobalMiddlewares],
        ...(r.rateLimit ? { rateLimit: { ...r.rateLimit } } : {}),
        ...(r.schema ? { schema: r.schema } : {}),
      });
    }

    const httpAdded = new Map<string, RegisteredHttpRoute>();
    for (const r of meta.httpRoutes) {
      methodOf(controller, r.handler);
      checkRouteMiddleware(controller, r.handler, r.middlewares);
      if (typeof r.path !== 'string' || !r.path.startsWith('/')) {
        throw createCoreError(
          TypeError,
          'PKG_ERR_CORE_INVALID_ROUTE',
          `${handlerLabel(controller, r.handler)}: the route path ${JSON.stringify(r.path)} must start with "/".`,
        );
      }
      const key = `${r.method} ${routeShape(r.path)}`;
      const existing = this.#httpShapes.get(key) ?? httpAdded.get(key);
      if (existing) {
        throw createCoreError(
          Error,
          'PKG_ERR_CORE_DUPLICATE_ROUTE',
          `HTTP route ${r.method} ${r.path} is declared twice: by ${handlerLabel(existing.controller, existing.handler)} (${existing.method} ${existing.path}) and by ${handlerLabel(controller, r.handler)}. A method and path have one handler; change one of the paths.`,
        );
      }
      httpAdded.set(key, {
        method: r.method,
        path: r.path,
        controller,
        handler: r.handler,
        middlewares: [...r.middlewares],
        excludeGlobalMiddlewares: [...r.excludeGlobalMiddlewares],
        ...(r.rateLimit ? { rateLimit: { ...r.rateLimit } } : {}),
        ...(r.schemas ? { schemas: { ...r.schemas } } : {}),
      });
    }

    const connect = meta.connectHandlers.map((h) => methodOf(controller, h));
    const disconnect = meta.disconnectHandlers.map((h) => methodOf(controller, h));

    for (const [event, route] of wsAdded) this.#wsRoutes.set(event, route);
    for (const [key, route] of httpAdded) {
      this.#httpShapes.set(key, route);
      this.#httpRoutes.push(route);
      this.#httpTable.add(route.method, route.path, route);
    }
    if (connect.length > 0 || disconnect.length > 0) {
      this.#hooks.push({
        controller,
        connect,
        disconnect,
        names: { connect: [...meta.connectHandlers], disconnect: [...meta.disconnectHandlers] },
      });
    }
    const added: AddedRoutes = { ws: [...wsAdded.values()], http: [...httpAdded.values()] };
    for (const listener of this.#listeners) listener(added);
    return added;
  }

  /**
   * Finds the route for a method and a request path (as sent, percent-encoded). HEAD is
   * answered by a GET route when no HEAD route exists. Null when nothing matches, including
   * for a path with a malformed percent-escape.
   */
  matchHttpRoute(method: string, path: string): HttpRouteMatch | null {
    try {
      const match = this.#httpTable.match(method, path);
      return match ? { route: match.value, params: match.params } : null;
    } catch {
      return null;
    }
  }

  /** Methods that some route declares for the path (empty when the path is unknown). */
  getAllowedMethods(path: string): string[] {
    try {
      return this.#httpTable.allowedMethods(path);
    } catch {
      return [];
    }
  }
}
