import { describe, expect, test } from '@jest/globals';
import { decError, decErrorCodes } from './errors';

describe('decErrorCodes', () => {
  test('pins the list of codes', () => {
    expect(Object.keys(decErrorCodes)).toEqual([
      'PKG_ERR_DEC_LEGACY_DECORATORS',
      'PKG_ERR_DEC_METADATA_UNAVAILABLE',
      'PKG_ERR_DEC_INVALID_TARGET',
      'PKG_ERR_DEC_INVALID_EVENT',
      'PKG_ERR_DEC_INVALID_METHOD',
      'PKG_ERR_DEC_INVALID_PATH',
      'PKG_ERR_DEC_INVALID_OPTIONS',
      'PKG_ERR_DEC_INVALID_MIDDLEWARE',
      'PKG_ERR_DEC_INVALID_RATE_LIMIT',
      'PKG_ERR_DEC_DUPLICATE_RATE_LIMIT',
      'PKG_ERR_DEC_RATE_LIMIT_WITHOUT_ROUTE',
      'PKG_ERR_DEC_DUPLICATE_ROUTE',
      'PKG_ERR_DEC_INVALID_CONTROLLER',
      'PKG_ERR_DEC_INVALID_SCHEMA',
    ]);
  });

  test.each(Object.entries(decErrorCodes))(
    '%s follows the naming rule and has a message',
    (code, info) => {
      expect(code).toMatch(/^PKG_ERR_DEC_[A-Z_]+$/);
      expect(typeof info.message).toBe('string');
      expect(info.message.length).toBeGreaterThan(10);
      // Decorator errors are thrown at class definition or registration, never sent on the wire.
      expect(info).not.toHaveProperty('status');
      expect(info).not.toHaveProperty('closeCode');
    },
  );
});

describe('decError', () => {
  test('builds a TypeError carrying the code', () => {
    const error = decError('PKG_ERR_DEC_INVALID_EVENT', 'bad event');
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe('PKG_ERR_DEC_INVALID_EVENT');
    expect(error.message).toBe('bad event');
  });
});
