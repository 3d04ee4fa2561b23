/**
 * The `$history` budget of one connection: a `$history` answer can be up to
 * `history_max_replay_bytes` (1 MiB) for a request of a few dozen bytes, so requests are
 * admitted against two token buckets, refilled continuously:
 *
 * - requests: `history_max_requests_per_second`, sustained; a burst of as many requests as
 *   `max_rooms_per_client`, so a client may read the position of every room it may join;
 * - answer bytes: `history_max_bytes_per_second`, sustained; a burst of
 *   max(2 s worth, `history_max_replay_bytes`), so one full answer always fits.
 *
 * A request is admitted while both buckets hold something; the bytes of its answer are
 * taken when it is sent (the bucket may go below zero by at most one answer, and the next
 * request then waits until it has refilled). 0 turns a bucket off. Numbers only, kept on the
 * connection's record.
 */

/** The limits every connection's `$history` budget is built from (resolved config). */
export interface HistoryBudgetLimits {
  readonly requestsPerSecond: number;
  readonly requestBurst: number;
  readonly bytesPerSecond: number;
  readonly byteBurst: number;
}

/** Seconds of sustained byte rate a full byte bucket holds (as the inbound budget's). */
const BURST_SECONDS = 2;

/** The limits from the server's settings. */
export function historyBudgetLimits(settings: {
  readonly requestsPerSecond: number;
  readonly bytesPerSecond: number;
  readonly maxRooms: number;
  readonly maxReplayBytes: number;
}): HistoryBudgetLimits {
  return {
    requestsPerSecond: settings.requestsPerSecond,
    requestBurst: Math.max(settings.requestsPerSecond, settings.maxRooms, 1),
    bytesPerSecond: settings.bytesPerSecond,
    byteBurst: Math.max(settings.bytesPerSecond * BURST_SECONDS, settings.maxReplayBytes),
  };
}

export class HistoryBudget {
  readonly #limits: HistoryBudgetLimits;
  #requests: number;
  #bytes: number;
  #last: number;

  constructor(limits: HistoryBudgetLimits, now: number) {
    this.#limits = limits;
    this.#requests = limits.requestBurst;
    this.#bytes = limits.byteBurst;
    this.#last = now;
  }

  #refill(now: number): void {
    const elapsed = (now - this.#last) / 1000;
    if (elapsed <= 0) return;
    this.#last = now;
    const l = this.#limits;
    this.#requests = Math.min(l.requestBurst, this.#requests + elapsed * l.requestsPerSecond);
    this.#bytes = Math.min(l.byteBurst, this.#bytes + elapsed * l.bytesPerSecond);
  }

  /**
   * Takes one request: 0 when admitted, else the whole seconds (at least 1) until a request
   * would be admitted again.
   */
  take(now: number): number {
    const l = this.#limits;
    this.#refill(now);
    let wait = 0;
    if (l.requestsPerSecond > 0 && this.#requests < 1) {
      wait = Math.max(wait, (1 - this.#requests) / l.requestsPerSecond);
    }
    if (l.bytesPerSecond > 0 && this.#bytes <= 0) {
      wait = Math.max(wait, (1 - this.#bytes) / l.bytesPerSecond);
    }
    if (wait > 0) return Math.max(1, Math.ceil(wait));
    if (l.requestsPerSecond > 0) this.#requests -= 1;
    return 0;
  }

  /** Counts the bytes of an answer sent. */
  spend(bytes: number, now: number): void {
    if (this.#limits.bytesPerSecond === 0) return;
    this.#refill(now);
    this.#bytes -= bytes;
  }
}
