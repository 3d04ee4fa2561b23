import { decError } from './errors';
import type { EventAnswer, EventPayload } from './event-map';
import { openMethodRecord } from './store';
import type { AnySchema, SchemaOutput, SocketOnOptions, WsContext, WsMiddleware } from './types';
import { quoteMethod, validateEvent, validateRouteOptions } from './validate';

type Primitive = string | number | boolean | bigint | symbol | null | undefined;

/** The shape of a `SocketOn` method: `(clientId, data, context?)`; fewer parameters are fine. */
type SocketOnMethod<This, T, R = unknown> = (
  this: This,
  clientId: string,
  data: T,
  context: WsContext,
) => R;

/**
 * `unknown` (no constraint) when `T` is a usable type for `data`; otherwise an object type
 * the compiler's decorator context lacks, so the decorator fails to compile with this key
 * in the message. `data` is always an object or an array (the envelope's `data`), so a
 * primitive parameter type is a mistake; `unknown`, `any` and optional parameters are fine.
 */
type CheckSocketData<T> = 0 extends 1 & T // true only for `any`, which is accepted
  ? unknown
  : [T] extends [Primitive]
    ? { 'SocketOn: the data parameter must be typed as an object, an array or unknown': T }
    : unknown;

/** An answer type of `void` (or `unknown`) asks nothing of the handler's return value. */
type CheckAnswer<A, R> = [A] extends [void]
  ? unknown
  : unknown extends A
    ? unknown
    : [Awaited<R>] extends [A]
      ? unknown
      : { 'SocketOn: the handler must return the answer type of its event': A };

/**
 * `unknown` unless the decorated class declares its inbound events (a
 * `SocketController<Host, Emit, Listen>` with a typed `Listen` map): then the event must be
 * in the map, the data parameter must accept the event's payload, and the return value must
 * be the event's answer.
 */
type CheckEventMap<This, E extends string, T, R> = This extends { readonly '~listen'?: infer L }
  ? unknown extends L
    ? unknown
    : E extends keyof L
      ? [EventPayload<L, E>] extends [T]
        ? CheckAnswer<EventAnswer<L, E>, R>
        : {
            'SocketOn: the data parameter must accept the payload of its event': EventPayload<L, E>;
          }
      : { "SocketOn: the event is not in the controller's event map": keyof L }
  : unknown;

/**
 * `unknown` when the handler's `data` parameter accepts what the schema outputs (or when
 * there is no schema); otherwise an object type naming both types, so that a handler whose
 * parameter disagrees with its schema fails to compile.
 */
type CheckSchemaData<S, T> = [S] extends [AnySchema]
  ? [SchemaOutput<S>] extends [T]
    ? unknown
    : {
        'SocketOn: the data parameter does not accept the output of the schema': {
          schemaOutput: SchemaOutput<S>;
          parameter: T;
        };
      }
  : unknown;

/**
 * The decorator `SocketOn(...)` returns; `E` is the event name, `S` the type of the `schema`
 * option. Without a data parameter, `data` is the schema's output (or `unknown`).
 */
type SocketOnDecorator<E extends string, S> = <
  This,
  T = [S] extends [AnySchema] ? SchemaOutput<S> : unknown,
  R = unknown,
>(
  target: SocketOnMethod<This, T, R>,
  context: ClassMethodDecoratorContext<This, SocketOnMethod<This, T, R>> &
    CheckSocketData<T> &
    CheckSchemaData<S, T> &
    CheckEventMap<This, E, T, R>,
) => void;

/** The shape of an `OnConnect` / `OnDisconnect` method: `(clientId)`. */
type LifecycleMethod<This> = (this: This, clientId: string) => unknown;

/** The decorator `OnConnect()` and `OnDisconnect()` return. */
type LifecycleDecorator = <This>(
  target: LifecycleMethod<This>,
  context: ClassMethodDecoratorContext<This, LifecycleMethod<This>>,
) => void;

