import { createHttpError } from './errors';
import type { Request } from './request';
import { Response } from './response';
import { addressGroup } from './address-group';

/** At most `maxCount` calls per `timeWindow` seconds. */
export interface RateLimitRule {
  maxCount: number;
  /** The window length in seconds. */
  timeWindow: number;
}

/** The outcome of one {@link RateLimiter.check}. */
export interface RateLimitResult {
  /** False when this call is over the limit. */
  allowed: boolean;
  /** The rule's `maxCount`. */
  limit: number;
  /** Calls left in the current window (0 when over the limit). */
  remaining: number;
  /** When the current window ends, epoch milliseconds. */
  resetAt: number;
  /** Whole seconds until the window ends (at least 1 when refused, 0 when allowed). */
  retryAfter: number;
}

/**
 * Where counters live. `increment` adds one to the key's counter in a fixed window of
 * `windowMs`, starting a new window when the old one has ended, and answers the count and
 * when the window ends. The in-memory store serves one process; a shared store (Redis)
 * serves a cluster.
 */
export interface RateLimitStore {
  increment(
    key: string,
    windowMs: number,
  ): Promise<{ count: number; resetAt: number }> | { count: number; resetAt: number };
  /**
   * Optional: connects a store that talks to a server. `@pkg/core`'s `run()` awaits it
   * (within `backend_connect_timeout`) before it listens, so the first hits are counted.
   */
  connect?(): Promise<void>;
}

export interface MemoryRateLimitStoreOptions {
  /** The most keys kept at once (default 10000); see {@link MemoryRateLimitStore}. */
  maxKeys?: number;
  /** The clock, epoch milliseconds (default `Date.now`); tests pass their own. */
  now?: () => number;
}

interface Counter {
  count: number;
  resetAt: number;
}

/**
 * Counters in a Map, with no timers. Expired keys are dropped when they are next touched and
 * swept when the store is full; when it is still full after the sweep, the oldest key is
 * evicted (its counter starts again). A flood of distinct client addresses therefore costs
 * at most `maxKeys` entries of memory.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly #counters = new Map<string, Counter>();
  readonly #maxKeys: number;
  readonly #now: () => number;
  /** No counter ends before this time (a lower bound), so a sweep before it finds nothing. */
  #earliestReset = Number.POSITIVE_INFINITY;

  constructor(options: MemoryRateLimitStoreOptions = {}) {
    const maxKeys = options.maxKeys ?? 10000;
    if (!Number.isInteger(maxKeys) || maxKeys < 1) {
      throw createHttpError(
        TypeError,
        'PKG_ERR_HTTP_INVALID_OPTION',
        `MemoryRateLimitStore option "maxKeys" must be a positive integer; got ${String(maxKeys)}.`,
      );
    }
    if (options.now !== undefined && typeof options.now !== 'function') {
      throw createHttpError(
        TypeError,
        'PKG_ERR_HTTP_INVALID_OPTION',
        'MemoryRateLimitStore option "now" must be a function returning epoch milliseconds.',
      );
    }
    this.#maxKeys = maxKeys;
    this.#now = options.now ?? Date.now;
  }

  increment(key: string, windowMs: number): { count: number; resetAt: number } {
    const now = this.#now();
    const existing = this.#counters.get(key);
    if (existing !== undefined && existing.resetAt > now) {
      existing.count += 1;
      return { count: existing.count, resetAt: existing.resetAt };
    }
    // A new window: re-insert so that Map order follows window starts (oldest first).
    this.#counters.delete(key);
    if (this.#counters.size >= this.#maxKeys) this.#makeRoom(now);
    const counter = { count: 1, resetAt: now + windowMs };
    this.#counters.set(key, counter);
    this.#earliestReset = Math.min(this.#earliestReset, counter.resetAt);
    return { count: 1, resetAt: counter.resetAt };
  }

  /** How many keys are held now (expired ones included until they are swept). */
  get size(): number {
    return this.#counters.size;
  }

  /** Forgets every counter. */
  clear(): void {
    this.#counters.clear();
    this.#earliestReset = Number.POSITIVE_INFINITY;
  }

  #makeRoom(now: number): void {
    // A full sweep only when some counter may have ended: a flood of live keys costs O(1)
    // per new key, not a walk over every key.
    if (now >= this.#earliestReset) {
      let earliest = Number.POSITIVE_INFINITY;
      for (const [key, counter] of this.#counters) {
        if (counter.resetAt <= now) this.#counters.delete(key);
        else earliest = Math.min(earliest, counter.resetAt);
      }
      this.#earliestReset = earliest;
    }
    while (this.#counters.size >= this.#maxKeys) {
      const oldest = this.#counters.keys().next();
      if (oldest.done === true) break;
      this.#counters.delete(oldest.value);
    }
  }
}

