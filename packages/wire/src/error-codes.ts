/**
 * The `code` of every `error` event a server sends (`data.code`), and the one function that
 * builds that event. A client matches on the code; the message is for people.
 */
import type { RequestId } from './names';

/** Every `data.code` of a server's `error` event (docs/protocol.md lists when each is sent). */
export const WireErrorCode = {
  /** The text is not JSON, or it holds a `__proto__` / `constructor.prototype` key. */
  INVALID_JSON: 'invalid_json',
  /** The JSON is not an object; or a second `$hello`, or a message outside the protocol's order. */
  INVALID_ENVELOPE: 'invalid_envelope',
  /** `event` is missing, not a string, or not a valid event name. */
  INVALID_EVENT: 'invalid_event',
  /** `data` is missing, or not an object or an array. */
  INVALID_DATA: 'invalid_data',
  /** `id` or `rid` is present but malformed. */
  INVALID_ID: 'invalid_id',
  /** A binary frame arrived; the protocol is carried in text frames. */
  BINARY_NOT_SUPPORTED: 'binary_not_supported',
  /** A binary frame that is not a well-formed binary frame of docs/protocol.md. */
  INVALID_BINARY_FRAME: 'invalid_binary_frame',
  /** A binary frame of a format version this server does not read. */
  UNSUPPORTED_BINARY_VERSION: 'unsupported_binary_version',
  /** No handler for `event` (`event` in the data). */
  UNKNOWN_EVENT: 'unknown_event',
  /** A `RateLimit` on the event was exceeded (`event`, `retryAfter` in the data). */
  RATE_LIMITED: 'rate_limited',
  /** A handler or middleware failed; details only in debug mode. */
  INTERNAL_ERROR: 'internal_error',
  /** A policy refused it (a room join, a middleware, an authenticated but refused client). */
  FORBIDDEN: 'forbidden',
  /** The data does not have the shape the handler needs, or a name is malformed. */
  INVALID_PAYLOAD: 'invalid_payload',
  /** `data` failed the event's schema (`event`, `issues` in the data). */
  VALIDATION_FAILED: 'validation_failed',
  /** The connection is over its inbound budget (messages or bytes per second). */
  TOO_MANY_MESSAGES: 'too_many_messages',
  /** The server stopped accepting messages; this one was not handled. */
  SHUTTING_DOWN: 'shutting_down',
  /** A handler did not finish in time; a later result is dropped. */
  HANDLER_TIMEOUT: 'handler_timeout',
  /** Too many unfinished handlers of this client, or too many requests held during auth. */
  BUSY: 'busy',
  /** Too many client requests (`id`) of this connection are unanswered. */
  TOO_MANY_PENDING: 'too_many_pending',
  /** The client is in as many rooms as the server allows (`room` in the data). */
  TOO_MANY_ROOMS: 'too_many_rooms',
  /** Authentication refused (then close 4401); `status` 401 in the data. */
  UNAUTHORIZED: 'unauthorized',
  /** Authentication did not finish within `auth_timeout` (then close 4401). */
  AUTH_TIMEOUT: 'auth_timeout',
  /** The credentials expired without an accepted `$refresh` (then close 4419). */
  TOKEN_EXPIRED: 'token_expired',
  /** The server revoked the client's identity (then close 4403). */
  REVOKED: 'revoked',
} as const;

export type WireErrorCodeValue = (typeof WireErrorCode)[keyof typeof WireErrorCode];

/** One row of the error table: when a code is sent and how the server spaces and counts it. */
export interface WireErrorInfo {
  /** The protocol version that added the code (0: every client can get it). */
  readonly version: 0 | 1;
  /** When the server sends it, in one sentence. */
  readonly when: string;
  /** Members of `data` beside `code` and `message`, as the document lists them ('' for none). */
  readonly fields: string;
  /**
   * Answered at most once per `ws_error_reply_interval` per connection (per code) when it
   * answers no `id`; an `error` that answers a request (`id`) is always sent.
   */
  readonly throttled: boolean;
  /** Counted toward `ws_max_protocol_errors` (past it the connection is closed with 1008). */
  readonly protocolError: boolean;
}

/**
 * Every `data.code` a server sends, with when and how. docs/protocol.md's error table is
 * generated from this one (`pnpm run docs:errors`).
 */
