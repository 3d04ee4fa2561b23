import { CloseCode, WireErrorCode, type WireErrorCodeValue } from '@pkg/wire';

/**
 * Error codes of @pkg/core. Thrown errors carry one of these as `err.code`; answers that the
 * server produces on its own (404, 405, 429, 500, 503) use the status listed here.
 */
export interface CoreErrorInfo {
  /** A short generic description of the problem, for docs. */
  readonly message: string;
  /** The HTTP status that goes with the problem, when it has one. */
  readonly status?: number;
  /** The WebSocket close code that goes with the problem, when it has one. */
  readonly closeCode?: number;
  /**
   * The `error` event code a client gets when a handler lets this error through (the
   * client caused it, so it is not an `internal_error`).
   */
  readonly eventCode?: string;
}

export const coreErrorCodes = {
  PKG_ERR_CORE_INVALID_CONFIG: {
    message: 'A server configuration key is unknown or its value has the wrong type.',
  },
  PKG_ERR_CORE_INVALID_ARGUMENT: {
    message: 'A method was called with an argument of the wrong type or shape.',
  },
  PKG_ERR_CORE_INVALID_CONTROLLER: {
    message: 'registerController was given something that is not a SocketController instance.',
  },
  PKG_ERR_CORE_INVALID_ROUTE: {
    message: 'An HttpRoute path is malformed (it must start with "/" and use {name} segments).',
  },
  PKG_ERR_CORE_DUPLICATE_ROUTE: {
    message: 'Two handlers declare the same WebSocket event or the same HTTP method and path.',
  },
  PKG_ERR_CORE_MISSING_HANDLER: {
    message: 'A route names a controller method that does not exist or is not a function.',
  },
  PKG_ERR_CORE_INVALID_MIDDLEWARE: {
    message: 'A middleware is neither a function nor a class with a handle method.',
  },
  PKG_ERR_CORE_NEXT_CALLED_TWICE: {
    message: 'A middleware called next() more than once.',
    status: 500,
  },
  PKG_ERR_CORE_INVALID_RESPONSE: {
    message: 'An HTTP handler or middleware resolved to something that is not a Response.',
    status: 500,
  },
  PKG_ERR_CORE_NO_SERVER: {
    message: 'A controller method that needs the server was called before registration.',
  },
  PKG_ERR_CORE_ALREADY_RUNNING: {
    message: 'run() was called while the server is already listening or has been closed.',
  },
  PKG_ERR_CORE_ROUTE_NOT_FOUND: {
    message: 'No HTTP route matches the request path.',
    status: 404,
  },
  PKG_ERR_CORE_METHOD_NOT_ALLOWED: {
    message: 'The request path exists, but not for the request method.',
    status: 405,
  },
  PKG_ERR_CORE_RATE_LIMITED: {
    message: 'A client exceeded the rate limit of a route or event.',
    status: 429,
  },
  PKG_ERR_CORE_HANDLER_FAILED: {
    message:
      'A WebSocket handler, middleware or connect/disconnect hook threw or returned a rejected promise (HTTP: see PKG_ERR_HTTP_HANDLER_FAILED).',
    status: 500,
  },
  PKG_ERR_CORE_DRAINING: {
    message: 'The server is shutting down and no longer accepts new work.',
    status: 503,
    closeCode: CloseCode.SERVICE_RESTART,
  },
  PKG_ERR_CORE_TOO_MANY_PENDING: {
    message:
      'emitWithAck: the client already has max_pending_server_requests unanswered server requests.',
  },
  PKG_ERR_CORE_ACK_TIMEOUT: {
    message: 'emitWithAck: the client did not answer within the timeout.',
  },
  PKG_ERR_CORE_ACK_REFUSED: {
    message: 'emitWithAck: the client answered $nack (no handler, or its handler failed).',
  },
  PKG_ERR_CORE_CLIENT_GONE: {
    message: 'emitWithAck: the client is not connected, or disconnected before it answered.',
  },
  PKG_ERR_CORE_PROTOCOL_UNSUPPORTED: {
    message:
      'emitWithAck: the client did not say $hello with protocol version 1, so it cannot answer requests.',
  },
  PKG_ERR_CORE_UNAUTHORIZED: {
    message: 'An authentication handler refused the credentials of $hello (or their absence).',
    status: 401,
    closeCode: CloseCode.UNAUTHORIZED,
  },
  PKG_ERR_CORE_FORBIDDEN: {
    message: 'An authentication handler refused an authenticated client with status 403.',
    status: 403,
    closeCode: CloseCode.FORBIDDEN,
  },
  PKG_ERR_CORE_AUTH_TIMEOUT: {
    message:
      'The authentication of a client (waiting for $hello with credentials, and the auth handlers) did not finish within auth_timeout.',
    closeCode: CloseCode.UNAUTHORIZED,
  },
  PKG_ERR_CORE_TOKEN_EXPIRED: {
    message:
      "A client's credentials expired (expiresAt of its auth handlers, and auth_refresh_grace) without an accepted $refresh; it was closed.",
    closeCode: CloseCode.CREDENTIALS_EXPIRED,
  },
  PKG_ERR_CORE_REVOKED: {
    message: 'server.revoke named the identity of a client; it was sent away (error revoked).',
    closeCode: CloseCode.FORBIDDEN,
  },
  PKG_ERR_CORE_SESSION_TAKEN_OVER: {
    message:
      'A resume took the session over from a connection still open; that connection was closed (not to be reconnected automatically).',
    closeCode: CloseCode.SESSION_TAKEN_OVER,
  },
  PKG_ERR_CORE_VALIDATION_FAILED: {
    message:
      'A request or WebSocket message failed the schema of its route (answered 400 / error event validation_failed).',
    status: 400,
  },
  PKG_ERR_CORE_HANDLER_TIMEOUT: {
    message:
      'A handler did not finish within http_handler_timeout (answered 503) or ws_handler_timeout (error event handler_timeout, then forgotten).',
    status: 503,
  },
  PKG_ERR_CORE_CONNECT_TIMEOUT: {
    message: "A client's OnConnect handlers did not finish within connect_timeout; it was closed.",
    closeCode: CloseCode.INTERNAL_ERROR,
  },
  PKG_ERR_CORE_BUSY: {
    message:
      'A WebSocket client already had ws_max_pending unfinished handlers; the message was refused (error event busy).',
  },
  PKG_ERR_CORE_TOO_MANY_CONNECTIONS: {
    message:
      'The server has max_connections connections; a new one got 503 with Retry-After (the health check keeps a reserve).',
    status: 503,
  },
  PKG_ERR_CORE_TOO_MANY_CONNECTIONS_PER_IP: {
    message:
      'A client address already has max_connections_per_ip WebSocket clients; the upgrade got 503 with Retry-After.',
    status: 503,
  },
  PKG_ERR_CORE_HOST_NOT_ALLOWED: {
    message:
      'The Host header of a request or upgrade, or the host a trusted proxy forwarded (X-Forwarded-Host, Forwarded: host=), is not in allowed_hosts (403), or is missing or malformed (400).',
    status: 403,
  },
  PKG_ERR_CORE_INVALID_ROOM_NAME: {
    message:
      'A room or namespace name is empty, longer than max_room_name_length, or not well-formed UTF-16 (a lone surrogate); nothing was joined.',
    eventCode: WireErrorCode.INVALID_PAYLOAD,
  },
  PKG_ERR_CORE_TOO_MANY_ROOMS: {
    message:
      'A WebSocket client is already in max_rooms_per_client rooms; the join was refused (error event too_many_rooms).',
    eventCode: WireErrorCode.TOO_MANY_ROOMS,
  },
  PKG_ERR_CORE_BACKEND_UNAVAILABLE: {
    message:
      'The adapter or the rate-limit store did not connect within backend_connect_timeout when run() started (or its connect() failed); the server listens anyway and the backend keeps reconnecting.',
  },
  // observability
  PKG_ERR_CORE_METRICS_UNAVAILABLE: {
    message:
      'Metrics were turned on (metrics_path or server.metrics()) but the optional package prom-client is not installed.',
  },
  PKG_ERR_CORE_METRICS_FORBIDDEN: {
    message:
      'A request for metrics_path came from an address outside metrics_allow without the metrics_token.',
    status: 403,
  },
  PKG_ERR_CORE_TRACING_UNAVAILABLE: {
    message:
      'tracing is on but @opentelemetry/api could not be loaded: install it (npm install @opentelemetry/api) or set tracing: false.',
  },
  // presence
  PKG_ERR_CORE_PRESENCE_META_TOO_LARGE: {
    message:
      'A presence meta (from updatePresence or the presence hook) is larger than presence_max_meta_bytes as JSON.',
  },
} as const satisfies Record<string, CoreErrorInfo>;

