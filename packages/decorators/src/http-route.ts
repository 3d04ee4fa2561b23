import type { Request, Response } from '@pkg/http';
import { decError } from './errors';
import { openMethodRecord } from './store';
import type { HttpMethod, HttpMiddleware, RouteOptions } from './types';
import {
  httpRouteKey,
  normalizeHttpMethod,
  quoteMethod,
  validatePath,
  validateRouteOptions,
} from './validate';

/** The shape of an `HttpRoute` method: takes the `Request`, returns a `Response` or a promise of one. */
type HttpRouteMethod<This> = (this: This, request: Request) => Response | Promise<Response>;

/** The decorator `HttpRoute(...)` returns. */
type HttpRouteDecorator = <This>(
  target: HttpRouteMethod<This>,
  context: ClassMethodDecoratorContext<This, HttpRouteMethod<This>>,
) => void;

/**
 * Declares an HTTP route handled by the method: `method` is one of GET, POST, PUT, PATCH,
 * DELETE, HEAD, OPTIONS (any case); `path` starts with `/` and may contain `{name}`
 * segments, read in the handler with `request.getParam('name')`. The method receives the
 * `Request` and returns a `Response` (or a promise of one). Route middleware runs after the
 * global stack, in the listed order; `excludeGlobalMiddlewares` skips global ones.
 *
 * @example
 * class UserController extends SocketController {
 *   @HttpRoute('GET', '/users/{id}', { middlewares: [AuthMiddleware] })
 *   show(request: Request): Response {
 *     return Response.json({ id: request.getParam('id') });
 *   }
 * }
 */
export function HttpRoute(
  method: HttpMethod | Lowercase<HttpMethod>,
  path: string,
  options?: RouteOptions<HttpMiddleware>,
): HttpRouteDecorator {
  return (target: unknown, context: unknown): void => {
    const { classRecord, method: record, site } = openMethodRecord('HttpRoute', target, context);
    const verb = normalizeHttpMethod(method, site);
    const routePath = validatePath(path, site);
    const { middlewares, excludeGlobalMiddlewares } = validateRouteOptions<HttpMiddleware>(
      options,
      site,
    );
    const key = httpRouteKey(verb, routePath);
    for (const other of classRecord.methods.values()) {
      const clash = other.httpRoutes.find(
        (route) => httpRouteKey(route.method, route.path) === key,
      );
      if (clash !== undefined) {
        const shown = `${verb} ${routePath}`;
        const same = clash.path === routePath ? '' : ` (as ${clash.method} ${clash.path})`;
        throw decError(
          'PKG_ERR_DEC_DUPLICATE_ROUTE',
          other === record
            ? `${site}: the route ${shown} is declared twice on this method${same}. Remove one of the decorators.`
            : `${site}: the route ${shown} is already declared${same} on method ${quoteMethod(other.name)} in this class. ` +
                'A method and path pattern have one handler per controller: change one of the paths.',
        );
      }
    }
    // Decorators of one method run bottom-up; unshift keeps the routes in source order.
    record.httpRoutes.unshift({
      method: verb,
      path: routePath,
      middlewares,
      excludeGlobalMiddlewares,
    });
  };
}
