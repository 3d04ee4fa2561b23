import type { RateLimiter } from '@pkg/http';
import type { LoggerInterface } from '@pkg/logger';
import type { Envelope, EventData, RequestId, WsClient } from '@pkg/ws-protocol';
import {
  handlerLabel,
  handlerOf,
  type ControllerRegistry,
  type RegisteredSocketRoute,
  type SpecialEvent,
} from '../routing/controller-registry';
import { CoreEventErrorCode, createCoreError } from '../errors';
import {
  SocketContext,
  isThenable,
  type CompiledWsChain,
  type Middleware,
} from '../routing/middleware';
import type { UnknownEventPolicy } from '../config/server-config';
import { validatedWsCall, validationMessage } from '../routing/validation';
import { eventErrorOf } from './event-refusal';

/** Sends the `error` event `{code, message, ...extra}` to one client (with `id`: as an answer). */
export type SendEventError = (
  clientId: string,
  code: string,
  message: string,
  extra?: Record<string, unknown>,
  id?: RequestId,
) => void;

/** Answers a client request (`id`) with the handler's result. */
export type SendAnswer = (clientId: string, event: string, id: RequestId, result: unknown) => void;

/** The context of a message with an `id`: the handler's result answers it. */
class RequestContext extends SocketContext {
  readonly id: RequestId;
  /** The handler ran (no middleware stopped the chain). */
  reached = false;
  /** An `error` already answered the request (rate limit). */
  answered = false;
  result: unknown;

  constructor(clientId: string, event: string, data: EventData, id: RequestId) {
    super(clientId, event, data);
    this.id = id;
  }
}

const idOf = (context: SocketContext): RequestId | undefined =>
  context instanceof RequestContext ? context.id : undefined;

/** What WebSocket dispatch needs, handed over once. */
export interface WsDispatchOptions {
  readonly middleware: Middleware;
  readonly rateLimiter: RateLimiter;
  readonly logger: LoggerInterface;
  /** `error` events of failed handlers carry the error's text. Default false. */
  readonly debug?: boolean;
  /** Events without a handler: `'error'` (default) answers `unknown_event`, `'ignore'` logs. */
  readonly unknownEvent?: UnknownEventPolicy;
  readonly sendEventError: SendEventError;
  /** Answers messages with an `id` (protocol version 1); without it, they get no answer. */
  readonly answer?: SendAnswer;
  /**
   * Receives the promise of every asynchronous dispatch (the lifecycle waits for them);
   * with the client's id for message handlers, whose work is tied to their client, and the
   * message's request id, which a handler timeout answers.
   */
  readonly track?: (work: Promise<void>, clientId?: string, id?: RequestId) => void;
  /** Whom a RateLimit of an event counts (the server passes the client's address). Default: the client id. */
  readonly rateLimitKey?: (clientId: string) => string;
  /** With tracing on: marks the active span failed when a handler throws or rejects. */
  readonly handlerFailed?: (err: unknown) => void;
  /** Bounds the OnConnect phase; resolves false when it ran out of time (client closed). */
  readonly connectDeadline?: (clientId: string, phase: Promise<void>) => Promise<boolean>;
}

interface CompiledRoute {
  readonly route: RegisteredSocketRoute;
  readonly run: CompiledWsChain;
}

const noop = (): void => undefined;

/** Text for a thrown value in debug mode; never throws (`String()` does for some objects). */
function errorDetails(err: unknown): string {
  try {
    return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  } catch {
    return 'a value that cannot be shown as text';
  }
}

/**
 * WebSocket dispatch: each inbound message goes to its event's compiled chain (global
 * middleware minus exclusions, route middleware, rate limit, handler), built once when the
 * route is registered and again when a global middleware is added. A handler that throws or
 * rejects is logged and answered with the `error` event `internal_error`; this is the one
 * place that does so. A message that arrives while the client's `OnConnect` handlers still
 * run waits for them, so handlers always see a connected client in order.
 */
export class WsDispatcher {
  readonly #registry: ControllerRegistry;
  readonly #options: WsDispatchOptions;
  readonly #logger: LoggerInterface;
  readonly #debug: boolean;
  readonly #ignoreUnknown: boolean;
  readonly #track: NonNullable<WsDispatchOptions['track']>;
  readonly #routes = new Map<string, CompiledRoute>();
  /** Completion of each client's OnConnect handlers, while they run. */
  readonly #connectPhase = new Map<string, Promise<unknown>>();

