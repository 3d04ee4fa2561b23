/**
 * The close codes a connection of this protocol ends with, what each means, and whether a
 * client reconnects on its own after it. A code not in the table (another application's
 * 3000-4999 code, a future one) is treated as a lost connection: the client reconnects,
 * with backoff.
 */

/** Close codes by name: RFC 6455 section 7.4.1, then the protocol's own 4xxx codes. */
export const CloseCode = {
  NORMAL: 1000,
  GOING_AWAY: 1001,
  PROTOCOL_ERROR: 1002,
  UNSUPPORTED_DATA: 1003,
  /** Reported (never sent) when a close frame had no code. */
  NO_STATUS: 1005,
  /** Reported (never sent) when the connection ended without a close frame. */
  ABNORMAL: 1006,
  INVALID_PAYLOAD: 1007,
  POLICY_VIOLATION: 1008,
  MESSAGE_TOO_BIG: 1009,
  INTERNAL_ERROR: 1011,
  /** The server is restarting (a rolling deploy): reconnect after the delay in the reason. */
  SERVICE_RESTART: 1012,
  TRY_AGAIN_LATER: 1013,
  /** Sent by a client that gave up on a connection (heartbeat missed, offline). */
  CLIENT_LOST: 4000,
  UNAUTHORIZED: 4401,
  FORBIDDEN: 4403,
  /**
   * No longer sent by the server (it closed a missed message heartbeat and, earlier, an
   * expired `auth_timeout`, which is now 4401); a client treats it like 4000.
   */
  TIMEOUT: 4408,
  /** A resume of the session from another connection took it over. */
  SESSION_TAKEN_OVER: 4409,
  /**
   * The credentials expired (`expiresAt` and the grace passed without an accepted
   * `$refresh`): get new credentials, then reconnect with them.
   */
  CREDENTIALS_EXPIRED: 4419,
} as const;

export type CloseCodeValue = (typeof CloseCode)[keyof typeof CloseCode];

/**
 * What becomes of a version 1 client's session (connection state recovery) after the close:
 * `kept` (resumable within the recovery window), `ends` (ended for good), `moved` (another
 * connection resumed it and holds it now), `none` (the connection never had one).
 */
export type CloseSession = 'kept' | 'ends' | 'moved' | 'none';

/** One row of the close-code table. */
export interface CloseCodeInfo {
  /** Who sends it: the server, the client, or nobody (only reported locally). */
  readonly sentBy: 'server' | 'client' | 'either' | 'nobody';
  /** What it means, in one sentence. */
  readonly meaning: string;
  /** Whether a client reconnects on its own after receiving it. */
  readonly reconnect: boolean;
  /** What becomes of the session of the connection it closes. */
  readonly session: CloseSession;
  /** The protocol version that added the code (0: every client can get it). */
  readonly version: 0 | 1;
  /** True for a code the server no longer sends (a client still knows what to do with it). */
  readonly retired?: boolean;
}

/**
 * Every close code of the protocol. `reconnect: false` marks a server that means "go away":
 * the same client would be sent away again (1000 `disconnectClient`, 1008, 4401, 4403) or
 * another connection now holds its session (4409). docs/protocol.md's close-code tables are
 * generated from this one (`pnpm run docs:errors`).
 */
