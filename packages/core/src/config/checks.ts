/**
 * The validation language of the configuration: one check per key, each returning `null`
 * for a good value or what was expected, and the functions that turn a failed check into a
 * `TypeError` (code `PKG_ERR_CORE_INVALID_CONFIG`) naming the key.
 */
import { Buffer } from 'node:buffer';
import {
  CorsConfig,
  compileTrustProxy,
  type CorsOptions,
  type TrustPredicate,
  type TrustProxySetting,
} from '@pkg/http';
import { createCoreError } from '../errors';
import type { ServerConfigOptions } from './options';
import { MAX_RESTART_DELAY_MS } from '@pkg/wire';

/** `null` when the value is good, else what was expected ("a positive number of bytes"). */
type Check = (value: unknown) => string | null;

/** How a received value is named in a message, without printing it whole. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(value)}`;
  if (typeof value === 'number' || typeof value === 'boolean') return `${typeof value} ${value}`;
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

export const isPlainObject = (v: unknown): v is Record<string, unknown> =>
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

const HISTORY_KEYS = new Set(['match', 'namespace', 'size', 'ttl']);
const HISTORY_SHAPE =
  'an array of { match: "chat:*", namespace?: "/", size: messages, ttl: milliseconds }';

/** `history`: what is wrong with the first bad entry, named by its index. */
function historyCheck(v: unknown): string | null {
  if (!Array.isArray(v)) return HISTORY_SHAPE;
  for (const [i, entry] of v.entries()) {
    const at = `${HISTORY_SHAPE} (history[${i}]`;
    if (!isPlainObject(entry)) return `${at} is not an object)`;
    const unknown = Object.keys(entry).find((k) => !HISTORY_KEYS.has(k));
    if (unknown !== undefined) return `${at} has the unknown key "${unknown}")`;
    const { match, namespace, size, ttl } = entry;
    if (typeof match !== 'string' || match.length === 0) {
      return `${at}.match must be a non-empty room name or pattern with *)`;
    }
    if (namespace !== undefined && (typeof namespace !== 'string' || !namespace.startsWith('/'))) {
      return `${at}.namespace must be a namespace name starting with "/")`;
    }
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 1) {
      return `${at}.size must be a positive whole number of messages)`;
    }
    if (typeof ttl !== 'number' || !Number.isSafeInteger(ttl) || ttl < 1 || ttl > 2 ** 31 - 1) {
      return `${at}.ttl must be a number of milliseconds from 1 to 2147483647)`;
    }
  }
  return null;
}

/** One check per key; a key is known when it is here. */
export const CHECKS: { readonly [K in keyof ServerConfigOptions]-?: Check } = {
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
  ws_binary_frames: (v) => (typeof v === 'boolean' ? null : 'true or false'),
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
  auth_refresh_grace: timer('a number of milliseconds up to 2147483647 (0 = no grace)', 0),
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
  // history
  history: historyCheck,
  history_max_replay: positiveInt('a positive number of messages'),
  history_max_replay_bytes: positiveInt('a positive number of bytes'),
  history_max_requests_per_second: nonNegativeInt('a whole number of requests (0 = no limit)'),
  history_max_bytes_per_second: nonNegativeInt('a whole number of bytes (0 = no limit)'),
  // observability
  metrics_path: (v) =>
    v === null || (typeof v === 'string' && v.startsWith('/'))
      ? null
      : 'a path starting with "/", or null to not serve metrics',
  metrics_prefix: (v) =>
    typeof v === 'string' && /^(?:[a-zA-Z_:][a-zA-Z0-9_:]*)?$/.test(v)
      ? null
      : 'a metric name prefix of letters, digits, "_" and ":" not starting with a digit (e.g. "pkg_"), or ""',
  metrics_allow: (v) =>
    isStringArray(v)
      ? null
      : 'an array of IP addresses, CIDR ranges and "loopback" / "linklocal" / "uniquelocal" ([] = token only)',
  metrics_token: (v) =>
    v === null || (typeof v === 'string' && v.length >= 16 && /^[\x21-\x7e]+$/.test(v))
      ? null
      : 'a token of at least 16 printable characters without spaces, or null',
  request_id_header: (v) =>
    v === null || (typeof v === 'string' && /^[a-z0-9!#$%&'*+.^_`|~-]{1,64}$/.test(v))
      ? null
      : 'a lower-case header name such as "x-request-id", or null to turn request ids off',
  request_id_response_header: bool,
  log_context: bool,
  tracing: bool,
  restart_spread: (v) =>
    typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_RESTART_DELAY_MS
      ? null
      : `a number of milliseconds from 0 to ${MAX_RESTART_DELAY_MS} (0 = close with 1001, no hint)`,
  // presence
  presence: (v) => {
    if (!Array.isArray(v)) return 'an array of {match, namespace?} room patterns ([] = off)';
    for (const entry of v) {
      const problem = presencePatternProblem(entry);
      if (problem !== null) return `an array of ${problem}`;
    }
    return null;
  },
  presence_interval: timer('a positive number of milliseconds up to 2147483647', 1),
  presence_max_list: positiveInt('a positive number of keys'),
  presence_max_meta_bytes: positiveInt('a positive number of bytes'),
  presence_node_timeout: timer('a positive number of milliseconds up to 2147483647', 1),
};

export const KEYS = Object.keys(CHECKS) as Array<keyof ServerConfigOptions>;

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

/** Throws the TypeError of the first thing wrong with `value` as the setting `key`. */
export function checkKey(key: keyof ServerConfigOptions, value: unknown): void {
  const expected = CHECKS[key](value);
  if (expected) throw invalid(key, expected, value);
  // CORS and trust-proxy values are checked by the code that uses them (@pkg/http), here,
  // so that a bad origin or CIDR range fails at construction with the key named.
  if (key === 'cors') delegate('cors', () => new CorsConfig(value as CorsOptions));
  if (key === 'metrics_allow') {
    delegate('metrics_allow', () => compileTrustProxy(value as string[], 'metrics_allow'));
  }
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

/** `trust_proxy` compiled to its predicate; a bad address or range throws naming the key. */
export function compileTrust(setting: TrustProxySetting | TrustPredicate): TrustPredicate {
  if (typeof setting === 'function') return setting;
  let predicate: TrustPredicate = () => false;
  delegate('trust_proxy', () => {
    predicate = compileTrustProxy(setting);
  });
  return predicate;
}

/** A deep copy of plain objects and arrays (Buffers shared), so callers cannot change stored values. */
export function copy<T>(value: T): T {
  if (Buffer.isBuffer(value)) return value;
  if (Array.isArray(value)) return value.map(copy) as T;
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = copy(v);
    return out as T;
  }
  return value;
}

/** The check of one `presence` entry: null when good, else what was expected. */
export function presencePatternProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return 'an object such as { match: "chat:*" }';
  }
  const entry = value as Record<string, unknown>;
  for (const key of Object.keys(entry)) {
    if (key !== 'match' && key !== 'namespace') return `{match, namespace?} without "${key}"`;
  }
  if (typeof entry['match'] !== 'string' || entry['match'] === '') {
    return '{match, namespace?} with match a non-empty room glob such as "chat:*"';
  }
  const ns = entry['namespace'];
  if (ns !== undefined && (typeof ns !== 'string' || !ns.startsWith('/'))) {
    return '{match, namespace?} with namespace a string starting with "/"';
  }
  return null;
}