export const wireErrors: Readonly<Record<WireErrorCodeValue, WireErrorInfo>> = {
  invalid_json: {
    version: 0,
    when: 'the text is not JSON, or it holds a `__proto__` or `constructor.prototype` key (unless `json_prototype_keys: "remove"`)',
    fields: '',
    throttled: true,
    protocolError: true,
  },
  invalid_envelope: {
    version: 0,
    when: 'the JSON is not an object; also a second `$hello` on one connection',
    fields: '',
    throttled: true,
    protocolError: true,
  },
  invalid_event: {
    version: 0,
    when: '`event` missing, not a string, or not matching the pattern',
    fields: '',
    throttled: true,
    protocolError: true,
  },
  invalid_data: {
    version: 0,
    when: '`data` missing, or not an object or array',
    fields: '',
    throttled: true,
    protocolError: true,
  },
  invalid_id: {
    version: 1,
    when: '`id` or `rid` present but malformed (see "Requests from the client"); the `error` carries no `id`',
    fields: '',
    throttled: true,
    protocolError: true,
  },
  binary_not_supported: {
    version: 0,
    when: 'a binary frame arrived on a connection that does not take them: a version 0 connection, or a server without binary messages (`ws_binary_messages: "error"`, the default)',
    fields: '',
    throttled: true,
    protocolError: true,
  },
  invalid_binary_frame: {
    version: 1,
    when: 'a binary frame that is not one of "Binary frames": shorter than its 8-byte header, not starting with `0xF5`, a reserved flag set, a length past its end or bytes after its payload, a malformed `pos` or `seq`',
    fields: '',
    throttled: true,
    protocolError: true,
  },
  unsupported_binary_version: {
    version: 1,
    when: 'a binary frame whose format version (its second byte) is not 1',
    fields: '',
    throttled: true,
    protocolError: true,
  },
  unknown_event: {
    version: 0,
    when: 'no handler for `event` (`unknown_event: "ignore"` drops those without `id` silently)',
    fields: '`event`',
    throttled: true,
    protocolError: true,
  },
  rate_limited: {
    version: 0,
    when: 'the client exceeded a `RateLimit` on that event; or (Redis adapter) it joined rooms new to its instance faster than `maxSubscribesPerSecond`',
    fields: '`event`, `retryAfter` (a join: `room`, `namespace`, `retryAfter`)',
    throttled: true,
    protocolError: false,
  },
  internal_error: {
    version: 0,
    when: 'the handler or a middleware threw, or its result is not JSON; details only in debug mode',
    fields: '',
    throttled: false,
    protocolError: false,
  },
  forbidden: {
    version: 0,
    when: 'a policy refused it: `join_room` with `RoomsController`, a middleware that stopped a request with `id`, `$history` of a room the client is not in; with version 1 also an authenticated client refused (then close 4403)',
    fields: '`room`, `namespace` (`event` for a request; `status` for an authentication)',
    throttled: false,
    protocolError: false,
  },
  invalid_payload: {
    version: 0,
    when: 'the data does not have the shape the handler needs, or names a malformed room or namespace; a malformed `$hello` (then close 1008) or `$history`',
    fields: '`room`, `namespace` when they are strings',
    throttled: false,
    protocolError: false,
  },
  validation_failed: {
    version: 0,
    when: "`data` failed the event's schema (`SocketOn` `schema`)",
    fields: '`event`, `issues` (at most 20 `{path, message}`)',
    throttled: true,
    protocolError: true,
  },
  too_many_messages: {
    version: 0,
    when: 'the connection is over its inbound budget (see "Inbound limits")',
    fields: '',
    throttled: true,
    protocolError: true,
  },
  shutting_down: {
    version: 0,
    when: 'the server stopped accepting messages; this one was not handled',
    fields: '',
    throttled: true,
    protocolError: false,
  },
  handler_timeout: {
    version: 0,
    when: 'the handler did not finish within `ws_handler_timeout`; a request gets this as its one answer, and a later result is dropped',
    fields: '',
    throttled: true,
    protocolError: false,
  },
  busy: {
    version: 0,
    when: '`ws_max_pending` handlers of this client are unfinished; or a request past the held bound while authenticating',
    fields: '`event`',
    throttled: true,
    protocolError: false,
  },
  too_many_pending: {
    version: 1,
    when: 'the client has `max_pending_requests` requests with an `id` unanswered; the `error` carries the `id`',
    fields: '',
    throttled: true,
    protocolError: false,
  },
  too_many_rooms: {
    version: 0,
    when: 'the client is already in `max_rooms_per_client` rooms (default 128); nothing was joined',
    fields: '`room`, `namespace`',
    throttled: false,
    protocolError: false,
  },
  unauthorized: {
    version: 1,
    when: '`$hello.auth` refused (then close 4401); also the answer of each held request',
    fields: '`status`',
    throttled: false,
    protocolError: false,
  },
  auth_timeout: {
    version: 1,
    when: 'authentication unfinished after `auth_timeout` (then close 4401); also the answer of each held request',
    fields: '',
    throttled: false,
    protocolError: false,
  },
  token_expired: {
    version: 1,
    when: '`expiresAt` and `auth_refresh_grace` passed without an accepted `$refresh` (then close 4419)',
    fields: '`expiresAt`',
    throttled: false,
    protocolError: false,
  },
  revoked: {
    version: 1,
    when: "`server.revoke(identity)` named the client's identity (then close 4403)",
    fields: '',
    throttled: false,
    protocolError: false,
  },
};

/** The `data` of an `error` event: `code`, `message`, and fields some codes add. */
export interface ErrorData {
  code: string;
  message: string;
  [field: string]: unknown;
}

/** An `error` event; with `id` it is the one answer to that client request. */
export interface ErrorEnvelope {
  event: 'error';
  id?: RequestId;
  data: ErrorData;
}

/**
 * Serialises an `error` event: `{"event": "error", "data": {...fields, code, message}}`,
 * with `"id"` after `event` when the error answers a client request. `fields` cannot
 * override `code` or `message`. Throws a TypeError when `fields` cannot be serialised.
 */
export function encodeError(
  code: string,
  message: string,
  id?: RequestId,
  fields?: Readonly<Record<string, unknown>>,
): string {
  const data: ErrorData = { ...fields, code, message };
  const envelope: ErrorEnvelope =
    id === undefined ? { event: 'error', data } : { event: 'error', id, data };
  return JSON.stringify(envelope);
}

/**
 * Reads the `data` of a received `error` event leniently: `code` `unknown_error` and an
 * empty `message` when they are missing; other fields are kept.
 */
export function readErrorData(data: unknown): ErrorData {
  const record =
    typeof data === 'object' && data !== null && !Array.isArray(data)
      ? (data as Record<string, unknown>)
      : {};
  return {
    ...record,
    code: typeof record['code'] === 'string' ? record['code'] : 'unknown_error',
    message: typeof record['message'] === 'string' ? record['message'] : '',
  };
}
