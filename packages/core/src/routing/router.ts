import type { Response, Request } from '@pkg/http';
import type { EventData } from '@pkg/ws-protocol';
import {
  ControllerRegistry,
  type HttpRouteMatch,
  type RegisteredHttpRoute,
  type RegisteredSocketRoute,
  type RouteHandler,
  type SpecialEvent,
} from './controller-registry';
import { createCoreError } from '../errors';
import { HttpDispatcher, type HttpDispatchOptions } from './http-dispatch';
import { extractPathParameters, plainParams } from './route-table';
import type { SocketController } from './socket-controller';
import { WsDispatcher, type WsDispatchOptions } from './ws-dispatch';

export type {
  HttpRouteMatch,
  RegisteredHttpRoute,
  RegisteredSocketRoute,
  RouteHandler,
  SpecialEvent,
} from './controller-registry';

/**
 * What a router dispatches with, handed over once by `setServer` (a `Server` does this
 * itself): the middleware, the rate limiter, the logger, how to send an `error` event, and
 * the debug / unknown-event settings.
 */
export interface RouterDependencies extends WsDispatchOptions, HttpDispatchOptions {
  /** Sends the `error` event `{code, message, ...extra}` of a refused message to its client. */
  readonly sendEventError?: SendEventError;
}

/** Sends the `error` event `{code, message, ...extra}` to one client. */
export type SendEventError = (
  clientId: string,
  code: string,
  message: string,
  extra?: Readonly<Record<string, unknown>>,
) => void;

/** The dispatchers a router fronts (built by `setServer`, or handed over by `Server`). */
export interface RouterDispatchers {
  readonly ws: WsDispatcher;
  readonly http: HttpDispatcher;
  /** Where {@link Router.dispatch} sends a refusal (a `Server`'s: the connection's door). */
  readonly fail?: SendEventError;
}

/**
 * The spec's `Router` (the name is the spec's): the facade where controllers and their
 * routes are registered and looked up. It does no routing of its own: the routes are kept
 * and compiled by the controller registry and route-table.ts, WebSocket events are
 * dispatched by ws-dispatch.ts and HTTP requests by http-dispatch.ts; the `dispatch*`
 * methods here hand over to those two. `Server` creates one and hands it its dependencies
 * once.
 */
export class Router {
  readonly #registry: ControllerRegistry;
  #dispatchers: RouterDispatchers | null;
  #dependencies: RouterDependencies | null = null;

  constructor(registry?: ControllerRegistry, dispatchers?: RouterDispatchers) {
    this.#registry = registry ?? new ControllerRegistry();
    this.#dispatchers = dispatchers ?? null;
  }

  /** event -> route (read-only view). */
  get wsRoutes(): ReadonlyMap<string, RegisteredSocketRoute> {
    return this.#registry.wsRoutes;
  }

  /** Every HTTP route, in registration order. */
  get httpRoutes(): readonly RegisteredHttpRoute[] {
    return this.#registry.httpRoutes;
  }

  /** The connect / disconnect handlers of every controller, in registration order. */
  get specialEventHandlers(): Readonly<Record<SpecialEvent, readonly RouteHandler[]>> {
    const hooks = this.#registry.hooks;
    return {
      connect: hooks.flatMap((h) => h.names.connect.map((m): RouteHandler => [h.controller, m])),
      disconnect: hooks.flatMap((h) =>
        h.names.disconnect.map((m): RouteHandler => [h.controller, m]),
      ),
    };
  }

  /** The dependencies given to `setServer`, if any. */
  get server(): RouterDependencies | null {
    return this.#dependencies;
  }

  /** Hands the router what it dispatches with; it builds its dispatchers from them once. */
  setServer(dependencies: RouterDependencies): void {
    this.#dependencies = dependencies;
    this.#dispatchers = {
      ws: new WsDispatcher(this.#registry, dependencies),
      http: new HttpDispatcher(this.#registry, dependencies),
      ...(dependencies.sendEventError === undefined ? {} : { fail: dependencies.sendEventError }),
    };
  }

  /**
   * Registers a controller's routes from its decorators. A WebSocket event or an HTTP
   * method + path that is already registered is an error naming both handlers, and nothing
   * of the controller is registered then.
   */
  register(controller: SocketController): void {
    this.#registry.register(controller);
  }

  /** Whether a WebSocket event has a handler. */
  hasWebSocketRoute(event: string): boolean {
    return this.#registry.wsRoutes.has(event);
  }

  /** event -> (controller, method name). */
  getWebSocketRoutes(): Map<string, RouteHandler> {
    return new Map(
      [...this.#registry.wsRoutes].map(([event, r]) => [event, [r.controller, r.handler]]),
    );
  }

  /** `"METHOD /path"` -> (controller, method name), in registration order. */
  getHttpRoutes(): Map<string, RouteHandler> {
    return new Map(
      this.#registry.httpRoutes.map((r): [string, RouteHandler] => [
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
    const match = this.#registry.matchHttpRoute(method.toUpperCase(), path);
    return match === null ? null : { route: match.route, params: plainParams(match.params) };
  }

  /** Methods that some route declares for the path (empty when the path is unknown). */
  getAllowedMethods(path: string): string[] {
    return this.#registry.getAllowedMethods(path);
  }

  /** The values of `routePath`'s `{name}` segments in `requestPath` (decoded). */
  extractPathParameters(routePath: string, requestPath: string): Record<string, string> {
    return extractPathParameters(routePath, requestPath);
  }

  /**
   * Dispatches one inbound WebSocket event through the middleware chain, the rate limit and
   * the handler. Never rejects: a failure is logged and answered with an `error` event.
   */
  async dispatch(clientId: string, event: string, data: EventData): Promise<void> {
    const dispatchers = this.#ready();
    const outcome = await dispatchers.ws.dispatch(clientId, event, data);
    if (outcome?.kind === 'refusal') {
      dispatchers.fail?.(clientId, outcome.code, outcome.message, outcome.extra);
    }
  }

  /**
   * Runs the `OnConnect` (`'connect'`) or `OnDisconnect` (`'disconnect'`) handlers of every
   * controller, one after another in registration order. A failing handler is logged and
   * the others still run. Never rejects.
   */
  async dispatchSpecialEvent(clientId: string, eventType: SpecialEvent): Promise<void> {
    return this.#ready().ws.dispatchSpecialEvent(clientId, eventType);
  }

  /**
   * Answers one HTTP request: 404 when no route has the path, 405 with `Allow` when the path
   * exists under other methods (a plain OPTIONS request gets 204 with `Allow`), else the
   * middleware chain, the rate limit and the handler. A HEAD request without a HEAD route is
   * answered by the GET route. A handler's error rejects the promise (`HttpHandler` turns it
   * into the 500 answer).
   */
  async dispatchHttp(request: Request): Promise<Response> {
    return this.#ready().http.dispatch(request);
  }

  #ready(): RouterDispatchers {
    if (!this.#dispatchers) {
      throw createCoreError(
        Error,
        'PKG_ERR_CORE_NO_SERVER',
        'The router has no server: call router.setServer(dependencies) first (Server does this itself).',
      );
    }
    return this.#dispatchers;
  }
}
