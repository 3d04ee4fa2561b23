/**
 * A message serialised once for all its receivers: the JSON text of an envelope (a text
 * frame) or the bytes of a `@pkg/wire` binary frame (protocol version 1, docs/protocol.md
 * "Binary frames"). Broadcasts, sessions, room history and adapters carry it as it is; the
 * per-receiver members (`seq`, `rid`) are added when it is sent, without copying a binary
 * payload: the receiver gets `[header + seq, payload]`, two fragments of one message.
 */
import { Buffer } from 'node:buffer';
import {
  appendBinarySeq,
  appendSeq,
  decodeBinaryFrame,
  encodeBinaryFrame,
  type BinaryFrame,
  type EventData,
} from '@pkg/wire';
import { prepareMessage, type WebSocketHandler } from '@pkg/ws-protocol';
import { createCoreError } from '../errors';

/** A JSON envelope (text) or a binary frame (bytes), serialised once for every receiver. */
export type SerializedMessage = string | Uint8Array;

/** The data of a message the server sends: JSON (an object or an array) or bytes. */
export type OutboundData = EventData | Uint8Array;

/** What a binary message is sent as to one receiver: one frame, or header and payload. */
export type BinaryParts = Uint8Array | readonly [header: Uint8Array, payload: Uint8Array];

/**
 * Serialises `{event, data}` once: a binary frame when `data` is a Uint8Array (a Node.js
 * Buffer is one), else the JSON text. Throws a TypeError for a bad event name or data.
 */
export function serialize(event: string, data: OutboundData): SerializedMessage {
  if (data instanceof Uint8Array) {
    try {
      return encodeBinaryFrame({ event, data });
    } catch (err) {
      throw createCoreError(
        err instanceof RangeError ? RangeError : TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        `Cannot send "${String(event)}" as a binary frame: ${(err as Error).message}`,
      );
    }
  }
  return prepareMessage(event, data);
}

/** The decoded members of a binary frame the server built itself (never malformed). */
export function readFrame(frame: Uint8Array): BinaryFrame | undefined {
  const read = decodeBinaryFrame(frame);
  return read.ok ? read.frame : undefined;
}

/** The event name of a serialised message, for metrics (`other` when unreadable). */
export function eventOfMessage(message: SerializedMessage): string {
  if (typeof message !== 'string') return readFrame(message)?.event ?? 'other';
  if (!message.startsWith('{"event":"')) return 'other';
  const end = message.indexOf('"', 10);
  return end === -1 ? 'other' : message.slice(10, end);
}

/** Bytes the message takes on the wire, before the WebSocket frame header. */
export function messageBytes(message: SerializedMessage): number {
  return typeof message === 'string' ? Buffer.byteLength(message, 'utf8') : message.length;
}

/**
 * The message with a session's `seq`: the text with `"seq"` appended, or for a binary frame
 * its header with `seq` appended and the payload (a view of the frame, not a copy).
 */
export function withSeqOf(message: SerializedMessage, seq: number): string | BinaryParts {
  if (typeof message === 'string') return appendSeq(message, seq);
  const split = splitFrame(message);
  return split === undefined ? message : [appendBinarySeq(split[0], seq), split[1]];
}

/**
 * A binary frame's header and payload, views of its bytes (undefined for bytes that are not
 * a frame). A broadcast splits its frame once and appends each receiver's `seq` to the
 * header: `[appendBinarySeq(header, seq), payload]`.
 */
export function splitFrame(frame: Uint8Array): readonly [Uint8Array, Uint8Array] | undefined {
  const read = readFrame(frame);
  if (read === undefined) return undefined;
  return [frame.subarray(0, frame.length - read.data.length), read.data];
}

/**
 * Sends one message (or the parts {@link withSeqOf} made) to one client: a text frame, or
 * a binary frame to a client that takes them (a version 0 client is skipped and counted in
 * the handler's `skippedBinary`). False when it was not sent.
 */
export function sendTo(
  ws: WebSocketHandler,
  clientId: string,
  message: string | BinaryParts,
): boolean {
  return typeof message === 'string'
    ? ws.sendRaw(clientId, message)
    : ws.sendBinary(clientId, message);
}
