/**
 * Error codes of @pkg/client. Every error the client throws, rejects with or reports carries
 * one of these as `err.code`; match on it, not on the message.
 */
import { CloseCode } from '@pkg/wire';

export interface ClientErrorInfo {
  /** A short generic description of the problem, for docs. */
  readonly message: string;
  /** The HTTP status that goes with the problem, when it has one. */
  readonly status?: number;
  /** The WebSocket close code that goes with the problem, when it has one. */
  readonly closeCode?: number;
}

export const clientErrorCodes = {
  PKG_ERR_CLIENT_INVALID_OPTION: {
    message: 'A client option is unknown or has a value of the wrong type or range.',
  },
  PKG_ERR_CLIENT_INVALID_ARGUMENT: {
    message: 'A method was called with an event name, data or room of the wrong type.',
  },
  PKG_ERR_CLIENT_NO_WEBSOCKET: {
    message:
      'No WebSocket implementation: there is no global WebSocket and the ws package is not installed.',
  },
  PKG_ERR_CLIENT_UNAUTHORIZED: {
    message: 'The server refused the credentials; the client does not reconnect on its own.',
    status: 401,
    closeCode: CloseCode.UNAUTHORIZED,
  },
  PKG_ERR_CLIENT_FORBIDDEN: {
    message: 'The server refused the connection for this user; the client does not reconnect.',
    status: 403,
    closeCode: CloseCode.FORBIDDEN,
  },
  PKG_ERR_CLIENT_SENT_AWAY: {
    message:
      'The server closed with 1000 (disconnectClient) or 1008 (policy violation); the client does not reconnect on its own.',
  },
  PKG_ERR_CLIENT_SESSION_TAKEN_OVER: {
    message:
      'Another connection resumed this session (close 4409); the client does not reconnect on its own.',
    closeCode: CloseCode.SESSION_TAKEN_OVER,
  },
  PKG_ERR_CLIENT_HANDSHAKE_REFUSED: {
    message: 'The server answered the WebSocket upgrade with an HTTP error status.',
  },
  PKG_ERR_CLIENT_CONNECTION_FAILED: {
    message: 'The connection could not be opened or was lost before the server welcomed it.',
  },
  PKG_ERR_CLIENT_HELLO_TIMEOUT: {
    message: 'The server answered neither $welcome nor an error to $hello in time.',
  },
  PKG_ERR_CLIENT_ACK_TIMEOUT: {
    message: 'No answer to a request (emitWithAck, joinRoom) arrived within its timeout.',
  },
  PKG_ERR_CLIENT_DISCONNECTED: {
    message: 'The connection closed (or disconnect() was called) before the answer arrived.',
  },
  PKG_ERR_CLIENT_NOT_CONNECTED: {
    message: 'Sent while disconnected with whenDisconnected / ackWhenDisconnected set to reject.',
  },
  PKG_ERR_CLIENT_BUFFER_FULL: {
    message: 'The offline buffer already holds maxBuffered messages.',
  },
  PKG_ERR_CLIENT_TOO_MANY_PENDING: {
    message: 'maxPendingAcks requests are already waiting for an answer.',
  },
  PKG_ERR_CLIENT_REMOTE: {
    message:
      'The server answered a request (or a joinRoom) with an error event; remoteCode holds its code (e.g. forbidden, too_many_rooms).',
  },
  PKG_ERR_CLIENT_REFRESH_FAILED: {
    message:
      'The credentials could not be refreshed: the auth function threw or returned no token (the refresh_error event carries it).',
  },
} as const satisfies Record<string, ClientErrorInfo>;

export type ClientErrorCode = keyof typeof clientErrorCodes;

/** Details an error may carry besides its code and message. */
export interface ClientErrorDetails {
  /** The HTTP status the server gave (refused upgrade, or `status` of an auth refusal). */
  status?: number;
  /** The WebSocket close code that ended the connection. */
  closeCode?: number;
  /** The reason the server gave: a close reason or the body of a refused upgrade. */
  reason?: string;
  /** `data.code` of the server's `error` event (for PKG_ERR_CLIENT_REMOTE and refusals). */
  remoteCode?: string;
  /** The whole `data` of the server's `error` event. */
  data?: unknown;
  /** The event of the request that failed. */
  event?: string;
  /** The room of a refused `joinRoom` (with `namespace`). */
  room?: string;
  /** The namespace of a refused `joinRoom`. */
  namespace?: string;
}

/** The one error class of the package: an `Error` with a `code` and optional details. */
export class ClientError extends Error implements ClientErrorDetails {
  override readonly name = 'ClientError';
  readonly code: ClientErrorCode;
  readonly status?: number;
  readonly closeCode?: number;
  readonly reason?: string;
  readonly remoteCode?: string;
  readonly data?: unknown;
  readonly event?: string;
  readonly room?: string;
  readonly namespace?: string;

  constructor(code: ClientErrorCode, message: string, details: ClientErrorDetails = {}) {
    super(message);
    this.code = code;
    this.status = details.status;
    this.closeCode = details.closeCode;
    this.reason = details.reason;
    this.remoteCode = details.remoteCode;
    this.data = details.data;
    this.event = details.event;
    this.room = details.room;
    this.namespace = details.namespace;
  }
}

/** Builds a `TypeError` or `RangeError` that carries a client error code. */
export function createClientError<E extends TypeErrorConstructor | RangeErrorConstructor>(
  Ctor: E,
  code: ClientErrorCode,
  message: string,
): InstanceType<E> & { code: ClientErrorCode } {
  const err = new Ctor(message) as InstanceType<E> & { code: ClientErrorCode };
  Object.defineProperty(err, 'code', { value: code, enumerable: true });
  return err;
}
