import { RateLimiter, Response, type Request } from '@pkg/http';
import type { LoggerInterface } from '@pkg/logger';
import {
  handlerOf,
  type ControllerRegistry,
  type RegisteredHttpRoute,
} from './controller-registry';
import { httpTarget } from './http-result';
import type { CompiledHttpChain, Middleware } from './middleware';
import { NO_PARAMS } from './route-table';

/** What HTTP dispatch needs, handed over once. */
export interface HttpDispatchOptions {
  readonly middleware: Middleware;
  readonly rateLimiter: RateLimiter;
  readonly logger: LoggerInterface;
  /** Prefix length by which IPv6 clients share a route's rate limit (`ipv6_subnet`). */
  readonly ipv6Subnet?: number;
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

/** `Allow` header value: methods in a fixed order, HEAD wherever GET is, OPTIONS always. */
export function allowHeader(methods: Iterable<string>): string {
  const set = new Set(methods);
  if (set.has('GET')) set.add('HEAD');
  set.add('OPTIONS');
  return [...set].sort((a, b) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b)).join(', ');
}

/**
 * HTTP dispatch: matches method + path, answers 404 / 405 (`Allow`) / a plain OPTIONS (204),
 * and runs the route's compiled chain (global middleware minus exclusions, route middleware,
 * rate limit, handler), built once at registration and again when a global middleware is
 * added. A synchronous chain gives the `Response` itself, without a promise.
 *
 * It does not catch: a handler that throws or rejects reaches the caller, and
 * `HttpHandler` (@pkg/http) answers 500 and logs it, the one place that does so for HTTP.
 */
export class HttpDispatcher {
  readonly #registry: ControllerRegistry;
  readonly #options: HttpDispatchOptions;
  readonly #compiled = new Map<RegisteredHttpRoute, CompiledHttpChain>();

  constructor(registry: ControllerRegistry, options: HttpDispatchOptions) {
    this.#registry = registry;
    this.#options = options;
    for (const route of registry.httpRoutes) this.#compile(route);
    registry.onRoutesAdded((added) => added.http.forEach((route) => this.#compile(route)));
    options.middleware.onChange(() => {
      for (const route of [...this.#compiled.keys()]) this.#compile(route);
    });
  }

  /** Answers one request; see the class. Usable directly as HttpHandler's `dispatch`. */
  readonly dispatch = (request: Request): Response | Promise<Response> => {
    // The method is upper case already (Request.getMethod).
    const method = request.getMethod();
    const path = request.getPath();
    const match = this.#registry.matchHttpRoute(method, path);
    if (match === null) return this.#noRoute(method, path);
    if (match.params !== NO_PARAMS) request.setParams(match.params);
    return this.#compiled.get(match.route)!(request);
  };

  #noRoute(method: string, path: string): Response {
    const logger = this.#options.logger;
    const allowed = this.#registry.getAllowedMethods(path);
    if (allowed.length === 0) {
      logger.debug('No HTTP route for the path', {
        code: 'PKG_ERR_CORE_ROUTE_NOT_FOUND',
        method,
        path,
      });
      return Response.error(404);
    }
    const allow = allowHeader(allowed);
    if (method === 'OPTIONS') return new Response('', 204, { Allow: allow });
    logger.debug('HTTP method not allowed for the path', {
      code: 'PKG_ERR_CORE_METHOD_NOT_ALLOWED',
      method,
      path,
      allow,
    });
    return Response.error(405, { code: 'PKG_ERR_CORE_METHOD_NOT_ALLOWED' }, { Allow: allow });
  }

  #compile(route: RegisteredHttpRoute): void {
    const fn = handlerOf(route);
    const controller = route.controller;
    const rule = route.rateLimit;
    const call = httpTarget(
      route.schemas,
      (request, input) => fn.call(controller, request, input),
      (request, issues) =>
        this.#options.logger.debug('HTTP request failed its route schemas', {
          code: 'PKG_ERR_CORE_VALIDATION_FAILED',
          route: `${route.method} ${route.path}`,
          issues: issues.length,
          ip: request.getIpAddress(),
        }),
    );
    let target: (request: Request) => unknown = call;
    if (rule !== undefined) {
      const limiter = this.#options.rateLimiter;
      const logger = this.#options.logger;
      const name = `${route.method} ${route.path}`;
      target = (request) =>
        limiter
          .check(RateLimiter.keyFor(`http ${name}`, request, this.#options.ipv6Subnet), rule)
          .then(async (result) => {
            if (!result.allowed) {
              logger.debug('HTTP route over its rate limit', {
                code: 'PKG_ERR_CORE_RATE_LIMITED',
                route: name,
                ip: request.getIpAddress(),
              });
              return RateLimiter.tooManyRequests(result);
            }
            // Every answer of a limited route carries the limit headers: set here on the
            // handler's response, and through the request's response hook on whatever
            // HttpHandler answers instead (a 500 when the handler throws).
            request.onResponse((response) => RateLimiter.applyHeaders(response, result));
            return RateLimiter.applyHeaders(await call(request), result);
          });
    }
    this.#compiled.set(route, this.#options.middleware.compileHttpChain(route, target));
  }
}
