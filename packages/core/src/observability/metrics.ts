/**
 * What the rest of the server calls to record metrics, and the label values it may use.
 * The recorder is null while metrics are off: every call site is `metrics?.x(...)`, one
 * property read and nothing else. The prom-client side is in metrics-registry.ts.
 *
 * Label values are bounded, whatever clients send: an event label is an event with a
 * handler (or a control event), a close-code label a known code, and every label set is
 * capped at {@link MAX_LABEL_VALUES} values; anything else is counted under `other`.
 */
import { CloseCode, ControlEvent } from '@pkg/wire';

/** Distinct values one label (event, refusal code) takes at most; later ones count as `other`. */
export const MAX_LABEL_VALUES = 200;

/** The label value of everything folded together. */
export const OTHER = 'other';

/** Records what the server does; see docs/observability.md for each metric. */
export interface MetricsRecorder {
  /** A WebSocket message was decoded (its event, before any check). */
  messageIn(event: string): void;
  /** `count` messages of `event` were handed to clients (sends, answers, broadcast deliveries). */
  messageOut(event: string, count: number): void;
  /** A WebSocket handler chain for `event` finished; `started` is a `performance.now()` value. */
  wsHandled(event: string, started: number): void;
  /** An HTTP request was answered. `route` is the route pattern (or a fixed label). */
  httpHandled(method: string, route: string, status: number, started: number): void;
  /** A message, request or connection was refused with `code`. */
  refused(code: string): void;
  /** A WebSocket connection was upgraded (`protocol` 1 when it offered `pkg.v1`). */
  connected(protocol: '0' | '1'): void;
  /** A WebSocket connection ended with `code`, having carried these bytes on the wire. */
  disconnected(code: number, bytesIn: number, bytesOut: number): void;
  /** A broadcast of another instance was delivered here `ms` after it was published. */
  crossInstance(ms: number): void;
  /** A room recovery ended: `recovered`, or the reason it could not be (`epoch_changed`...). */
  recovery(outcome: string): void;
  /** The text exposition of every metric. */
  text(): Promise<string>;
  /** The Content-Type of {@link text}. */
  readonly contentType: string;
  /** Stops timers (event-loop monitoring). */
  close(): void;
}

/**
 * A bounded label: `accept` decides which values may become labels at all, and at most
 * `max` of them do; anything else is `other`. The first `max` accepted values win.
 */
export class BoundedLabel {
  readonly #seen = new Set<string>();
  readonly #accept: (value: string) => boolean;
  readonly #max: number;

  constructor(accept: (value: string) => boolean = () => true, max = MAX_LABEL_VALUES) {
    this.#accept = accept;
    this.#max = max;
  }

  of(value: string): string {
    if (this.#seen.has(value)) return value;
    if (this.#seen.size >= this.#max || !this.#accept(value)) return OTHER;
    this.#seen.add(value);
    return value;
  }
}

const CONTROL_EVENTS: ReadonlySet<string> = new Set(Object.values(ControlEvent));

/** An inbound event label: an event with a handler or a control event, else `other`. */
export function inboundEventLabel(hasHandler: (event: string) => boolean): BoundedLabel {
  return new BoundedLabel((event) => CONTROL_EVENTS.has(event) || hasHandler(event));
}

const KNOWN_CLOSE_CODES: ReadonlySet<number> = new Set(Object.values(CloseCode));

/**
 * The label of a close code: a code of RFC 6455 (1000-2999, which `ws` validates) or of the
 * protocol, else `other` (an application's own 3000-4999 codes).
 */
export function closeCodeLabel(code: number): string {
  return KNOWN_CLOSE_CODES.has(code as never) || (code >= 1000 && code < 3000)
    ? String(code)
    : OTHER;
}

const HTTP_METHODS: ReadonlySet<string> = new Set([
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
]);

/** An HTTP method label: the standard methods, else `other`. */
export function methodLabel(method: string): string {
  return HTTP_METHODS.has(method) ? method : OTHER;
}

/**
 * The label pairs of `ws_connections`: each state a counted connection can be in (`closed`
 * is never counted) with the protocol versions it can have there (`awaiting_hello` and
 * `away` exist only under version 1, `handshaken` is counted before `$hello`). The gauge
 * exports every pair, 0 when no connection is in it, so that a query over it reads 0 rather
 * than no data when nobody is connected.
 */
export const CONNECTION_LABELS: ReadonlyArray<{
  readonly state: string;
  readonly protocol: string;
}> = [
  { state: 'handshaken', protocol: '0' },
  { state: 'awaiting_hello', protocol: '1' },
  { state: 'authenticating', protocol: '0' },
  { state: 'authenticating', protocol: '1' },
  { state: 'open', protocol: '0' },
  { state: 'open', protocol: '1' },
  { state: 'closing', protocol: '0' },
  { state: 'closing', protocol: '1' },
  { state: 'away', protocol: '1' },
];

/** The close code of a slow consumer drop (`max_buffered_amount`); nothing else sends it. */
export const SLOW_CONSUMER_CLOSE = CloseCode.TRY_AGAIN_LATER;

/** Close codes that mean an authentication refusal, and the refusal they are counted as. */
export const AUTH_CLOSES: ReadonlyMap<number, string> = new Map([
  [CloseCode.UNAUTHORIZED, 'unauthorized'],
  [CloseCode.FORBIDDEN, 'forbidden'],
]);
