import type { RateLimitRule } from '@pkg/http';
import { decError } from './errors';
import type { AnySchema, HttpMethod, HttpSchemas, RouteOptions } from './types';

// Checks of decorator arguments. Each function takes `site`, a phrase naming the decorator
// and the method (for example `@SocketOn() on method "onChat"`), so that every message says
// where the problem is, what was wrong and how to fix it.

const EVENT_NAME = /^[A-Za-z0-9._-]+$/;
const PARAM_SEGMENT = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;
const HTTP_METHODS: readonly HttpMethod[] = [
  'GET',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'HEAD',
  'OPTIONS',
];
const ROUTE_OPTION_KEYS = ['middlewares', 'excludeGlobalMiddlewares'];
/** The schema options of `HttpRoute`, one per part of the request. */
export const HTTP_SCHEMA_KEYS = ['body', 'query', 'params', 'headers'] as const;
const RATE_LIMIT_KEYS = ['maxCount', 'timeWindow'];

/** A value as it should appear in a message: strings quoted, everything else by type. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return `function ${value.name || '(anonymous)'}`;
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

/** A method name as written in code: `onChat`, or `[Symbol(name)]` for a symbol-named method. */
export function methodName(name: string | symbol): string {
  return typeof name === 'symbol' ? `[${name.toString()}]` : name;
}

/** A method name quoted for a message: `"onChat"`, or `"[Symbol(name)]"`. */
export function quoteMethod(name: string | symbol): string {
  return describeValue(methodName(name));
}

/** `SocketOn` event names: non-empty, letters, digits, `.`, `_`, `-`. */
export function validateEvent(event: unknown, site: string): string {
  if (typeof event !== 'string' || !EVENT_NAME.test(event)) {
    const what =
      typeof event !== 'string'
        ? `the event name must be a string, got ${describeValue(event)}`
        : event === ''
          ? 'the event name is empty'
          : `the event name ${describeValue(event)} contains characters outside A-Z a-z 0-9 . _ -`;
    throw decError(
      'PKG_ERR_DEC_INVALID_EVENT',
      `${site}: ${what}. Use a name such as "chat.message" (dot notation for hierarchy).`,
    );
  }
  return event;
}

/** HTTP methods, accepted in any case and returned in upper case. */
export function normalizeHttpMethod(method: unknown, site: string): HttpMethod {
  const upper = typeof method === 'string' ? method.toUpperCase() : undefined;
  const found = HTTP_METHODS.find((m) => m === upper);
  if (found === undefined) {
    throw decError(
      'PKG_ERR_DEC_INVALID_METHOD',
      `${site}: ${describeValue(method)} is not a supported HTTP method. Use one of ${HTTP_METHODS.join(', ')} (any case).`,
    );
  }
  return found;
}

/**
 * Route paths: start with `/`; no query string, fragment, whitespace or control characters;
 * parameters are whole segments `{name}` (name: a letter or `_`, then letters, digits, `_`),
 * each name used once.
 */
export function validatePath(path: unknown, site: string): string {
  const invalid = (what: string, fix: string) =>
    decError('PKG_ERR_DEC_INVALID_PATH', `${site}: ${what}. ${fix}`);
  if (typeof path !== 'string') {
    throw invalid(
      `the path must be a string, got ${describeValue(path)}`,
      'Write it like "/users/{id}".',
    );
  }
  if (!path.startsWith('/')) {
    throw invalid(
      `the path ${describeValue(path)} does not start with "/"`,
      `Write it as "/${path}".`,
    );
  }
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f?#]/.test(path)) {
    throw invalid(
      `the path ${describeValue(path)} contains a query string, fragment, whitespace or control character`,
      'Declare only the path; read query parameters with request.getQuery().',
    );
  }
  const express = path.split('/').filter((segment) => /^:[A-Za-z_][A-Za-z0-9_]*$/.test(segment));
  if (express.length > 0) {
    const fixed = path
      .split('/')
      .map((segment) => (express.includes(segment) ? `{${segment.slice(1)}}` : segment))
      .join('/');
    throw invalid(
      `the path ${describeValue(path)} uses the Express-style parameter ${describeValue(express[0])}, which would only match that literal text`,
      `Write parameters in braces: ${describeValue(fixed)}.`,
    );
  }
  const seen = new Set<string>();
  for (const segment of path.split('/')) {
    if (!segment.includes('{') && !segment.includes('}')) continue;
    const name = PARAM_SEGMENT.exec(segment)?.[1];
    if (name === undefined) {
      const opening = segment.split('{').length - 1;
      const closing = segment.split('}').length - 1;
      const what =
        segment === '{}'
          ? `the path ${describeValue(path)} has an empty parameter "{}"`
          : opening !== closing
            ? `the path ${describeValue(path)} has an unbalanced brace in segment ${describeValue(segment)}`
            : `the path ${describeValue(path)} has a malformed parameter segment ${describeValue(segment)}`;
      throw invalid(
        what,
        'A parameter is a whole segment "{name}", the name made of letters, digits and "_" (not starting with a digit).',
      );
    }
    if (seen.has(name)) {
      throw invalid(
        `the path ${describeValue(path)} uses the parameter name "${name}" twice`,
        'Give each parameter its own name.',
      );
    }
    seen.add(name);
  }
  return path;
}

/**
 * The key two HTTP routes clash on: `GET /users/{id}` and `GET /users/{name}` match the same
 * requests, so parameter names are left out.
 */
export function httpRouteKey(method: HttpMethod, path: string): string {
  return `${method} ${path.replace(/\{[^/]*\}/g, '{}')}`;
}

