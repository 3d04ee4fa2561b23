// What RedisRateLimitStore answers when Redis cannot be reached: `onError` decides. Needs no
// Redis: the store points at a free port on which nothing listens.
import { afterEach, describe, expect, it } from '@jest/globals';
import { NullLogger, RateLimiter, type LogContext } from '@pkg/core';
import { RedisRateLimitStore } from '../src/index';
import { freePort } from './helpers';

class CapturingLogger extends NullLogger {
  readonly lines: Array<{ level: string; message: string }> = [];
  override log(level: string, message: string, _context?: LogContext): void {
    this.lines.push({ level, message });
  }
}

describe('RedisRateLimitStore without Redis', () => {
  const stores: RedisRateLimitStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  async function storeFor(onError: 'open' | 'closed') {
    const logger = new CapturingLogger();
    const url = `redis://127.0.0.1:${await freePort()}`;
    const store = new RedisRateLimitStore({ url, onError, logger, maxReconnectDelay: 50 });
    stores.push(store);
    return { store, logger, limiter: new RateLimiter(store) };
  }

  it('lets hits through with onError "open", with one warning', async () => {
    const { store, logger, limiter } = await storeFor('open');
    const rule = { maxCount: 1, timeWindow: 60 };
    const results = [await limiter.check('k', rule), await limiter.check('k', rule)];
    expect(results.map((r) => r.allowed)).toEqual([true, true]);
    expect((await store.increment('k', 60_000)).count).toBe(1);
    const warnings = logger.lines.filter((l) => l.level === 'warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toMatch(/allowed \(onError: "open"\)/);
  });

  it('refuses every hit with onError "closed", with one warning', async () => {
    const { logger, limiter } = await storeFor('closed');
    const rule = { maxCount: 100, timeWindow: 60 };
    const results = [await limiter.check('k', rule), await limiter.check('other', rule)];
    expect(results.map((r) => r.allowed)).toEqual([false, false]);
    const warnings = logger.lines.filter((l) => l.level === 'warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toMatch(/refused \(onError: "closed"\)/);
  });
});
