import { describe, expect, it } from '@jest/globals';
import { WireErrorCode } from '@pkg/wire';
import { createWsError, wsErrorCodes, WsEventErrorCode } from './errors';

describe('wsErrorCodes', () => {
  it('pins the list of codes', () => {
    expect(Object.keys(wsErrorCodes)).toEqual([
      'PKG_ERR_WS_INVALID_OPTION',
      'PKG_ERR_WS_INVALID_ARGUMENT',
      'PKG_ERR_WS_INVALID_EVENT',
      'PKG_ERR_WS_INVALID_DATA',
      'PKG_ERR_WS_INVALID_CLOSE_CODE',
      'PKG_ERR_WS_CLOSE_REASON_TOO_LONG',
      'PKG_ERR_WS_INVALID_MESSAGE',
      'PKG_ERR_WS_BINARY_NOT_SUPPORTED',
      'PKG_ERR_WS_MESSAGE_TOO_LARGE',
      'PKG_ERR_WS_SLOW_CONSUMER',
      'PKG_ERR_WS_HEARTBEAT_TIMEOUT',
      'PKG_ERR_WS_PROTOCOL_ERROR',
      'PKG_ERR_WS_BAD_HANDSHAKE',
      'PKG_ERR_WS_INVALID_HEADER',
      'PKG_ERR_WS_UNSUPPORTED_VERSION',
      'PKG_ERR_WS_ORIGIN_NOT_ALLOWED',
      'PKG_ERR_WS_HANDSHAKE_REFUSED',
      'PKG_ERR_WS_HANDSHAKE_HOOK_FAILED',
      'PKG_ERR_WS_HANDSHAKE_TIMEOUT',
      'PKG_ERR_WS_DUPLICATE_CLIENT_ID',
      'PKG_ERR_WS_SHUTTING_DOWN',
      'PKG_ERR_WS_OVER_BUDGET',
      'PKG_ERR_WS_TOO_MANY_PROTOCOL_ERRORS',
    ]);
  });

  it('pins the status and close code of each', () => {
    const pairs = Object.fromEntries(
      Object.entries(wsErrorCodes).map(([code, info]) => [
        code,
        [(info as { status?: number }).status, (info as { closeCode?: number }).closeCode],
      ]),
    );
    expect(pairs).toEqual({
      PKG_ERR_WS_INVALID_OPTION: [undefined, undefined],
      PKG_ERR_WS_INVALID_ARGUMENT: [undefined, undefined],
      PKG_ERR_WS_INVALID_EVENT: [undefined, undefined],
      PKG_ERR_WS_INVALID_DATA: [undefined, undefined],
      PKG_ERR_WS_INVALID_CLOSE_CODE: [undefined, undefined],
      PKG_ERR_WS_CLOSE_REASON_TOO_LONG: [undefined, undefined],
      PKG_ERR_WS_INVALID_MESSAGE: [undefined, undefined],
      PKG_ERR_WS_BINARY_NOT_SUPPORTED: [undefined, 1003],
      PKG_ERR_WS_MESSAGE_TOO_LARGE: [undefined, 1009],
      PKG_ERR_WS_SLOW_CONSUMER: [undefined, 1013],
      PKG_ERR_WS_HEARTBEAT_TIMEOUT: [undefined, 1006],
      PKG_ERR_WS_PROTOCOL_ERROR: [undefined, 1002],
      PKG_ERR_WS_BAD_HANDSHAKE: [400, undefined],
      PKG_ERR_WS_INVALID_HEADER: [undefined, undefined],
      PKG_ERR_WS_UNSUPPORTED_VERSION: [426, undefined],
      PKG_ERR_WS_ORIGIN_NOT_ALLOWED: [403, undefined],
      PKG_ERR_WS_HANDSHAKE_REFUSED: [undefined, undefined],
      PKG_ERR_WS_HANDSHAKE_HOOK_FAILED: [500, undefined],
      PKG_ERR_WS_HANDSHAKE_TIMEOUT: [503, undefined],
      PKG_ERR_WS_DUPLICATE_CLIENT_ID: [500, undefined],
      PKG_ERR_WS_SHUTTING_DOWN: [503, 1001],
      PKG_ERR_WS_OVER_BUDGET: [undefined, undefined],
      PKG_ERR_WS_TOO_MANY_PROTOCOL_ERRORS: [undefined, 1008],
    });
  });

  it('gives every code the PKG_ERR_WS_ prefix and a message for the docs', () => {
    for (const [code, info] of Object.entries(wsErrorCodes)) {
      expect(code).toMatch(/^PKG_ERR_WS_[A-Z_]+$/);
      expect(info.message.length).toBeGreaterThan(10);
    }
  });
});

describe('createWsError', () => {
  it('builds an error of the given class with an enumerable code', () => {
    const err = createWsError(RangeError, 'PKG_ERR_WS_CLOSE_REASON_TOO_LONG', 'too long');
    expect(err).toBeInstanceOf(RangeError);
    expect(err.message).toBe('too long');
    expect(err.code).toBe('PKG_ERR_WS_CLOSE_REASON_TOO_LONG');
    expect(Object.keys(err)).toContain('code');
  });
});

describe('WsEventErrorCode', () => {
  it('is the wire table of @pkg/wire, not a copy', () => {
    expect(WsEventErrorCode).toBe(WireErrorCode);
    expect(WsEventErrorCode).toMatchObject({
      INVALID_JSON: 'invalid_json',
      INVALID_ENVELOPE: 'invalid_envelope',
      INVALID_EVENT: 'invalid_event',
      INVALID_ID: 'invalid_id',
      INVALID_DATA: 'invalid_data',
      BINARY_NOT_SUPPORTED: 'binary_not_supported',
      TOO_MANY_MESSAGES: 'too_many_messages',
      SHUTTING_DOWN: 'shutting_down',
    });
  });
});
