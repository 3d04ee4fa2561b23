/**
 * The wire format: every message in both directions is one JSON text message
 * `{"event": "<name>", "data": <object or array>}`. Members other than these two are
 * ignored on input and never produced on output.
 */
import { createWsError, WsEventErrorCode } from './errors';

/** The `data` member of an envelope: a JSON object or a JSON array. */
export type EventData = Record<string, unknown> | unknown[];

/** A decoded message. */
export interface Envelope {
  event: string;
  data: EventData;
}

/** The wire codes a decode error can carry (a subset of {@link WsEventErrorCode}). */
export type MessageDecodeErrorCode =
  | typeof WsEventErrorCode.INVALID_JSON
  | typeof WsEventErrorCode.INVALID_ENVELOPE
  | typeof WsEventErrorCode.INVALID_EVENT
  | typeof WsEventErrorCode.INVALID_DATA;

const EVENT_NAME = /^[A-Za-z0-9._-]+$/;

/**
 * Thrown by {@link decodeMessage}. `code` is the wire code that the handler sends back in
 * the `error` event (`invalid_json`, `invalid_envelope`, `invalid_event`, `invalid_data`);
 * the message says what was wrong and what a valid message looks like.
 */
export class MessageDecodeError extends Error {
  override readonly name = 'MessageDecodeError';
  readonly code: MessageDecodeErrorCode;

  constructor(code: MessageDecodeErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** True when `name` is usable as an event name (`^[A-Za-z0-9._-]+$`). */
export function isValidEventName(name: unknown): name is string {
  return typeof name === 'string' && EVENT_NAME.test(name);
}

function isEventData(value: unknown): value is EventData {
  return typeof value === 'object' && value !== null;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}

/**
 * Serialises an outbound message. Throws a `TypeError` (code `PKG_ERR_WS_INVALID_EVENT` or
 * `PKG_ERR_WS_INVALID_DATA`) when the event name or the data is not valid, so that a bad
 * message fails where it is produced rather than on every receiver.
 */
export function prepareMessage(event: string, data: EventData): string {
  if (!isValidEventName(event)) {
    throw createWsError(
      TypeError,
      'PKG_ERR_WS_INVALID_EVENT',
      `Event name ${JSON.stringify(event) ?? String(event)} is not valid: use letters, digits, ".", "_" or "-" (for example "chat.message").`,
    );
  }
  if (!isEventData(data)) {
    throw createWsError(
      TypeError,
      'PKG_ERR_WS_INVALID_DATA',
      `The data of event "${event}" is ${describe(data)}: pass an object or an array (for example { text: "hi" }).`,
    );
  }
  try {
    return JSON.stringify({ event, data });
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw createWsError(
      TypeError,
      'PKG_ERR_WS_INVALID_DATA',
      `The data of event "${event}" cannot be serialised to JSON (${reason}): remove cycles and BigInt values.`,
    );
  }
}

const EXAMPLE = 'send {"event": "name", "data": {}}';

/**
 * `__proto__` keys (and `constructor` objects with a `prototype`) are dropped from inbound
 * data, as `@pkg/http` does for request bodies: an application that merges `data` into an
 * object with a naive deep merge must not be able to reach `Object.prototype`. The reviver
 * costs a call per key, so it runs only on text that could hold such a key (the names, or any
 * `\\u` escape that could spell them).
 */
function mayCarryPrototypeKeys(text: string): boolean {
  return text.includes('__proto__') || text.includes('prototype') || text.includes('\\u');
}

function dropPrototypeKeys(this: unknown, key: string, value: unknown): unknown {
  if (key === '__proto__') return undefined;
  if (
    key === 'constructor' &&
    value !== null &&
    typeof value === 'object' &&
    Object.hasOwn(value, 'prototype')
  ) {
    return undefined;
  }
  return value;
}

/**
 * Decodes an inbound text message into `{event, data}`. Throws a {@link MessageDecodeError}
 * naming the first problem found: not JSON, not an object, `event` missing / not a string /
 * not matching `^[A-Za-z0-9._-]+$`, `data` missing / not an object or array.
 */
export function decodeMessage(raw: string | Buffer): Envelope {
  const text = typeof raw === 'string' ? raw : raw.toString('utf8');
  let parsed: unknown;
  try {
    parsed = mayCarryPrototypeKeys(text) ? JSON.parse(text, dropPrototypeKeys) : JSON.parse(text);
  } catch {
    throw new MessageDecodeError(
      WsEventErrorCode.INVALID_JSON,
      `The message is not valid JSON: ${EXAMPLE}.`,
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new MessageDecodeError(
      WsEventErrorCode.INVALID_ENVELOPE,
      `The message is ${describe(parsed)}, not a JSON object: ${EXAMPLE}.`,
    );
  }
  const record = parsed as Record<string, unknown>;
  const { event, data } = record;
  if (!Object.hasOwn(record, 'event')) {
    throw new MessageDecodeError(
      WsEventErrorCode.INVALID_EVENT,
      `The message has no "event" member: ${EXAMPLE}.`,
    );
  }
  if (typeof event !== 'string') {
    throw new MessageDecodeError(
      WsEventErrorCode.INVALID_EVENT,
      `The "event" member is ${describe(event)}, not a string: ${EXAMPLE}.`,
    );
  }
  if (!EVENT_NAME.test(event)) {
    throw new MessageDecodeError(
      WsEventErrorCode.INVALID_EVENT,
      'The "event" member must be a non-empty name of letters, digits, ".", "_" or "-" (for example "chat.message").',
    );
  }
  if (!Object.hasOwn(record, 'data')) {
    throw new MessageDecodeError(
      WsEventErrorCode.INVALID_DATA,
      `The message has no "data" member: ${EXAMPLE}.`,
    );
  }
  if (!isEventData(data)) {
    throw new MessageDecodeError(
      WsEventErrorCode.INVALID_DATA,
      `The "data" member is ${describe(data)}: send an object or an array.`,
    );
  }
  return { event, data };
}
