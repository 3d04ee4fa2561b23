/**
 * The messages instances exchange over Redis, and the channel names.
 *
 * A broadcast is `<header JSON>\n<envelope>`: the header says the format version (`v`), the
 * origin node (`o`), the ids left out (`x`) and, when the broadcast was made inside a trace,
 * its W3C trace context (`t`: `{traceparent, tracestate?}`; optional, so instances without
 * it read the same format version and ignore it); the envelope is the text the server
 * serialised once, passed on untouched (never parsed or re-escaped). A binary message
 * (protocol version 1) is the same with `"b":1` in the header and the bytes of its binary
 * frame after the newline, as they are: Redis strings are binary-safe, so nothing is
 * base64-encoded, and the frame reaches the other instances byte for byte. Requests and
 * replies between instances are one JSON object each. Anything else is rejected by the
 * decoders with a reason, for a log line.
 */
import { Buffer } from 'node:buffer';
import {
  encodeKeyName,
  isBinaryFrame,
  isWellFormedName,
  readEnvelopeMeta,
  roomKey,
  type EnvelopeMeta,
} from '@pkg/wire';

export const WIRE_VERSION = 1;

/** A broadcast as received: who sent it, whom to leave out, the envelope. */
export interface BroadcastMessage {
  readonly origin: string;
  readonly except: readonly string[];
  /** The envelope's text, or a binary frame's bytes (a view of the message received). */
  readonly text: string | Uint8Array;
  /** Kept in history and delivered by its origin too when it comes back (header `s`). */
  readonly self: boolean;
  /** The trace the broadcast belongs to (absent, or malformed and then ignored: undefined). */
  readonly trace?: EnvelopeMeta;
  /** When the origin published it, ms since the epoch on the origin's clock (header `ms`). */
  readonly sentAt?: number;
}

/** Which clients a request is about: all, a namespace, or a room. */
export interface WireTarget {
  readonly namespace: string | null;
  readonly room: string | null;
}

/** `server.queryCluster`: every instance answers `topic` for itself (JSON in, JSON out). */
export interface QueryBody {
  readonly kind: 'query';
  readonly topic: string;
  readonly payload: unknown;
}

export type RequestBody =
  | QueryBody
  | { readonly kind: 'count'; readonly target: WireTarget }
  | { readonly kind: 'ids'; readonly target: WireTarget }
  | { readonly kind: 'send'; readonly clientId: string; readonly text: string }
  | { readonly kind: 'disconnect'; readonly clientId: string }
  | {
      readonly kind: 'joinRoom' | 'leaveRoom';
      readonly clientId: string;
      readonly room: string;
      readonly namespace: string;
    }
  | {
      /** `server.revoke`: every connection of the identity, out of the room or of the server. */
      readonly kind: 'revoke';
      readonly identity: string;
      readonly room: string | null;
      readonly namespace: string | null;
    };

export interface RequestMessage {
  readonly origin: string;
  readonly id: string;
  readonly body: RequestBody;
}

/** A reply: a count, a list of ids, whether the client was found, or a query's answer. */
export interface ReplyMessage {
  readonly origin: string;
  readonly id: string;
  readonly count?: number;
  readonly ids?: readonly string[];
  readonly found?: boolean;
  /** A query's answer (any JSON value). */
  readonly data?: unknown;
  /** Why a query got no answer on that instance. */
  readonly error?: string;
}

export type Decoded<T> = { ok: true; value: T } | { ok: false; reason: string };

/**
 * Percent-encodes a name for a channel or key; never throws, and two names never share an
 * encoding (`@pkg/wire`'s `encodeKeyName`, the half of a room key).
 */
export const encodeName = encodeKeyName;

/** Channel names under a prefix; names are percent-encoded so no name can fake another. */
export class Channels {
  readonly all: string;
  readonly requests: string;
  readonly #prefix: string;

  constructor(prefix: string) {
    this.#prefix = prefix;
    this.all = `${prefix}:all`;
    this.requests = `${prefix}:req`;
  }

  namespace(namespace: string): string {
    return `${this.#prefix}:ns:${encodeName(namespace)}`;
  }

  room(namespace: string, room: string): string {
    return `${this.#prefix}:room:${roomKey(namespace, room)}`;
  }

  replies(nodeId: string): string {
    return `${this.#prefix}:res:${encodeName(nodeId)}`;
  }

