import type { Request, Response } from '@pkg/http';
import { decError } from './errors';
import { openMethodRecord } from './store';
import type { HttpInput, HttpMethod, HttpMiddleware, HttpRouteOptions, HttpSchemas } from './types';
import {
  HTTP_SCHEMA_KEYS,
  httpRouteKey,
  httpSchemasOf,
  normalizeHttpMethod,
  quoteMethod,
  validatePath,
  validateRouteOptions,
} from './validate';

/**
 * What an `HttpRoute` method may return (or resolve to): a `Response`, a WHATWG `Response`
 * (the global one of Node and browsers), a plain object or array (sent as 200 JSON), or
 * nothing (204 No Content).
 */
export type HttpHandlerResult = Response | object | undefined | void;

/** The shape of an `HttpRoute` method: `(request, input?)`, returning an {@link HttpHandlerResult}. */
type HttpRouteMethod<This, I, R> = (this: This, request: Request, input: I) => R;

/**
 * The return type of a route method, inferred as a type parameter so that a method
 * returning a string or a number fails to compile (a bare `void` return type would accept them).
 */
type HttpRouteReturn = HttpHandlerResult | Promise<HttpHandlerResult>;

/**
 * `unknown` when the handler's `input` parameter accepts the validated input the schemas
 * produce; otherwise an object type naming both, so that a mismatch fails to compile.
 */
type CheckHttpInput<S extends HttpSchemas, I> = [HttpInput<S>] extends [I]
  ? unknown
  : {
      'HttpRoute: the input parameter does not accept the output of the schemas': {
        schemaOutput: HttpInput<S>;
        parameter: I;
      };
    };

/** A promise is an object too: `unknown` unless the method resolves to a string, number, etc. */
type CheckHttpReturn<R> = [Awaited<R>] extends [HttpHandlerResult]
  ? unknown
  : {
      'HttpRoute: a route resolves to a Response, a plain object or array, or nothing': Awaited<R>;
    };

/** The decorator `HttpRoute(...)` returns; `S` holds the types of the schema options. */
type HttpRouteDecorator<S extends HttpSchemas> = <
  This,
  R extends HttpRouteReturn,
  I = HttpInput<S>,
>(
  target: HttpRouteMethod<This, I, R>,
  context: ClassMethodDecoratorContext<This, HttpRouteMethod<This, I, R>> &
    CheckHttpInput<S, I> &
    CheckHttpReturn<R>,
) => void;

/**
 * Declares an HTTP route handled by the method: `method` is one of GET, POST, PUT, PATCH,
 * DELETE, HEAD, OPTIONS (any case); `path` starts with `/` and may contain `{name}`
 * segments, read in the handler with `request.getParam('name')`. The method receives the
 * `Request` and returns a `Response`, a WHATWG `Response`, a plain object or array (200
 * JSON) or nothing (204), or a promise of one. Route middleware runs after the global
 * stack, in the listed order; `excludeGlobalMiddlewares` skips global ones.
 *
 * `body`, `query`, `params` and `headers` take Standard Schemas (zod, valibot, arktype...):
 * those parts of the request are validated after the middleware and the rate limit, a
 * failure is answered with 400 `validation_failed`, and the handler receives the schemas'
 * outputs as its second argument `{ body, query, params, headers }`, typed from them.
 *
 * @example
 * class UserController extends SocketController {
 *   @HttpRoute('GET', '/users/{id}', { middlewares: [AuthMiddleware] })
 *   show(request: Request): Response {
 *     return Response.json({ id: request.getParam('id') });
 *   }
 * }
 */
export function HttpRoute<S extends HttpSchemas = Record<never, never>>(
  method: HttpMethod | Lowercase<HttpMethod>,
  path: string,
  options?: HttpRouteOptions<S>,
): HttpRouteDecorator<S> {
  return (target: unknown, context: unknown): void => {
    const { classRecord, method: record, site } = openMethodRecord('HttpRoute', target, context);
    const verb = normalizeHttpMethod(method, site);
    const routePath = validatePath(path, site);
    const { middlewares, excludeGlobalMiddlewares, schemas } = validateRouteOptions<HttpMiddleware>(
      options,
      site,
      HTTP_SCHEMA_KEYS,
    );
    const routeSchemas = httpSchemasOf(schemas);
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
      ...(routeSchemas !== undefined ? { schemas: routeSchemas } : {}),
    });
  };
}