/**
 * A middleware entry: a function, or a class whose prototype has a `handle` method. A value
 * written with `class` syntax but without a `handle` method is refused (calling it as a
 * function would throw).
 */
export function isMiddleware(value: unknown): boolean {
  if (typeof value !== 'function') return false;
  const isClass = Function.prototype.toString.call(value).startsWith('class');
  if (!isClass) return true;
  const proto: unknown = value.prototype;
  return (
    typeof proto === 'object' &&
    proto !== null &&
    typeof (proto as { handle?: unknown }).handle === 'function'
  );
}

function validateMiddlewareList<M>(list: unknown, key: string, site: string): M[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) {
    throw decError(
      'PKG_ERR_DEC_INVALID_MIDDLEWARE',
      `${site}: "${key}" must be an array of middleware, got ${describeValue(list)}.`,
    );
  }
  list.forEach((entry: unknown, index) => {
    if (!isMiddleware(entry)) {
      throw decError(
        'PKG_ERR_DEC_INVALID_MIDDLEWARE',
        `${site}: ${key}[${index}] is ${describeValue(entry)}, which is neither a function nor a class with a handle method. ` +
          'Pass the middleware function itself, or the class (not an instance) with handle() declared as a method.',
      );
    }
  });
  return [...(list as M[])];
}

/**
 * `{ middlewares?, excludeGlobalMiddlewares?, ...schemaKeys }`, copied so later changes to
 * the caller's arrays do not leak in. `schemaKeys` are the extra keys whose values must be
 * Standard Schemas (`schema` for SocketOn; `body`, `query`, `params`, `headers` for HttpRoute).
 */
export function validateRouteOptions<M>(
  options: unknown,
  site: string,
  schemaKeys: readonly string[] = [],
): { middlewares: M[]; excludeGlobalMiddlewares: M[]; schemas: Record<string, AnySchema> } {
  if (options === undefined) return { middlewares: [], excludeGlobalMiddlewares: [], schemas: {} };
  const known = [...ROUTE_OPTION_KEYS, ...schemaKeys];
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw decError(
      'PKG_ERR_DEC_INVALID_OPTIONS',
      `${site}: the options must be an object { ${known.join('?, ')}? }, got ${describeValue(options)}.`,
    );
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw decError(
        'PKG_ERR_DEC_INVALID_OPTIONS',
        `${site}: unknown option "${key}". The options are ${known.join(', ')}.`,
      );
    }
  }
  const { middlewares, excludeGlobalMiddlewares } = options as RouteOptions<M>;
  const schemas: Record<string, AnySchema> = {};
  for (const key of schemaKeys) {
    const value: unknown = (options as Record<string, unknown>)[key];
    if (value !== undefined) schemas[key] = validateSchema(value, key, site);
  }
  return {
    middlewares: validateMiddlewareList<M>(middlewares, 'middlewares', site),
    excludeGlobalMiddlewares: validateMiddlewareList<M>(
      excludeGlobalMiddlewares,
      'excludeGlobalMiddlewares',
      site,
    ),
    schemas,
  };
}

/** A Standard Schema (version 1): an object or function with `~standard.validate`. */
export function validateSchema(value: unknown, key: string, site: string): AnySchema {
  const standard: unknown =
    (typeof value === 'object' && value !== null) || typeof value === 'function'
      ? (value as Record<string, unknown>)['~standard']
      : undefined;
  if (
    typeof standard !== 'object' ||
    standard === null ||
    (standard as { version?: unknown }).version !== 1 ||
    typeof (standard as { validate?: unknown }).validate !== 'function'
  ) {
    throw decError(
      'PKG_ERR_DEC_INVALID_SCHEMA',
      `${site}: "${key}" must be a Standard Schema (version 1), such as a zod, valibot or arktype schema, got ${describeValue(value)}. ` +
        'Pass the schema object itself, for example z.object({ text: z.string() }).',
    );
  }
  return value as AnySchema;
}

/** The `HttpRoute` schemas of validated options, or undefined when none was given. */
export function httpSchemasOf(schemas: Record<string, AnySchema>): HttpSchemas | undefined {
  const out: HttpSchemas = {};
  for (const key of HTTP_SCHEMA_KEYS) {
    const schema = schemas[key];
    if (schema !== undefined) out[key] = schema;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** `RateLimit(maxCount, timeWindow)` or `RateLimit({ maxCount, timeWindow })`: positive safe integers. */
export function validateRateLimit(
  first: unknown,
  second: unknown,
  argCount: number,
  site: string,
): RateLimitRule {
  let maxCount: unknown = first;
  let timeWindow: unknown = second;
  if (typeof first === 'object' && first !== null && argCount === 1) {
    for (const key of Object.keys(first)) {
      if (!RATE_LIMIT_KEYS.includes(key)) {
        throw decError(
          'PKG_ERR_DEC_INVALID_RATE_LIMIT',
          `${site}: unknown option "${key}". Use RateLimit({ maxCount, timeWindow }) or RateLimit(maxCount, timeWindow).`,
        );
      }
    }
    ({ maxCount, timeWindow } = first as Partial<RateLimitRule>);
  }
  for (const [name, value] of [
    ['maxCount', maxCount],
    ['timeWindow', timeWindow],
  ] as const) {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      const unit = name === 'timeWindow' ? ' (seconds)' : '';
      throw decError(
        'PKG_ERR_DEC_INVALID_RATE_LIMIT',
        `${site}: ${name}${unit} must be a positive integer, got ${describeValue(value)}. ` +
          'For example RateLimit(10, 60) allows 10 calls per 60 seconds.',
      );
    }
  }
  return { maxCount: maxCount as number, timeWindow: timeWindow as number };
}
