import {
  getControllerMetadata,
  type HttpMethod,
  type HttpMiddleware,
  type SocketEventData,
  type WsContext,
  type WsMiddleware,
} from '@pkg/decorators';
import { RateLimiter, Response, type RateLimitRule, type Request } from '@pkg/http';
import type { LoggerInterface } from '@pkg/logger';
import { CoreEventErrorCode, createCoreError } from './errors';
import { Middleware, SocketContext } from './middleware';
import { RouteTable, extractPathParameters, routeShape } from './route-table';
import type { UnknownEventPolicy } from './server-config';
import { SocketController } from './socket-controller';

/** A handler as the spec describes it: the controller instance and the method name. */
export type RouteHandler = readonly [controller: SocketController, method: string | symbol];

/** A registered WebSocket event route. */
export interface RegisteredSocketRoute {
  readonly event: string;
  readonly controller: SocketController;
  readonly handler: string | symbol;
  readonly middlewares: readonly WsMiddleware[];
  readonly excludeGlobalMiddlewares: readonly WsMiddleware[];
  readonly rateLimit?: RateLimitRule;
}

/** A registered HTTP route. */
export interface RegisteredHttpRoute {
  readonly method: HttpMethod;
  readonly path: string;
  readonly controller: SocketController;
  readonly handler: string | symbol;
  readonly middlewares: readonly HttpMiddleware[];
  readonly excludeGlobalMiddlewares: readonly HttpMiddleware[];
  readonly rateLimit?: RateLimitRule;
}

/** The result of {@link Router.matchHttpRoute}. */
export interface HttpRouteMatch {
  readonly route: RegisteredHttpRoute;
  /** Path parameters, percent-decoded. */
  readonly params: Record<string, string>;
}

/** The connection lifecycle events dispatched to `OnConnect` / `OnDisconnect` handlers. */
export type SpecialEvent = 'connect' | 'disconnect';

/** What the router needs from the server; `Server` implements it. */
export interface RouterHost {
  getMiddleware(): Middleware;
  getLogger(): LoggerInterface;
  getRateLimiter(): RateLimiter;
  isDebug(): boolean;
  getUnknownEventPolicy(): UnknownEventPolicy;
  /** Sends the `error` event `{code, message, ...extra}` to one client. */
  sendEventError(
    clientId: string,
    code: string,
    message: string,
    extra?: Record<string, unknown>,
  ): void;
}

interface ControllerHooks {
  readonly controller: SocketController;
  readonly connect: readonly (string | symbol)[];
  readonly disconnect: readonly (string | symbol)[];
}

const METHOD_ORDER: readonly string[] = [
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
];

function label(controller: SocketController, handler: string | symbol): string {
  const name = controller.constructor.name || '(anonymous controller)';
  return `${name}.${typeof handler === 'symbol' ? `[${handler.toString()}]` : handler}`;
}

function methodOf(
  controller: SocketController,
  handler: string | symbol,
): (...args: unknown[]) => unknown {
  const fn: unknown = (controller as unknown as Record<string | symbol, unknown>)[handler];
  if (typeof fn !== 'function') {
    throw createCoreError(
      TypeError,
      'PKG_ERR_CORE_MISSING_HANDLER',
      `${label(controller, handler)} is declared as a handler but is not a method of the controller.`,
    );
  }
  return fn as (...args: unknown[]) => unknown;
}

/** Text for a thrown value in debug mode; never throws (`String()` does for some objects). */
function errorDetails(err: unknown): string {
  try {
    return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  } catch {
    return 'a value that cannot be shown as text';
  }
}

/** `Allow` header value: methods in a fixed order, HEAD wherever GET is, OPTIONS always. */
export function allowHeader(methods: Iterable<string>): string {
  const set = new Set(methods);
  if (set.has('GET')) set.add('HEAD');
  set.add('OPTIONS');
  return [...set].sort((a, b) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b)).join(', ');
}

/**
 * Holds the routes of every registered controller and dispatches WebSocket events,
 * connection lifecycle events and HTTP requests to them through the middleware chains.
 *
 * Lookups never reach inherited object members: events live in a `Map`, and HTTP paths in
 * a tree of `Map`s, so an event named `constructor`, `__proto__` or `toString` is an
 * unknown event like any other.
 */
