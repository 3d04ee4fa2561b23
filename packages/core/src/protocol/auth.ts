/**
 * Authentication by auth handlers (`server.addAuthHandler`): what a handler sees, what it
 * may return, and one run of the handlers in order. Deadlines are the caller's (the
 * connection's `auth_timeout`); a run reports its outcome once.
 */
import type { LoggerInterface } from '@pkg/logger';
import type { WsClient } from '@pkg/ws-protocol';
import { isThenable } from '../routing/middleware';

/** The session a `$hello.resume` names, when the server knows it. */
export interface AuthResume {
  /** The client id of the session (the id the client gets back on a resume). */
  readonly clientId: string;
  /** The identity the session was created under (undefined: none was given). */
  readonly identity: string | undefined;
}

/** What an auth handler sees. */
export interface AuthContext {
  readonly clientId: string;
  /** `$hello.auth`; undefined when the client sent none (or is a version 0 client). */
  readonly auth: string | undefined;
  /** What handshake middleware put in `ctx.data` (becomes the client's data). */
  readonly data: Readonly<Record<string, unknown>>;
  readonly ip: string;
  /**
   * The session `$hello.resume` names, when this server knows it; undefined otherwise. An
   * application can refuse a resume by another user here. Without that, a resume under
   * another identity than the session's is refused anyway (`reason: "identity"`).
   */
  readonly resume: AuthResume | undefined;
  /**
   * True when a live connection sends new credentials (`$refresh`): `auth` holds them and
   * `identity` is the one the connection has; the result must name the same identity.
   */
  readonly refresh: boolean;
  /** The identity the connection has now (a `$refresh`); undefined at the first check. */
  readonly identity: string | undefined;
}

/** A refusal: 401 (`unauthorized`, close 4401) or 403 (`forbidden`, close 4403). */
export interface AuthRefusal {
  status: 401 | 403;
  message: string;
}

/** An acceptance that names who the client is; a session remembers it for resumes. */
export interface AuthIdentity {
  identity: string;
}

/**
 * An acceptance until a time: `expiresAt` (ms since the epoch, e.g. a JWT's `exp * 1000`)
 * or `ttl` (ms from now). The client must send `$refresh` with new credentials before then;
 * past it and `auth_refresh_grace`, the connection gets `token_expired` and close 4419.
 */
export interface AuthExpiry {
  identity?: string;
  expiresAt?: number;
  ttl?: number;
}

/**
 * `true` or nothing accepts, `{ identity }` accepts with an identity, `{ expiresAt }` or
 * `{ ttl }` (with or without an identity) accepts until a time, `false` refuses with 401
 * "Unauthorized", `{ status, message }` refuses.
 */
export type AuthResult = boolean | undefined | void | AuthRefusal | AuthIdentity | AuthExpiry;

/** Checks a client's credentials before its `OnConnect` handlers run. */
export type AuthHandler = (context: AuthContext) => AuthResult | Promise<AuthResult>;

/** The decision of the auth handlers. */
export type AuthOutcome =
  | {
      readonly accepted: true;
      readonly identity: string | undefined;
      /** The earliest expiry a handler gave (ms since the epoch); undefined: none. */
      readonly expiresAt: number | undefined;
    }
  | { readonly accepted: false; readonly refusal: AuthRefusal };

/** Longest identity an auth handler may give. */
export const MAX_IDENTITY_LENGTH = 1024;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const UNAUTHORIZED: AuthRefusal = Object.freeze({ status: 401, message: 'Unauthorized' });

/** Longest `ttl` (and furthest `expiresAt` from now) a handler may give: a timer's range. */
export const MAX_EXPIRY_MS = 2_147_483_647;

const BAD_EXPIRY: AuthRefusal = Object.freeze({
  status: 401,
  message: 'Authentication failed',
});

