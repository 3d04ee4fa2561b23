/**
 * The checks of a close frame this package sends, and the close code `ws` uses for each of
 * its receiver errors. The codes themselves and what they mean are in @pkg/wire.
 */
import { Buffer } from 'node:buffer';
import {
  CloseCode as WsCloseCode,
  MAX_CLOSE_REASON_BYTES as MAX_REASON_BYTES,
  isSendableCloseCode,
} from '@pkg/wire';
import { createWsError } from './errors';

/** The close codes (RFC 6455 and the protocol's 4xxx codes), by name; from @pkg/wire. */
export { WsCloseCode, isSendableCloseCode };

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
