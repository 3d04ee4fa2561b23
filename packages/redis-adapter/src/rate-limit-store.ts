import { Logger, type LoggerInterface, type RateLimitStore } from '@pkg/core';
import { closeConnection, createConnection, type RedisClient } from './connection';
import {
  REDIS_ADAPTER_DEFAULTS,
  checkKeys,
  checkLogger,
  checkPositiveInt,
  checkString,
  checkUrl,
} from './options';
import { createRedisError } from './errors';

/** Settings of {@link RedisRateLimitStore}; every one is optional. */
export interface RedisRateLimitStoreOptions {
  /** Redis URL. Default `redis://127.0.0.1:6379`. */
  url?: string;
  /** Prefix of every counter key (`<prefix>:rl:<key>`). Default `pkg`. */
  keyPrefix?: string;
  /**
   * What a hit does when Redis cannot be reached or does not answer within `timeout`:
   * `open` lets it through (and logs a warning once per outage), `closed` refuses it (429).
   * Default `open`: an outage of the counter store must not take the API down.
   */
  onError?: 'open' | 'closed';
  /** How long one hit waits for Redis before `onError` applies, ms. Default `500`. */
  timeout?: number;
  /** The longest pause between two reconnection attempts, ms. Default `2000`. */
  maxReconnectDelay?: number;
  /** Where the store logs. Default: a console Logger at `info`. */
  logger?: LoggerInterface;
}

export const REDIS_RATE_LIMIT_DEFAULTS = Object.freeze({
  url: REDIS_ADAPTER_DEFAULTS.url,
  keyPrefix: REDIS_ADAPTER_DEFAULTS.keyPrefix,
  onError: 'open' as const,
  timeout: 500,
  maxReconnectDelay: REDIS_ADAPTER_DEFAULTS.maxReconnectDelay,
});

/**
 * One round trip and one atomic step per hit: the script increments the counter, starts the
 * window (sets its expiry) on the first hit, and returns the count with the time left, so
 * two instances hitting the same key at once can never both read the same value.
 */
const INCREMENT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if count == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`;

/**
 * A fixed-window rate-limit store in Redis, shared by every instance: a limit of 5 per minute
 * is 5 per minute for the whole cluster. Pass it to `server.setRateLimitStore()`.
 */
export class RedisRateLimitStore implements RateLimitStore {
  readonly #client: RedisClient;
  readonly #prefix: string;
  readonly #failOpen: boolean;
  readonly #timeout: number;
  readonly #logger: LoggerInterface;
  #connecting: Promise<unknown> | null = null;
  #warned = false;
  #closed = false;
  #failures = 0;

  constructor(options: RedisRateLimitStoreOptions = {}) {
    const owner = 'RedisRateLimitStore';
    const o = checkKeys(owner, options, [
      'url',
      'keyPrefix',
      'onError',
      'timeout',
      'maxReconnectDelay',
      'logger',
    ]);
    const onError = o['onError'] ?? REDIS_RATE_LIMIT_DEFAULTS.onError;
    if (onError !== 'open' && onError !== 'closed') {
      throw createRedisError(
        TypeError,
        'PKG_ERR_REDIS_INVALID_OPTION',
        `${owner}: option "onError" must be "open" or "closed".`,
      );
    }
    this.#failOpen = onError === 'open';
    this.#prefix = checkString(
      owner,
      'keyPrefix',
      o['keyPrefix'],
      REDIS_RATE_LIMIT_DEFAULTS.keyPrefix,
    );
    this.#timeout = checkPositiveInt(
      owner,
      'timeout',
      o['timeout'],
      REDIS_RATE_LIMIT_DEFAULTS.timeout,
    );
    this.#logger = checkLogger(owner, o['logger']) ?? new Logger('info', true, false);
    this.#client = createConnection(
      {
        url: checkUrl(owner, o['url'], REDIS_RATE_LIMIT_DEFAULTS.url),
        maxReconnectDelay: checkPositiveInt(
          owner,
          'maxReconnectDelay',
          o['maxReconnectDelay'],
          REDIS_RATE_LIMIT_DEFAULTS.maxReconnectDelay,
        ),
        queueWhileOffline: false,
        name: 'pkg-rate-limit',
      },
      (err) => this.#warn('connection error', err),
    );
    this.#client.on('ready', () => {
      if (this.#warned)
        this.#logger.info('RedisRateLimitStore: Redis reachable again; limits are enforced again', {
          failedHits: this.#failures,
        });
      this.#warned = false;
      this.#failures = 0;
    });
  }

  /**
   * Connects, and resolves once Redis answers (rejects when the connection fails for good).
   * `server.run()` awaits it, within `backend_connect_timeout`, before it listens, so the
   * first hits of a fresh instance are counted instead of following `onError` while the
   * connection is still being made. Without it the first hit connects.
   */
  connect(): Promise<void> {
    return this.#startConnecting();
  }

  #startConnecting(): Promise<void> {
    if (this.#connecting === null) {
      const connecting = this.#client.connect().then(() => undefined);
      // A hit never waits on it; a failure is reported by the client's error listener.
      connecting.catch(() => undefined);
      this.#connecting = connecting;
    }
    return this.#connecting as Promise<void>;
  }

  /** Counts one hit; see `onError` for what happens when Redis cannot answer. */
  async increment(key: string, windowMs: number): Promise<{ count: number; resetAt: number }> {
    void this.#startConnecting().catch(() => undefined);
    const now = Date.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      if (this.#closed) throw new Error('the store is closed');
      const reply = await Promise.race([
        this.#client.eval(INCREMENT_SCRIPT, {
          keys: [`${this.#prefix}:rl:${key}`],
          arguments: [String(Math.max(1, Math.round(windowMs)))],
        }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer within ${this.#timeout} ms`)),
            this.#timeout,
          );
        }),
      ]);
      const [count, ttl] = reply as unknown as [number, number];
      if (!Number.isInteger(count) || !Number.isInteger(ttl))
        throw new Error('unexpected reply from the rate-limit script');
      return { count, resetAt: now + Math.max(0, ttl) };
    } catch (err) {
      this.#failures += 1;
      this.#warn('a hit could not be counted', err);
      return { count: this.#failOpen ? 1 : Number.MAX_SAFE_INTEGER, resetAt: now + windowMs };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes the connection. Later hits follow `onError`. */
  async close(): Promise<void> {
    this.#closed = true;
    await closeConnection(this.#client);
    this.#client.removeAllListeners();
    this.#client.on('error', () => undefined); // a late socket error must not become an uncaught one
  }

  #warn(what: string, err: unknown): void {
    if (this.#warned || this.#closed) return;
    this.#warned = true;
    this.#logger.warning(
      `RedisRateLimitStore: ${what}; until Redis answers again hits are ${this.#failOpen ? 'allowed (onError: "open")' : 'refused (onError: "closed")'}`,
      { error: err instanceof Error ? err.message : String(err) },
    );
  }
}