function invalidRule(message: string): Error {
  return createHttpError(TypeError, 'PKG_ERR_HTTP_INVALID_RATE_LIMIT', message);
}

/** Checks a rate-limit rule: both numbers positive integers. */
export function validateRateLimitRule(rule: RateLimitRule): void {
  if (rule === null || typeof rule !== 'object') {
    throw invalidRule('A rate-limit rule must be an object { maxCount, timeWindow }.');
  }
  if (!Number.isInteger(rule.maxCount) || rule.maxCount < 1) {
    throw invalidRule(
      `Rate-limit maxCount must be a positive integer (calls per window); got ${String(rule.maxCount)}.`,
    );
  }
  if (!Number.isInteger(rule.timeWindow) || rule.timeWindow < 1) {
    throw invalidRule(
      `Rate-limit timeWindow must be a positive integer of seconds; got ${String(rule.timeWindow)}.`,
    );
  }
}

/**
 * Fixed-window rate limiting over a {@link RateLimitStore}. The caller chooses the key; for
 * routes, {@link RateLimiter.keyFor} combines the route with the client IP after trust-proxy
 * resolution, so forged forwarded headers cannot move a client to another counter.
 */
export class RateLimiter {
  readonly #store: RateLimitStore;
  readonly #now: () => number;

  constructor(
    store: RateLimitStore = new MemoryRateLimitStore(),
    options: { now?: () => number } = {},
  ) {
    if (store === null || typeof store !== 'object' || typeof store.increment !== 'function') {
      throw createHttpError(
        TypeError,
        'PKG_ERR_HTTP_INVALID_ARGUMENT',
        'RateLimiter needs a store with an increment(key, windowMs) method.',
      );
    }
    this.#store = store;
    this.#now = options.now ?? Date.now;
  }

  /**
   * The key of a rate-limited route for one client: `<route>|<client address>`, where an
   * IPv6 address stands for its network of `ipv6Subnet` bits (default a /64; see
   * `addressGroup`), so a client cannot get a fresh budget per address of its prefix.
   */
  static keyFor(route: string, request: Request, ipv6Subnet?: number): string {
    return `${route}|${addressGroup(request.getIpAddress(), ipv6Subnet)}`;
  }

  /** Counts one call under `key` and says whether it is within `rule`. */
  async check(key: string, rule: RateLimitRule): Promise<RateLimitResult> {
    validateRateLimitRule(rule);
    const { count, resetAt } = await this.#store.increment(String(key), rule.timeWindow * 1000);
    const allowed = count <= rule.maxCount;
    const seconds = Math.ceil((resetAt - this.#now()) / 1000);
    return {
      allowed,
      limit: rule.maxCount,
      remaining: Math.max(0, rule.maxCount - count),
      resetAt,
      retryAfter: allowed ? 0 : Math.max(1, seconds),
    };
  }

  /**
   * Sets `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset` (epoch seconds
   * when the window ends) on a response.
   */
  static applyHeaders(response: Response, result: RateLimitResult): Response {
    response.setHeader('X-RateLimit-Limit', String(result.limit));
    response.setHeader('X-RateLimit-Remaining', String(result.remaining));
    response.setHeader('X-RateLimit-Reset', String(Math.ceil(result.resetAt / 1000)));
    return response;
  }

  /** The 429 answer: JSON `{"error":"Too Many Requests", ...}`, `Retry-After` and the rate-limit headers. */
  static tooManyRequests(result: RateLimitResult): Response {
    const retryAfter = Math.max(1, result.retryAfter);
    const response = Response.error(
      429,
      { code: 'PKG_ERR_HTTP_RATE_LIMITED', details: { retryAfter } },
      { 'Retry-After': String(retryAfter) },
    );
    return RateLimiter.applyHeaders(response, result);
  }
}
