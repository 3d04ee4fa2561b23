/**
 * The options of `mountAdmin`: merged over {@link ADMIN_DEFAULTS} and checked once, with a
 * TypeError naming the option for anything unknown or out of range.
 */
import type { Request } from '@pkg/core';
import { createAdminError } from './errors';

/**
 * The application's own check of an admin request (a session cookie, an SSO header): true
 * or a string (the operator's name, for the audit) to let it in, false to refuse.
 */
export type AdminAuthorize = (request: Request) => boolean | string | Promise<boolean | string>;

/** Limits of one connection's live trace. */
export interface AdminTraceOptions {
  /** Ms a trace runs before it turns itself off (default 60 000, at most 600 000). */
  readonly duration?: number;
  /** Messages kept per traced connection, the oldest dropped first (default 200). */
  readonly maxMessages?: number;
  /** Bytes of message text kept per traced connection (default 256 KiB). */
  readonly maxBytes?: number;
  /** Characters kept of one message (default 2 048; the rest is cut and marked). */
  readonly maxMessageChars?: number;
  /** Connections traced at once per instance (default 10). */
  readonly maxTraced?: number;
}

/** What `mountAdmin(server, options)` takes. */
export interface AdminOptions {
  /** Where the page is served (default `/admin`); its JSON endpoints are under `<path>/api/`. */
  readonly path?: string;
  /**
   * Addresses that may open the page without a token: addresses, CIDR ranges or `loopback`,
   * `linklocal`, `uniquelocal`, as in `trust_proxy` (default `['loopback']`; `[]`: none).
   */
  readonly allow?: readonly string[];
  /** A bearer token (`Authorization: Bearer <token>`) that opens the page from any address. */
  readonly token?: string | null;
  /**
   * The application's check. Alone (no `allow`, no `token` given), it decides by itself;
   * with either of them, a request must pass both.
   */
  readonly authorize?: AdminAuthorize;
  /** Actions that change something, each off by default; each use is audited. */
  readonly actions?: { readonly disconnect?: boolean; readonly revoke?: boolean };
  /** Rows per page when a request names none (default 50). */
  readonly pageSize?: number;
  /** The largest page a request may ask for (default 200). */
  readonly maxPageSize?: number;
  /** Ms to wait for the other instances' answers (default 1 000). */
  readonly queryTimeout?: number;
  /** Audit entries kept in memory, the oldest dropped first (default 200). */
  readonly auditSize?: number;
  readonly trace?: AdminTraceOptions;
}

export interface ResolvedTraceOptions {
  readonly duration: number;
  readonly maxMessages: number;
  readonly maxBytes: number;
  readonly maxMessageChars: number;
  readonly maxTraced: number;
}

export interface ResolvedAdminOptions {
  readonly path: string;
  /** null: the address rule is off (only `authorize` decides). */
  readonly allow: readonly string[] | null;
  readonly token: string | null;
  readonly authorize: AdminAuthorize | null;
  readonly actions: { readonly disconnect: boolean; readonly revoke: boolean };
  readonly pageSize: number;
  readonly maxPageSize: number;
  readonly queryTimeout: number;
  readonly auditSize: number;
  readonly trace: ResolvedTraceOptions;
}

export const ADMIN_DEFAULTS = {
  path: '/admin',
  allow: ['loopback'],
  pageSize: 50,
  maxPageSize: 200,
  queryTimeout: 1000,
  auditSize: 200,
  trace: {
    duration: 60_000,
    maxMessages: 200,
    maxBytes: 256 * 1024,
    maxMessageChars: 2048,
    maxTraced: 10,
  },
} as const;

/** `maxPageSize` cannot exceed what core lists per call. */
const PAGE_CAP = 500;
const KEYS = new Set([
  'path',
  'allow',
  'token',
  'authorize',
  'actions',
  'pageSize',
  'maxPageSize',
  'queryTimeout',
  'auditSize',
  'trace',
]);
const TRACE_KEYS = new Set(['duration', 'maxMessages', 'maxBytes', 'maxMessageChars', 'maxTraced']);

function invalid(message: string): Error {
  return createAdminError(TypeError, 'PKG_ERR_ADMIN_INVALID_OPTION', `mountAdmin: ${message}`);
}

