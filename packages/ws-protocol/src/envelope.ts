/**
 * The wire format: every message in both directions is one JSON text message
 * `{"event": "<name>", "data": <object or array>}`. Protocol version 1 adds the optional
 * request ids `id` (client requests) and `rid` (answers to server requests), and the
 * control events `$hello`, `$ping`, `$ack` and `$nack` (decoded only when asked for).
 * Other members are ignored on input.
 */
import secureJson from 'secure-json-parse';
import {
  CLIENT_CONTROL_EVENTS,
  MAX_ID_LENGTH as MAX_REQUEST_ID_LENGTH,
  decodeBinaryFrame,
  encodeAnswer,
  encodeEnvelope,
  encodeError,
  isEventData,
  isValidEventName,
  isValidRequestId,
  isValidServerRequestId,
  readEnvelopeMeta,
  type Envelope as WireEnvelope,
  type EventData,
  type RequestId,
} from '@pkg/wire';
import { describe } from './describe';
import { createWsError, WsEventErrorCode } from './errors';

export { CLIENT_CONTROL_EVENTS, MAX_REQUEST_ID_LENGTH, isValidEventName, isValidRequestId };
export type { EventData, RequestId };

/** A decoded inbound message (the wire envelope without `seq`, which only servers send). */
export interface Envelope extends Omit<WireEnvelope, 'seq' | 'data'> {
  /** For `$ack` any JSON value (the answer), else an object or an array. */
  data: EventData;
}

/**
 * A decoded inbound binary message (protocol version 1, "Binary frames"): an application
 * event whose `data` is the frame's payload, with `id` for a request; or `$ack` with the
 * `rid` it answers. `data` is a view of the bytes `ws` received (no copy).
 */
export interface BinaryEnvelope extends Omit<Envelope, 'data' | 'meta'> {
  data: Uint8Array;
}

/** A binary frame refused: the wire code, the message, and the request id it answers. */
export interface BinaryRefusal {
  readonly code: string;
  readonly message: string;
  readonly id: RequestId | undefined;
}

/**
 * Decodes an inbound binary frame with `@pkg/wire`'s one decoder. `$ack` is taken only
 * with `controlEvents` (else `invalid_event`, as in a text message); the members only a
 * server sends (`seq`, `pos`), and `rid` on an application event, are ignored, as in text.
 */
export function decodeBinaryMessage(
  bytes: Uint8Array,
  controlEvents = false,
): BinaryEnvelope | BinaryRefusal {
  const read = decodeBinaryFrame(bytes);
  if (!read.ok) return { code: read.code, message: read.message, id: read.id };
  const { event, data, id, rid } = read.frame;
  if (event === '$ack') {
    if (!controlEvents) {
      return {
        code: WsEventErrorCode.INVALID_EVENT,
        message:
          'The "event" member must be a non-empty name of letters, digits, ".", "_" or "-" (for example "chat.message").',
        id: undefined,
      };
    }
    return { event, data, rid: rid! };
  }
  return id === undefined ? { event, data } : { event, data, id };
}

/** The wire codes a decode error can carry (a subset of {@link WsEventErrorCode}). */
export type MessageDecodeErrorCode =
  | typeof WsEventErrorCode.INVALID_JSON
  | typeof WsEventErrorCode.INVALID_ENVELOPE
  | typeof WsEventErrorCode.INVALID_EVENT
  | typeof WsEventErrorCode.INVALID_DATA
  | typeof WsEventErrorCode.INVALID_ID;

/**
 * Thrown by {@link decodeMessage}. `code` is the wire code that the handler sends back in
 * the `error` event (`invalid_json`, `invalid_envelope`, `invalid_event`, `invalid_data`);
 * the message says what was wrong and what a valid message looks like.
 */
export class MessageDecodeError extends Error {
  override readonly name = 'MessageDecodeError';
  readonly code: MessageDecodeErrorCode;
  /** The message's valid request id, when it had one (its `error` answer carries it). */
  readonly id: RequestId | undefined;

  constructor(code: MessageDecodeErrorCode, message: string, id?: RequestId) {
    super(message);
    this.code = code;
    this.id = id;
  }
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
    return encodeEnvelope(event, data);
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw createWsError(
      TypeError,
      'PKG_ERR_WS_INVALID_DATA',
      `The data of event "${event}" cannot be serialised to JSON (${reason}): remove cycles and BigInt values.`,
    );
  }
}

/**
 * Serialises an `error` event `{code, message, ...fields}`, answering the client request `id`
 * when given. The one place this package builds it: @pkg/wire's `encodeError`.
 */
export function prepareError(
  code: string,
  message: string,
  id?: RequestId,
  fields?: Readonly<Record<string, unknown>>,
): string {
  try {
    return encodeError(code, message, id, fields);
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw createWsError(
      TypeError,
      'PKG_ERR_WS_INVALID_DATA',
      `The error "${code}" cannot be serialised to JSON (${reason}): remove cycles and BigInt values from its fields.`,
    );
  }
}

/**
 * Serialises an answer to a client request: `{"event", "id", "data"}`, where `data` is any
 * JSON value (`null` for undefined). Throws a `TypeError` (`PKG_ERR_WS_INVALID_DATA`) when
 * the value cannot be serialised.
 */
