/**
 * The wire format of docs/protocol.md as this client encodes and decodes it. The rules
 * themselves (event names, ids, `seq`, control events) are @pkg/wire's; this module only
 * turns an outbound event into text (with the client's own error codes) and one inbound
 * text message into what the protocol socket dispatches.
 */
import {
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
 * Serialises `{event, data}` (plus `id` for a request, `meta` for a trace context). Throws a
 * TypeError for a bad event name, data that is not an object or array, or data JSON cannot
 * represent.
 */
export function encodeMessage(
  event: string,
  data: unknown,
  id?: RequestId,
  meta?: EnvelopeMeta,
): string {
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
      `The data of "${event}" must be an object or an array (for example { text: "hi" }).`,
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
