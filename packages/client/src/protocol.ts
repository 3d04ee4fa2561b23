/**
 * The wire format of docs/protocol.md as this client encodes and decodes it. The rules
 * themselves (event names, ids, `seq`, control events) are @pkg/wire's; this module only
 * turns an outbound event into text (with the client's own error codes) and one inbound
 * text message into what the protocol socket dispatches.
 */
import {
  decodeBinaryFrame,
  encodeBinaryFrame,
  isValidEventName,
  isValidRequestId,
  isValidSeq,
  encodeMembers,
  isValidServerRequestId,
  readEnvelopeMeta,
  type EnvelopeMeta,
  readRoomPosition,
  type RequestId,
  type RoomPosition,
} from '@pkg/wire';
import { createClientError } from './errors';

/**
 * The trace context to send with a message: what the `traceContext` option returns, kept
 * when it is a usable `{traceparent, tracestate?}` (within @pkg/wire's META_LIMITS). A
 * function that throws or returns anything else sends no context: tracing never stops a
 * message.
 */
export function traceMeta(source: (() => unknown) | undefined): EnvelopeMeta | undefined {
  if (source === undefined) return undefined;
  try {
    return readEnvelopeMeta(source());
  } catch {
    return undefined;
  }
}

/**
 * Encodes one binary message (protocol version 1, "Binary frames"): `data` travels as the
 * frame's payload, unchanged, with `id` for a request or `rid` for the `$ack` of a server
 * request. Throws a TypeError for a bad event name or a member a frame cannot carry.
 */
export function encodeBinary(
  event: string,
  data: Uint8Array,
  members: { id?: RequestId; rid?: string } = {},
): Uint8Array {
  if (event !== '$ack' && !isValidEventName(event)) {
    throw createClientError(
      TypeError,
      'PKG_ERR_CLIENT_INVALID_ARGUMENT',
      `Event name ${JSON.stringify(event) ?? String(event)} is not valid: use letters, digits, ".", "_" or "-" (for example "chat.message").`,
    );
  }
  try {
    return encodeBinaryFrame({ event, data, ...members });
  } catch (cause) {
    throw createClientError(
      TypeError,
      'PKG_ERR_CLIENT_INVALID_ARGUMENT',
      `The bytes of "${event}" cannot be sent as a binary frame (${cause instanceof Error ? cause.message : String(cause)}).`,
    );
  }
}

/** True for bytes that travel as a binary frame: a Uint8Array (a Node.js Buffer is one). */
export function isBytes(data: unknown): data is Uint8Array {
  return data instanceof Uint8Array;
}

/**
 * Serialises `{event, data}` (plus `id` for a request, `meta` for a trace context), or, for
 * `data` that is a Uint8Array, builds one binary frame (a trace context is not carried in
 * a binary frame). Throws a TypeError for a bad event name, data that is not an object,
 * an array or bytes, or data JSON cannot represent.
 */
export function encodeMessage(
  event: string,
  data: unknown,
  id?: RequestId,
  meta?: EnvelopeMeta,
): string | Uint8Array {
  if (isBytes(data)) return encodeBinary(event, data, id === undefined ? {} : { id });
  if (!isValidEventName(event)) {
    throw createClientError(
      TypeError,
      'PKG_ERR_CLIENT_INVALID_ARGUMENT',
      `Event name ${JSON.stringify(event) ?? String(event)} is not valid: use letters, digits, ".", "_" or "-" (for example "chat.message").`,
    );
  }
  if (typeof data !== 'object' || data === null) {
    throw createClientError(
      TypeError,
      'PKG_ERR_CLIENT_INVALID_ARGUMENT',
      `The data of "${event}" must be an object, an array or a Uint8Array (for example { text: "hi" }).`,
    );
  }
  try {
    const members: Record<string, unknown> = id === undefined ? { data } : { data, id };
    if (meta !== undefined) members['meta'] = meta;
    return encodeMembers(event, members);
  } catch (cause) {
    throw createClientError(
      TypeError,
      'PKG_ERR_CLIENT_INVALID_ARGUMENT',
      `The data of "${event}" cannot be serialised to JSON (${cause instanceof Error ? cause.message : String(cause)}).`,
    );
  }
}

/** A decoded inbound message. Members other than these are ignored. */
export interface InboundMessage {
  event: string;
  data: unknown;
  /** Answers the client's request with this id. */
  id?: RequestId;
  /** A request of the server (always a string), to be answered with `$ack` / `$nack`. */
  rid?: string;
  /** Position in the recovery stream. */
  seq?: number;
  /** Position in its room's history (rooms that keep history). */
  pos?: RoomPosition;
}

/** Decodes one text message; null when it is not an envelope this client understands. */
export function decodeInbound(text: string): InboundMessage | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const record = parsed as Record<string, unknown>;
  const { event, data, id, rid, seq, pos } = record;
  if (typeof event !== 'string' || event.length === 0) return null;
  const message: InboundMessage = { event, data: data ?? null };
  if (isValidRequestId(id)) message.id = id;
  if (isValidServerRequestId(rid)) message.rid = rid;
  if (isValidSeq(seq)) message.seq = seq;
  const position = pos === undefined ? undefined : readRoomPosition(pos);
  if (position) message.pos = position;
  return message;
}

/**
 * Decodes one binary message with @pkg/wire's decoder; null when it is not a binary frame
 * this client reads (it is dropped, as a text that is not an envelope is). `data` is the
 * frame's payload, a view of the received bytes.
 */
export function decodeInboundBinary(bytes: Uint8Array): InboundMessage | null {
  const read = decodeBinaryFrame(bytes);
  if (!read.ok) return null;
  const { event, data, id, rid, seq, pos } = read.frame;
  const message: InboundMessage = { event, data };
  if (id !== undefined) message.id = id;
  if (rid !== undefined) message.rid = rid;
  if (seq !== undefined) message.seq = seq;
  if (pos !== undefined) message.pos = pos;
  return message;
}
