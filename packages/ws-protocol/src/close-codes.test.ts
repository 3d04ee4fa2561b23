import { describe, expect, it } from '@jest/globals';
import {
  assertCloseFrame,
  closeCodeForWsError,
  isSendableCloseCode,
  WsCloseCode,
} from './close-codes';

describe('isSendableCloseCode', () => {
  it('accepts the codes an endpoint may send', () => {
    for (const code of [
      1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1013, 1014, 3000, 4999,
    ]) {
      expect(isSendableCloseCode(code)).toBe(true);
    }
  });

  it('refuses reserved, out-of-range and non-integer codes', () => {
    for (const code of [999, 1004, 1005, 1006, 1015, 2000, 2999, 5000, 1000.5, NaN, '1000']) {
      expect(isSendableCloseCode(code)).toBe(false);
    }
  });
});

describe('assertCloseFrame', () => {
  it('passes a valid code and reason', () => {
    expect(() => assertCloseFrame(WsCloseCode.GOING_AWAY, 'bye', 'test')).not.toThrow();
    expect(() => assertCloseFrame(1000, 'x'.repeat(123), 'test')).not.toThrow();
  });

  it('throws a TypeError with a code for a reserved close code', () => {
    expect(() => assertCloseFrame(1006, '', 'disconnect')).toThrow(
      expect.objectContaining({ name: 'TypeError', code: 'PKG_ERR_WS_INVALID_CLOSE_CODE' }),
    );
    expect(() => assertCloseFrame(1006, '', 'disconnect')).toThrow(/disconnect: close code 1006/);
  });

  it('throws a RangeError for a reason over 123 bytes (counted in UTF-8)', () => {
    expect(() => assertCloseFrame(1000, 'x'.repeat(124), 'closeAll')).toThrow(
      expect.objectContaining({ name: 'RangeError', code: 'PKG_ERR_WS_CLOSE_REASON_TOO_LONG' }),
    );
    expect(() => assertCloseFrame(1000, 'é'.repeat(62), 'closeAll')).toThrow(RangeError);
  });

  it('throws a TypeError for a reason that is not a string', () => {
    expect(() => assertCloseFrame(1000, 5 as unknown as string, 'closeAll')).toThrow(
      expect.objectContaining({ name: 'TypeError', code: 'PKG_ERR_WS_INVALID_ARGUMENT' }),
    );
  });
});

describe('closeCodeForWsError', () => {
  it('gives the close code ws sends for its receiver errors', () => {
    expect(closeCodeForWsError('WS_ERR_UNSUPPORTED_MESSAGE_LENGTH')).toBe(1009);
    expect(closeCodeForWsError('WS_ERR_UNSUPPORTED_DATA_PAYLOAD_LENGTH')).toBe(1009);
    expect(closeCodeForWsError('WS_ERR_TOO_MANY_BUFFERED_PARTS')).toBe(1008);
    expect(closeCodeForWsError('WS_ERR_INVALID_UTF8')).toBe(1007);
    expect(closeCodeForWsError('WS_ERR_EXPECTED_MASK')).toBe(1002);
    expect(closeCodeForWsError('WS_ERR_INVALID_CLOSE_CODE')).toBe(1002);
  });
});