/**
 * Marks a method as the handler of the inbound WebSocket event `event`. The method is
 * called with `(clientId, data, context)`: the sender's id, the envelope's `data` (an object
 * or an array) and the message's {@link WsContext}. Route middleware runs after the global
 * stack, in the listed order; `excludeGlobalMiddlewares` skips global ones for this event.
 *
 * With `schema` (any Standard Schema: zod, valibot, arktype...), `data` is validated after
 * the middleware and the rate limit; invalid data is answered with the `error` event
 * `validation_failed`, and the handler receives the schema's output, typed from it.
 *
 * @example
 * class ChatController extends SocketController {
 *   @SocketOn('chat.message', { middlewares: [requireUser] })
 *   onMessage(clientId: string, data: { text: string }) {
 *     this.broadcast('chat.message', { from: clientId, text: data.text });
 *   }
 *
 *   @SocketOn('chat.rename', { schema: z.object({ name: z.string().max(40) }) })
 *   onRename(clientId: string, data: { name: string }) {}
 * }
 *
 * In a controller that declares its inbound events (`SocketController<Host, Emit, Listen>`),
 * the event must be one of `Listen`, the data parameter must accept its payload and the
 * return value must be its answer; anything else fails to compile.
 */
export function SocketOn<E extends string, S extends AnySchema | undefined = undefined>(
  event: E,
  options?: SocketOnOptions<S>,
): SocketOnDecorator<E, S> {
  return (target: unknown, context: unknown): void => {
    const { classRecord, method, site } = openMethodRecord('SocketOn', target, context);
    const name = validateEvent(event, site);
    const { middlewares, excludeGlobalMiddlewares, schemas } = validateRouteOptions<WsMiddleware>(
      options,
      site,
      ['schema'],
    );
    for (const other of classRecord.methods.values()) {
      if (other.socketRoutes.some((route) => route.event === name)) {
        throw decError(
          'PKG_ERR_DEC_DUPLICATE_ROUTE',
          other === method
            ? `${site}: the event "${name}" is declared twice on this method. Remove one of the decorators.`
            : `${site}: the event "${name}" is already handled by method ${quoteMethod(other.name)} in this class. ` +
                'An event has one handler per controller: rename one of the events.',
        );
      }
    }
    // Decorators of one method run bottom-up; unshift keeps the routes in source order.
    const schema = schemas['schema'];
    method.socketRoutes.unshift({
      event: name,
      middlewares,
      excludeGlobalMiddlewares,
      ...(schema !== undefined ? { schema } : {}),
    });
  };
}

function lifecycle(decorator: 'OnConnect' | 'OnDisconnect'): LifecycleDecorator {
  return (target: unknown, context: unknown): void => {
    const { method, site } = openMethodRecord(decorator, target, context);
    const flag = decorator === 'OnConnect' ? 'onConnect' : 'onDisconnect';
    if (method[flag]) {
      throw decError(
        'PKG_ERR_DEC_DUPLICATE_ROUTE',
        `${site}: @${decorator}() is applied twice to this method. Remove one of them.`,
      );
    }
    method[flag] = true;
  };
}

/**
 * Marks a method to run when a WebSocket client has connected (after the handshake), with
 * `(clientId)`. Every registered controller's `OnConnect` methods run.
 *
 * @example
 * class PresenceController extends SocketController {
 *   @OnConnect()
 *   welcome(clientId: string) {
 *     this.emit(clientId, 'welcome', { clientId });
 *   }
 * }
 */
export function OnConnect(): LifecycleDecorator {
  return lifecycle('OnConnect');
}

/**
 * Marks a method to run when a WebSocket client has gone, however it went (close, error,
 * heartbeat timeout, `disconnectClient`, server shutdown), with `(clientId)`.
 *
 * @example
 * class PresenceController extends SocketController {
 *   @OnDisconnect()
 *   left(clientId: string) {
 *     this.broadcast('user.left', { clientId });
 *   }
 * }
 */
export function OnDisconnect(): LifecycleDecorator {
  return lifecycle('OnDisconnect');
}
