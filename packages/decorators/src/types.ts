import type { RateLimitRule, Request, Response } from '@pkg/http';
import type { StandardSchemaV1 } from '@standard-schema/spec';

/** The `data` member of a WebSocket envelope: an object or an array (the same type as `EventData` of @pkg/ws-protocol). */
export type EventData = Record<string, unknown> | unknown[];

/**
 * What a WebSocket middleware and a `SocketOn` handler see of the current message. The
 * server (`@pkg/core`) creates one per inbound message; attributes set by a middleware are
 * read by the handler.
 */
export interface WsContext {
  readonly clientId: string;
  readonly event: string;
  readonly data: EventData;
  getAttribute<T = unknown>(name: string): T | undefined;
  setAttribute(name: string, value: unknown): void;
}

/** Calls the rest of the HTTP chain (later middleware, then the handler). */
export type HttpNext = () => Promise<Response>;
/** An HTTP middleware function: return `next()` to continue, or a `Response` to answer early. */
export type HttpMiddlewareFn = (request: Request, next: HttpNext) => Response | Promise<Response>;
/** Calls the rest of the WebSocket chain (later middleware, then the handler). */
export type WsNext = () => Promise<void>;
/** A WebSocket middleware function: call `next()` to continue; not calling it stops the message. */
export type WsMiddlewareFn = (context: WsContext, next: WsNext) => void | Promise<void>;
/** A middleware written as a class: the server creates it with `new` and calls `handle`. */
export type MiddlewareClass<F> = new () => { handle: F };
/** An HTTP middleware, named by reference: a function or a class with a `handle` method. */
export type HttpMiddleware = HttpMiddlewareFn | MiddlewareClass<HttpMiddlewareFn>;
/** A WebSocket middleware, named by reference: a function or a class with a `handle` method. */
export type WsMiddleware = WsMiddlewareFn | MiddlewareClass<WsMiddlewareFn>;

/** The options of `SocketOn` and `HttpRoute`. */
export interface RouteOptions<M> {
  /** Middleware run for this route only, after the global stack, in the listed order. */
  middlewares?: readonly M[];
  /** Global middleware (added with `addHttpMiddleware` / `addWebSocketMiddleware`) skipped for this route. */
  excludeGlobalMiddlewares?: readonly M[];
}

/** Any Standard Schema (zod, valibot, arktype...): something with a `~standard.validate` function. */
export type AnySchema = StandardSchemaV1;

/** The schemas of `HttpRoute`: one per part of the request, each optional. */
export interface HttpSchemas {
  /** The parsed body (`request.getBody()`). */
  body?: AnySchema;
  /** The query parameters (`request.getQuery()`). */
  query?: AnySchema;
  /** The path parameters (`request.getParams()`). */
  params?: AnySchema;
  /** The headers, names in lower case (`request.getHeaders()`). */
  headers?: AnySchema;
}

/** The options of `SocketOn`. */
export interface SocketOnOptions<
  S extends AnySchema | undefined = AnySchema | undefined,
> extends RouteOptions<WsMiddleware> {
  /** Checks the envelope's `data` before the handler runs; the handler receives the schema's output. */
  schema?: S;
}

/** The options of `HttpRoute`: route middleware plus a schema per part of the request. */
export type HttpRouteOptions<S extends HttpSchemas = HttpSchemas> = RouteOptions<HttpMiddleware> &
  S;

/** The output type of a schema, `Fallback` when there is none. */
export type SchemaOutput<S, Fallback = unknown> = S extends StandardSchemaV1
  ? StandardSchemaV1.InferOutput<S>
  : Fallback;

/**
 * The second argument of an `HttpRoute` handler: the validated (and transformed) parts of
 * the request. A part without a schema is the request's own value.
 */
export interface HttpInput<S extends HttpSchemas = HttpSchemas> {
  body: SchemaOutput<S['body']>;
  query: SchemaOutput<S['query'], Record<string, unknown>>;
  params: SchemaOutput<S['params'], Record<string, string>>;
  headers: SchemaOutput<S['headers'], Record<string, string | string[]>>;
}

/** The HTTP methods a route can be declared for. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';

/** A WebSocket event handler declared with `SocketOn`. */
export interface SocketRouteMetadata {
  /** The inbound event name. */
  event: string;
  /** The name of the controller method to call. */
  handler: string | symbol;
  middlewares: WsMiddleware[];
  excludeGlobalMiddlewares: WsMiddleware[];
  /** From `RateLimit` on the same method: at most `maxCount` messages per client per `timeWindow` seconds. */
  rateLimit?: RateLimitRule;
  /** From the `schema` option: checks `data` before the handler runs. */
  schema?: AnySchema;
}

/** An HTTP route declared with `HttpRoute`. */
export interface HttpRouteMetadata {
  /** Upper case. */
  method: HttpMethod;
  /** As declared, for example `/users/{id}`. */
  path: string;
  /** The name of the controller method to call. */
  handler: string | symbol;
  middlewares: HttpMiddleware[];
  excludeGlobalMiddlewares: HttpMiddleware[];
  /** From `RateLimit` on the same method: at most `maxCount` requests per `timeWindow` seconds. */
  rateLimit?: RateLimitRule;
  /** From the `body`, `query`, `params` and `headers` options; absent when none was given. */
  schemas?: HttpSchemas;
}

/** Everything a controller class declares, its base classes included. */
export interface ControllerMetadata {
  socketRoutes: SocketRouteMetadata[];
  httpRoutes: HttpRouteMetadata[];
  /** Names of the methods marked `OnConnect`. */
  connectHandlers: (string | symbol)[];
  /** Names of the methods marked `OnDisconnect`. */
  disconnectHandlers: (string | symbol)[];
}
