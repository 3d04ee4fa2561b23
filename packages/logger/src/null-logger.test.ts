import { describe, expect, it } from '@jest/globals';
import type { LoggerInterface } from './logger-interface';
import { NullLogger } from './null-logger';

describe('NullLogger', () => {
  it('implements every LoggerInterface method and returns nothing', () => {
    const logger: LoggerInterface = new NullLogger();
    expect(logger.emergency('m', { a: 1 })).toBeUndefined();
    expect(logger.alert('m')).toBeUndefined();
    expect(logger.critical('m')).toBeUndefined();
    expect(logger.error('m')).toBeUndefined();
    expect(logger.warning('m')).toBeUndefined();
    expect(logger.notice('m')).toBeUndefined();
    expect(logger.info('m')).toBeUndefined();
    expect(logger.debug('m')).toBeUndefined();
    expect(logger.log('info', 'm', {})).toBeUndefined();
    expect(logger.exception(new Error('x'))).toBeUndefined();
  });

  it('does not look at the context or the error it discards', () => {
    const untouchable = new Proxy(
      {},
      {
        get() {
          throw new Error('read');
        },
        ownKeys() {
          throw new Error('listed');
        },
      },
    );
    const logger = new NullLogger();
    expect(() => logger.info('m', untouchable)).not.toThrow();
    expect(() => logger.exception(untouchable, untouchable)).not.toThrow();
  });

  it('still rejects an unknown level in log(), as a real Logger does', () => {
    expect(() => new NullLogger().log('fatal', 'm')).toThrow(
      expect.objectContaining({ name: 'TypeError', code: 'PKG_ERR_LOG_INVALID_LEVEL' }),
    );
  });
});