export const closeCodes: Readonly<Record<CloseCodeValue, CloseCodeInfo>> = {
  1000: {
    sentBy: 'either',
    meaning:
      'normal close: from the server, the application sent this client away (`disconnectClient`); from the client, its `disconnect()`',
    reconnect: false,
    session: 'ends',
    version: 0,
  },
  1001: {
    sentBy: 'either',
    meaning:
      'the server is shutting down (`close()` with `restart_spread: 0`): reconnect to another instance; from a browser, the page went away',
    reconnect: true,
    session: 'ends',
    version: 0,
  },
  1002: {
    sentBy: 'either',
    meaning: 'a peer broke RFC 6455 (bad frame, bad close code)',
    reconnect: true,
    session: 'kept',
    version: 0,
  },
  1003: {
    sentBy: 'server',
    meaning: 'a binary frame, on a server configured with `ws_binary_messages: "close"`',
    reconnect: true,
    session: 'kept',
    version: 0,
  },
  1005: {
    sentBy: 'nobody',
    meaning: 'a close frame without a code',
    reconnect: true,
    session: 'kept',
    version: 0,
  },
  1006: {
    sentBy: 'nobody',
    meaning:
      'the connection was lost without a close frame (network, killed process, a client terminated for missing pongs)',
    reconnect: true,
    session: 'kept',
    version: 0,
  },
  1007: {
    sentBy: 'server',
    meaning: 'a text frame that is not valid UTF-8',
    reconnect: true,
    session: 'kept',
    version: 0,
  },
  1008: {
    sentBy: 'server',
    meaning:
      'policy violation: too many protocol errors (`ws_max_protocol_errors`), more than 16384 fragments, or a malformed `$hello`',
    reconnect: false,
    session: 'ends',
    version: 0,
  },
  1009: {
    sentBy: 'server',
    meaning: 'a message larger than `max_message_size` (1 MiB by default)',
    reconnect: true,
    session: 'kept',
    version: 0,
  },
  1011: {
    sentBy: 'server',
    meaning: 'the `OnConnect` handlers did not finish within `connect_timeout` (10 s)',
    reconnect: true,
    session: 'ends',
    version: 0,
  },
  1012: {
    sentBy: 'server',
    meaning:
      'service restart (`close()`): reconnect to another instance after the delay the reason suggests (`restart; retry after <ms> ms`)',
    reconnect: true,
    session: 'ends',
    version: 0,
  },
  1013: {
    sentBy: 'server',
    meaning:
      'try again later: the client read too slowly (its unsent data passed `max_buffered_amount`, 4 MiB)',
    reconnect: true,
    session: 'kept',
    version: 0,
  },
  4000: {
    sentBy: 'client',
    meaning:
      'the client gave up on the connection: heartbeat missed (`heartbeat timeout`), network offline, or no `$welcome` within its hello timeout (`no welcome`)',
    reconnect: true,
    session: 'kept',
    version: 1,
  },
  4401: {
    sentBy: 'server',
    meaning:
      "authentication refused (`unauthorized`; the reason is the server's message), or not finished within `auth_timeout` (reason `auth timeout`)",
    reconnect: false,
    session: 'none',
    version: 1,
  },
  4403: {
    sentBy: 'server',
    meaning: 'authenticated but not allowed (`forbidden`)',
    reconnect: false,
    session: 'none',
    version: 1,
  },
  4408: {
    sentBy: 'server',
    meaning:
      'no longer sent by the server (it closed a missed message heartbeat and, earlier, an expired `auth_timeout`); a client treats it like 4000',
    reconnect: true,
    session: 'kept',
    version: 1,
    retired: true,
  },
  4409: {
    sentBy: 'server',
    meaning:
      "`session taken over`: a resume of this connection's session arrived on another connection, which holds the session now",
    reconnect: false,
    session: 'moved',
    version: 1,
  },
  4419: {
    sentBy: 'server',
    meaning:
      '`credentials expired`: `$welcome.expiresAt` (or the last `$refresh` answer) and the grace passed without an accepted `$refresh`; get new credentials, then reconnect with them',
    reconnect: true,
    session: 'ends',
    version: 1,
  },
};

/** The table's row for `code`, or undefined for a code the protocol does not define. */
export function closeCodeInfo(code: number): CloseCodeInfo | undefined {
  return Object.hasOwn(closeCodes, code) ? closeCodes[code as CloseCodeValue] : undefined;
}

/**
 * Whether a client reconnects on its own after the server closed with `code`: false for the
 * codes that mean "go away" (1000, 1008, 4401, 4403, 4409), true for every other code.
 */
export function reconnectsAfter(code: number): boolean {
  return closeCodeInfo(code)?.reconnect ?? true;
}

