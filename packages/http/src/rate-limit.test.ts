import { describe, expect, it } from '@jest/globals';
import {
  MemoryRateLimitStore,
  RateLimiter,
  validateRateLimitRule,
  type RateLimitStore,
} from './rate-limit';
import { Request } from './request';
import { Response } from './response';
import { compileTrustProxy } from './trust-proxy';

function clock(start = 1_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = start;
  return { now: () => t, advance: (ms) => (t += ms) };
}

describe('MemoryRateLimitStore', () => {
  it('counts within a window and starts a new one when it ends', () => {
    const time = clock();
    const store = new MemoryRateLimitStore({ now: time.now });
    expect(store.increment('k', 1000)).toEqual({ count: 1, resetAt: 1_001_000 });
    expect(store.increment('k', 1000)).toEqual({ count: 2, resetAt: 1_001_000 });
    time.advance(999);
    expect(store.increment('k', 1000).count).toBe(3);
    time.advance(1);
    expect(store.increment('k', 1000)).toEqual({ count: 1, resetAt: 1_002_000 });
  });

  it('keeps keys apart', () => {
    const store = new MemoryRateLimitStore();
    store.increment('a', 1000);
    store.increment('a', 1000);
    expect(store.increment('b', 1000).count).toBe(1);
    expect(store.size).toBe(2);
    store.clear();
    expect(store.size).toBe(0);
  });

  it('sweeps expired keys when full, so a flood of addresses cannot grow it', () => {
    const time = clock();
    const store = new MemoryRateLimitStore({ maxKeys: 100, now: time.now });
    for (let i = 0; i < 100; i++) store.increment(`ip-${i}`, 1000);
    expect(store.size).toBe(100);
    time.advance(1000);
    store.increment('fresh', 1000);
    expect(store.size).toBe(1);
  });

  it('evicts the oldest live key when full of live keys', () => {
    const time = clock();
    const store = new MemoryRateLimitStore({ maxKeys: 3, now: time.now });
    store.increment('first', 60_000);
    store.increment('first', 60_000);
    store.increment('second', 60_000);
    store.increment('third', 60_000);
    for (let i = 0; i < 1000; i++) store.increment(`flood-${i}`, 60_000);
    expect(store.size).toBe(3);
    expect(store.increment('first', 60_000).count).toBe(1);
  });

  it('refuses bad options', () => {
    for (const maxKeys of [0, -1, 1.5, Number.NaN]) {
      expect(() => new MemoryRateLimitStore({ maxKeys })).toThrow(
        expect.objectContaining({ code: 'PKG_ERR_HTTP_INVALID_OPTION' }),
      );
    }
    expect(() => new MemoryRateLimitStore({ now: 5 as unknown as () => number })).toThrow(
      TypeError,
    );
  });
});

describe('validateRateLimitRule', () => {
  it.each([
    [{ maxCount: 0, timeWindow: 60 }, 'maxCount'],
    [{ maxCount: 1.5, timeWindow: 60 }, 'maxCount'],
    [{ maxCount: 5, timeWindow: 0 }, 'timeWindow'],
    [{ maxCount: 5, timeWindow: Number.POSITIVE_INFINITY }, 'timeWindow'],
    [null, 'object'],
  ])('refuses %j', (rule, what) => {
    expect(() => validateRateLimitRule(rule as never)).toThrow(
      expect.objectContaining({
        code: 'PKG_ERR_HTTP_INVALID_RATE_LIMIT',
        message: expect.stringContaining(what),
      }),
    );
  });
});

