/**
 * How many new channel subscriptions each client may cause: a token bucket per client,
 * `perSecond` tokens a second, holding at most twice as many (the burst). A join of a room
 * no local client holds costs one token per new channel (room, and namespace when that is
 * new too). Buckets are dropped when their client disconnects.
 */
export class SubscribeBudget {
  readonly #perSecond: number;
  readonly #burst: number;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  /** `perSecond` 0: no limit. */
  constructor(perSecond: number) {
    this.#perSecond = perSecond;
    this.#burst = perSecond * 2;
  }

  /** Clients with a bucket (for tests). */
  get size(): number {
    return this.#buckets.size;
  }

  /** Takes `cost` tokens; returns 0 when they were there, else ms until they will be (nothing taken). */
  take(clientId: string, cost: number, now = Date.now()): number {
    if (this.#perSecond === 0 || cost === 0) return 0;
    let bucket = this.#buckets.get(clientId);
    if (bucket === undefined) {
      bucket = { tokens: this.#burst, at: now };
      this.#buckets.set(clientId, bucket);
    } else {
      const refill = ((now - bucket.at) / 1000) * this.#perSecond;
      bucket.tokens = Math.min(this.#burst, bucket.tokens + refill);
      bucket.at = now;
    }
    if (bucket.tokens >= cost) {
      bucket.tokens -= cost;
      return 0;
    }
    return Math.ceil(((cost - bucket.tokens) / this.#perSecond) * 1000);
  }

  forget(clientId: string): void {
    this.#buckets.delete(clientId);
  }
}