/** Reads one handler's result: undefined to go on, an acceptance, or a refusal. */
function readResult(
  value: unknown,
  now: number,
): AuthRefusal | { identity: string | undefined; expiresAt: number | undefined } | undefined {
  if (value === true || value === undefined) return undefined;
  if (!isRecord(value)) return UNAUTHORIZED;
  const accepts =
    value['status'] === undefined &&
    (typeof value['identity'] === 'string' ||
      value['expiresAt'] !== undefined ||
      value['ttl'] !== undefined);
  if (accepts) {
    const identity = value['identity'];
    if (identity !== undefined) {
      if (
        typeof identity !== 'string' ||
        identity === '' ||
        identity.length > MAX_IDENTITY_LENGTH
      ) {
        return UNAUTHORIZED;
      }
    }
    const expiresAt = readExpiry(value['expiresAt'], value['ttl'], now);
    if (expiresAt === null) return BAD_EXPIRY;
    return { identity: identity as string | undefined, expiresAt };
  }
  const status = value['status'] === 403 ? 403 : 401;
  const message =
    typeof value['message'] === 'string' && value['message'] !== ''
      ? value['message']
      : status === 403
        ? 'Forbidden'
        : 'Unauthorized';
  return { status, message };
}

/**
 * Runs the handlers in order until one refuses; `done` gets the outcome once. The identity
 * is the first one a handler gave. A handler that throws or rejects refuses with 401 (the
 * error is logged). Synchronous handlers decide synchronously.
 */
export function runAuthHandlers(
  handlers: readonly AuthHandler[],
  context: AuthContext,
  logger: LoggerInterface,
  done: (outcome: AuthOutcome) => void,
): void {
  let identity: string | undefined;
  let expiresAt: number | undefined;
  const fail = (err: unknown): void => {
    logger.exception(err, { code: 'PKG_ERR_CORE_HANDLER_FAILED', phase: 'auth' });
    done({
      accepted: false,
      refusal: { status: 401, message: 'Authentication failed' },
    });
  };
  const step = (i: number): void => {
    if (i === handlers.length) {
      done({ accepted: true, identity, expiresAt });
      return;
    }
    let result: unknown;
    try {
      result = handlers[i]!(context);
    } catch (err) {
      fail(err);
      return;
    }
    const next = (value: unknown): void => {
      const read = readResult(value, Date.now());
      if (read === BAD_EXPIRY) {
        logger.warning('An auth handler gave an expiry that is not a time to come; refused', {
          code: 'PKG_ERR_CORE_INVALID_ARGUMENT',
          phase: 'auth',
          hint: 'return { expiresAt: <ms since the epoch, in the future> } or { ttl: <ms> }, within 2147483647 ms',
        });
      }
      if (read !== undefined && 'status' in read) {
        done({ accepted: false, refusal: read });
        return;
      }
      if (read !== undefined) {
        identity ??= read.identity;
        // The earliest expiry wins: every handler's credentials must still hold.
        if (read.expiresAt !== undefined) {
          expiresAt =
            expiresAt === undefined ? read.expiresAt : Math.min(expiresAt, read.expiresAt);
        }
      }
      step(i + 1);
    };
    if (isThenable(result)) Promise.resolve(result).then(next, fail);
    else next(result);
  };
  step(0);
}

/** The frozen context the handlers of one authentication see. */
export function authContext(
  client: WsClient,
  auth: string | undefined,
  resume: AuthResume | undefined,
  refreshOf?: { readonly identity: string | undefined },
): AuthContext {
  return Object.freeze({
    clientId: client.id,
    auth,
    data: client.data,
    ip: client.ip,
    resume:
      resume === undefined
        ? undefined
        : Object.freeze({ clientId: resume.clientId, identity: resume.identity }),
    refresh: refreshOf !== undefined,
    identity: refreshOf?.identity,
  });
}

/**
 * The expiry of an acceptance (ms since the epoch): from `expiresAt`, else from `ttl`;
 * undefined when it gives neither, null when what it gives is not a time to come within a
 * timer's range.
 */
function readExpiry(expiresAt: unknown, ttl: unknown, now: number): number | undefined | null {
  if (expiresAt !== undefined) {
    if (typeof expiresAt !== 'number' || !Number.isFinite(expiresAt)) return null;
    if (expiresAt <= now || expiresAt - now > MAX_EXPIRY_MS) return null;
    return Math.floor(expiresAt);
  }
  if (ttl !== undefined) {
    if (typeof ttl !== 'number' || !Number.isFinite(ttl) || ttl <= 0 || ttl > MAX_EXPIRY_MS) {
      return null;
    }
    return now + Math.floor(ttl);
  }
  return undefined;
}
