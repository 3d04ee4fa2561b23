/**
 * Rules for the names and ids a message carries: event names, request ids in both
 * directions, and the well-formedness every name must have before it reaches a table,
 * a log line or a channel name.
 */

/** An application event name: one or more letters, digits, ".", "_" or "-". */
export const EVENT_NAME_PATTERN = /^[A-Za-z0-9._-]+$/;

/** Longest string `id` (client requests) and `rid` (server requests), in characters. */
export const MAX_ID_LENGTH = 64;

/**
 * The id of a request the client made (`id`): a string of 1-64 characters or an integer
 * from 0 to 2^53-1. The server echoes it unchanged in the one answer.
 */
export type RequestId = string | number;

/** The id of a request the server made (`rid`): always a string of 1-64 characters. */
export type ServerRequestId = string;

/**
 * Names that passed the pattern, so that the few names an application uses are each
 * matched once: a lookup costs less than running the pattern on every message in and out.
 * Bounded in count and length, so that a client sending ever new or long names cannot grow
 * it past 512 names of 64 characters; other names are matched every time. A client that
 * fills it only makes other names cost the pattern again, never changes an answer.
 */
const validNames = new Set<string>();
const MAX_REMEMBERED_NAMES = 512;
const MAX_REMEMBERED_LENGTH = 64;

/** True when `name` is a valid application event name (`^[A-Za-z0-9._-]+$`). */
export function isValidEventName(name: unknown): name is string {
  if (typeof name !== 'string') return false;
  if (validNames.has(name)) return true;
  if (!EVENT_NAME_PATTERN.test(name)) return false;
  if (name.length <= MAX_REMEMBERED_LENGTH && validNames.size < MAX_REMEMBERED_NAMES) {
    validNames.add(name);
  }
  return true;
}

/** True for a client request id: a string of 1-64 characters or an integer 0 to 2^53-1. */
export function isValidRequestId(value: unknown): value is RequestId {
  if (typeof value === 'string') return value.length > 0 && value.length <= MAX_ID_LENGTH;
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** True for a server request id (`rid`): a string of 1-64 characters, never a number. */
export function isValidServerRequestId(value: unknown): value is ServerRequestId {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_LENGTH;
}

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * True when `value` is a non-empty string of well-formed UTF-16 (no lone surrogate, so it
 * survives UTF-8 encoding and `encodeURIComponent`) of at most `maxLength` characters.
 * Room and namespace names are checked with it before any state changes.
 */
export function isWellFormedName(value: unknown, maxLength: number): value is string {
  return (
    typeof value === 'string' &&
    value.length > 0 &&
    value.length <= maxLength &&
    !LONE_SURROGATE.test(value)
  );
}
