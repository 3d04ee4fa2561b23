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
 * `true` or nothing accepts, `{ identity }` accepts with an identity, `false` refuses with
 * 401 "Unauthorized", `{ status, message }` refuses.
 */
export type AuthResult = boolean | undefined | void | AuthRefusal | AuthIdentity;

/** Checks a client's credentials before its `OnConnect` handlers run. */
export type AuthHandler = (context: AuthContext) => AuthResult | Promise<AuthResult>;

/** The decision of the auth handlers. */
export type AuthOutcome =
  | { readonly accepted: true; readonly identity: string | undefined }
  | { readonly accepted: false; readonly refusal: AuthRefusal };

/** Longest identity an auth handler may give. */
export const MAX_IDENTITY_LENGTH = 1024;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const UNAUTHORIZED: AuthRefusal = Object.freeze({ status: 401, message: 'Unauthorized' });

/** Reads one handler's result: undefined to go on, an identity, or a refusal. */
function readResult(value: unknown): AuthRefusal | { identity: string } | undefined {
  if (value === true || value === undefined) return undefined;
  if (!isRecord(value)) return UNAUTHORIZED;
  if (value['status'] === undefined && typeof value['identity'] === 'string') {
    const identity = value['identity'];
    if (identity === '' || identity.length > MAX_IDENTITY_LENGTH) return UNAUTHORIZED;
    return { identity };
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
  const fail = (err: unknown): void => {
    logger.exception(err, { code: 'PKG_ERR_CORE_HANDLER_FAILED', phase: 'auth' });
    done({
      accepted: false,
      refusal: { status: 401, message: 'Authentication failed' },
    });
  };
  const step = (i: number): void => {
    if (i === handlers.length) {
      done({ accepted: true, identity });
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
      const read = readResult(value);
      if (read !== undefined && 'status' in read) {
        done({ accepted: false, refusal: read });
        return;
      }
      if (read !== undefined) identity ??= read.identity;
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
  });
}
