/** WebSocket close codes used by this package, and the check of codes an endpoint may send. */
import { createWsError } from './errors';

/** The close codes of RFC 6455 section 7.4.1 that this package sends or reports. */
export const WsCloseCode = {
  NORMAL: 1000,
  GOING_AWAY: 1001,
  PROTOCOL_ERROR: 1002,
  UNSUPPORTED_DATA: 1003,
  /** Reported (never sent) when a close frame had no code. */
  NO_STATUS: 1005,
  /** Reported (never sent) when the connection ended without a close frame. */
  ABNORMAL: 1006,
  INVALID_PAYLOAD: 1007,
  POLICY_VIOLATION: 1008,
  MESSAGE_TOO_BIG: 1009,
  INTERNAL_ERROR: 1011,
  TRY_AGAIN_LATER: 1013,
} as const;

/** A close reason travels in the close frame's 125-byte payload after the 2-byte code. */
const MAX_REASON_BYTES = 123;

/** True for the codes an endpoint may put in a close frame. */
export function isSendableCloseCode(code: unknown): code is number {
  if (typeof code !== 'number' || !Number.isInteger(code)) return false;
  if (code >= 3000 && code <= 4999) return true;
  return code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006;
}

/** Throws a TypeError or RangeError (with `code`) unless `code` and `reason` can be sent. */
export function assertCloseFrame(code: number, reason: string, caller: string): void {
  if (!isSendableCloseCode(code)) {
    throw createWsError(
      TypeError,
      'PKG_ERR_WS_INVALID_CLOSE_CODE',
      `${caller}: close code ${String(code)} cannot be sent; use 1000-1014 (except 1004-1006) or an application code in 3000-4999.`,
    );
  }
  if (typeof reason !== 'string') {
    throw createWsError(
      TypeError,
      'PKG_ERR_WS_INVALID_ARGUMENT',
      `${caller}: reason must be a string, got ${typeof reason}.`,
    );
  }
  if (Buffer.byteLength(reason) > MAX_REASON_BYTES) {
    throw createWsError(
      RangeError,
      'PKG_ERR_WS_CLOSE_REASON_TOO_LONG',
      `${caller}: the close reason is ${Buffer.byteLength(reason)} bytes; a close frame carries at most ${MAX_REASON_BYTES}. Shorten it.`,
    );
  }
}

/** The close code `ws` sends for one of its receiver errors (`err.code` `WS_ERR_*`). */
export function closeCodeForWsError(wsCode: string): number {
  switch (wsCode) {
    case 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH':
    case 'WS_ERR_UNSUPPORTED_DATA_PAYLOAD_LENGTH':
      return WsCloseCode.MESSAGE_TOO_BIG;
    case 'WS_ERR_TOO_MANY_BUFFERED_PARTS':
      return WsCloseCode.POLICY_VIOLATION;
    case 'WS_ERR_INVALID_UTF8':
      return WsCloseCode.INVALID_PAYLOAD;
    default:
      return WsCloseCode.PROTOCOL_ERROR;
  }
}