  constructor(registry: ControllerRegistry, options: WsDispatchOptions) {
    this.#registry = registry;
    this.#options = options;
    this.#logger = options.logger;
    this.#debug = options.debug ?? false;
    this.#ignoreUnknown = options.unknownEvent === 'ignore';
    this.#track = options.track ?? ((work) => void work.catch(noop));
    for (const route of registry.wsRoutes.values()) this.#compile(route);
    registry.onRoutesAdded((added) => added.ws.forEach((route) => this.#compile(route)));
    options.middleware.onChange(() => {
      for (const { route } of [...this.#routes.values()]) this.#compile(route);
    });
  }

  /**
   * Dispatches one message. Returns undefined when it was handled synchronously, else a
   * promise that settles when it is done. Never throws and never rejects.
   */
  dispatch(
    clientId: string,
    event: string,
    data: EventData,
    id?: RequestId,
  ): Promise<void> | undefined {
    const compiled = this.#routes.get(event);
    if (compiled === undefined) {
      this.#unknownEvent(clientId, event, id);
      return undefined;
    }
    const context =
      id === undefined
        ? new SocketContext(clientId, event, data)
        : new RequestContext(clientId, event, data, id);
    let result: unknown;
    try {
      result = compiled.run(context);
    } catch (err) {
      this.#failed(compiled.route, context, err);
      return undefined;
    }
    if (!isThenable(result)) {
      if (id !== undefined) this.#answer(context as RequestContext);
      return undefined;
    }
    return Promise.resolve(result).then(
      id === undefined ? noop : () => this.#answer(context as RequestContext),
      (err: unknown) => this.#failed(compiled.route, context, err),
    );
  }

  /** Answers a request once its chain is done: the handler's result, or a middleware refusal. */
  #answer(context: RequestContext): void {
    if (context.answered) return;
    const { clientId, event, id } = context;
    if (context.reached && this.#options.answer !== undefined) {
      this.#options.answer(clientId, event, id, context.result);
      return;
    }
    this.#options.sendEventError(
      clientId,
      CoreEventErrorCode.FORBIDDEN,
      `"${event}" was refused by a middleware.`,
      { event },
      id,
    );
  }

  /**
   * The `message` listener of the WebSocketHandler. Returns the handling's promise (it
   * never rejects), or undefined when the message was handled synchronously.
   */
  readonly onMessage = (client: WsClient, envelope: Envelope): Promise<void> | undefined => {
    const id = client.id;
    const phase = this.#connectPhase.get(id);
    if (phase !== undefined) {
      // Not dispatched when OnConnect ran out of time: the client is being closed.
      const queued = phase.then((ok) =>
        ok === false ? undefined : this.dispatch(id, envelope.event, envelope.data, envelope.id),
      );
      this.#track(queued, id, envelope.id);
      return queued.catch(noop);
    }
    const work = this.dispatch(id, envelope.event, envelope.data, envelope.id);
    if (work !== undefined) this.#track(work, id, envelope.id);
    return work;
  };

  /** Runs the client's `OnConnect` handlers; its messages wait until they are done. */
  connected(clientId: string): void {
    if (!this.#registry.hooks.some((h) => h.connect.length > 0)) return;
    const handlers = this.dispatchSpecialEvent(clientId, 'connect');
    const phase = this.#options.connectDeadline?.(clientId, handlers) ?? handlers;
    this.#connectPhase.set(clientId, phase);
    // This reaction is registered before any queued message's, so order holds.
    void phase.then(() => {
      if (this.#connectPhase.get(clientId) === phase) this.#connectPhase.delete(clientId);
    });
    this.#track(phase.then(noop));
  }

  /** Runs the client's `OnDisconnect` handlers (after its `OnConnect` ones), then `done`. */
  disconnected(clientId: string, done: () => void): void {
    const phase = this.#connectPhase.get(clientId) ?? Promise.resolve();
    const work = phase
      .then(() => this.dispatchSpecialEvent(clientId, 'disconnect'))
      .finally(() => {
        this.#connectPhase.delete(clientId);
        done();
      });
    this.#track(work);
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

  #compile(route: RegisteredSocketRoute): void {
    const fn = handlerOf(route);
    const controller = route.controller;
    const rule = route.rateLimit;
    const call = validatedWsCall<SocketContext>(
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
        this.#options.sendEventError(
          context.clientId,
          CoreEventErrorCode.VALIDATION_FAILED,
          validationMessage(issues, `The data of "${route.event}"`),
          { event: route.event, issues },
          idOf(context),
        );
        if (context instanceof RequestContext) context.answered = true;
      },
    );
    let target = call as (context: unknown) => unknown;
    if (rule !== undefined) {
      const limiter = this.#options.rateLimiter;
      target = (context) => {
        const ctx = context as SocketContext;
        const who = this.#options.rateLimitKey?.(ctx.clientId) ?? ctx.clientId;
        return limiter.check(`ws:${route.event}:${who}`, rule).then((result) => {
          if (result.allowed) return call(ctx);
          this.#logger.debug('WebSocket event over its rate limit', {
            code: 'PKG_ERR_CORE_RATE_LIMITED',
            clientId: ctx.clientId,
            event: route.event,
          });
          this.#options.sendEventError(
            ctx.clientId,
            CoreEventErrorCode.RATE_LIMITED,
            `Too many "${route.event}" events: at most ${rule.maxCount} per ${rule.timeWindow} s. Retry in ${result.retryAfter} s.`,
            { event: route.event, retryAfter: result.retryAfter },
            idOf(ctx),
          );
          if (ctx instanceof RequestContext) ctx.answered = true;
          return undefined;
        });
      };
    }
    const run = this.#options.middleware.compileWebSocketChain(route, target);
    this.#routes.set(route.event, { route, run });
  }

  #failed(route: RegisteredSocketRoute, context: SocketContext, err: unknown): void {
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
      this.#options.sendEventError(
        clientId,
        refusal.code,
        refusal.message,
        refusal.data,
        idOf(context),
      );
      return;
    }
    this.#logger.exception(err, {
      code: 'PKG_ERR_CORE_HANDLER_FAILED',
      clientId,
      event,
      handler: handlerLabel(route.controller, route.handler),
    });
    this.#options.handlerFailed?.(err);
    this.#options.sendEventError(
      clientId,
      CoreEventErrorCode.INTERNAL_ERROR,
      this.#debug
        ? `Handling "${event}" failed: ${errorDetails(err)}`
        : `Handling "${event}" failed on the server.`,
      undefined,
      idOf(context),
    );
  }

  #unknownEvent(clientId: string, event: string, id?: RequestId): void {
    if (this.#ignoreUnknown && id === undefined) {
      this.#logger.debug('Ignored WebSocket event without a handler', { clientId, event });
      return;
    }
    this.#options.sendEventError(
      clientId,
      CoreEventErrorCode.UNKNOWN_EVENT,
      `No handler for event "${event}".`,
      { event },
      id,
    );
  }
}