export function prepareAnswer(event: string, id: RequestId, data: unknown): string {
  try {
    return encodeAnswer(event, id, data);
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    throw createWsError(
      TypeError,
      'PKG_ERR_WS_INVALID_DATA',
      `The answer to "${event}" cannot be serialised to JSON (${reason}): remove cycles and BigInt values.`,
    );
  }
}

const EXAMPLE = 'send {"event": "name", "data": {}}';

/**
 * What to do with `__proto__` and `constructor.prototype` keys in inbound JSON: `'error'`
 * refuses the message (`invalid_json`), `'remove'` drops those keys and keeps the rest.
 */
export type PrototypeKeysPolicy = 'error' | 'remove';

const REFUSE = Object.freeze({ protoAction: 'error', constructorAction: 'error' } as const);
const REMOVE = Object.freeze({ protoAction: 'remove', constructorAction: 'remove' } as const);
/** secure-json-parse's message for a refused key (any other SyntaxError is malformed JSON). */
const FORBIDDEN_KEY_MESSAGE = 'Object contains forbidden prototype property';

/**
 * Decodes an inbound text message into `{event, data}`. Throws a {@link MessageDecodeError}
 * naming the first problem found: not JSON, not an object, `event` missing / not a string /
 * not matching `^[A-Za-z0-9._-]+$`, `data` missing / not an object or array. A
 * `__proto__` or `constructor.prototype` key is `invalid_json` with `'error'` (the default)
 * and dropped with `'remove'`.
 */
export function decodeMessage(
  raw: string | Buffer,
  prototypeKeys: PrototypeKeysPolicy = 'error',
  controlEvents = false,
): Envelope {
  const text = typeof raw === 'string' ? raw : raw.toString('utf8');
  let parsed: unknown;
  try {
    // Parsed once; secure-json-parse scans the result only when the text could hold a key.
    parsed = secureJson.parse(text, null, prototypeKeys === 'remove' ? REMOVE : REFUSE);
  } catch (err) {
    if ((err as Error).message === FORBIDDEN_KEY_MESSAGE) {
      throw new MessageDecodeError(
        WsEventErrorCode.INVALID_JSON,
        'The message is refused: it contains a "__proto__" or "constructor.prototype" key, ' +
          'which could alter object prototypes. Remove the key.',
      );
    }
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
  let id: RequestId | undefined;
  if (Object.hasOwn(record, 'id')) {
    if (!isValidRequestId(record['id'])) {
      throw new MessageDecodeError(
        WsEventErrorCode.INVALID_ID,
        `The "id" member is ${describe(record['id'])}: use a string of 1-${MAX_REQUEST_ID_LENGTH} characters or an integer from 0 to 2^53-1.`,
      );
    }
    id = record['id'];
  }
  if (!Object.hasOwn(record, 'event')) {
    throw new MessageDecodeError(
      WsEventErrorCode.INVALID_EVENT,
      `The message has no "event" member: ${EXAMPLE}.`,
      id,
    );
  }
  if (typeof event !== 'string') {
    throw new MessageDecodeError(
      WsEventErrorCode.INVALID_EVENT,
      `The "event" member is ${describe(event)}, not a string: ${EXAMPLE}.`,
      id,
    );
  }
  const control = controlEvents && CLIENT_CONTROL_EVENTS.has(event);
  if (!control && !isValidEventName(event)) {
    throw new MessageDecodeError(
      WsEventErrorCode.INVALID_EVENT,
      'The "event" member must be a non-empty name of letters, digits, ".", "_" or "-" (for example "chat.message").',
      id,
    );
  }
  // `$ack` without `data` answers null; every other message needs `data`.
  if (!Object.hasOwn(record, 'data') && !(control && event === '$ack')) {
    throw new MessageDecodeError(
      WsEventErrorCode.INVALID_DATA,
      `The message has no "data" member: ${EXAMPLE}.`,
      id,
    );
  }
  // `$hello` data is read by the protocol layer, which answers a malformed one itself.
  if (control && event === '$hello') return { event, data: data as EventData };
  if (control && (event === '$ack' || event === '$nack')) {
    const rid = record['rid'];
    if (!isValidServerRequestId(rid)) {
      throw new MessageDecodeError(
        WsEventErrorCode.INVALID_ID,
        `The "rid" member of ${event} is ${describe(rid)}: echo the "rid" of the server's request.`,
      );
    }
    if (event === '$ack') return { event, data: (data ?? null) as EventData, rid };
    if (!isEventData(data)) {
      throw new MessageDecodeError(
        WsEventErrorCode.INVALID_DATA,
        `The "data" member of $nack is ${describe(data)}: send {"code", "message"}.`,
      );
    }
    return { event, data, rid };
  }
  if (!isEventData(data)) {
    throw new MessageDecodeError(
      WsEventErrorCode.INVALID_DATA,
      `The "data" member is ${describe(data)}: send an object or an array.`,
      id,
    );
  }
  const envelope: Envelope = id === undefined ? { event, data } : { event, data, id };
  // The trace context of the sender (lenient: a malformed `meta` is ignored).
  if (record['meta'] !== undefined) {
    const meta = readEnvelopeMeta(record['meta']);
    if (meta !== undefined) envelope.meta = meta;
  }
  return envelope;
}
