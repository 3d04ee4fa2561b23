/**
 * The envelope: every message in both directions is one JSON text frame
 * `{"event", "data"}`, plus `id` (a client request or its answer), `rid` (a server request
 * or its answer) and `seq` (a position in the recovery stream) in protocol version 1.
 * Members not listed here are ignored by both ends.
 */
import type { RequestId, ServerRequestId } from './names';
import type { EnvelopePosition } from './history';

/** The `data` of an application event: a JSON object or a JSON array. */
export type EventData = Record<string, unknown> | unknown[];

/** One message as it travels. */
export interface Envelope {
  event: string;
  /** An object or array; any JSON value in `$ack` and in the answer to a request. */
  data: unknown;
  /** Client -> server: the client expects an answer. Server -> client: this answers it. */
  id?: RequestId;
  /** Server -> client: the server expects an answer. Client -> server: in `$ack` / `$nack`. */
  rid?: ServerRequestId;
  /** Server -> client: position in the session's stream, from 1, reset by a fresh session. */
  seq?: number;
  /** Server -> client: the message's position in its room's history (rooms that keep it). */
  pos?: EnvelopePosition;
  /**
   * Client -> server: where the message comes from in a distributed trace (W3C Trace
   * Context). Optional and read leniently: a malformed member is ignored, never refused.
   */
  meta?: EnvelopeMeta;
}

/** The `meta` member: the W3C trace context of the operation that sent the message. */
export interface EnvelopeMeta {
  /** A W3C `traceparent` value, e.g. `00-<32 hex>-<16 hex>-01`. */
  traceparent?: string;
  /** A W3C `tracestate` value (vendor entries), passed on as it is. */
  tracestate?: string;
}

/** Bounds of the `meta` strings: longer ones are ignored (W3C: tracestate <= 512 chars). */
export const META_LIMITS = { traceparent: 128, tracestate: 512 } as const;

const isBoundedText = (value: unknown, max: number): value is string =>
  typeof value === 'string' && value.length > 0 && value.length <= max;

/**
 * The usable part of a `meta` member: the `traceparent` (and `tracestate` beside it) when
 * it is a string within {@link META_LIMITS}; undefined for anything else (a malformed
 * `meta` is ignored, the message itself is still handled).
 */
export function readEnvelopeMeta(value: unknown): EnvelopeMeta | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { traceparent, tracestate } = value as Record<string, unknown>;
  if (!isBoundedText(traceparent, META_LIMITS.traceparent)) return undefined;
  return isBoundedText(tracestate, META_LIMITS.tracestate)
    ? { traceparent, tracestate }
    : { traceparent };
}

/** The version of the protocol `$hello` announces and `$welcome` confirms. */
export const PROTOCOL_VERSION = 1;

/**
 * The WebSocket subprotocol of version 1: a client offers it in `Sec-WebSocket-Protocol`,
 * a server that speaks version 1 selects it, and the connection then opens with `$hello`.
 */
export const SUBPROTOCOL = 'pkg.v1';

/** True for a JSON object or array, the `data` an application event must have. */
export function isEventData(value: unknown): value is EventData {
  return typeof value === 'object' && value !== null;
}

/** True for a `seq`: an integer from 1 to 2^53-1. */
export function isValidSeq(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}
