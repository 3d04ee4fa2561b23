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
} as const;

export type WireErrorCodeValue = (typeof WireErrorCode)[keyof typeof WireErrorCode];

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