/** True for a code an endpoint may put in a close frame (1000-1014 but 1004-1006, 3000-4999). */
export function isSendableCloseCode(code: unknown): code is number {
  if (typeof code !== 'number' || !Number.isInteger(code)) return false;
  if (code >= 3000 && code <= 4999) return true;
  return code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006;
}

/** A close reason travels in the close frame's 125-byte payload after the 2-byte code. */
export const MAX_CLOSE_REASON_BYTES = 123;

/** The length of `text` in UTF-8 bytes (a lone surrogate counts as the 3 bytes of U+FFFD). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i += 1;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/** `reason` cut (at a character boundary) to fit a close frame's 123 bytes. */
export function fitCloseReason(reason: string): string {
  if (reason.length * 3 <= MAX_CLOSE_REASON_BYTES) return reason;
  let fitted = reason;
  while (utf8Length(fitted) > MAX_CLOSE_REASON_BYTES) {
    const cut = fitted.length - 1;
    const unit = fitted.charCodeAt(cut);
    fitted = fitted.slice(0, unit >= 0xdc00 && unit <= 0xdfff && cut > 0 ? cut - 1 : cut);
  }
  return fitted;
}

/** The reason text of a 1012 close: `restart; retry after <ms> ms`. */
const RESTART_REASON = /^restart; retry after (\d{1,9}) ms$/;

/** Longest delay a 1012 reason may suggest (10 minutes); a longer one is read as this. */
export const MAX_RESTART_DELAY_MS = 600_000;

/** The close reason of a 1012 close that suggests reconnecting after `delayMs` (whole ms). */
export function restartReason(delayMs: number): string {
  const ms = Math.min(
    Math.max(Math.round(Number.isFinite(delayMs) ? delayMs : 0), 0),
    MAX_RESTART_DELAY_MS,
  );
  return `restart; retry after ${ms} ms`;
}

/**
 * The delay a 1012 close suggests, in ms, capped at {@link MAX_RESTART_DELAY_MS}; undefined
 * for another code or a reason not of the form `restart; retry after <ms> ms` (the client
 * then uses its ordinary backoff).
 */
export function restartDelay(code: number, reason: string): number | undefined {
  if (code !== CloseCode.SERVICE_RESTART) return undefined;
  const match = RESTART_REASON.exec(reason);
  return match ? Math.min(Number(match[1]), MAX_RESTART_DELAY_MS) : undefined;
}

/** Longest wait a refused upgrade's `Retry-After` may ask for (10 minutes); longer is read as this. */
export const MAX_RETRY_AFTER_MS = MAX_RESTART_DELAY_MS;

/**
 * The wait an HTTP `Retry-After` value asks for, in ms (whole seconds, or an HTTP date
 * counted from `now`), capped at {@link MAX_RETRY_AFTER_MS}; undefined when absent or not
 * readable (the client then uses its ordinary backoff).
 */
export function retryAfterDelay(
  value: string | null | undefined,
  now: number = Date.now(),
): number | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (/^\d{1,9}$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  if (!/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(at - now, 0), MAX_RETRY_AFTER_MS);
}

/** What a client does after the server refused its upgrade with an HTTP status. */
export interface RefusalRetry {
  /** False: the same request would be refused again; the client stops. */
  readonly reconnect: boolean;
  /** The wait `Retry-After` asked for (then a jitter), else undefined: the backoff. */
  readonly delayMs?: number;
}

/**
 * The reconnect rule of a refused upgrade (browsers cannot see the status: for them it is a
 * `1006`): `401` and `403` mean "go away" (credentials, origin or host refused, so the same
 * request would be refused again); every other status (`503` draining or at a connection
 * cap, `429`, `500`, a proxy's `502`) reconnects, after the `Retry-After` the answer carries
 * when it has one, else after the backoff.
 */
export function reconnectsAfterRefusal(
  status: number,
  retryAfter?: string | null,
  now: number = Date.now(),
): RefusalRetry {
  if (status === 401 || status === 403) return { reconnect: false };
  const delayMs = retryAfterDelay(retryAfter, now);
  return delayMs === undefined ? { reconnect: true } : { reconnect: true, delayMs };
}
