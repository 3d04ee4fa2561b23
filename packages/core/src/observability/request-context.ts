/**
 * Request ids and the log context of each unit of work: every HTTP request and every
 * WebSocket message handled has an id, made only when something reads it (a handler's
 * `getAttribute('requestId')`, a log line, the `request_id_response_header`), and everything
 * logged while it is handled (by the server or by the handler, through a `Logger` of
 * @pkg/logger) carries `requestId` and `clientId` (plus `traceId` when tracing adds one) when
 * `log_context` is on. The same wrappers time the work for the metrics. With metrics off,
 * no response header and no log scope, a request only gets the id's source (one field).
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Response, type AttributeSource, type Request, type TrustPredicate } from '@pkg/http';
import { runWithLogContext, type LogScope } from '@pkg/logger';
import type { MetricsRecorder } from './metrics';

/** The request attribute that holds a request's id (`request.getAttribute('requestId')`). */
export const REQUEST_ID_ATTRIBUTE = 'requestId';

/** Longest request id taken from a request; a longer one is replaced by a generated id. */
export const MAX_REQUEST_ID_LENGTH = 128;

/** What a request id taken from a proxy may contain: printable ASCII without spaces, quotes or `\`. */
const REQUEST_ID_CHARS = /^[A-Za-z0-9._~:/+=@-]+$/;

/** True when `value` may be used as a request id as it is. */
export function isAcceptableRequestId(value: string): boolean {
  return value.length > 0 && value.length <= MAX_REQUEST_ID_LENGTH && REQUEST_ID_CHARS.test(value);
}

/**
 * Generates ids unique across processes: a random per-process prefix and a counter,
 * `3f9c1a7b2e40-1`, `3f9c1a7b2e40-2`... (cheaper than a random id per request).
 */
export function createRequestIdGenerator(): () => string {
  const prefix = randomBytes(6).toString('hex');
  let counter = 0;
  return () => {
    counter += 1;
    return `${prefix}-${counter.toString(36)}`;
  };
}

/** The holder the call sites read: `metrics` is null while metrics are off. */
export interface MetricsHolder {
  metrics: MetricsRecorder | null;
}

/** What the observers need. */
export interface ObserverOptions {
  readonly holder: MetricsHolder;
  /** Lower-case header name of request ids; null: no ids, no log scope. */
  readonly header: string | null;
  /** Whether answers carry the request id in `header` (`request_id_response_header`). */
  readonly responseHeader: boolean;
  /** Whether handling runs in a log scope (`log_context`): AsyncLocalStorage, off by default. */
  readonly scope: boolean;
  /** Which peers may hand over a request id (trust_proxy). */
  readonly trust: TrustPredicate;
  /** The route pattern of a request (`/api/users/{id}`), or a fixed label when it has none. */
  readonly routeOf: (request: Request) => string;
  readonly nextId?: () => string;
  /** With tracing on: the active trace id, read when a line is written (`traceId`). */
  readonly traceId?: () => string | undefined;
}

/** The work of one message: undefined when it finished synchronously. */
type Work = Promise<unknown> | undefined;

/** An `onResponse` hook that puts the request id on the answer. */
function idHook(header: string, id: string): (response: Response) => void {
  return (response) => void response.setHeader(header, id);
}

/**
 * Puts the request id on the answer of a dispatch: on the `Response` (or the one a promise
 * resolves with) directly; when there is none (the dispatch threw, rejected or answered
 * something else, which HttpHandler turns into an error answer), through an `onResponse`
 * hook, so that the error answer carries it too.
 */
function withIdHeader<R>(
  request: Request,
  header: string,
  id: string,
  dispatch: (request: Request) => R,
): R {
  let result: R;
  try {
    result = dispatch(request);
  } catch (err) {
    request.onResponse(idHook(header, id));
    throw err;
  }
  if (result instanceof Response) {
    result.setHeader(header, id);
    return result;
  }
  if (result === null || typeof (result as { then?: unknown }).then !== 'function') {
    request.onResponse(idHook(header, id));
    return result;
  }
  return (result as PromiseLike<unknown>).then(
    (value) => {
      if (value instanceof Response) value.setHeader(header, id);
      else request.onResponse(idHook(header, id));
      return value;
    },
    (err: unknown) => {
      request.onResponse(idHook(header, id));
      throw err;
    },
  ) as R;
}

/** Wraps the request and message paths with ids, log scope and timing. */
export class Observers {
  readonly #o: ObserverOptions;
  readonly #nextId: () => string;
  /** Makes a request's id when something first reads `requestId`; null without request ids. */
  readonly #idSource: AttributeSource | null;