function whole(name: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw invalid(`${name} must be a whole number from ${min} to ${max}, got ${String(value)}.`);
  }
  return value;
}

function resolveTrace(trace: AdminTraceOptions | undefined): ResolvedTraceOptions {
  const d = ADMIN_DEFAULTS.trace;
  if (trace === undefined) return d;
  if (typeof trace !== 'object' || trace === null) throw invalid('trace must be an object.');
  for (const key of Object.keys(trace)) {
    if (!TRACE_KEYS.has(key)) throw invalid(`trace.${key} is not an option (${[...TRACE_KEYS].join(', ')}).`); // prettier-ignore
  }
  return {
    duration: whole('trace.duration', trace.duration, d.duration, 1, 600_000),
    maxMessages: whole('trace.maxMessages', trace.maxMessages, d.maxMessages, 1, 10_000),
    maxBytes: whole('trace.maxBytes', trace.maxBytes, d.maxBytes, 1024, 16 * 1024 * 1024),
    maxMessageChars: whole('trace.maxMessageChars', trace.maxMessageChars, d.maxMessageChars, 16, 1024 * 1024), // prettier-ignore
    maxTraced: whole('trace.maxTraced', trace.maxTraced, d.maxTraced, 1, 1000),
  };
}

/** Merges the options over the defaults and checks them once. */
export function resolveAdminOptions(options: AdminOptions = {}): ResolvedAdminOptions {
  if (typeof options !== 'object' || options === null) throw invalid('options must be an object.');
  for (const key of Object.keys(options)) {
    if (!KEYS.has(key)) throw invalid(`${key} is not an option (${[...KEYS].join(', ')}).`);
  }
  const path = options.path ?? ADMIN_DEFAULTS.path;
  if (typeof path !== 'string' || !/^(\/[A-Za-z0-9._~-]+)+$/.test(path)) {
    throw invalid(`path must start with "/", not end with "/", and hold only URL-safe characters, got ${JSON.stringify(path)}.`); // prettier-ignore
  }
  const { allow, token, authorize } = options;
  if (
    allow !== undefined &&
    (!Array.isArray(allow) || !allow.every((a) => typeof a === 'string'))
  ) {
    throw invalid('allow must be a list of addresses, CIDR ranges or names such as "loopback".');
  }
  if (token !== undefined && token !== null && (typeof token !== 'string' || token.length < 16)) {
    throw invalid('token must be a string of at least 16 characters (a random secret), or null.');
  }
  if (authorize !== undefined && typeof authorize !== 'function') {
    throw invalid('authorize must be a function (request) => boolean | string.');
  }
  const actions = options.actions ?? {};
  if (typeof actions !== 'object' || actions === null) throw invalid('actions must be an object.');
  for (const [key, value] of Object.entries(actions)) {
    if (key !== 'disconnect' && key !== 'revoke') throw invalid(`actions.${key} is not an action (disconnect, revoke).`); // prettier-ignore
    if (typeof value !== 'boolean') throw invalid(`actions.${key} must be true or false.`);
  }
  const maxPageSize = whole('maxPageSize', options.maxPageSize, ADMIN_DEFAULTS.maxPageSize, 1, PAGE_CAP); // prettier-ignore
  const pageSize = whole('pageSize', options.pageSize, Math.min(ADMIN_DEFAULTS.pageSize, maxPageSize), 1, maxPageSize); // prettier-ignore
  // Alone, the application's hook decides; given with allow or token, both must pass.
  const addressRule = authorize === undefined || allow !== undefined || token != null;
  return {
    path,
    allow: addressRule ? (allow ?? ADMIN_DEFAULTS.allow) : null,
    token: token ?? null,
    authorize: authorize ?? null,
    actions: { disconnect: actions.disconnect === true, revoke: actions.revoke === true },
    pageSize,
    maxPageSize,
    queryTimeout: whole('queryTimeout', options.queryTimeout, ADMIN_DEFAULTS.queryTimeout, 10, 60_000), // prettier-ignore
    auditSize: whole('auditSize', options.auditSize, ADMIN_DEFAULTS.auditSize, 1, 100_000),
    trace: resolveTrace(options.trace),
  };
}
