import { describe, expect, it } from '@jest/globals';
import { buildHealthDocument, formatUptime, healthCheckMatch } from './health';

describe('formatUptime', () => {
  it('writes hours, minutes and seconds', () => {
    expect(formatUptime(0)).toBe('0h 0m 0s');
    expect(formatUptime(59)).toBe('0h 0m 59s');
    expect(formatUptime(61)).toBe('0h 1m 1s');
    expect(formatUptime(3 * 3600 + 25 * 60 + 7)).toBe('3h 25m 7s');
    expect(formatUptime(49 * 3600 + 3 * 60 + 2)).toBe('49h 3m 2s');
    expect(formatUptime(12.9)).toBe('0h 0m 12s');
    expect(formatUptime(-4)).toBe('0h 0m 0s');
  });
});

describe('buildHealthDocument', () => {
  it('has the fields of the spec with integer values', () => {
    const started = Date.UTC(2026, 0, 1, 12, 0, 0);
    const now = started + 3_723_500;
    expect(buildHealthDocument('healthy', 3, started, now)).toEqual({
      status: 'healthy',
      timestamp: Math.floor(now / 1000),
      server: { clients: 3, uptime: 3723, uptime_human: '1h 2m 3s' },
    });
  });

  it('reports draining', () => {
    expect(buildHealthDocument('draining', 0, 0, 1000).status).toBe('draining');
  });
});

describe('healthCheckMatch', () => {
  it('takes GET and HEAD of the path, one trailing slash either side, any query', () => {
    const match = healthCheckMatch('/health')!;
    for (const target of ['/health', '/health/', '/health?x=1', '/health/?', 'http://h/health']) {
      expect([target, match('GET', target), match('HEAD', target)]).toEqual([target, true, true]);
    }
    for (const target of ['/healthz', '/health//', '/health/x', '/Health', '/%68ealth', '/']) {
      expect([target, match('GET', target)]).toEqual([target, false]);
    }
    expect(match('POST', '/health')).toBe(false);
    expect(healthCheckMatch('/health/')!('GET', '/health')).toBe(true);
    expect(healthCheckMatch(null)).toBeNull();
  });
});
