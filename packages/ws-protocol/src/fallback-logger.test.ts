import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { createFallbackLogger, fallbackLogger } from './fallback-logger';

// The same cases as @pkg/http's src/logger.test.ts: the two packages' defaults behave alike.
describe('createFallbackLogger', () => {
  let lines: unknown[][];
  let spy: jest.SpiedFunction<typeof console.error>;

  beforeEach(() => {
    lines = [];
    spy = jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
      lines.push(args);
    });
  });

  afterEach(() => {
    spy.mockRestore();
  });

  it('writes error and more severe lines to console.error', () => {
    const logger = createFallbackLogger();
    logger.emergency('e1');
    logger.alert('a1');
    logger.critical('c1');
    logger.error('boom', { code: 'X' });
    expect(lines).toEqual([
      ['[emergency] e1'],
      ['[alert] a1'],
      ['[critical] c1'],
      ['[error] boom', { code: 'X' }],
    ]);
  });

  it('drops the milder levels', () => {
    const logger = createFallbackLogger();
    logger.warning('w');
    logger.notice('n');
    logger.info('i');
    logger.debug('d');
    logger.log('info', 'x');
    expect(lines).toEqual([]);
    logger.log('critical', 'by name');
    expect(lines).toEqual([['[critical] by name']]);
  });

  it('writes exceptions with their stack', () => {
    const logger = createFallbackLogger();
    logger.exception(new Error('kaput'), { path: '/x' });
    logger.exception('a string');
    expect(String(lines[0]?.[0])).toMatch(/^\[error\] Error: kaput\n\s+at /);
    expect(lines[0]?.[1]).toEqual({ path: '/x' });
    expect(String(lines[1]?.[0])).toContain('a string');
  });

  it('is the default logger of the handler (fallbackLogger)', () => {
    fallbackLogger.info('dropped');
    fallbackLogger.error('kept');
    expect(lines).toEqual([['[error] kept']]);
  });
});
