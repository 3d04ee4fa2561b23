import { describe, expect, it } from '@jest/globals';
import { CloseCode, WireErrorCode } from '@pkg/wire';
import { CoreEventErrorCode, coreErrorCodes, createCoreError } from './errors';

describe('coreErrorCodes', () => {
  it('pins the list of codes', () => {
    expect(Object.keys(coreErrorCodes)).toEqual([
      'PKG_ERR_CORE_INVALID_CONFIG',
      'PKG_ERR_CORE_INVALID_ARGUMENT',
      'PKG_ERR_CORE_INVALID_CONTROLLER',
      'PKG_ERR_CORE_INVALID_ROUTE',
      'PKG_ERR_CORE_DUPLICATE_ROUTE',
      'PKG_ERR_CORE_MISSING_HANDLER',
      'PKG_ERR_CORE_INVALID_MIDDLEWARE',
      'PKG_ERR_CORE_NEXT_CALLED_TWICE',
      'PKG_ERR_CORE_INVALID_RESPONSE',
      'PKG_ERR_CORE_NO_SERVER',
      'PKG_ERR_CORE_ALREADY_RUNNING',
      'PKG_ERR_CORE_ROUTE_NOT_FOUND',
      'PKG_ERR_CORE_METHOD_NOT_ALLOWED',
      'PKG_ERR_CORE_RATE_LIMITED',
      'PKG_ERR_CORE_HANDLER_FAILED',
      'PKG_ERR_CORE_DRAINING',
      'PKG_ERR_CORE_TOO_MANY_PENDING',
      'PKG_ERR_CORE_ACK_TIMEOUT',
      'PKG_ERR_CORE_ACK_REFUSED',
      'PKG_ERR_CORE_CLIENT_GONE',
      'PKG_ERR_CORE_PROTOCOL_UNSUPPORTED',
      'PKG_ERR_CORE_UNAUTHORIZED',
      'PKG_ERR_CORE_FORBIDDEN',
      'PKG_ERR_CORE_AUTH_TIMEOUT',
      'PKG_ERR_CORE_TOKEN_EXPIRED',
      'PKG_ERR_CORE_REVOKED',
      'PKG_ERR_CORE_SESSION_TAKEN_OVER',
      'PKG_ERR_CORE_VALIDATION_FAILED',
      'PKG_ERR_CORE_HANDLER_TIMEOUT',
      'PKG_ERR_CORE_CONNECT_TIMEOUT',
      'PKG_ERR_CORE_BUSY',
      'PKG_ERR_CORE_TOO_MANY_CONNECTIONS',
      'PKG_ERR_CORE_TOO_MANY_CONNECTIONS_PER_IP',
      'PKG_ERR_CORE_HOST_NOT_ALLOWED',
      'PKG_ERR_CORE_INVALID_ROOM_NAME',
      'PKG_ERR_CORE_TOO_MANY_ROOMS',
      'PKG_ERR_CORE_BACKEND_UNAVAILABLE',
      'PKG_ERR_CORE_METRICS_UNAVAILABLE',
      'PKG_ERR_CORE_METRICS_FORBIDDEN',
      'PKG_ERR_CORE_TRACING_UNAVAILABLE',
      // presence
      'PKG_ERR_CORE_PRESENCE_META_TOO_LARGE',
    ]);
  });

  it('gives every code the PKG_ERR_CORE_ prefix, a sentence and valid statuses', () => {
    for (const [code, info] of Object.entries(coreErrorCodes)) {
      expect(code).toMatch(/^PKG_ERR_CORE_[A-Z_]+$/);
      expect(info.message).toMatch(/^[A-Za-z].*\.$/);
      const { status, closeCode } = info as { status?: number; closeCode?: number };
      if (status !== undefined) expect(status >= 400 && status <= 599).toBe(true);
      if (closeCode !== undefined) expect(closeCode >= 1000 && closeCode <= 4999).toBe(true);
    }
  });

  it('pins the statuses of the answers the server gives on its own', () => {
    expect(coreErrorCodes.PKG_ERR_CORE_ROUTE_NOT_FOUND.status).toBe(404);
    expect(coreErrorCodes.PKG_ERR_CORE_METHOD_NOT_ALLOWED.status).toBe(405);
    expect(coreErrorCodes.PKG_ERR_CORE_RATE_LIMITED.status).toBe(429);
    expect(coreErrorCodes.PKG_ERR_CORE_HANDLER_FAILED.status).toBe(500);
    expect(coreErrorCodes.PKG_ERR_CORE_DRAINING.status).toBe(503);
    expect(coreErrorCodes.PKG_ERR_CORE_DRAINING.closeCode).toBe(1012);
  });
});

describe('createCoreError', () => {
  it('builds an error of the given class carrying the code', () => {
    const err = createCoreError(RangeError, 'PKG_ERR_CORE_INVALID_ARGUMENT', 'bad');
    expect(err).toBeInstanceOf(RangeError);
    expect(err.code).toBe('PKG_ERR_CORE_INVALID_ARGUMENT');
    expect(err.message).toBe('bad');
  });

  it('adds the error event code of a problem the client caused', () => {
    const err = createCoreError(RangeError, 'PKG_ERR_CORE_TOO_MANY_ROOMS', 'full');
    expect((err as unknown as { eventCode: string }).eventCode).toBe('too_many_rooms');
    expect('eventCode' in createCoreError(Error, 'PKG_ERR_CORE_BUSY', 'x')).toBe(false);
  });
});

describe('CoreEventErrorCode', () => {
  it('is the wire table of @pkg/wire, not a second list', () => {
    expect(CoreEventErrorCode).toBe(WireErrorCode);
    expect(CoreEventErrorCode.TOO_MANY_ROOMS).toBe('too_many_rooms');
  });

  it('takes the close codes of its errors from the wire table', () => {
    expect(coreErrorCodes.PKG_ERR_CORE_UNAUTHORIZED.closeCode).toBe(CloseCode.UNAUTHORIZED);
    expect(coreErrorCodes.PKG_ERR_CORE_FORBIDDEN.closeCode).toBe(CloseCode.FORBIDDEN);
    expect(coreErrorCodes.PKG_ERR_CORE_SESSION_TAKEN_OVER.closeCode).toBe(4409);
  });
});
