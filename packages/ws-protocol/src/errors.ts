/**
 * Error codes of @pkg/ws-protocol. Thrown errors carry one of these as `err.code`; log lines
 * about refused handshakes and dropped connections carry one in their context (`code`), with
 * the HTTP status or WebSocket close code listed here.
 */
import { WireErrorCode as WsEventErrorCode } from '@pkg/wire';

export interface WsErrorInfo {
  /** A short generic description of the problem, for docs. */
  readonly message: string;
  /** The HTTP status of the handshake answer, when the problem refuses a handshake. */
  readonly status?: number;
  /** The WebSocket close code that goes with the problem, when it ends a connection. */
  readonly closeCode?: number;
}

export const wsErrorCodes = {
  PKG_ERR_WS_INVALID_OPTION: {
    message: 'A WebSocketHandler option is unknown or its value has the wrong type or range.',
  },
  PKG_ERR_WS_INVALID_ARGUMENT: {
    message: 'A method was called with an argument of the wrong type or shape.',
  },
  PKG_ERR_WS_INVALID_EVENT: {
    message: 'An event name is not a non-empty string of letters, digits, ".", "_" or "-".',
  },
  PKG_ERR_WS_INVALID_DATA: {
    message: 'Event data is not a JSON object or array, or cannot be serialised to JSON.',
  },
  PKG_ERR_WS_INVALID_CLOSE_CODE: {
    message:
      'A close code is not one an endpoint may send (1000-1014 except 1004-1006, 3000-4999).',
  },
  PKG_ERR_WS_CLOSE_REASON_TOO_LONG: {
    message: 'A close reason is longer than the 123 bytes a close frame can carry.',
  },
  PKG_ERR_WS_INVALID_MESSAGE: {
    message: 'An inbound text message is not a valid {"event", "data"} envelope.',
  },
  PKG_ERR_WS_BINARY_NOT_SUPPORTED: {
    message: 'A client sent a binary message; the envelope is carried in text messages only.',
    closeCode: 1003,
  },
  PKG_ERR_WS_MESSAGE_TOO_LARGE: {
    message: 'A client sent a message larger than maxPayload.',
    closeCode: 1009,
  },
  PKG_ERR_WS_SLOW_CONSUMER: {
    message: 'A client does not read fast enough: its unsent bytes exceeded maxBufferedAmount.',
    closeCode: 1013,
  },
  PKG_ERR_WS_HEARTBEAT_TIMEOUT: {
    message: 'A client did not answer a ping within heartbeatTimeout and was terminated.',
    closeCode: 1006,
  },
  PKG_ERR_WS_PROTOCOL_ERROR: {
    message: 'A client broke RFC 6455 (bad frame, bad UTF-8, bad close code); ws closed it.',
    closeCode: 1002,
  },
  PKG_ERR_WS_BAD_HANDSHAKE: {
    message: 'An upgrade request is not a valid WebSocket handshake (method, Upgrade, key).',
    status: 400,
  },
  PKG_ERR_WS_INVALID_HEADER: {
    message:
      'A handshake refusal carried a header whose name or value Node would refuse (CR, LF, NUL, a character above U+00FF); the header was dropped.',
  },
  PKG_ERR_WS_UNSUPPORTED_VERSION: {
    message: 'An upgrade request asks for a WebSocket version other than 13.',
    status: 426,
  },
  PKG_ERR_WS_ORIGIN_NOT_ALLOWED: {
    message: 'The Origin of an upgrade request is not in allowedOrigins (or is missing).',
    status: 403,
  },
  PKG_ERR_WS_HANDSHAKE_REFUSED: {
    message: 'A handshake hook refused the connection with its own status and message.',
  },
  PKG_ERR_WS_HANDSHAKE_HOOK_FAILED: {
    message: 'A handshake hook threw or rejected; the handshake was answered with 500.',
    status: 500,
  },
  PKG_ERR_WS_HANDSHAKE_TIMEOUT: {
    message: 'Handshake hooks did not finish within handshakeTimeout.',
    status: 503,
  },
  PKG_ERR_WS_DUPLICATE_CLIENT_ID: {
    message: 'performHandshake was given a client id that is already connected.',
    status: 500,
  },
  PKG_ERR_WS_SHUTTING_DOWN: {
    message: 'The handler is closing (closeAll) and accepts no new connections.',
    status: 503,
    closeCode: 1001,
  },
  PKG_ERR_WS_OVER_BUDGET: {
    message:
      'A client sent more messages or bytes per second than its inbound budget allows; the message was refused (too_many_messages).',
  },
  PKG_ERR_WS_TOO_MANY_PROTOCOL_ERRORS: {
    message:
      'A client made more protocol errors (invalid messages, unknown events, messages over its budget) than maxProtocolErrors allows and was closed.',
    closeCode: 1008,
  },
} as const satisfies Record<string, WsErrorInfo>;

export type WsErrorCode = keyof typeof wsErrorCodes;

/** An error with a machine-readable `code` from {@link wsErrorCodes}. */
export type WsError<E extends Error = Error> = E & { readonly code: WsErrorCode };

type ErrorCtor = new (message: string) => Error;

/** Builds an error of the given class whose `code` is one of {@link wsErrorCodes}. */
export function createWsError<C extends ErrorCtor>(
  Ctor: C,
  code: WsErrorCode,
  message: string,
): WsError<InstanceType<C>> {
  const err = new Ctor(message) as InstanceType<C> & { code: WsErrorCode };
  Object.defineProperty(err, 'code', { value: code, enumerable: true });
  return err;
}

/**
 * Codes sent to WebSocket clients in the `data.code` member of the `error` event. They are
 * part of the wire protocol, unlike the `PKG_ERR_*` codes, which are for application code
 * and logs; the table is @pkg/wire's `WireErrorCode`, under the name this package always used.
 */
export { WsEventErrorCode };
export type { WireErrorCodeValue as WsEventErrorCodeValue } from '@pkg/wire';