export class Router {
  readonly #wsRoutes = new Map<string, RegisteredSocketRoute>();
  readonly #httpRoutes: RegisteredHttpRoute[] = [];
  readonly #httpTable = new RouteTable<RegisteredHttpRoute>();
  readonly #httpShapes = new Map<string, RegisteredHttpRoute>();
  readonly #hooks: ControllerHooks[] = [];
  #server: RouterHost | null = null;

  /** event -> route (read-only view). */
  get wsRoutes(): ReadonlyMap<string, RegisteredSocketRoute> {
    return this.#wsRoutes;
  }

  /** Every HTTP route, in registration order. */
  get httpRoutes(): readonly RegisteredHttpRoute[] {
    return this.#httpRoutes;
  }

  /** The connect / disconnect handlers of every controller, in registration order. */
  get specialEventHandlers(): Readonly<Record<SpecialEvent, readonly RouteHandler[]>> {
    return {
      connect: this.#hooks.flatMap((h) => h.connect.map((m): RouteHandler => [h.controller, m])),
      disconnect: this.#hooks.flatMap((h) =>
        h.disconnect.map((m): RouteHandler => [h.controller, m]),
      ),
    };
  }

  /** The server (or test host) the router reports to. */
  get server(): RouterHost | null {
    return this.#server;
  }

  setServer(server: RouterHost): void {
    this.#server = server;
  }

  /**
   * Registers a controller's routes from its decorators. A WebSocket event or an HTTP
   * method + path that is already registered is an error naming both handlers, and nothing
   * of the controller is registered then.
   */
  register(controller: SocketController): void {
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
      const existing = this.#wsRoutes.get(r.event) ?? wsAdded.get(r.event);
      if (existing) {
        throw createCoreError(
          Error,
          'PKG_ERR_CORE_DUPLICATE_ROUTE',
          `WebSocket event "${r.event}" is declared twice: by ${label(existing.controller, existing.handler)} and by ${label(controller, r.handler)}. An event has one handler; rename one of them.`,
        );
      }
      const route: RegisteredSocketRoute = {
        event: r.event,
        controller,
        handler: r.handler,
        middlewares: [...r.middlewares],
        excludeGlobalMiddlewares: [...r.excludeGlobalMiddlewares],
        ...(r.rateLimit ? { rateLimit: { ...r.rateLimit } } : {}),
      };
      wsAdded.set(r.event, route);
    }

    const httpAdded = new Map<string, RegisteredHttpRoute>();
    for (const r of meta.httpRoutes) {
      methodOf(controller, r.handler);
      if (typeof r.path !== 'string' || !r.path.startsWith('/')) {
        throw createCoreError(
          TypeError,
          'PKG_ERR_CORE_INVALID_ROUTE',
          `${label(controller, r.handler)}: the route path ${JSON.stringify(r.path)} must start with "/".`,
        );
      }
      const key = `${r.method} ${routeShape(r.path)}`;
      const existing = this.#httpShapes.get(key) ?? httpAdded.get(key);
      if (existing) {
        throw createCoreError(
          Error,
          'PKG_ERR_CORE_DUPLICATE_ROUTE',
          `HTTP route ${r.method} ${r.path} is declared twice: by ${label(existing.controller, existing.handler)} (${existing.method} ${existing.path}) and by ${label(controller, r.handler)}. A method and path have one handler; change one of the paths.`,
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
      });
    }

    for (const handler of [...meta.connectHandlers, ...meta.disconnectHandlers]) {
      methodOf(controller, handler);
    }

    for (const [event, route] of wsAdded) this.#wsRoutes.set(event, route);
    for (const [key, route] of httpAdded) {
      this.#httpShapes.set(key, route);
      this.#httpRoutes.push(route);
      this.#httpTable.add(route.method, route.path, route);
    }
    if (meta.connectHandlers.length > 0 || meta.disconnectHandlers.length > 0) {
      this.#hooks.push({
        controller,
        connect: [...meta.connectHandlers],
        disconnect: [...meta.disconnectHandlers],
      });
    }
  }

  /** Whether a WebSocket event has a handler. */
  hasWebSocketRoute(event: string): boolean {
    return this.#wsRoutes.has(event);
  }

  /** event -> (controller, method name). */
  getWebSocketRoutes(): Map<string, RouteHandler> {
    return new Map([...this.#wsRoutes].map(([event, r]) => [event, [r.controller, r.handler]]));
  }

  /** `"METHOD /path"` -> (controller, method name), in registration order. */
  getHttpRoutes(): Map<string, RouteHandler> {
    return new Map(
      this.#httpRoutes.map((r): [string, RouteHandler] => [
        `${r.method} ${r.path}`,
        [r.controller, r.handler],
      ]),
    );
  }

  /**
   * Finds the route for a method and a request path (as sent, percent-encoded). HEAD is
   * answered by a GET route when no HEAD route exists. Returns null when nothing matches,
   * including for a path with a malformed percent-escape.
   */
  matchHttpRoute(method: string, path: string): HttpRouteMatch | null {
    try {
      const match = this.#httpTable.match(method.toUpperCase(), path);
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

  /** The values of `routePath`'s `{name}` segments in `requestPath` (decoded). */
  extractPathParameters(routePath: string, requestPath: string): Record<string, string> {
    return extractPathParameters(routePath, requestPath);
  }

  /**
   * Dispatches one inbound WebSocket event through the middleware chain, the rate limit and
   * the handler. Once the router has a server it never rejects: a failure is logged and
   * answered with an `error` event.
   */
  async dispatch(clientId: string, event: string, data: SocketEventData): Promise<void> {
    const host = this.#host();
    const route = this.#wsRoutes.get(event);
    if (!route) {
      this.#unknownEvent(host, clientId, event);
      return;
    }
    const context = new SocketContext(clientId, event, data);
    try {
      await host
        .getMiddleware()
        .runWebSocketStack(
          clientId,
          event,
          data,
          (ctx) => this.#runSocketHandler(host, route, ctx),
          route,
          context,
        );
    } catch (err) {
      host.getLogger().exception(err, {
        code: 'PKG_ERR_CORE_HANDLER_FAILED',
        clientId,
        event,
        handler: label(route.controller, route.handler),
      });
      host.sendEventError(
        clientId,
        CoreEventErrorCode.INTERNAL_ERROR,
        host.isDebug()
          ? `Handling "${event}" failed: ${errorDetails(err)}`
          : `Handling "${event}" failed on the server.`,
      );
    }
  }

  /**
   * Runs the `OnConnect` (`'connect'`) or `OnDisconnect` (`'disconnect'`) handlers of every
   * controller, one after another in registration order. A failing handler is logged and
   * the others still run. Never rejects.
   */
  async dispatchSpecialEvent(clientId: string, eventType: SpecialEvent): Promise<void> {
    if (eventType !== 'connect' && eventType !== 'disconnect') {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        `dispatchSpecialEvent: eventType must be "connect" or "disconnect", got ${JSON.stringify(eventType)}.`,
      );
    }
    const host = this.#host();
    for (const hooks of [...this.#hooks]) {
      for (const handler of hooks[eventType]) {
        try {
          await methodOf(hooks.controller, handler).call(hooks.controller, clientId);
        } catch (err) {
          host.getLogger().exception(err, {
            code: 'PKG_ERR_CORE_HANDLER_FAILED',
            clientId,
            event: eventType,
            handler: label(hooks.controller, handler),
          });
        }
      }
    }
  }

  /**
   * Answers one HTTP request: 404 when no route has the path, 405 with `Allow` when the path
   * exists under other methods (a plain OPTIONS request gets 204 with `Allow`), else the
   * middleware chain, the rate limit and the handler. A HEAD request without a HEAD route is
   * answered by the GET route; Node then sends its status and headers (Content-Length
   * included) without the body. Errors propagate to the caller (the server turns them into
   * the 500 answer).
   */
  async dispatchHttp(request: Request): Promise<Response> {
    const host = this.#host();
    const method = request.getMethod().toUpperCase();
    const path = request.getPath();
    const match = this.matchHttpRoute(method, path);
    if (!match) {
      const allowed = this.getAllowedMethods(path);
      if (allowed.length === 0) {
        host.getLogger().debug('No HTTP route for the path', {
          code: 'PKG_ERR_CORE_ROUTE_NOT_FOUND',
          method,
          path,
        });
        return Response.json({ error: 'Not Found' }, 404);
      }
      const allow = allowHeader(allowed);
      if (method === 'OPTIONS') return new Response('', 204, { Allow: allow });
      host.getLogger().debug('HTTP method not allowed for the path', {
        code: 'PKG_ERR_CORE_METHOD_NOT_ALLOWED',
        method,
        path,
        allow,
      });
      return Response.json(
        { error: 'Method Not Allowed', code: 'PKG_ERR_CORE_METHOD_NOT_ALLOWED' },
        405,
        { Allow: allow },
      );
    }
    const { route, params } = match;
    request.setParams(params);
    const response = await host
      .getMiddleware()
      .runHttpStack(request, (req) => this.#runHttpHandler(host, route, req), route);
    return response;
  }

  async #runSocketHandler(
    host: RouterHost,
    route: RegisteredSocketRoute,
    context: WsContext,
  ): Promise<void> {
    if (route.rateLimit) {
      const result = await host
        .getRateLimiter()
        .check(`ws:${route.event}:${context.clientId}`, route.rateLimit);
      if (!result.allowed) {
        host.getLogger().debug('WebSocket event over its rate limit', {
          code: 'PKG_ERR_CORE_RATE_LIMITED',
          clientId: context.clientId,
          event: route.event,
        });
        host.sendEventError(
          context.clientId,
          CoreEventErrorCode.RATE_LIMITED,
          `Too many "${route.event}" events: at most ${route.rateLimit.maxCount} per ${route.rateLimit.timeWindow} s. Retry in ${result.retryAfter} s.`,
          { event: route.event, retryAfter: result.retryAfter },
        );
        return;
      }
    }
    const fn = methodOf(route.controller, route.handler);
    await fn.call(route.controller, context.clientId, context.data, context);
  }

  async #runHttpHandler(
    host: RouterHost,
    route: RegisteredHttpRoute,
    request: Request,
  ): Promise<Response> {
    if (!route.rateLimit) {
      return (await methodOf(route.controller, route.handler).call(
        route.controller,
        request,
      )) as Response;
    }
    const key = RateLimiter.keyFor(`http ${route.method} ${route.path}`, request);
    const result = await host.getRateLimiter().check(key, route.rateLimit);
    if (!result.allowed) {
      host.getLogger().debug('HTTP route over its rate limit', {
        code: 'PKG_ERR_CORE_RATE_LIMITED',
        route: `${route.method} ${route.path}`,
        ip: request.getIpAddress(),
      });
      return RateLimiter.tooManyRequests(result);
    }
    // Every answer of a limited route carries the limit headers: set here on the handler's
    // response (dispatchHttp may be used without an HttpHandler), and through the request's
    // response hook on whatever HttpHandler answers instead (a 500 when the handler throws).
    request.onResponse((response) => RateLimiter.applyHeaders(response, result));
    const response = (await methodOf(route.controller, route.handler).call(
      route.controller,
      request,
    )) as Response;
    return response instanceof Response ? RateLimiter.applyHeaders(response, result) : response;
  }

  #unknownEvent(host: RouterHost, clientId: string, event: string): void {
    if (host.getUnknownEventPolicy() === 'ignore') {
      host.getLogger().debug('Ignored WebSocket event without a handler', { clientId, event });
      return;
    }
    host.sendEventError(
      clientId,
      CoreEventErrorCode.UNKNOWN_EVENT,
      `No handler for event "${event}".`,
      { event },
    );
  }

  #host(): RouterHost {
    if (!this.#server) {
      throw createCoreError(
        Error,
        'PKG_ERR_CORE_NO_SERVER',
        'The router has no server: call router.setServer(server) first (Server does this itself).',
      );
    }
    return this.#server;
  }
}
