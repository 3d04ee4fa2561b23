import type { AdapterState, LoggerInterface } from '@pkg/core';

/**
 * The state of the adapter's link to Redis (`connecting`, `connected`, `degraded`,
 * `closed`) and the messages lost while it is down. Every change of state goes through
 * `update` or `failed`, which log the first line of an outage and the recovery, never one
 * line per retry or per lost message.
 */
export class LinkState {
  #state: AdapterState = 'connecting';
  #lost = 0;
  #lostThisOutage = 0;
  readonly #nodeId: string;
  readonly #log: () => LoggerInterface;

  constructor(nodeId: string, log: () => LoggerInterface) {
    this.#nodeId = nodeId;
    this.#log = log;
  }

  get state(): AdapterState {
    return this.#state;
  }

  /** Messages for other instances lost because Redis could not be reached. */
  get lost(): number {
    return this.#lost;
  }

  close(): void {
    this.#state = 'closed';
  }

  /** Counts a message for the other instances that could not be published. */
  lose(channel: string): void {
    this.#lost += 1;
    this.#lostThisOutage += 1;
    if (this.#lostThisOutage === 1) {
      this.#log().warning(
        'RedisAdapter: Redis is unreachable; messages for other instances are being dropped (local clients are still served)',
        { channel, lost: this.#lost },
      );
    }
  }

  /** A connection reported an error; `up` says whether both connections are ready. */
  failed(err: unknown, up: boolean): void {
    if (this.#state === 'closed') return;
    const wasConnected = this.#state === 'connected';
    this.update(up);
    if (wasConnected || this.#state === 'connecting') {
      // Log the first error of an outage only: node-redis repeats it on every retry.
      this.#log().warning('RedisAdapter: Redis connection error', {
        error: err instanceof Error ? err.message : String(err),
      });
    }
    if (this.#state === 'connecting') this.#state = 'degraded';
  }

  /** A connection became ready, ended or is reconnecting; `up` as for `failed`. */
  update(up: boolean): void {
    if (this.#state === 'closed') return;
    const before = this.#state;
    if (up) this.#state = 'connected';
    else if (before === 'connected') this.#state = 'degraded';
    if (before === this.#state) return;
    if (this.#state === 'degraded') {
      this.#lostThisOutage = 0;
      this.#log().warning(
        'RedisAdapter: Redis unreachable; serving local clients only until it returns',
        { nodeId: this.#nodeId },
      );
    } else if (this.#state === 'connected' && before === 'degraded') {
      this.#log().info('RedisAdapter: Redis reachable again; subscriptions restored', {
        nodeId: this.#nodeId,
        lostDuringOutage: this.#lostThisOutage,
      });
      this.#lostThisOutage = 0;
    }
  }
}