describe('RateLimiter', () => {
  it('allows maxCount calls per window, then refuses with retryAfter', async () => {
    const time = clock();
    const limiter = new RateLimiter(new MemoryRateLimitStore({ now: time.now }), { now: time.now });
    const rule = { maxCount: 2, timeWindow: 60 };
    expect(await limiter.check('k', rule)).toEqual({
      allowed: true,
      limit: 2,
      remaining: 1,
      resetAt: 1_060_000,
      retryAfter: 0,
    });
    expect((await limiter.check('k', rule)).remaining).toBe(0);
    time.advance(20_500);
    expect(await limiter.check('k', rule)).toEqual({
      allowed: false,
      limit: 2,
      remaining: 0,
      resetAt: 1_060_000,
      retryAfter: 40,
    });
    time.advance(39_500);
    expect((await limiter.check('k', rule)).allowed).toBe(true);
  });

  it('never answers a retryAfter below one second when refusing', async () => {
    const time = clock();
    const limiter = new RateLimiter(new MemoryRateLimitStore({ now: time.now }), { now: time.now });
    await limiter.check('k', { maxCount: 1, timeWindow: 1 });
    time.advance(999);
    expect((await limiter.check('k', { maxCount: 1, timeWindow: 1 })).retryAfter).toBe(1);
  });

  it('works with an asynchronous store', async () => {
    const calls: [string, number][] = [];
    const store: RateLimitStore = {
      increment: async (key, windowMs) => {
        calls.push([key, windowMs]);
        return { count: 7, resetAt: Date.now() + windowMs };
      },
    };
    const result = await new RateLimiter(store).check('route|1.2.3.4', {
      maxCount: 5,
      timeWindow: 10,
    });
    expect(calls).toEqual([['route|1.2.3.4', 10_000]]);
    expect(result.allowed).toBe(false);
    expect(result.retryAfter).toBeGreaterThanOrEqual(1);
  });

  it('refuses a store without increment and a bad rule', async () => {
    expect(() => new RateLimiter({} as RateLimitStore)).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_HTTP_INVALID_ARGUMENT' }),
    );
    await expect(new RateLimiter().check('k', { maxCount: 0, timeWindow: 1 })).rejects.toThrow(
      TypeError,
    );
  });

  it('keys routes by the client IP after trust proxy, so forged headers do not move a client', () => {
    const forged = new Request({
      method: 'GET',
      url: '/',
      headers: { 'x-forwarded-for': '1.2.3.4' },
      remoteAddress: '203.0.113.5',
    });
    expect(RateLimiter.keyFor('GET /api', forged)).toBe('GET /api|203.0.113.5');
    const proxied = new Request({
      method: 'GET',
      url: '/',
      headers: { 'x-forwarded-for': '198.51.100.3' },
      remoteAddress: '10.0.0.1',
      trustProxy: compileTrustProxy(['10.0.0.0/8']),
    });
    expect(RateLimiter.keyFor('GET /api', proxied)).toBe('GET /api|198.51.100.3');
  });

  it('sets the rate-limit headers', () => {
    const response = RateLimiter.applyHeaders(new Response(), {
      allowed: true,
      limit: 10,
      remaining: 3,
      resetAt: 1_700_000_000_500,
      retryAfter: 0,
    });
    expect(response.getHeaders()).toEqual({
      'X-RateLimit-Limit': '10',
      'X-RateLimit-Remaining': '3',
      'X-RateLimit-Reset': '1700000001',
    });
  });

  it('builds the 429 answer with Retry-After and the rate-limit headers', () => {
    const response = RateLimiter.tooManyRequests({
      allowed: false,
      limit: 2,
      remaining: 0,
      resetAt: 1_700_000_030_000,
      retryAfter: 30,
    });
    expect(response.getStatusCode()).toBe(429);
    expect(response.getHeader('Retry-After')).toBe('30');
    expect(response.getHeader('X-RateLimit-Limit')).toBe('2');
    expect(response.getHeader('X-RateLimit-Remaining')).toBe('0');
    expect(response.getHeader('X-RateLimit-Reset')).toBe('1700000030');
    expect(JSON.parse(response.getBodyString())).toEqual({
      error: 'Too Many Requests',
      code: 'PKG_ERR_HTTP_RATE_LIMITED',
      retryAfter: 30,
    });
  });
});

describe('MemoryRateLimitStore with mixed windows', () => {
  it('sweeps counters that ended even when newer keys have longer windows', () => {
    const time = clock();
    const store = new MemoryRateLimitStore({ maxKeys: 3, now: time.now });
    store.increment('long', 60_000);
    store.increment('short-1', 1_000);
    store.increment('short-2', 1_000);
    time.advance(1_000);
    store.increment('new', 60_000);
    expect(store.size).toBe(2);
    expect(store.increment('long', 60_000).count).toBe(2);
  });
});
