/**
 * Credentials that expire (protocol version 1): the server's auth handlers may accept a
 * connection until a time (`$welcome.expiresAt`); the client sends `$refresh` with new
 * credentials before then, and the server answers with the new expiry. docs/protocol.md,
 * "Credentials that expire", has the rules.
 */
import { ControlEvent } from './control';

/** `$refresh.data` (client request, with an `id`). */
export interface RefreshData {
  /** The new credentials, checked by the same auth handlers as `$hello.auth`. */
  auth: string;
}

/** The answer's `data`: the new expiry (ms since the epoch), or null when none was given. */
export interface RefreshAnswerData {
  expiresAt: number | null;
}

/** Why a room was taken from a client (`$revoked.data.reason`). */
export type RevokedReason = 'revoked' | 'expired';

/** `$revoked.data`: the room the client is no longer in, and why. */
export interface RevokedData {
  room: string;
  namespace: string;
  reason: RevokedReason;
}

/** The timings of refresh a server and a client share (ms). */
export const REFRESH_LIMITS = {
  /** Default grace after `expiresAt` before the server closes a connection not refreshed. */
  grace: 10_000,
  /**
   * A client refreshes this long before `expiresAt` at the earliest, plus a random part of
   * the same size (jitter), so that clients given one expiry do not refresh at once.
   */
  lead: 30_000,
  /** Shortest time between two refresh attempts after a failed one (the backoff's start). */
  retryMin: 1_000,
} as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads `$refresh.data` strictly: the credentials, or a string saying what is wrong. */
export function readRefresh(data: unknown, maxLength: number): RefreshData | string {
  if (!isRecord(data) || typeof data['auth'] !== 'string' || data['auth'] === '') {
    return `${ControlEvent.REFRESH} needs data {"auth": "<new credentials>"}`;
  }
  if (data['auth'].length > maxLength) {
    return `${ControlEvent.REFRESH}: auth is longer than ${maxLength} characters`;
  }
  return { auth: data['auth'] };
}

/** Reads the answer to `$refresh` leniently (a client): the new expiry, null for none. */
export function readRefreshAnswer(data: unknown): RefreshAnswerData {
  const expiresAt = isRecord(data) ? data['expiresAt'] : undefined;
  return {
    expiresAt:
      typeof expiresAt === 'number' && Number.isFinite(expiresAt) && expiresAt > 0
        ? expiresAt
        : null,
  };
}

/** Reads `$revoked.data` leniently (a client); undefined when it names no room. */
export function readRevoked(data: unknown): RevokedData | undefined {
  if (!isRecord(data) || typeof data['room'] !== 'string') return undefined;
  return {
    room: data['room'],
    namespace: typeof data['namespace'] === 'string' ? data['namespace'] : '/',
    reason: data['reason'] === 'expired' ? 'expired' : 'revoked',
  };
}

/**
 * When a client should send `$refresh`, in ms from now: `lead` (at most half the time left)
 * plus a random jitter of the same size before `expiresAt`, never below 0. `random` is in
 * [0, 1).
 */
export function refreshDelay(expiresAt: number, now: number, random: number): number {
  const left = expiresAt - now;
  const lead = Math.min(REFRESH_LIMITS.lead, left / 2);
  return Math.max(0, Math.floor(left - lead - lead * random));
}
