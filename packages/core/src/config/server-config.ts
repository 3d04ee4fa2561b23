import {
  CorsConfig,
  compileTrustProxy,
  httpHandlerDefaults,
  type CorsOptions,
  type TrustPredicate,
  type TrustProxySetting,
} from '@pkg/http';
import { wsHandlerDefaults } from '@pkg/ws-protocol';
import { createCoreError } from '../errors';

/** CORS settings as the spec writes them (snake_case): `CorsOptions` of @pkg/http. */
export type ServerCorsOptions = CorsOptions;

/** Key and certificate (PEM) for HTTPS/WSS; more `node:tls` options may be added. */
export interface ServerTlsOptions {
  key: string | Buffer;
  cert: string | Buffer;
  ca?: string | Buffer | Array<string | Buffer>;
  passphrase?: string;
}

/** What to do with a WebSocket event that no SocketOn handler declares. */
export type UnknownEventPolicy = 'error' | 'ignore';

/**
 * The keys `ServerConfig` accepts, snake_case as in the spec. Every key is optional; the
 * defaults are in {@link SERVER_CONFIG_DEFAULTS}. Sizes are bytes, durations milliseconds.
 */
export interface ServerConfigOptions {
  /** Listen address. Default `'0.0.0.0'`. */
  host?: string;
  /** Listen port, 0 picks a free one. Default `6001`. */
  port?: number;
  /** Debug mode: `log()` writes, 500 answers and `error` events carry details. Default `false`. */
  debug?: boolean;
  /** CORS for HTTP answers; its `allowed_origins` is also the WebSocket origin list. */
  cors?: ServerCorsOptions;
  /**
   * Which peers may set X-Forwarded-* / Forwarded: `true`, a list of IPs, CIDR ranges and
   * the names `loopback` / `linklocal` / `uniquelocal`, or a predicate `(address) => boolean`.
   * Default `false`.
   */
  trust_proxy?: TrustProxySetting | TrustPredicate;
  /** Path answered with the health document; `null` turns it off. Default `null`. */
  health_check_path?: string | null;
  /** WebSocket origin allow-list; `null` uses `cors.allowed_origins`. Default `null`. */
  ws_allowed_origins?: string[] | null;
  /** Accept WebSocket handshakes without an Origin header (non-browser clients). Default `true`. */
  allow_missing_origin?: boolean;
  /** Largest HTTP request body; larger ones get 413. Default 1 MiB. */
  max_body_size?: number;
  /** Largest WebSocket message; larger ones close the connection with 1009. Default 1 MiB. */
  max_message_size?: number;
  /** Unsent bytes allowed per WebSocket client before it is dropped (1013). Default 4 MiB. */
  max_buffered_amount?: number;
  /** Interval between WebSocket pings; 0 turns the heartbeat off. Default 25000. */
  heartbeat_interval?: number;
  /** Time a client has to answer a ping before it is terminated. Default 20000. */
  heartbeat_timeout?: number;
  /** Time handshake middleware may take before the upgrade is refused with 503; 0 = none. Default 10000. */
  handshake_timeout?: number;
  /** Time to receive the request headers (`server.headersTimeout`). Default 30000. */
  headers_timeout?: number;
  /** Time to receive a whole request (`server.requestTimeout`); 0 = none. Default 60000. */
  request_timeout?: number;
  /** Idle time of a keep-alive connection (`server.keepAliveTimeout`). Default 5000. */
  keep_alive_timeout?: number;
  /** Most TCP connections at once (HTTP and WebSocket); 0 = no limit. Default 10000. */
  max_connections?: number;
  /** Time close() keeps listening after draining starts (health 503) before it stops accepting. Default 0. */
  shutdown_delay?: number;
  /** How long close() lets in-flight requests and close handshakes finish. Default 10000. */
  shutdown_timeout?: number;
  /** Unknown WebSocket events: `'error'` answers an `error` event, `'ignore'` only logs. */
  unknown_event?: UnknownEventPolicy;
  /** permessage-deflate on WebSocket connections: `true` (threshold 1024 bytes) or `{ threshold }`. Default `false`. */
  per_message_deflate?: boolean | { threshold?: number };
  /** Time a started WebSocket close handshake may take before the socket is destroyed. Default 5000. */
  ws_close_timeout?: number;
  /** What a binary WebSocket message gets: an `error` event (`'error'`) or close 1003 (`'close'`). Default `'error'`. */
  ws_binary_messages?: 'error' | 'close';
  /**
   * JSON from the network (HTTP bodies, WebSocket messages) holding a `__proto__` or
   * `constructor.prototype` key: `'error'` refuses it (HTTP 400, WebSocket `invalid_json`),
   * `'remove'` drops those keys and goes on. Default `'error'`.
   */
  json_prototype_keys?: 'error' | 'remove';
  /**
   * Keep each WebSocket client's upgrade request on `WsClient.request` for its whole life
   * (about 1.3 KiB per connection). Handshake middleware sees the request either way.
   * Default `false`.
   */
  ws_keep_request?: boolean;
  /** Serve HTTPS and WSS with this key and certificate. Default `null` (plain HTTP). */
  tls?: ServerTlsOptions | null;
  /** Protocol version 1: how long a dropped client's session can be resumed; 0 turns recovery off. Default 120000. */
  recovery_window?: number;
  /** Protocol version 1: messages kept per session for replay after a resume. Default 1000. */
  recovery_buffer?: number;
  /** Protocol version 1: sessions kept without a connection (away), in all; past it the oldest is ended. 0 = no bound. Default 10000. */
  max_away_sessions?: number;
  /** Protocol version 1: away sessions per client address; past it the address's oldest is ended. `null` = as many as `max_connections_per_ip` (0 = no bound). Default `null`. */
  max_away_sessions_per_ip?: number | null;
  /** Protocol version 1: time the whole authentication of a client may take, from its start (the auth handlers included); then close 4401. Default 10000. */
  auth_timeout?: number;
  /** Time a connection that negotiated the subprotocol `pkg.v1` waits for `$hello` before it counts as version 0 and `OnConnect` runs (other connections never wait); 0 = no wait. Default 1000. */
  hello_wait?: number;
  /** Client requests (`id`) per connection whose answer is not sent yet; one more is `too_many_pending`. Default 128. */
  max_pending_requests?: number;
  /** Server requests (`emitWithAck`) per client whose answer has not come; one more is a RangeError. Default 64. */
  max_pending_server_requests?: number;
  /** Default timeout of `emitWithAck`. Default 10000. */
  ack_timeout?: number;
  /** Path answered with the OpenAPI 3.1 document of the HTTP routes; `null` turns it off. Default `null`. */
  openapi_path?: string | null;
  /** Path answered with the AsyncAPI 3.0 document of the WebSocket events; `null` turns it off. Default `null`. */
  asyncapi_path?: string | null;
  /** `info.title` of the OpenAPI and AsyncAPI documents. Default `'API'`. */
  api_title?: string;
  /** `info.version` of the OpenAPI and AsyncAPI documents. Default `'1.0.0'`. */
  api_version?: string;
  /** Inbound WebSocket messages per second per connection (bursts of twice as many); 0 = no limit. Default 100. */
  ws_max_messages_per_second?: number;
  /** Inbound WebSocket bytes per second per connection (bursts of twice as many, at least max_message_size); 0 = no limit. Default 1 MiB. */
  ws_max_bytes_per_second?: number;
  /** Protocol errors (invalid messages, unknown events, over budget) before a connection is closed with 1008, one more allowed per second; 0 = no limit. Default 10. */
  ws_max_protocol_errors?: number;
  /** Milliseconds between two `error` replies with the same code to one connection; 0 = every refusal is answered. Default 1000. */
  ws_error_reply_interval?: number;
  /** Messages one WebSocket connection may have handled per event-loop turn; 0 = no bound. Default 32. */
  ws_max_messages_per_turn?: number;
  /** WebSocket handlers of one connection that may be unfinished at once; more are refused with `busy`. 0 = no limit. Default 128. */
  ws_max_pending?: number;
  /** Time a SocketOn handler may take before it is forgotten and answered `handler_timeout`; 0 = no limit. Default 30000. */
  ws_handler_timeout?: number;
  /** Time a client's OnConnect handlers may take before it is closed with 1011; 0 = no limit. Default 10000. */
  connect_timeout?: number;
  /** Time an HTTP middleware chain and handler may take before the request is answered 503; 0 = no limit. Default 30000. */
  http_handler_timeout?: number;
  /** WebSocket clients per client address (after trust_proxy); more are refused with 503. 0 = no limit. Default 0. */
  max_connections_per_ip?: number;
  /** Connections over max_connections kept for the health check (others get 503). Default 16. */
  connection_reserve?: number;
  /** Rooms one WebSocket client may be in at once, over all namespaces; one more join is refused (`too_many_rooms`). 0 = no limit. Default 128. */
  max_rooms_per_client?: number;
  /** Longest room or namespace name, in UTF-16 code units; a longer one is refused (`invalid_payload`). Default 128. */
  max_room_name_length?: number;
  /**
   * Prefix length (bits, 1-128) by which IPv6 client addresses are grouped for the
   * per-address limits (max_connections_per_ip, the `address` rate-limit key, HTTP route
   * rate limits): every address of one /64 counts as one client by default. IPv4 addresses
   * are counted one by one. Default 64.
   */
  ipv6_subnet?: number;
  /**
   * How long run() waits for the adapter's and the rate-limit store's `connect()` before it
   * listens anyway (and logs that it did); 0 = do not wait. Default 10000.
   */
  backend_connect_timeout?: number;
  /** Host header allow-list for HTTP and upgrades: names, `.example.com` (and subdomains) or `*`; `null` = no check. Default `null`. */
  allowed_hosts?: string[] | null;
  /**
   * Whom a `RateLimit` on a `SocketOn` event counts: `'address'` (the client address after
   * trust_proxy, so more connections do not multiply the budget), `'client'` (each
   * connection), or a function `(clientId, address) => key` (e.g. a user id from the
   * client's data). Default `'address'`.
   */
  ws_rate_limit_key?: WsRateLimitKey;
}

