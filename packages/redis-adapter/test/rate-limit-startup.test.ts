// A fresh instance with a RedisRateLimitStore enforces its limits from the first request:
// `run()` connects the store before it listens. Needs the shared Redis at 127.0.0.1:6379.
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import { NullLogger, Server, ServerConfig, type LogContext } from '@pkg/core';
import { RedisRateLimitStore } from '../src/index';
import { freePort, sharedRedisAvailableSync } from './helpers';

class CapturingLogger extends NullLogger {
  readonly lines: Array<{ level: string; message: string; context?: LogContext }> = [];
  override log(level: string, message: string, context?: LogContext): void {
    this.lines.push({ level, message, ...(context ? { context } : {}) });
  }
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function serverWith(
  store: RedisRateLimitStore,
  backendConnectTimeout = 5_000,
): Promise<{ base: string; logger: CapturingLogger }> {
  const logger = new CapturingLogger();
  const server = new Server(
    new ServerConfig({
      host: '127.0.0.1',
      port: 0,
      heartbeat_interval: 0,
      backend_connect_timeout: backendConnectTimeout,
    }),
    undefined,
    undefined,
    undefined,
    logger,
  );
  server.setRateLimitStore(store);
  server.route('GET', '/limited', () => ({ ok: true }), {
    rateLimit: { maxCount: 1, timeWindow: 60 },
  });
  closers.push(() => store.close());
  await server.run();
  closers.push(() => server.close());
  return { base: `http://127.0.0.1:${server.getPort()}`, logger };
}

const withRedis = sharedRedisAvailableSync('rate-limit startup') ? describe : describe.skip;

withRedis('RedisRateLimitStore on a fresh instance', () => {
  it('counts the very first hits: the second request within the limit window is 429', async () => {
    const store = new RedisRateLimitStore({
      keyPrefix: `test-${randomUUID()}`,
      logger: new NullLogger(),
    });
    const { base, logger } = await serverWith(store);
    const first = await fetch(`${base}/limited`);
    const second = await fetch(`${base}/limited`);
    expect([first.status, second.status]).toEqual([200, 429]);
    expect(logger.lines.some((l) => l.message === 'The rate-limit store is connected')).toBe(true);
  });
});

describe('run() with a rate-limit store that cannot connect', () => {
  it('listens after backend_connect_timeout and logs PKG_ERR_CORE_BACKEND_UNAVAILABLE', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const store = new RedisRateLimitStore({ url, logger: new NullLogger(), maxReconnectDelay: 50 });
    const started = Date.now();
    const { base, logger } = await serverWith(store, 300);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    const warning = logger.lines.find(
      (l) => l.context?.['code'] === 'PKG_ERR_CORE_BACKEND_UNAVAILABLE',
    );
    expect(warning?.level).toBe('warning');
    expect(warning?.context?.['backend']).toBe('rate-limit store');
    // The store follows onError ("open") meanwhile: the server is up and answers.
    expect((await fetch(`${base}/limited`)).status).toBe(200);
  });
});
