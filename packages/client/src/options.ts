/**
 * The client's options: one defaults object, merged and checked once in the constructor,
 * with a TypeError that names the option and says what it accepts.
 */
import { createClientError } from './errors';
import type { WebSocketConstructor } from './transport';
import type { EnvelopeMeta } from '@pkg/wire';

/** Credentials, or a function that returns fresh ones for each connection. */
export type CredentialSource<T> = T | (() => T | Promise<T>);

/** An object that fires `online` / `offline` events (a browser's `window`). */
export interface NetworkEvents {
  addEventListener(type: 'online' | 'offline', listener: () => void): void;
  removeEventListener(type: 'online' | 'offline', listener: () => void): void;
}

export interface ClientOptions {
  /** WebSocket constructor. Default: the global `WebSocket`, else the `ws` package. */
  WebSocket?: WebSocketConstructor;
  /**
   * Token sent in `$hello` (never in the URL); a function is called again for every
   * connection, so a refreshed token is used after a reconnect. Default: none.
   */
  auth?: CredentialSource<string>;
  /**
   * Query parameters added to the URL of every connection, e.g. `{ key }` for servers
   * that authenticate with `?key=` in the handshake. A function is called per connection.
   */
  query?: CredentialSource<Record<string, string>>;
  /**
   * `'auto'` (default): offer the subprotocol `pkg.v1` and say `$hello` (protocol version 1)
   * when the server selects it, else carry on in version 0 at once. `'basic'`: version 0
   * only, nothing offered, exactly `{event, data}` messages.
   */
  protocol?: 'auto' | 'basic';
  /** Reconnect after a lost connection. Default true. */
  reconnection?: boolean;
  /** Attempts before `reconnect_failed`; `Infinity` never gives up. Default Infinity. */
  reconnectionAttempts?: number;
  /** Base delay of the backoff, ms. Default 500. */
  reconnectionDelay?: number;
  /** Largest delay of the backoff, ms. Default 10000. */
  reconnectionDelayMax?: number;
  /**
   * How long a connection must stay up before the backoff returns to its first step, ms;
   * 0 resets it as soon as a connection is established. Default 5000.
   */
  stableAfter?: number;
  /** Random source of the jitter, in [0, 1). Default Math.random. */
  random?: () => number;
  /**
   * Heartbeat asked for in `$hello` (ms), or false for none. A dead connection is
   * detected within `interval + timeout`. Default `{ interval: 25000, timeout: 20000 }`.
   */
  heartbeat?: { interval: number; timeout: number } | false;
  /** Resume the session after a reconnect (connection state recovery). Default true. */
  recovery?: boolean;
  /** Default timeout of emitWithAck and joinRoom / leaveRoom, ms. Default 10000. */
  ackTimeout?: number;
  /** How long to wait for `$welcome` after `$hello`, ms. Default 10000. */
  helloTimeout?: number;
  /** `emit` while disconnected: `'buffer'` (default) until reconnected, or `'reject'` (throw). */
  whenDisconnected?: 'buffer' | 'reject';
  /** Most messages kept in the offline buffer. Default 100. */
  maxBuffered?: number;
  /** `emitWithAck` while disconnected: `'wait'` (default) for the connection, or `'reject'`. */
  ackWhenDisconnected?: 'wait' | 'reject';
  /** Most requests waiting for an answer at once. Default 1000. */
  maxPendingAcks?: number;
  /**
   * Source of `online` / `offline` events; null turns the awareness off. Default: the
   * global object when it has `addEventListener` (browsers), else none.
   */
  network?: NetworkEvents | null;
  /**
   * Called for every `emit` / `emitWithAck`: the W3C trace context to send in the message's
   * `meta`, so the server's span for it joins the caller's trace (see docs/tracing.md for
   * one with `@opentelemetry/api`). Return undefined to send none. Default: none.
   */
  traceContext?: () => TraceContext | undefined;
}

/** A W3C trace context as `traceContext` returns it (the envelope's `meta`). */
export type TraceContext = EnvelopeMeta;

export interface ResolvedClientOptions {
  WebSocket: WebSocketConstructor | undefined;
  auth: CredentialSource<string> | undefined;
  query: CredentialSource<Record<string, string>> | undefined;
  protocol: 'auto' | 'basic';
  reconnection: boolean;
  reconnectionAttempts: number;
  reconnectionDelay: number;
  reconnectionDelayMax: number;
  stableAfter: number;
  random: () => number;
  heartbeat: { interval: number; timeout: number } | false;
  recovery: boolean;
  ackTimeout: number;
  helloTimeout: number;
  whenDisconnected: 'buffer' | 'reject';
  maxBuffered: number;
  ackWhenDisconnected: 'wait' | 'reject';
  maxPendingAcks: number;
  network: NetworkEvents | null;
  traceContext: (() => TraceContext | undefined) | undefined;
}

export const CLIENT_DEFAULTS = {
  protocol: 'auto',
  reconnection: true,
  reconnectionAttempts: Infinity,
  reconnectionDelay: 500,
  reconnectionDelayMax: 10_000,
  stableAfter: 5000,
  heartbeat: { interval: 25_000, timeout: 20_000 },
  recovery: true,
  ackTimeout: 10_000,
  helloTimeout: 10_000,
  whenDisconnected: 'buffer',
  maxBuffered: 100,
  ackWhenDisconnected: 'wait',
  maxPendingAcks: 1000,
} as const;

