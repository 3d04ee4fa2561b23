import {
  HttpRoute,
  OnConnect,
  OnDisconnect,
  RateLimit,
  SocketOn,
  type AnySchema,
  type EventData,
  type HttpHandlerResult,
  type HttpInput,
  type HttpMethod,
  type HttpRouteOptions,
  type HttpSchemas,
  type SchemaOutput,
  type SocketOnOptions,
  type WsContext,
} from '@pkg/decorators';
import type { RateLimitRule, Request } from '@pkg/http';
import { createCoreError } from '../errors';
import { SocketController } from './socket-controller';

// Handlers without decorators (plain JavaScript, or Node without a decorator compiler):
// each call builds a one-method controller class and applies the SAME decorators to it
// through the standard decorator protocol, so the routes carry the same metadata, pass the
// same checks and end up in the same registry as decorated ones. One router, not two.

/** The extra option of the programmatic form: the `RateLimit` of the route. */
export interface RateLimitOption {
  /** At most `maxCount` calls per `timeWindow` seconds, as `@RateLimit(maxCount, timeWindow)`. */
  rateLimit?: RateLimitRule;
}

/** Options of `server.on(event, handler, options)`: those of `SocketOn`, plus `rateLimit`. */
export type OnOptions<S extends AnySchema | undefined = AnySchema | undefined> =
  SocketOnOptions<S> & RateLimitOption;

/** Options of `server.route(method, path, handler, options)`: those of `HttpRoute`, plus `rateLimit`. */
export type RouteHandlerOptions<S extends HttpSchemas = HttpSchemas> = HttpRouteOptions<S> &
  RateLimitOption;

/** A handler given to `server.on`: `this` is the controller built for it (`this.emit`, `this.broadcast`...). */
export type EventHandler<T = EventData> = (
  this: SocketController,
  clientId: string,
  data: T,
  context: WsContext,
) => unknown;

/** A handler given to `server.route`; returns what an `HttpRoute` method may return. */
export type HttpRouteHandler<I = HttpInput> = (
  this: SocketController,
  request: Request,
  input: I,
) => HttpHandlerResult | Promise<HttpHandlerResult>;

/** A handler given to `server.onConnect` / `server.onDisconnect`. */
export type LifecycleHandler = (this: SocketController, clientId: string) => unknown;

type AnyDecorator = (target: unknown, context: unknown) => void;

function checkHandler(
  handler: unknown,
  where: string,
): asserts handler is (...args: never[]) => unknown {
  if (typeof handler !== 'function') {
    throw createCoreError(
      TypeError,
      'PKG_ERR_CORE_INVALID_ARGUMENT',
      `${where}: the handler must be a function, got ${handler === null ? 'null' : typeof handler}.`,
    );
  }
}

function splitRateLimit<O extends RateLimitOption>(
  options: O | undefined,
): [rest: Omit<O, 'rateLimit'> | undefined, rule: RateLimitRule | undefined] {
  if (options === undefined || options === null || typeof options !== 'object') {
    return [options as Omit<O, 'rateLimit'> | undefined, undefined];
  }
  const { rateLimit, ...rest } = options;
  return [rest, rateLimit];
}

/**
 * A controller instance whose method `name` is `handler`, declared by `decorators` (applied
 * in order, as if written top to bottom above the method). `label` names the class in
 * messages and logs, for example `on(chat.message)`.
 */
export function inlineController(
  label: string,
  name: string,
  handler: (...args: never[]) => unknown,
  decorators: readonly AnyDecorator[],
): SocketController {
  const metadata: Record<PropertyKey, unknown> = Object.create(null) as Record<
    PropertyKey,
    unknown
  >;
  const context = {
    kind: 'method',
    name,
    static: false,
    private: false,
    metadata,
    addInitializer: () => undefined,
    access: { has: () => true, get: () => handler },
  };
  // Decorators written above a method run bottom-up.
  for (const decorator of [...decorators].reverse()) decorator(handler, context);
  const Inline = class extends SocketController {};
  Object.defineProperty(Inline, 'name', { value: label });
  Object.defineProperty(Inline, Symbol.metadata, { value: metadata });
  Object.defineProperty(Inline.prototype, name, {
    value: handler,
    writable: true,
    configurable: true,
  });
  return new Inline();
}

/** The controller of `server.on(event, handler, options)`. */
export function eventController(
  event: string,
  handler: unknown,
  options?: OnOptions,
): SocketController {
  checkHandler(handler, `on(${JSON.stringify(event)})`);
  const [rest, rule] = splitRateLimit(options);
  const decorators: AnyDecorator[] = [
    SocketOn(event, rest as SocketOnOptions) as unknown as AnyDecorator,
  ];
  if (rule !== undefined) decorators.unshift(RateLimit(rule) as unknown as AnyDecorator);
  return inlineController(`on(${event})`, event, handler, decorators);
}

/** The controller of `server.route(method, path, handler, options)`. */
export function routeController(
  method: HttpMethod | Lowercase<HttpMethod>,
  path: string,
  handler: unknown,
  options?: RouteHandlerOptions,
): SocketController {
  const label = `route(${String(method).toUpperCase()} ${path})`;
  checkHandler(handler, label);
  const [rest, rule] = splitRateLimit(options);
  const decorators: AnyDecorator[] = [
    HttpRoute(method, path, rest as HttpRouteOptions) as unknown as AnyDecorator,
  ];
  if (rule !== undefined) decorators.unshift(RateLimit(rule) as unknown as AnyDecorator);
  return inlineController(label, `${String(method).toUpperCase()} ${path}`, handler, decorators);
}

/** The controller of `server.onConnect(handler)` / `server.onDisconnect(handler)`. */
export function lifecycleController(
  kind: 'connect' | 'disconnect',
  handler: unknown,
): SocketController {
  const label = kind === 'connect' ? 'onConnect' : 'onDisconnect';
  checkHandler(handler, label);
  const decorator = (kind === 'connect' ? OnConnect() : OnDisconnect()) as unknown as AnyDecorator;
  return inlineController(label, label, handler, [decorator]);
}

/** The `data` type a `server.on` handler receives: the schema's output, or the envelope's data. */
export type EventDataOf<S> = [S] extends [AnySchema] ? SchemaOutput<S> : EventData;
