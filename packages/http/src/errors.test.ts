import { describe, expect, it } from '@jest/globals';
import { createHttpError, HttpError, httpErrorCodes } from './errors';

describe('httpErrorCodes', () => {
  it('pins the list of codes', () => {
    expect(Object.keys(httpErrorCodes)).toEqual([
      'PKG_ERR_HTTP_INVALID_OPTION',
      'PKG_ERR_HTTP_INVALID_ARGUMENT',
      'PKG_ERR_HTTP_INVALID_TRUST_PROXY',
      'PKG_ERR_HTTP_CORS_CREDENTIALS_WILDCARD',
      'PKG_ERR_HTTP_INVALID_HEADER',
      'PKG_ERR_HTTP_INVALID_STATUS',
      'PKG_ERR_HTTP_INVALID_RATE_LIMIT',
      'PKG_ERR_HTTP_MALFORMED_URL',
      'PKG_ERR_HTTP_INVALID_HOST',
      'PKG_ERR_HTTP_AMBIGUOUS_REQUEST',
      'PKG_ERR_HTTP_INVALID_JSON',
      'PKG_ERR_HTTP_INVALID_FORM',
      'PKG_ERR_HTTP_BODY_TOO_LARGE',
      'PKG_ERR_HTTP_BODY_READ_FAILED',
      'PKG_ERR_HTTP_NOT_FOUND',
      'PKG_ERR_HTTP_RATE_LIMITED',
      'PKG_ERR_HTTP_HANDLER_FAILED',
      'PKG_ERR_HTTP_INVALID_RESPONSE',
    ]);
  });

  it('pins the statuses that go with the answered codes', () => {
    const statuses = Object.fromEntries(
      Object.entries(httpErrorCodes)
        .filter(([, info]) => 'status' in info)
        .map(([code, info]) => [code, (info as { status: number }).status]),
    );
    expect(statuses).toEqual({
      PKG_ERR_HTTP_MALFORMED_URL: 400,
      PKG_ERR_HTTP_INVALID_HOST: 400,
      PKG_ERR_HTTP_AMBIGUOUS_REQUEST: 400,
      PKG_ERR_HTTP_INVALID_JSON: 400,
      PKG_ERR_HTTP_INVALID_FORM: 400,
      PKG_ERR_HTTP_BODY_TOO_LARGE: 413,
      PKG_ERR_HTTP_NOT_FOUND: 404,
      PKG_ERR_HTTP_RATE_LIMITED: 429,
      PKG_ERR_HTTP_HANDLER_FAILED: 500,
      PKG_ERR_HTTP_INVALID_RESPONSE: 500,
    });
  });

  it('follows the naming rule and gives every code a message', () => {
    for (const [code, info] of Object.entries(httpErrorCodes)) {
      expect(code).toMatch(/^PKG_ERR_HTTP_[A-Z_]+$/);
      expect(info.message.length).toBeGreaterThan(10);
      expect('closeCode' in info).toBe(false);
    }
  });
});

describe('HttpError', () => {
  it('carries the code and the status from the table', () => {
    const err = new HttpError('PKG_ERR_HTTP_BODY_TOO_LARGE', 'too big');
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe('HttpError');
    expect(err.code).toBe('PKG_ERR_HTTP_BODY_TOO_LARGE');
    expect(err.status).toBe(413);
    expect(err.message).toBe('too big');
  });

  it('uses 500 for codes without a status', () => {
    expect(new HttpError('PKG_ERR_HTTP_BODY_READ_FAILED', 'gone').status).toBe(500);
  });
});

describe('createHttpError', () => {
  it('builds the requested class with an enumerable code and an optional cause', () => {
    const cause = new Error('root');
    const err = createHttpError(RangeError, 'PKG_ERR_HTTP_INVALID_STATUS', 'bad status', cause);
    expect(err).toBeInstanceOf(RangeError);
    expect(err.code).toBe('PKG_ERR_HTTP_INVALID_STATUS');
    expect(Object.keys(err)).toContain('code');
    expect(err.cause).toBe(cause);
    expect(createHttpError(TypeError, 'PKG_ERR_HTTP_INVALID_OPTION', 'x').cause).toBeUndefined();
  });
});
