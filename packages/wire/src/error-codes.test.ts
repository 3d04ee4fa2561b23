import { describe, expect, it } from '@jest/globals';
import { WireErrorCode, encodeError, readErrorData, wireErrors } from './error-codes';

describe('WireErrorCode', () => {
  it('holds every code of docs/protocol.md, including too_many_rooms and busy', () => {
    expect(Object.values(WireErrorCode).sort()).toEqual([
      'auth_timeout',
      'binary_not_supported',
      'busy',
      'forbidden',
      'handler_timeout',
      'internal_error',
      'invalid_binary_frame',
      'invalid_data',
      'invalid_envelope',
      'invalid_event',
      'invalid_id',
      'invalid_json',
      'invalid_payload',
      'rate_limited',
      'revoked',
      'shutting_down',
      'token_expired',
      'too_many_messages',
      'too_many_pending',
      'too_many_rooms',
      'unauthorized',
      'unknown_event',
      'unsupported_binary_version',
      'validation_failed',
    ]);
  });
});

describe('encodeError', () => {
  it('builds {event, data} without an id and {event, id, data} with one', () => {
    expect(encodeError('busy', 'wait')).toBe(
      '{"event":"error","data":{"code":"busy","message":"wait"}}',
    );
    expect(encodeError('forbidden', 'no', 7, { room: 'r' })).toBe(
      '{"event":"error","id":7,"data":{"room":"r","code":"forbidden","message":"no"}}',
    );
    expect(JSON.parse(encodeError('busy', 'm', 'abc')).id).toBe('abc');
  });

  it('never lets a field override code or message', () => {
    const data = JSON.parse(
      encodeError('busy', 'real', undefined, { code: 'x', message: 'y' }),
    ).data;
    expect(data).toEqual({ code: 'busy', message: 'real' });
  });
});

describe('readErrorData', () => {
  it('keeps extra fields and fills a missing code or message', () => {
    expect(readErrorData({ code: 'rate_limited', message: 'm', retryAfter: 3 })).toEqual({
      code: 'rate_limited',
      message: 'm',
      retryAfter: 3,
    });
    expect(readErrorData(null)).toEqual({ code: 'unknown_error', message: '' });
    expect(readErrorData([1])).toEqual({ code: 'unknown_error', message: '' });
  });
});

describe('wireErrors', () => {
  it('has one row per code, each with a sentence and both columns', () => {
    expect(Object.keys(wireErrors).sort()).toEqual(Object.values(WireErrorCode).sort());
    for (const info of Object.values(wireErrors)) {
      expect(info.when.length).toBeGreaterThan(10);
      expect([0, 1]).toContain(info.version);
      expect(typeof info.throttled).toBe('boolean');
      expect(typeof info.protocolError).toBe('boolean');
    }
  });

  it('counts only throttled codes as protocol errors, and never an internal failure', () => {
    // A protocol error that were answered every time would let a client flood its own replies.
    for (const [code, info] of Object.entries(wireErrors)) {
      if (info.protocolError)
        expect({ code, throttled: info.throttled }).toEqual({ code, throttled: true });
    }
    expect(wireErrors.internal_error).toMatchObject({ throttled: false, protocolError: false });
    expect(wireErrors.invalid_json).toMatchObject({ throttled: true, protocolError: true });
    expect(wireErrors.rate_limited).toMatchObject({ throttled: true, protocolError: false });
  });
});
