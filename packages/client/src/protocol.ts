/**
 * The wire format of docs/protocol.md as the client speaks it: the control events of
 * version 1, the id rules, the encoding of an outbound event and the decoding of one
 * inbound text message.
 */
import { createClientError } from './errors';

/** The version of the protocol this client speaks in `$hello`. */
export const PROTOCOL_VERSION = 1;

/** Control events of version 1. Their `$` cannot appear in an application event name. */
export const ControlEvent = {
  HELLO: '$hello',
  WELCOME: '$welcome',
  PING: '$ping',
  PONG: '$pong',
  ACK: '$ack',
  NACK: '$nack',
} as const;

/** Longest string `id` / `rid`, in characters. */
export const MAX_ID_LENGTH = 64;

const EVENT_NAME = /^[A-Za-z0-9._-]+$/;

/** True when `name` is a valid application event name (`^[A-Za-z0-9._-]+$`). */
export function isValidEventName(name: unknown): name is string {
  return typeof name === 'string' && EVENT_NAME.test(name);
}

/** A request id: a string of 1-64 characters or an integer 0 to 2^53-1. */
export type RequestId = string | number;

export function isValidId(id: unknown): id is RequestId {
  if (typeof id === 'string') return id.length >= 1 && id.length <= MAX_ID_LENGTH;
  return typeof id === 'number' && Number.isSafeInteger(id) && id >= 0;
}

/**
 * Serialises `{event, data}` (plus `id` for a request). Throws a TypeError for a bad event
 * name, data that is not an object or array, or data JSON cannot represent.
 */
export function encodeMessage(event: string, data: unknown, id?: RequestId): string {
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
    return JSON.stringify(id === undefined ? { event, data } : { event, data, id });
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
  /** A request of the server, to be answered with `$ack` / `$nack`. */
  rid?: RequestId;
  /** Position in the recovery stream. */
  seq?: number;
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
  const { event, data, id, rid, seq } = record;
  if (typeof event !== 'string' || event.length === 0) return null;
  const message: InboundMessage = { event, data: data ?? null };
  if (isValidId(id)) message.id = id;
  if (isValidId(rid)) message.rid = rid;
  if (typeof seq === 'number' && Number.isSafeInteger(seq) && seq > 0) message.seq = seq;
  return message;
}

/** The `data` of `$welcome`. */
export interface Welcome {
  clientId?: string;
  heartbeat: { interval: number; timeout: number } | null;
  session?: string;
  recoveryWindow?: number;
  resumed: boolean;
  reason?: string;
}

function positive(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

/** Reads the `data` of `$welcome`, tolerating members it does not know. */
export function readWelcome(data: unknown): Welcome {
  const record = typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {};
  const welcome: Welcome = { heartbeat: null, resumed: record['resumed'] === true };
  if (typeof record['clientId'] === 'string') welcome.clientId = record['clientId'];
  const hb = record['heartbeat'];
  if (typeof hb === 'object' && hb !== null) {
    const interval = positive((hb as Record<string, unknown>)['interval']);
    const timeout = positive((hb as Record<string, unknown>)['timeout']);
    if (interval && timeout) welcome.heartbeat = { interval, timeout };
  }
  if (typeof record['session'] === 'string') welcome.session = record['session'];
  const recovery = record['recovery'];
  if (typeof recovery === 'object' && recovery !== null) {
    const window = positive((recovery as Record<string, unknown>)['window']);
    if (window) welcome.recoveryWindow = window;
  }
  if (typeof record['reason'] === 'string') welcome.reason = record['reason'];
  return welcome;
}

/** `data` of an `error` event as far as the client reads it. */
export interface RemoteErrorData {
  code: string;
  message: string;
  status?: number;
}

export function readErrorData(data: unknown): RemoteErrorData {
  const record = typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {};
  const result: RemoteErrorData = {
    code: typeof record['code'] === 'string' ? record['code'] : 'unknown_error',
    message: typeof record['message'] === 'string' ? record['message'] : '',
  };
  if (typeof record['status'] === 'number') result.status = record['status'];
  return result;
}
