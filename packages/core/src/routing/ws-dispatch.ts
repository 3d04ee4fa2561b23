import type { RateLimiter } from '@pkg/http';
import type { LoggerInterface } from '@pkg/logger';
import type { EventData, RequestId } from '@pkg/ws-protocol';
import {
  handlerLabel,
  handlerOf,
  type ControllerRegistry,
  type RegisteredSocketRoute,
  type SpecialEvent,
} from './controller-registry';
import { CoreEventErrorCode, createCoreError } from '../errors';
import { SocketContext, isThenable, type CompiledWsChain, type Middleware } from './middleware';
import type { UnknownEventPolicy } from '../config/server-config';
import { validatedWsCall, validationMessage } from './validation';
import { eventErrorOf } from '../ws/event-refusal';

/**
 * What handling one message came to, for the connection to send (routing never sends):
 * undefined when there is nothing to send (a message without `id` handled, or an unknown
 * event ignored), a {@link Answer} for a request whose handler ran, or a {@link Refusal}:
 * the `error` event `{code, message, ...extra}` (with the request's `id` when it has one).
 */
export type Outcome = Answer | Refusal | undefined;

/** The result of a request's handler (`null` for nothing). */
export interface Answer {
  readonly kind: 'answer';
  readonly result: unknown;
}

/** A refusal or a failure: the `error` event the client gets. */
export interface Refusal {
  readonly kind: 'refusal';
  readonly code: string;
  readonly message: string;
  readonly extra?: Readonly<Record<string, unknown>>;
}

const refused = (
  code: string,
  message: string,
  extra?: Readonly<Record<string, unknown>>,
): Refusal => ({ kind: 'refusal', code, message, ...(extra === undefined ? {} : { extra }) });

/** The context of one message: what its chain came to is kept on it. */
class MessageContext extends SocketContext {
  /** A refusal of the chain itself (schema, rate limit): sent with or without `id`. */
  refusal: Refusal | undefined = undefined;
}

/** The context of a message with an `id`: the handler's result answers it. */
class RequestContext extends MessageContext {
  readonly id: RequestId;
  /** The handler ran (no middleware stopped the chain). */
  reached = false;
  result: unknown;

  constructor(clientId: string, event: string, data: EventData, id: RequestId) {
    super(clientId, event, data);
    this.id = id;
  }
}

/** What a connection needs of the routes (a {@link WsDispatcher}). */
export interface Routes {
  dispatch(
    clientId: string,
    event: string,
    data: EventData,
    id?: RequestId,
  ): Outcome | Promise<Outcome>;
  dispatchSpecialEvent(clientId: string, eventType: SpecialEvent): Promise<void>;
  /** True when some controller has an `OnConnect` handler. */
  readonly hasConnectHandlers: boolean;
}

/** What WebSocket dispatch needs, handed over once. */
export interface WsDispatchOptions {
  readonly middleware: Middleware;
  readonly rateLimiter: RateLimiter;
  readonly logger: LoggerInterface;
  /** `error` events of failed handlers carry the error's text. Default false. */
  readonly debug?: boolean;
  /** Events without a handler: `'error'` (default) answers `unknown_event`, `'ignore'` logs. */
  readonly unknownEvent?: UnknownEventPolicy;
  /** Whom a RateLimit of an event counts (the server passes the client's address). Default: the client id. */
  readonly rateLimitKey?: (clientId: string) => string;
  /** With tracing on: marks the active span failed when a handler throws or rejects. */
  readonly handlerFailed?: (err: unknown) => void;
}

interface CompiledRoute {
  readonly route: RegisteredSocketRoute;
  readonly run: CompiledWsChain;
}

/** Text for a thrown value in debug mode; never throws (`String()` does for some objects). */
function errorDetails(err: unknown): string {
  try {
    return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  } catch {
    return 'a value that cannot be shown as text';
  }
}

/**
 * WebSocket routing: each inbound message goes to its event's compiled chain (global
 * middleware minus exclusions, route middleware, rate limit, handler), built once when the
 * route is registered and again when a global middleware is added. It returns what the
 * message came to (an {@link Outcome}) and never sends: the connection answers it. A handler
 * that throws or rejects is logged and comes to `internal_error`; this is the one place that
 * decides so.
 */
export class WsDispatcher implements Routes {
  readonly #registry: ControllerRegistry;
  readonly #options: WsDispatchOptions;
  readonly #logger: LoggerInterface;
  readonly #debug: boolean;
  readonly #ignoreUnknown: boolean;
  readonly #routes = new Map<string, CompiledRoute>();