/** See `ws_rate_limit_key`. */
export type WsRateLimitKey = 'address' | 'client' | ((clientId: string, address: string) => string);

/** The resolved configuration: every key present. */
export type ResolvedServerConfig = {
  readonly [K in keyof ServerConfigOptions]-?: Exclude<ServerConfigOptions[K], undefined>;
};

/**
 * Defaults of every configuration key. The limits of the WebSocket and HTTP layers are
 * their packages' own defaults (`wsHandlerDefaults`, `httpHandlerDefaults`), never restated.
 */
export const SERVER_CONFIG_DEFAULTS: ResolvedServerConfig = Object.freeze({
  host: '0.0.0.0',
  port: 6001,
  debug: httpHandlerDefaults.debug,
  cors: {},
  trust_proxy: httpHandlerDefaults.trustProxy,
  health_check_path: null,
  ws_allowed_origins: null,
  allow_missing_origin: wsHandlerDefaults.allowMissingOrigin,
  max_body_size: httpHandlerDefaults.maxBodySize,
  max_message_size: wsHandlerDefaults.maxPayload,
  max_buffered_amount: wsHandlerDefaults.maxBufferedAmount,
  heartbeat_interval: wsHandlerDefaults.heartbeatInterval,
  heartbeat_timeout: wsHandlerDefaults.heartbeatTimeout,
  handshake_timeout: wsHandlerDefaults.handshakeTimeout,
  headers_timeout: 30_000,
  request_timeout: 60_000,
  keep_alive_timeout: 5_000,
  max_connections: 10_000,
  shutdown_delay: 0,
  shutdown_timeout: 10_000,
  unknown_event: 'error',
  per_message_deflate: wsHandlerDefaults.perMessageDeflate,
  ws_close_timeout: wsHandlerDefaults.closeTimeout,
  ws_binary_messages: wsHandlerDefaults.binaryMessages,
  json_prototype_keys: httpHandlerDefaults.prototypeKeys,
  // Not wsHandlerDefaults.keepRequest: the server reads the request only during the
  // handshake, so by default it does not hold it for the life of every connection.
  ws_keep_request: false,
  tls: null,
  recovery_window: 120_000,
  recovery_buffer: 1000,
  max_away_sessions: 10_000,
  max_away_sessions_per_ip: null,
  auth_timeout: 10_000,
  hello_wait: 1000,
  max_pending_requests: 128,
  max_pending_server_requests: 64,
  ack_timeout: 10_000,
  openapi_path: null,
  asyncapi_path: null,
  api_title: 'API',
  api_version: '1.0.0',
  ws_max_messages_per_second: wsHandlerDefaults.maxMessagesPerSecond,
  ws_max_bytes_per_second: wsHandlerDefaults.maxBytesPerSecond,
  ws_max_protocol_errors: wsHandlerDefaults.maxProtocolErrors,
  ws_error_reply_interval: wsHandlerDefaults.errorReplyInterval,
  ws_max_messages_per_turn: wsHandlerDefaults.maxMessagesPerTurn,
  ws_max_pending: 128,
  ws_handler_timeout: 30_000,
  connect_timeout: 10_000,
  http_handler_timeout: 30_000,
  max_connections_per_ip: 0,
  connection_reserve: 16,
  max_rooms_per_client: 128,
  max_room_name_length: 128,
  ipv6_subnet: 64,
  backend_connect_timeout: 10_000,
  allowed_hosts: null,
  ws_rate_limit_key: 'address',
});

