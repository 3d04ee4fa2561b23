import { describe, expect, it } from '@jest/globals';
import { REDIS_ADAPTER_DEFAULTS, reconnectDelay, resolveAdapterOptions } from './options';
import { RedisRateLimitStore } from './rate-limit-store';
import { RedisAdapter } from './redis-adapter';
import { redisErrorCodes } from './errors';

describe('options', () => {
  it('fills every default', () => {
    const o = resolveAdapterOptions({});
    expect(o).toMatchObject({ ...REDIS_ADAPTER_DEFAULTS, logger: null });
    expect(o.nodeId).toMatch(/^[0-9a-f]{12}$/);
  });

  it('rejects unknown keys and wrong types by name, with the package code', () => {
    expect(() => resolveAdapterOptions({ uri: 'x' })).toThrow(/unknown option "uri"/);
    expect(() => resolveAdapterOptions({ url: 'http://x' })).toThrow(/redis:\/\//);
    expect(() => resolveAdapterOptions({ requestTimeout: 0 })).toThrow(TypeError);
    expect(() => resolveAdapterOptions({ unsubscribeGrace: -1 })).toThrow(/"unsubscribeGrace"/);
    expect(() => resolveAdapterOptions({ maxSubscribesPerSecond: 1.5 })).toThrow(
      /"maxSubscribesPerSecond" must be a whole number/,
    );
    expect(resolveAdapterOptions({ unsubscribeGrace: 0 }).unsubscribeGrace).toBe(0);
    expect(resolveAdapterOptions({}).history).toBe(true);
    expect(resolveAdapterOptions({ history: false }).history).toBe(false);
    expect(() => resolveAdapterOptions({ history: 'yes' })).toThrow(
      /"history" must be true or false/,
    );
    expect(() => resolveAdapterOptions({ logger: {} })).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_REDIS_INVALID_OPTION' }),
    );
    expect(() => new RedisRateLimitStore({ onError: 'maybe' as 'open' })).toThrow(
      /"open" or "closed"/,
    );
  });

  it('checks the sentinel option, which excludes url and cluster', () => {
    const sentinelRootNodes = [{ host: '10.0.0.1', port: 26379 }];
    expect(
      resolveAdapterOptions({ sentinel: { name: 'mymaster', sentinelRootNodes } }),
    ).toMatchObject({
      sentinel: { name: 'mymaster', sentinelRootNodes, scanInterval: 5000 },
      cluster: null,
    });
    expect(resolveAdapterOptions({}).sentinel).toBeNull();
    expect(() =>
      resolveAdapterOptions({ url: 'redis://x:1', sentinel: { name: 'm', sentinelRootNodes } }),
    ).toThrow(/only one of "url".*"sentinel" with "url"/);
    expect(() =>
      resolveAdapterOptions({
        cluster: { rootNodes: ['redis://x:1'] },
        sentinel: { name: 'm', sentinelRootNodes },
      }),
    ).toThrow(/"sentinel" with "cluster"/);
    expect(() => resolveAdapterOptions({ sentinel: { sentinelRootNodes } })).toThrow(
      /"sentinel.name" must be the name the sentinels monitor/,
    );
    expect(() => resolveAdapterOptions({ sentinel: { name: 'm', sentinelRootNodes: [] } })).toThrow(
      /"sentinel.sentinelRootNodes" must be a non-empty list/,
    );
    for (const node of [
      '10.0.0.1:26379',
      { host: '10.0.0.1' },
      { host: '', port: 1 },
      { host: 'h', port: 70000 },
    ]) {
      expect(() =>
        resolveAdapterOptions({ sentinel: { name: 'm', sentinelRootNodes: [node] } }),
      ).toThrow(/"sentinel.sentinelRootNodes\[0\]" must be \{ host: string, port: 1-65535 \}/);
    }
    expect(() =>
      resolveAdapterOptions({ sentinel: { name: 'm', sentinelRootNodes, scanInterval: 0 } }),
    ).toThrow(/"sentinel.scanInterval"/);
    expect(
      resolveAdapterOptions({
        sentinel: { name: 'm', sentinelRootNodes, password: 'p', sentinelPassword: 's' },
      }).sentinel,
    ).toMatchObject({ password: 'p', sentinelPassword: 's' });
    expect(
      resolveAdapterOptions({ sentinel: { name: 'm', sentinelRootNodes } }).sentinel,
    ).not.toHaveProperty('password');
    expect(() =>
      resolveAdapterOptions({ sentinel: { name: 'm', sentinelRootNodes, password: 1 } }),
    ).toThrow(/"sentinel.password" must be a non-empty string/);
    expect(() =>
      resolveAdapterOptions({ sentinel: { name: 'm', sentinelRootNodes, sentinelUsername: '' } }),
    ).toThrow(/"sentinel.sentinelUsername" must be a non-empty string/);
    expect(() =>
      resolveAdapterOptions({ sentinel: { name: 'm', sentinelRootNodes, tls: true } }),
    ).toThrow(/unknown option "tls"/);
    expect(() => resolveAdapterOptions({ sentinel: 'mymaster' })).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_REDIS_INVALID_OPTION' }),
    );
  });

  it('has a Redis history store unless history is false', () => {
    expect(new RedisAdapter().history).toBeDefined();
    expect(new RedisAdapter({ history: false }).history).toBeUndefined();
    expect(new RedisAdapter({ history: false }).stats()).toMatchObject({
      historyWrites: 0,
      historyWriteFailures: 0,
      historyReadFailures: 0,
    });
  });

  it('backs off up to the maximum delay', () => {
    expect(reconnectDelay(0, 2000)).toBeLessThanOrEqual(50);
    expect(reconnectDelay(30, 2000)).toBeLessThanOrEqual(2000);
    expect(reconnectDelay(30, 2000)).toBeGreaterThanOrEqual(1600);
  });

  it('keeps its error codes in one table', () => {
    expect(Object.keys(redisErrorCodes)).toEqual([
      'PKG_ERR_REDIS_INVALID_OPTION',
      'PKG_ERR_REDIS_NOT_ATTACHED',
      'PKG_ERR_REDIS_UNAVAILABLE',
      'PKG_ERR_REDIS_REQUEST_TIMEOUT',
      'PKG_ERR_REDIS_CLOSED',
      'PKG_ERR_REDIS_TOO_MANY_SUBSCRIBES',
    ]);
  });
});