  constructor(registry: ControllerRegistry, options: WsDispatchOptions) {
    this.#registry = registry;
    this.#options = options;
    this.#logger = options.logger;
    this.#debug = options.debug ?? false;
    this.#ignoreUnknown = options.unknownEvent === 'ignore';
    for (const route of registry.wsRoutes.values()) this.#compile(route);
    registry.onRoutesAdded((added) => added.ws.forEach((route) => this.#compile(route)));
    options.middleware.onChange(() => {
      for (const { route } of [...this.#routes.values()]) this.#compile(route);
    });
  }

  /** True when an event has a route. */
  has(event: string): boolean {
    return this.#routes.has(event);
  }

  /**
   * Runs one message through its route. Returns its {@link Outcome} when it was handled
   * synchronously, else a promise of it. Never throws and never rejects.
   */
  dispatch(
    clientId: string,
    event: string,
    data: EventData,
    id?: RequestId,
  ): Outcome | Promise<Outcome> {
    const compiled = this.#routes.get(event);
    if (compiled === undefined) return this.#unknownEvent(clientId, event, id);
    const context =
      id === undefined
        ? new MessageContext(clientId, event, data)
        : new RequestContext(clientId, event, data, id);
    let result: unknown;
    try {
      result = compiled.run(context);
    } catch (err) {
      return this.#failed(compiled.route, context, err);
    }
    if (!isThenable(result)) return outcomeOf(context);
    return Promise.resolve(result).then(
      () => outcomeOf(context),
      (err: unknown) => this.#failed(compiled.route, context, err),
    );
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
    for (const hooks of [...this.#registry.hooks]) {
      const fns = hooks[eventType];
      for (let i = 0; i < fns.length; i += 1) {
        try {
          await fns[i]!.call(hooks.controller, clientId);
        } catch (err) {
          this.#logger.exception(err, {
            code: 'PKG_ERR_CORE_HANDLER_FAILED',
            clientId,
            event: eventType,
            handler: handlerLabel(hooks.controller, hooks.names[eventType][i]!),
          });
        }
      }
    }
  }

  /** True when some controller has an `OnConnect` handler. */
  get hasConnectHandlers(): boolean {
    return this.#registry.hooks.some((h) => h.connect.length > 0);
  }

  #compile(route: RegisteredSocketRoute): void {
    const fn = handlerOf(route);
    const controller = route.controller;
    const rule = route.rateLimit;
    const call = validatedWsCall<MessageContext>(
      route.schema,
      (context, data) => {
        const result = fn.call(controller, context.clientId, data, context);
        if (!(context instanceof RequestContext)) return result;
        context.reached = true;
        if (!isThenable(result)) {
          context.result = result;
          return result;
        }
        return Promise.resolve(result).then((value) => {
          context.result = value;
        });
      },
      (context, issues) => {
        this.#logger.debug('WebSocket event failed its schema', {
          code: 'PKG_ERR_CORE_VALIDATION_FAILED',
          clientId: context.clientId,
          event: route.event,
          issues: issues.length,
        });
        // A protocol error like invalid_data: counted toward ws_max_protocol_errors, and
        // without an id answered at most once per ws_error_reply_interval.
        context.refusal = refused(
          CoreEventErrorCode.VALIDATION_FAILED,
          validationMessage(issues, `The data of "${route.event}"`),
          { event: route.event, issues },
        );
      },
    );
    let target = call as (context: unknown) => unknown;
    if (rule !== undefined) {
      const limiter = this.#options.rateLimiter;
      target = (context) => {
        const ctx = context as MessageContext;
        const who = this.#options.rateLimitKey?.(ctx.clientId) ?? ctx.clientId;
        return limiter.check(`ws:${route.event}:${who}`, rule).then((result) => {
          if (result.allowed) return call(ctx);
          this.#logger.debug('WebSocket event over its rate limit', {
            code: 'PKG_ERR_CORE_RATE_LIMITED',
            clientId: ctx.clientId,
            event: route.event,
          });
          ctx.refusal = refused(
            CoreEventErrorCode.RATE_LIMITED,
            `Too many "${route.event}" events: at most ${rule.maxCount} per ${rule.timeWindow} s. Retry in ${result.retryAfter} s.`,
            { event: route.event, retryAfter: result.retryAfter },
          );
          return undefined;
        });
      };
    }
    const run = this.#options.middleware.compileWebSocketChain(route, target);
    this.#routes.set(route.event, { route, run });
  }

  #failed(route: RegisteredSocketRoute, context: SocketContext, err: unknown): Refusal {
    const { clientId, event } = context;
    const refusal = eventErrorOf(err);
    if (refusal !== null) {
      // The client caused it (a refused room, a full room list): its code, not internal_error.
      this.#logger.debug('WebSocket message refused', {
        code: (err as { code?: unknown }).code ?? refusal.code,
        clientId,
        event,
        refusal: refusal.code,
      });
      return refused(refusal.code, refusal.message, refusal.data);
    }
    this.#logger.exception(err, {
      code: 'PKG_ERR_CORE_HANDLER_FAILED',
      clientId,
      event,
      handler: handlerLabel(route.controller, route.handler),
    });
    this.#options.handlerFailed?.(err);
    return refused(
      CoreEventErrorCode.INTERNAL_ERROR,
      this.#debug
        ? `Handling "${event}" failed: ${errorDetails(err)}`
        : `Handling "${event}" failed on the server.`,
    );
  }

  #unknownEvent(clientId: string, event: string, id?: RequestId): Outcome {
    if (this.#ignoreUnknown && id === undefined) {
      this.#logger.debug('Ignored WebSocket event without a handler', { clientId, event });
      return undefined;
    }
    return refused(CoreEventErrorCode.UNKNOWN_EVENT, `No handler for event "${event}".`, {
      event,
    });
  }
}

/** What a chain that ran to its end came to: its refusal, the request's answer, or nothing. */
function outcomeOf(context: MessageContext): Outcome {
  if (context.refusal !== undefined) return context.refusal;
  if (!(context instanceof RequestContext)) return undefined;
  if (context.reached) return { kind: 'answer', result: context.result };
  return refused(CoreEventErrorCode.FORBIDDEN, `"${context.event}" was refused by a middleware.`, {
    event: context.event,
  });
}