  /**
   * The keys of a room's history: its epoch and last offset (`meta`) and its stream, both
   * tagged with the room key (`{<roomKey>}`) so a Redis Cluster keeps them in one slot (the
   * scripts use both).
   */
  history(namespace: string, room: string): { meta: string; stream: string } {
    const tag = `{${roomKey(namespace, room)}}`;
    return { meta: `${this.#prefix}:hist:${tag}:m`, stream: `${this.#prefix}:hist:${tag}:s` };
  }
}

/**
 * A broadcast for the other instances. `self`: the origin delivers it to its own clients
 * when Redis hands it back (a kept message, so that every instance delivers a room's
 * messages in stream order); otherwise the origin ignores its echo. `trace`: the trace
 * context the delivery joins on the other instances.
 */
export function encodeBroadcast(
  origin: string,
  except: readonly string[],
  text: string,
  extra?: BroadcastExtra,
): string;
export function encodeBroadcast(
  origin: string,
  except: readonly string[],
  text: string | Uint8Array,
  extra?: BroadcastExtra,
): string | Buffer;
export function encodeBroadcast(
  origin: string,
  except: readonly string[],
  text: string | Uint8Array,
  extra: BroadcastExtra = {},
): string | Buffer {
  const header: Record<string, unknown> = { v: WIRE_VERSION, o: origin, x: except };
  if (extra.sentAt !== undefined) header['ms'] = extra.sentAt;
  if (extra.self === true) header['s'] = 1;
  if (extra.trace !== undefined) header['t'] = extra.trace;
  const binary = typeof text !== 'string';
  if (binary || extra.binary === true) header['b'] = 1;
  const line = `${JSON.stringify(header)}\n`;
  if (!binary) return `${line}${text}`;
  // One copy per broadcast (header line + frame), never one per receiver.
  return Buffer.concat([Buffer.from(line, 'utf8'), text]);
}

/** The optional members of a broadcast's header. */
export interface BroadcastExtra {
  readonly self?: boolean;
  readonly trace?: EnvelopeMeta | undefined;
  readonly sentAt?: number;
  /** The header of a binary message whose bytes are appended elsewhere (a history script). */
  readonly binary?: boolean;
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === 'string');
}

function parseObject(raw: string): Decoded<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'not a JSON object' };
  }
  const obj = value as Record<string, unknown>;
  if (obj['v'] !== WIRE_VERSION) {
    return { ok: false, reason: `unknown format version ${JSON.stringify(obj['v'] ?? null)}` };
  }
  if (typeof obj['o'] !== 'string' || obj['o'] === '') {
    return { ok: false, reason: 'no origin node id' };
  }
  return { ok: true, value: obj };
}

/**
 * Reads a broadcast: a string (a text message), or the bytes Redis delivered in buffer
 * mode, whose header says whether the rest is a text (decoded) or a binary frame (a view of
 * the bytes, not a copy).
 */
export function decodeBroadcast(raw: string | Uint8Array): Decoded<BroadcastMessage> {
  const newline = typeof raw === 'string' ? raw.indexOf('\n') : raw.indexOf(0x0a);
  if (newline < 0) return { ok: false, reason: 'no header line' };
  const bytes =
    typeof raw === 'string' ? null : Buffer.from(raw.buffer, raw.byteOffset, raw.length);
  const header = parseObject(
    bytes === null ? (raw as string).slice(0, newline) : bytes.toString('utf8', 0, newline),
  );
  if (!header.ok) return header;
  const except = header.value['x'];
  if (!isStringArray(except)) return { ok: false, reason: '"x" is not a list of client ids' };
  const origin = header.value['o'] as string;
  let text: string | Uint8Array;
  if (header.value['b'] === 1) {
    if (bytes === null) return { ok: false, reason: 'a binary message read as text' };
    text = new Uint8Array(bytes.buffer, bytes.byteOffset + newline + 1, bytes.length - newline - 1);
    if (!isBinaryFrame(text)) return { ok: false, reason: 'not a binary frame after the header' };
  } else {
    text =
      bytes === null ? (raw as string).slice(newline + 1) : bytes.toString('utf8', newline + 1);
  }
  // Lenient: a malformed trace context loses the trace, never the message.
  const trace = readEnvelopeMeta(header.value['t']);
  const sentAt = header.value['ms'];
  return {
    ok: true,
    value: {
      origin,
      except,
      text,
      self: header.value['s'] === 1,
      ...(trace === undefined ? {} : { trace }),
      ...(typeof sentAt === 'number' && Number.isFinite(sentAt) ? { sentAt } : {}),
    },
  };
}