export type CoreErrorCode = keyof typeof coreErrorCodes;

/** An error with a machine-readable `code` from {@link coreErrorCodes}. */
export type CoreError<E extends Error = Error> = E & { readonly code: CoreErrorCode };

type ErrorCtor = new (message: string) => Error;

/** Builds an error of the given class whose `code` is one of {@link coreErrorCodes}. */
export function createCoreError<C extends ErrorCtor>(
  Ctor: C,
  code: CoreErrorCode,
  message: string,
): CoreError<InstanceType<C>> {
  const err = new Ctor(message) as InstanceType<C> & { code: CoreErrorCode };
  Object.defineProperty(err, 'code', { value: code, enumerable: true });
  const eventCode = (coreErrorCodes[code] as CoreErrorInfo).eventCode;
  if (eventCode !== undefined) {
    Object.defineProperty(err, 'eventCode', { value: eventCode, enumerable: true });
  }
  return err;
}

/**
 * Codes sent to WebSocket clients in the `data.code` member of the `error` event: the wire
 * table of `@pkg/wire` (`WireErrorCode`), under the name core has always exported. They are
 * part of the wire protocol, unlike the `PKG_ERR_*` codes, which are for application code.
 */
export const CoreEventErrorCode = WireErrorCode;

export type CoreEventErrorCodeValue = WireErrorCodeValue;
