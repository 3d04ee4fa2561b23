/**
 * OpenTelemetry spans through `@opentelemetry/api` (an optional peer; never an SDK): one
 * SERVER span per HTTP request, one CONSUMER span per WebSocket message handled, a PRODUCER
 * span per broadcast made while a span is active, and a CONSUMER span per broadcast that
 * another instance delivered here. Parents come from W3C Trace Context: the HTTP headers,
 * the envelope's `meta`, the upgrade request's headers, or the adapter's message.
 *
 * Built only when `tracing` is on, once `run()` has loaded the API (tracing-load.ts); with
 * tracing off none of this runs and nothing is wrapped.
 */
import type { Attributes, Context, Span, TextMapGetter, Tracer } from '@opentelemetry/api';
import type { IncomingMessage } from 'node:http';
import type { Request, Response } from '@pkg/http';
import { ControlEvent, decodeBinaryFrame, type EnvelopeMeta } from '@pkg/wire';
import type { Envelope, WsClient } from '@pkg/ws-protocol';

/** The parts of `@opentelemetry/api` that tracing uses (the module itself satisfies it). */
export type OtelApi = typeof import('@opentelemetry/api');

/** Finds the route pattern of a request (`/users/{id}`), or null when no route matches. */
export type RouteOf = (method: string, path: string) => string | null;

/** Whether a WebSocket event has a registered handler (its name is then a route of the app). */
export type IsEventRoute = (event: string) => boolean;

/** The name of the span of a message whose event is neither registered nor a control event. */
export const UNKNOWN_EVENT_SPAN = 'unknown receive';

/** Control events a client may send, whose names are fixed by the protocol. */
const CONTROL_EVENTS: ReadonlySet<string> = new Set(Object.values(ControlEvent));

/** Longest request id put on a span (ids are checked on the wire; this bounds it anyway). */
const MAX_ID_ATTRIBUTE = 64;

type Dispatch = (request: Request) => Response | Promise<Response>;

const headerGetter: TextMapGetter<Record<string, string | string[] | undefined>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key.toLowerCase()],
};

const metaGetter: TextMapGetter<EnvelopeMeta> = {
  keys: () => ['traceparent', 'tracestate'],
  get: (carrier, key) =>
    key === 'traceparent'
      ? carrier.traceparent
      : key === 'tracestate'
        ? carrier.tracestate
        : undefined,
};

/** `{"event":"name",...}` as prepareMessage writes it: the name, read without parsing the rest. */
const EVENT_PREFIX = /^\{"event":("(?:[^"\\]|\\.){1,256}")/;

/**
 * The event name at the start of a serialised envelope (or in a binary frame's header), or
 * `message` when it cannot be read.
 */
export function eventOfText(text: string | Uint8Array): string {
  if (typeof text !== 'string') {
    const read = decodeBinaryFrame(text);
    return read.ok ? read.frame.event : 'message';
  }
  const match = EVENT_PREFIX.exec(text);
  if (match === null) return 'message';
  try {
    return JSON.parse(match[1]!) as string;
  } catch {
    return 'message';
  }
}

/** Spans of one server. */
export class Tracing {
  readonly #api: OtelApi;
  readonly #tracer: Tracer;
  readonly #routeOf: RouteOf;
  readonly #isEventRoute: IsEventRoute;
  /**
   * The trace context of each connection whose upgrade request carried one, by its socket:
   * the one thing about a connection that a resume (which gives it another client id) keeps,
   * and weakly held, so a context never outlives its connection.
   */
  readonly #upgradeContexts = new WeakMap<object, Context>();

  constructor(api: OtelApi, routeOf: RouteOf, isEventRoute: IsEventRoute = () => false) {
    this.#api = api;
    this.#tracer = api.trace.getTracer('@pkg/core');
    this.#routeOf = routeOf;
    this.#isEventRoute = isEventRoute;
  }