  constructor(options: ObserverOptions) {
    this.#o = options;
    this.#nextId = options.nextId ?? createRequestIdGenerator();
    const header = options.header;
    this.#idSource =
      header === null
        ? null
        : {
            names: [REQUEST_ID_ATTRIBUTE],
            get: (request, name) =>
              name === REQUEST_ID_ATTRIBUTE ? this.requestId(request, header) : undefined,
          };
  }

  /** The id of an HTTP request: a trusted proxy's (when acceptable), else a new one. */
  requestId(request: Request, header: string): string {
    const given = request.getHeader(header);
    if (
      given !== undefined &&
      isAcceptableRequestId(given) &&
      this.#o.trust(request.getRemoteAddress())
    ) {
      return given;
    }
    return this.#nextId();
  }

  /**
   * Wraps an HTTP dispatch function: the request's id (made when first read), on the answer
   * when `request_id_response_header` is on, log scope, timing.
   */
  http<R>(dispatch: (request: Request) => R): (request: Request) => R {
    const { holder, header, routeOf, responseHeader } = this.#o;
    const source = this.#idSource;
    const scoped = this.#o.scope && header !== null;
    return (request) => {
      if (source !== null) request.setAttributeSource(source);
      const metrics = holder.metrics;
      if (metrics === null) {
        if (!responseHeader || header === null) {
          return scoped ? runWithLogContext(this.#httpScope(request), () => dispatch(request)) : dispatch(request); // prettier-ignore
        }
        // The id to add: on the handler's answer itself, without a hook per request.
        const id = request.getAttribute<string>(REQUEST_ID_ATTRIBUTE)!;
        if (!scoped) return withIdHeader(request, header, id, dispatch);
        return runWithLogContext(this.#httpScope(request), () =>
          withIdHeader(request, header, id, dispatch),
        );
      }
      const started = performance.now();
      request.onResponse((response: Response) => {
        if (responseHeader && header !== null) {
          response.setHeader(header, request.getAttribute<string>(REQUEST_ID_ATTRIBUTE)!);
        }
        metrics.httpHandled(
          request.getMethod().toUpperCase(),
          routeOf(request),
          response.getStatusCode(),
          started,
        );
      });
      if (!scoped) return dispatch(request);
      return runWithLogContext(this.#httpScope(request), () => dispatch(request));
    };
  }

  /** True when {@link message} would only call its `run` (no metrics, no log scope). */
  messagesPassThrough(): boolean {
    return this.#o.holder.metrics === null && !(this.#o.scope && this.#o.header !== null);
  }

  /** Runs one WebSocket message's dispatch with an id in the log scope, timed for metrics. */
  message(clientId: string, event: string, run: () => Work): void {
    const metrics = this.#o.holder.metrics;
    const scoped = this.#o.scope && this.#o.header !== null;
    if (!scoped && metrics === null) {
      run();
      return;
    }
    const started = metrics === null ? 0 : performance.now();
    const work = scoped ? runWithLogContext(this.#messageScope(clientId), run) : run();
    if (metrics === null) return;
    if (work === undefined) metrics.wsHandled(event, started);
    else
      void work.then(
        () => metrics.wsHandled(event, started),
        () => metrics.wsHandled(event, started),
      );
  }

  /** The log scope of an HTTP request: its id is read (so made) when a line is written. */
  #httpScope(request: Request): LogScope {
    return this.#scope(
      () => request.getAttribute<string>(REQUEST_ID_ATTRIBUTE),
      request.getAttribute<string>('clientId'),
    );
  }

  /** The log scope of a WebSocket message: its id is made when the first line is written. */
  #messageScope(clientId: string): LogScope {
    let id: string | undefined;
    return this.#scope(() => (id ??= this.#nextId()), clientId);
  }

  /**
   * The log scope of one request or message. `requestId` (and, with tracing, `traceId`) are
   * getters, read when a line is written: the id is made only if something logs, and the
   * span starts inside the scope.
   */
  #scope(requestId: () => string | undefined, clientId: string | undefined): LogScope {
    const scope = Object.defineProperty({ clientId }, 'requestId', {
      enumerable: true,
      get: requestId,
    });
    const traceId = this.#o.traceId;
    if (traceId === undefined) return scope as LogScope;
    return Object.defineProperty(scope, 'traceId', { enumerable: true, get: traceId }) as LogScope;
  }
}