export function encodeRequest(origin: string, id: string, body: RequestBody): string {
  return JSON.stringify({ v: WIRE_VERSION, o: origin, id, b: body });
}

function isName(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

/**
 * A room or namespace name from another instance: well-formed UTF-16 (the rule of
 * @pkg/wire), so that it can be percent-encoded into a channel name. Lengths are checked
 * where the name entered the cluster.
 */
function isRoomName(value: unknown): value is string {
  return isWellFormedName(value, Infinity);
}

function checkTarget(value: unknown): WireTarget | null {
  if (typeof value !== 'object' || value === null) return null;
  const t = value as Record<string, unknown>;
  const namespace = t['namespace'] ?? null;
  const room = t['room'] ?? null;
  if (namespace !== null && !isRoomName(namespace)) return null;
  if (room !== null && !isRoomName(room)) return null;
  return { namespace, room };
}

function checkBody(value: unknown): RequestBody | null {
  if (typeof value !== 'object' || value === null) return null;
  const b = value as Record<string, unknown>;
  switch (b['kind']) {
    case 'count':
    case 'ids': {
      const target = checkTarget(b['target']);
      return target ? { kind: b['kind'], target } : null;
    }
    case 'send':
      return isName(b['clientId']) && typeof b['text'] === 'string'
        ? { kind: 'send', clientId: b['clientId'], text: b['text'] }
        : null;
    case 'disconnect':
      return isName(b['clientId']) ? { kind: 'disconnect', clientId: b['clientId'] } : null;
    case 'joinRoom':
    case 'leaveRoom':
      return isName(b['clientId']) && isRoomName(b['room']) && isRoomName(b['namespace'])
        ? { kind: b['kind'], clientId: b['clientId'], room: b['room'], namespace: b['namespace'] }
        : null;
    case 'revoke': {
      const room = b['room'] ?? null;
      const namespace = b['namespace'] ?? null;
      if (!isName(b['identity'])) return null;
      if (room !== null && !(isRoomName(room) && isRoomName(namespace))) return null;
      if (room === null && namespace !== null) return null;
      return {
        kind: 'revoke',
        identity: b['identity'],
        room: room as string | null,
        namespace: namespace as string | null,
      };
    }
    case 'query':
      return isName(b['topic'])
        ? { kind: 'query', topic: b['topic'], payload: b['payload'] ?? null }
        : null;
    default:
      return null;
  }
}

export function decodeRequest(raw: string): Decoded<RequestMessage> {
  const parsed = parseObject(raw);
  if (!parsed.ok) return parsed;
  const id = parsed.value['id'];
  if (!isName(id)) return { ok: false, reason: 'no request id' };
  const body = checkBody(parsed.value['b']);
  if (!body) return { ok: false, reason: 'unknown or malformed request body' };
  return { ok: true, value: { origin: parsed.value['o'] as string, id, body } };
}

export function encodeReply(reply: ReplyMessage): string {
  const { origin, ...rest } = reply;
  return JSON.stringify({ v: WIRE_VERSION, o: origin, ...rest });
}

export function decodeReply(raw: string): Decoded<ReplyMessage> {
  const parsed = parseObject(raw);
  if (!parsed.ok) return parsed;
  const { id, count, ids, found, data, error } = parsed.value;
  if (!isName(id)) return { ok: false, reason: 'no request id' };
  if (count !== undefined && !(Number.isInteger(count) && (count as number) >= 0)) {
    return { ok: false, reason: '"count" is not a whole number' };
  }
  if (ids !== undefined && !isStringArray(ids)) return { ok: false, reason: '"ids" is not a list' };
  if (found !== undefined && typeof found !== 'boolean') {
    return { ok: false, reason: '"found" is not a boolean' };
  }
  if (error !== undefined && typeof error !== 'string') {
    return { ok: false, reason: '"error" is not a string' };
  }
  return {
    ok: true,
    value: {
      origin: parsed.value['o'] as string,
      id,
      ...(count === undefined ? {} : { count: count as number }),
      ...(ids === undefined ? {} : { ids: ids as string[] }),
      ...(found === undefined ? {} : { found: found as boolean }),
      ...(data === undefined ? {} : { data }),
      ...(error === undefined ? {} : { error: error as string }),
    },
  };
}
