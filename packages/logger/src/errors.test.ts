import { describe, expect, it } from '@jest/globals';
import { createLogError, logErrorCodes } from './errors';

describe('logErrorCodes', () => {
  it('pins the list of codes (adding or removing one is a visible change)', () => {
    expect(Object.keys(logErrorCodes)).toEqual([
      'PKG_ERR_LOG_INVALID_LEVEL',
      'PKG_ERR_LOG_INVALID_SEVERITY',
      'PKG_ERR_LOG_INVALID_OPTION',
      'PKG_ERR_LOG_DIRECTORY_UNWRITABLE',
      'PKG_ERR_LOG_WRITE_FAILED',
    ]);
  });

  it.each(Object.entries(logErrorCodes))('%s is named and described', (code, info) => {
    expect(code).toMatch(/^PKG_ERR_LOG_[A-Z_]+$/);
    expect(info.message.length).toBeGreaterThan(10);
    expect(info).not.toHaveProperty('status');
    expect(info).not.toHaveProperty('closeCode');
  });
});

describe('createLogError', () => {
  it('builds an error of the given class with an enumerable code', () => {
    const err = createLogError(RangeError, 'PKG_ERR_LOG_INVALID_SEVERITY', 'too big');
    expect(err).toBeInstanceOf(RangeError);
    expect(err.message).toBe('too big');
    expect(err.code).toBe('PKG_ERR_LOG_INVALID_SEVERITY');
    expect(Object.keys(err)).toContain('code');
    expect(err.cause).toBeUndefined();
  });

  it('keeps the cause when one is given', () => {
    const cause = new Error('EACCES');
    const err = createLogError(Error, 'PKG_ERR_LOG_DIRECTORY_UNWRITABLE', 'no', cause);
    expect(err.cause).toBe(cause);
  });
});