type Check = (value: unknown) => string | null;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${value}`;
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' &&
  v !== null &&
  !Array.isArray(v) &&
  (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);

const isStringArray = (v: unknown): v is string[] =>
  Array.isArray(v) && v.every((s) => typeof s === 'string');

const bool: Check = (v) => (typeof v === 'boolean' ? null : 'true or false');

const nonNegativeInt =
  (what: string): Check =>
  (v) =>
    typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? null : what;

const positiveInt =
  (what: string): Check =>
  (v) =>
    typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? null : what;

/** A setTimeout delay: an integer from `min` to 2^31-1. */
const timer =
  (what: string, min: number): Check =>
  (v) =>
    typeof v === 'number' && Number.isSafeInteger(v) && v >= min && v <= 2 ** 31 - 1 ? null : what;

const isPem = (v: unknown): boolean =>
  (typeof v === 'string' && v.length > 0) || Buffer.isBuffer(v);

const TLS_CHECKS: Record<string, Check> = {
  key: (v) => (isPem(v) ? null : 'a PEM string or Buffer'),
  cert: (v) => (isPem(v) ? null : 'a PEM string or Buffer'),
  ca: (v) =>
    isPem(v) || (Array.isArray(v) && v.every(isPem))
      ? null
      : 'a PEM string or Buffer, or an array of them',
  passphrase: (v) => (typeof v === 'string' ? null : 'a string'),
};

const CHECKS: { readonly [K in keyof ServerConfigOptions]-?: Check } = {
  host: (v) => (typeof v === 'string' && v.length > 0 ? null : 'a non-empty string'),
  port: (v) =>
    typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 65535
      ? null
      : 'an integer from 0 to 65535',
  debug: bool,
  cors: (v) => (isPlainObject(v) ? null : 'an object with allowed_origins, allowed_methods, ...'),
  trust_proxy: (v) =>
    typeof v === 'boolean' || isStringArray(v) || typeof v === 'function'
      ? null
      : 'true, false, or an array of IP addresses / CIDR ranges (or a function (address) => boolean)',
  health_check_path: (v) =>
    v === null || (typeof v === 'string' && v.startsWith('/'))
      ? null
      : 'a path starting with "/", or null to turn the health check off',
  ws_allowed_origins: (v) =>
    v === null || isStringArray(v) ? null : 'an array of origins, or null to use cors',
  allow_missing_origin: bool,
  max_body_size: positiveInt('a positive number of bytes'),
  max_message_size: positiveInt('a positive number of bytes'),
  max_buffered_amount: positiveInt('a positive number of bytes'),
  heartbeat_interval: nonNegativeInt('a number of milliseconds (0 turns the heartbeat off)'),
  heartbeat_timeout: positiveInt('a positive number of milliseconds'),
  handshake_timeout: nonNegativeInt('a number of milliseconds (0 = no limit)'),
  headers_timeout: positiveInt('a positive number of milliseconds'),
  request_timeout: nonNegativeInt('a number of milliseconds (0 = no limit)'),
  keep_alive_timeout: positiveInt('a positive number of milliseconds'),
  max_connections: nonNegativeInt('a whole number of connections (0 = no limit)'),
  shutdown_delay: nonNegativeInt('a number of milliseconds'),
  shutdown_timeout: nonNegativeInt('a number of milliseconds'),
  unknown_event: (v) => (v === 'error' || v === 'ignore' ? null : '"error" or "ignore"'),
  per_message_deflate: (v) =>
    typeof v === 'boolean' ||
    (isPlainObject(v) &&
      Object.keys(v).every((k) => k === 'threshold') &&
      (v['threshold'] === undefined ||
        (typeof v['threshold'] === 'number' &&
          Number.isSafeInteger(v['threshold']) &&
          v['threshold'] >= 0)))
      ? null
      : 'true, false, or { threshold: bytes }',
  ws_close_timeout: positiveInt('a positive number of milliseconds'),
  ws_binary_messages: (v) => (v === 'error' || v === 'close' ? null : '"error" or "close"'),
  json_prototype_keys: (v) => (v === 'error' || v === 'remove' ? null : '"error" or "remove"'),
  ws_keep_request: (v) => (typeof v === 'boolean' ? null : 'true or false'),
  tls: (v) => (v === null || isPlainObject(v) ? null : 'an object with key and cert, or null'),
  recovery_window: timer('a number of milliseconds up to 2147483647 (0 turns recovery off)', 0),
  recovery_buffer: positiveInt('a positive number of messages'),
  max_away_sessions: nonNegativeInt('a whole number of sessions (0 = no bound)'),
  max_away_sessions_per_ip: (v) =>
    v === null || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0)
      ? null
      : 'a whole number of sessions (0 = no bound), or null for max_connections_per_ip',
  auth_timeout: timer('a positive number of milliseconds up to 2147483647', 1),
  hello_wait: timer('a number of milliseconds up to 2147483647 (0 = no wait)', 0),
  max_pending_requests: positiveInt('a positive number of requests'),
  max_pending_server_requests: positiveInt('a positive number of requests'),
  ack_timeout: timer('a positive number of milliseconds up to 2147483647', 1),
  openapi_path: (v) =>
    v === null || (typeof v === 'string' && v.startsWith('/'))
      ? null
      : 'a path starting with "/", or null to turn it off',
  asyncapi_path: (v) =>
    v === null || (typeof v === 'string' && v.startsWith('/'))
      ? null
      : 'a path starting with "/", or null to turn it off',
  api_title: (v) => (typeof v === 'string' && v.length > 0 ? null : 'a non-empty string'),
  api_version: (v) => (typeof v === 'string' && v.length > 0 ? null : 'a non-empty string'),
  ws_max_messages_per_second: nonNegativeInt('a whole number of messages (0 = no limit)'),
  ws_max_bytes_per_second: nonNegativeInt('a whole number of bytes (0 = no limit)'),
  ws_max_protocol_errors: nonNegativeInt('a whole number of errors (0 = no limit)'),
  ws_error_reply_interval: timer('a number of milliseconds (0 = answer every refusal)', 0),
  ws_max_messages_per_turn: nonNegativeInt('a whole number of messages (0 = no bound)'),
  ws_max_pending: nonNegativeInt('a whole number of handlers (0 = no limit)'),
  ws_handler_timeout: timer('a number of milliseconds (0 = no limit)', 0),
  connect_timeout: timer('a number of milliseconds (0 = no limit)', 0),
  http_handler_timeout: timer('a number of milliseconds (0 = no limit)', 0),
  max_connections_per_ip: nonNegativeInt('a whole number of connections (0 = no limit)'),
  connection_reserve: nonNegativeInt('a whole number of connections'),
  max_rooms_per_client: nonNegativeInt('a whole number of rooms (0 = no limit)'),
  max_room_name_length: positiveInt('a positive number of characters'),
  ipv6_subnet: (v) =>
    typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 128
      ? null
      : 'a prefix length in bits from 1 to 128 (e.g. 64 groups each /64)',
  backend_connect_timeout: timer('a number of milliseconds up to 2147483647 (0 = do not wait)', 0),
  allowed_hosts: (v) =>
    v === null || (isStringArray(v) && v.length > 0 && v.every((h) => h.trim() !== ''))
      ? null
      : 'a non-empty array of host names (e.g. ["example.com", ".example.com", "localhost"]), or null',
  ws_rate_limit_key: (v) =>
    v === 'address' || v === 'client' || typeof v === 'function'
      ? null
      : '"address", "client" or a function (clientId, address) => string',
};

const KEYS = Object.keys(CHECKS) as Array<keyof ServerConfigOptions>;

function invalid(key: string, expected: string, value: unknown): TypeError {
  return createCoreError(
    TypeError,
    'PKG_ERR_CORE_INVALID_CONFIG',
    `ServerConfig: "${key}" must be ${expected}, got ${describe(value)}.`,
  );
}

function checkNested(
  parent: string,
  value: Record<string, unknown>,
  checks: Record<string, Check>,
): void {
  for (const [key, inner] of Object.entries(value)) {
    const check = checks[key];
    if (!check) {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_CONFIG',
        `ServerConfig: unknown key "${parent}.${key}". Known keys of ${parent}: ${Object.keys(checks).join(', ')}.`,
      );
    }
    if (inner === undefined) continue;
    const expected = check(inner);
    if (expected) throw invalid(`${parent}.${key}`, expected, inner);
  }
}

function delegate(key: string, check: () => unknown): void {
  try {
    check();
  } catch (err) {
    const reason = (err as { message?: unknown }).message;
    throw createCoreError(
      TypeError,
      'PKG_ERR_CORE_INVALID_CONFIG',
      `ServerConfig: "${key}" is not valid: ${String(reason ?? err)}`,
    );
  }
}

function checkKey(key: keyof ServerConfigOptions, value: unknown): void {
  const expected = CHECKS[key](value);
  if (expected) throw invalid(key, expected, value);
  // CORS and trust-proxy values are checked by the code that uses them (@pkg/http), here,
  // so that a bad origin or CIDR range fails at construction with the key named.
  if (key === 'cors') delegate('cors', () => new CorsConfig(value as CorsOptions));
  // trust_proxy is compiled where it is set (see ServerConfig), which checks it too.
  if (key === 'tls' && value !== null) {
    const tls = value as Record<string, unknown>;
    checkNested('tls', tls, TLS_CHECKS);
    for (const required of ['key', 'cert']) {
      if (tls[required] === undefined) {
        throw invalid(
          `tls.${required}`,
          'a PEM string or Buffer (both key and cert are needed)',
          undefined,
        );
      }
    }
  }
}

function compileTrust(setting: TrustProxySetting | TrustPredicate): TrustPredicate {
  if (typeof setting === 'function') return setting;
  let predicate: TrustPredicate = () => false;
  delegate('trust_proxy', () => {
    predicate = compileTrustProxy(setting);
  });
  return predicate;
}

function copy<T>(value: T): T {
  if (Buffer.isBuffer(value)) return value;
  if (Array.isArray(value)) return value.map(copy) as T;
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = copy(v);
    return out as T;
  }
  return value;
}

/**
 * The server's configuration, built from the spec's snake_case keys plus the limits of the
 * architecture. Every key is checked once, at construction or in a setter: an unknown key
 * or a value of the wrong type throws a `TypeError` (code `PKG_ERR_CORE_INVALID_CONFIG`)
 * that names the key and what was expected.
 *
 * A `Server` reads its configuration once, when it is constructed; from then on the
 * configuration is locked and setters throw.
 */
export class ServerConfig {
  readonly #values: { -readonly [K in keyof ResolvedServerConfig]: ResolvedServerConfig[K] };
  #lockedBy: string | null = null;
  /** `trust_proxy` compiled once, when it is set: the one predicate the server uses. */
  #trust: TrustPredicate;

  constructor(config: ServerConfigOptions = {}) {
    if (!isPlainObject(config)) {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_CONFIG',
        `ServerConfig: expected an object of settings such as { port: 6001 }, got ${describe(config)}.`,
      );
    }
    for (const key of Object.keys(config)) {
      if (!Object.hasOwn(CHECKS, key)) {
        throw createCoreError(
          TypeError,
          'PKG_ERR_CORE_INVALID_CONFIG',
          `ServerConfig: unknown key "${key}". Known keys: ${KEYS.join(', ')}.`,
        );
      }
    }
    this.#values = { ...SERVER_CONFIG_DEFAULTS };
    for (const key of KEYS) {
      const value = (config as Record<string, unknown>)[key];
      if (value === undefined) continue;
      checkKey(key, value);
      (this.#values as Record<string, unknown>)[key] = copy(value);
    }
    this.#trust = compileTrust(this.#values.trust_proxy);
    this.#checkCombination();
  }

  /** Sets one key with the same checks as the constructor. */
  set<K extends keyof ServerConfigOptions>(key: K, value: ServerConfigOptions[K]): this {
    if (!Object.hasOwn(CHECKS, key)) {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_CONFIG',
        `ServerConfig: unknown key "${String(key)}". Known keys: ${KEYS.join(', ')}.`,
      );
    }
    if (this.#lockedBy) {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_CONFIG',
        `ServerConfig: cannot set "${key}" because a ${this.#lockedBy} already uses this configuration; set it before passing the configuration to new Server().`,
      );
    }
    const next = value === undefined ? SERVER_CONFIG_DEFAULTS[key] : value;
    checkKey(key, next);
    if (key === 'trust_proxy') this.#trust = compileTrust(next as TrustProxySetting);
    const previous = this.#values[key];
    (this.#values as Record<string, unknown>)[key] = copy(next);
    try {
      this.#checkCombination();
    } catch (err) {
      (this.#values as Record<string, unknown>)[key] = previous;
      throw err;
    }
    return this;
  }

  /** The value of one key (defaults applied). */
  get<K extends keyof ServerConfigOptions>(key: K): ResolvedServerConfig[K] {
    return this.#values[key];
  }

  setHost(host: string): this {
    return this.set('host', host);
  }
  setPort(port: number): this {
    return this.set('port', port);
  }
  setDebug(debug: boolean): this {
    return this.set('debug', debug);
  }
  setCors(cors: ServerCorsOptions): this {
    return this.set('cors', cors);
  }
  setTrustProxy(trustProxy: TrustProxySetting | TrustPredicate): this {
    return this.set('trust_proxy', trustProxy);
  }
  setHealthCheckPath(path: string | null): this {
    return this.set('health_check_path', path);
  }
  setWebSocketAllowedOrigins(origins: string[] | null): this {
    return this.set('ws_allowed_origins', origins);
  }
  setTls(tls: ServerTlsOptions | null): this {
    return this.set('tls', tls);
  }

  getHost(): string {
    return this.#values.host;
  }
  getPort(): number {
    return this.#values.port;
  }
  isDebug(): boolean {
    return this.#values.debug;
  }
  getCors(): ServerCorsOptions {
    return copy(this.#values.cors);
  }
  /** The `trust_proxy` setting as given. */
  getTrustProxy(): TrustProxySetting | TrustPredicate {
    return copy(this.#values.trust_proxy);
  }
  /** The `trust_proxy` setting compiled to the predicate HTTP and WebSocket both use. */
  getTrustPredicate(): TrustPredicate {
    return this.#trust;
  }
  getHealthCheckPath(): string | null {
    return this.#values.health_check_path;
  }
  /** The WebSocket origin list: `ws_allowed_origins` when set, else the CORS origins, else `['*']`. */
  getWebSocketAllowedOrigins(): string[] {
    return [...(this.#values.ws_allowed_origins ?? this.#values.cors.allowed_origins ?? ['*'])];
  }
  getAllowMissingOrigin(): boolean {
    return this.#values.allow_missing_origin;
  }
  getMaxBodySize(): number {
    return this.#values.max_body_size;
  }
  getMaxMessageSize(): number {
    return this.#values.max_message_size;
  }
  getMaxBufferedAmount(): number {
    return this.#values.max_buffered_amount;
  }
  getHeartbeatInterval(): number {
    return this.#values.heartbeat_interval;
  }
  getHeartbeatTimeout(): number {
    return this.#values.heartbeat_timeout;
  }
  getHandshakeTimeout(): number {
    return this.#values.handshake_timeout;
  }
  getHeadersTimeout(): number {
    return this.#values.headers_timeout;
  }
  getRequestTimeout(): number {
    return this.#values.request_timeout;
  }
  getKeepAliveTimeout(): number {
    return this.#values.keep_alive_timeout;
  }
  getMaxConnections(): number {
    return this.#values.max_connections;
  }
  getShutdownDelay(): number {
    return this.#values.shutdown_delay;
  }
  getShutdownTimeout(): number {
    return this.#values.shutdown_timeout;
  }
  getUnknownEventPolicy(): UnknownEventPolicy {
    return this.#values.unknown_event;
  }
  getPerMessageDeflate(): boolean | { threshold?: number } {
    return copy(this.#values.per_message_deflate);
  }
  getWebSocketCloseTimeout(): number {
    return this.#values.ws_close_timeout;
  }
  getWebSocketBinaryMessages(): 'error' | 'close' {
    return this.#values.ws_binary_messages;
  }
  getJsonPrototypeKeys(): 'error' | 'remove' {
    return this.#values.json_prototype_keys;
  }
  getWebSocketKeepRequest(): boolean {
    return this.#values.ws_keep_request;
  }
  getTls(): ServerTlsOptions | null {
    return this.#values.tls;
  }
  getOpenApiPath(): string | null {
    return this.#values.openapi_path;
  }
  getAsyncApiPath(): string | null {
    return this.#values.asyncapi_path;
  }
  /** `info` of the generated API documents. */
  getApiInfo(): { title: string; version: string } {
    return { title: this.#values.api_title, version: this.#values.api_version };
  }
  /** The `allowed_hosts` list (a copy), or null when Host is not checked. */
  getAllowedHosts(): string[] | null {
    return this.#values.allowed_hosts === null ? null : [...this.#values.allowed_hosts];
  }

  /** Every key with its value, defaults applied (TLS key material left out). */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = copy({ ...this.#values, tls: null });
    out['tls'] = this.#values.tls ? '[configured]' : null;
    return out;
  }

  /** Called by `Server`: from now on the configuration cannot change. */
  lock(owner: string): void {
    this.#lockedBy ??= owner;
  }

  /** Whether a Server has taken this configuration. */
  isLocked(): boolean {
    return this.#lockedBy !== null;
  }

  #checkCombination(): void {
    const { headers_timeout, request_timeout } = this.#values;
    if (request_timeout > 0 && headers_timeout > request_timeout) {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_CONFIG',
        `ServerConfig: "headers_timeout" (${headers_timeout} ms) must not be longer than "request_timeout" (${request_timeout} ms); raise request_timeout or set it to 0.`,
      );
    }
  }
}