const KNOWN = new Set<string>([
  'WebSocket',
  'auth',
  'query',
  'random',
  'network',
  'traceContext',
  ...Object.keys(CLIENT_DEFAULTS),
]);

function fail(message: string): never {
  throw createClientError(TypeError, 'PKG_ERR_CLIENT_INVALID_OPTION', `Client: ${message}`);
}

function checkDuration(name: string, value: unknown, allowZero = false): number {
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < (allowZero ? 0 : 1) ||
    value > 2_147_483_647
  ) {
    fail(`${name} must be a number of milliseconds between ${allowZero ? 0 : 1} and 2147483647.`);
  }
  return value;
}

function checkCount(name: string, value: unknown, allowInfinity = false): number {
  const ok =
    (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) ||
    (allowInfinity && value === Infinity);
  if (!ok)
    fail(`${name} must be a whole number of 0 or more${allowInfinity ? ' (or Infinity)' : ''}.`);
  return value as number;
}

function checkChoice<T extends string>(name: string, value: unknown, choices: readonly T[]): T {
  if (!choices.includes(value as T))
    fail(`${name} must be one of ${choices.map((c) => `"${c}"`).join(', ')}.`);
  return value as T;
}

function defaultNetwork(): NetworkEvents | null {
  const g = globalThis as { addEventListener?: unknown; removeEventListener?: unknown };
  return typeof g.addEventListener === 'function' && typeof g.removeEventListener === 'function'
    ? (globalThis as unknown as NetworkEvents)
    : null;
}

/** Merges the options over the defaults and checks every value once. */
export function resolveOptions(options: ClientOptions = {}): ResolvedClientOptions {
  if (typeof options !== 'object' || options === null) {
    fail('options must be an object such as { reconnectionDelay: 500 }.');
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN.has(key)) fail(`unknown option "${key}"; known options: ${[...KNOWN].join(', ')}.`);
  }
  const o = { ...CLIENT_DEFAULTS, ...options } as ClientOptions & typeof CLIENT_DEFAULTS;
  if (o.WebSocket !== undefined && typeof o.WebSocket !== 'function') {
    fail('WebSocket must be a WebSocket constructor (for example the default export of "ws").');
  }
  if (o.auth !== undefined && typeof o.auth !== 'string' && typeof o.auth !== 'function') {
    fail('auth must be a token string or a function that returns one.');
  }
  if (
    o.query !== undefined &&
    typeof o.query !== 'function' &&
    (typeof o.query !== 'object' ||
      o.query === null ||
      Object.values(o.query).some((v) => typeof v !== 'string'))
  ) {
    fail(
      'query must be an object of string values such as { key: "..." }, or a function returning one.',
    );
  }
  if (typeof o.reconnection !== 'boolean') fail('reconnection must be true or false.');
  if (typeof o.recovery !== 'boolean') fail('recovery must be true or false.');
  if (o.traceContext !== undefined && typeof o.traceContext !== 'function')
    fail('traceContext must be a function returning { traceparent, tracestate? } or undefined.');
  if (o.random !== undefined && typeof o.random !== 'function')
    fail('random must be a function returning a number in [0, 1).');
  const base = checkDuration('reconnectionDelay', o.reconnectionDelay, true);
  const max = checkDuration('reconnectionDelayMax', o.reconnectionDelayMax, true);
  if (max < base) fail('reconnectionDelayMax must not be smaller than reconnectionDelay.');
  let heartbeat: ResolvedClientOptions['heartbeat'] = false;
  if (o.heartbeat !== false) {
    if (typeof o.heartbeat !== 'object' || o.heartbeat === null) {
      fail('heartbeat must be false or { interval, timeout } in milliseconds.');
    }
    heartbeat = {
      interval: checkDuration('heartbeat.interval', o.heartbeat.interval),
      timeout: checkDuration('heartbeat.timeout', o.heartbeat.timeout),
    };
  }
  let network: NetworkEvents | null;
  if (o.network === undefined) network = defaultNetwork();
  else if (o.network === null) network = null;
  else if (
    typeof o.network.addEventListener !== 'function' ||
    typeof o.network.removeEventListener !== 'function'
  ) {
    fail('network must have addEventListener and removeEventListener (like window), or be null.');
  } else network = o.network;
  return {
    WebSocket: o.WebSocket,
    auth: o.auth,
    query: o.query,
    protocol: checkChoice('protocol', o.protocol, ['auto', 'basic']),
    reconnection: o.reconnection,
    reconnectionAttempts: checkCount('reconnectionAttempts', o.reconnectionAttempts, true),
    reconnectionDelay: base,
    reconnectionDelayMax: max,
    stableAfter: checkDuration('stableAfter', o.stableAfter, true),
    random: o.random ?? Math.random,
    heartbeat,
    recovery: o.recovery,
    ackTimeout: checkDuration('ackTimeout', o.ackTimeout),
    helloTimeout: checkDuration('helloTimeout', o.helloTimeout),
    whenDisconnected: checkChoice('whenDisconnected', o.whenDisconnected, ['buffer', 'reject']),
    maxBuffered: checkCount('maxBuffered', o.maxBuffered),
    ackWhenDisconnected: checkChoice('ackWhenDisconnected', o.ackWhenDisconnected, [
      'wait',
      'reject',
    ]),
    maxPendingAcks: checkCount('maxPendingAcks', o.maxPendingAcks),
    network,
    traceContext: o.traceContext,
  };
}
