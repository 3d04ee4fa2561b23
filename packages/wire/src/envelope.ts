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