  /** Wraps the HTTP dispatch: a SERVER span named `METHOD /route/{pattern}` around it. */
  http(next: Dispatch): Dispatch {
    const api = this.#api;
    return (request) => {
      const method = request.getMethod().toUpperCase();
      const route = this.#routeOf(method, request.getPath());
      const parent = api.propagation.extract(api.ROOT_CONTEXT, request.getHeaders(), headerGetter);
      const attributes: Attributes = {
        'http.request.method': method,
        'url.path': request.getPath(),
        'url.scheme': request.getScheme(),
        'server.address': request.getHost(),
        'client.address': request.getIpAddress(),
      };
      if (route !== null) attributes['http.route'] = route;
      const agent = request.getHeader('user-agent');
      if (agent !== undefined) attributes['user_agent.original'] = agent;
      const span = this.#tracer.startSpan(
        route === null ? method : `${method} ${route}`,
        { kind: api.SpanKind.SERVER, attributes },
        parent,
      );
      const done = (response: Response): Response => {
        const status = response.getStatusCode();
        span.setAttribute('http.response.status_code', status);
        // A server span is an error for 5xx only: a 4xx is the client's doing.
        if (status >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR });
        span.end();
        return response;
      };
      const failed = (err: unknown): never => {
        this.#fail(span, err);
        // HttpHandler answers a thrown handler with 500.
        span.setAttribute('http.response.status_code', 500);
        span.end();
        throw err;
      };
      let result: Response | Promise<Response>;
      try {
        result = api.context.with(api.trace.setSpan(parent, span), next, undefined, request);
      } catch (err) {
        return failed(err);
      }
      return result instanceof Promise ? result.then(done, failed) : done(result);
    };
  }

  /**
   * Runs the handling of one WebSocket message in a CONSUMER span `<event> receive`, whose
   * parent is the envelope's `meta` trace context, else the upgrade request's headers
   * (kept by `upgraded`). The name and the destination come from the route: a registered
   * event or a control event; any other event, whatever the client wrote, is one span name,
   * `unknown receive`, without a destination, so a client cannot make names or attributes.
   * `run` returns the handling's promise (it never rejects) or undefined when it is done.
   */
  message(client: WsClient, envelope: Envelope, run: () => Promise<void> | undefined): void {
    const api = this.#api;
    const parent =
      envelope.meta !== undefined
        ? api.propagation.extract(api.ROOT_CONTEXT, envelope.meta, metaGetter)
        : (this.#upgradeContexts.get(client.socket) ?? api.ROOT_CONTEXT);
    const event = envelope.event;
    const routed = CONTROL_EVENTS.has(event) || this.#isEventRoute(event);
    const attributes: Attributes = {
      'messaging.system': 'pkg',
      'messaging.operation.type': 'receive',
      'messaging.operation.name': 'receive',
      'messaging.client.id': client.id,
      'network.protocol.name': 'websocket',
    };
    if (routed) attributes['messaging.destination.name'] = event;
    if (envelope.id !== undefined) {
      attributes['messaging.message.id'] = String(envelope.id).slice(0, MAX_ID_ATTRIBUTE);
    }
    const span = this.#tracer.startSpan(
      routed ? `${event} receive` : UNKNOWN_EVENT_SPAN,
      { kind: api.SpanKind.CONSUMER, attributes },
      parent,
    );
    let work: Promise<void> | undefined;
    try {
      work = api.context.with(api.trace.setSpan(parent, span), run);
    } catch (err) {
      this.#fail(span, err);
      span.end();
      throw err;
    }
    if (work === undefined) span.end();
    else void work.then(() => span.end());
  }

  /** The trace id of the active span, for the log scope; undefined outside a trace. */
  readonly traceId = (): string | undefined => {
    const id = this.#api.trace.getActiveSpan()?.spanContext().traceId;
    return id === undefined || /^0+$/.test(id) ? undefined : id;
  };

  /** Marks the active span failed (a handler threw): called by the dispatchers' error path. */
  readonly failed = (err: unknown): void => {
    const span = this.#api.trace.getActiveSpan();
    if (span !== undefined) this.#fail(span, err);
  };

  /**
   * The trace context to carry with a broadcast made now, in a PRODUCER span `<event>
   * publish` that ends at once; undefined when no span is active (nothing to join).
   */
  publish(event: string, room: string | null, namespace: string | null): EnvelopeMeta | undefined {
    const api = this.#api;
    const active = api.context.active();
    if (api.trace.getSpan(active) === undefined) return undefined;
    const attributes: Attributes = {
      'messaging.system': 'pkg',
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'publish',
      'messaging.destination.name': room ?? namespace ?? '*',
      'messaging.pkg.event': event,
    };
    const span = this.#tracer.startSpan(
      `${event} publish`,
      { kind: api.SpanKind.PRODUCER, attributes },
      active,
    );
    const carrier: Record<string, string> = {};
    api.propagation.inject(api.trace.setSpan(active, span), carrier);
    span.end();
    const traceparent = carrier['traceparent'];
    if (traceparent === undefined) return undefined;
    const tracestate = carrier['tracestate'];
    return tracestate === undefined ? { traceparent } : { traceparent, tracestate };
  }

  /** Runs a delivery that another instance asked for in a CONSUMER span `<event> process`. */
  deliver<T>(meta: EnvelopeMeta, text: string | Uint8Array, run: () => T): T {
    const api = this.#api;
    const parent = api.propagation.extract(api.ROOT_CONTEXT, meta, metaGetter);
    const event = eventOfText(text);
    const span = this.#tracer.startSpan(
      `${event} process`,
      {
        kind: api.SpanKind.CONSUMER,
        attributes: {
          'messaging.system': 'pkg',
          'messaging.operation.type': 'process',
          'messaging.operation.name': 'process',
          'messaging.destination.name': event,
          'messaging.message.body.size': text.length,
        },
      },
      parent,
    );
    try {
      const delivered = api.context.with(api.trace.setSpan(parent, span), run);
      if (typeof delivered === 'number')
        span.setAttribute('messaging.batch.message_count', delivered);
      return delivered;
    } catch (err) {
      this.#fail(span, err);
      throw err;
    } finally {
      span.end();
    }
  }

  /** A connection opened: keeps its upgrade request's trace context, when it had one. */
  readonly upgraded = (client: WsClient, request: IncomingMessage): void => {
    const headers = request.headers;
    if (headers['traceparent'] === undefined) return;
    const api = this.#api;
    const ctx = api.propagation.extract(api.ROOT_CONTEXT, headers, headerGetter);
    if (api.trace.getSpanContext(ctx) !== undefined) this.#upgradeContexts.set(client.socket, ctx);
  };

  /** A connection closed (under whatever id it has now): forgets its upgrade context. */
  readonly closed = (client: WsClient): void => {
    this.#upgradeContexts.delete(client.socket);
  };

  #fail(span: Span, err: unknown): void {
    if (err instanceof Error) span.recordException(err);
    span.setStatus({
      code: this.#api.SpanStatusCode.ERROR,
      message: err instanceof Error ? err.message : String(err),
    });
  }
}
