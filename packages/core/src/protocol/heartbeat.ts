/**
 * The message heartbeat of protocol version 1, as the server sees it. The server keeps ONE
 * heartbeat of its own: the ping frames of `@pkg/ws-protocol` (`heartbeat_interval`,
 * `heartbeat_timeout`), one timer for every connection, which terminates a peer that does
 * not answer. The `$ping` / `$pong` messages are the client's heartbeat (browsers cannot
 * see ping frames): the server answers each `$ping` at once and grants the values the
 * client asked for in `$hello`, clamped; it runs no timer for them.
 */

/** Heartbeat values are clamped to this range (ms). */
export const HEARTBEAT_MIN = 1000;
export const HEARTBEAT_MAX = 300_000;
/** The values granted when `$hello.heartbeat` leaves one out (ms). */
export const HEARTBEAT_DEFAULT_INTERVAL = 25_000;
export const HEARTBEAT_DEFAULT_TIMEOUT = 20_000;

/** The answer to `$ping`, serialised once. */
export const PONG = '{"event":"$pong","data":{}}';

/** What `$welcome.heartbeat` grants. */
export interface Heartbeat {
  readonly interval: number;
  readonly timeout: number;
}

const clamp = (ms: number): number =>
  Math.min(HEARTBEAT_MAX, Math.max(HEARTBEAT_MIN, Math.round(ms)));

/** The granted heartbeat for asked values (a missing one takes its default). */
export function grantHeartbeat(
  interval: number | undefined,
  timeout: number | undefined,
): Heartbeat {
  return {
    interval: clamp(interval ?? HEARTBEAT_DEFAULT_INTERVAL),
    timeout: clamp(timeout ?? HEARTBEAT_DEFAULT_TIMEOUT),
  };
}
