/**
 * The binary frame of protocol version 1 (docs/protocol.md, "Binary frames"): one binary
 * WebSocket message that carries bytes as bytes, beside the JSON text frames, which stay
 * exactly as they are. A fixed header of 8 bytes, the event name, the members a message
 * needs (`id`, `pos`, `rid`, `seq`, in that order), then the payload, unchanged:
 *
 *     0  u8   magic 0xF5 (never a byte of UTF-8: no binary frame is a valid text)
 *     1  u8   format version, 1
 *     2  u8   flags: 0x01 id, 0x02 id is a number, 0x04 pos, 0x08 rid, 0x10 seq; others 0
 *     3  u8   E: length of the event name, 1-255
 *     4  u32  P: length of the payload (big-endian)
 *     8  E    the event name (ASCII)
 *        id   a number: u64; a string: u8 length L (1-255) + L bytes of UTF-8
 *        pos  u16 + room, u16 + namespace, u8 + epoch (UTF-8 each), u64 offset
 *        rid  u8 length L (1-255) + L bytes of UTF-8
 *        seq  u64
 *        P    the payload
 *
 * Every integer is big-endian; a u64 holds an integer from 0 to 2^53-1 (its high 11 bits
 * are 0). The frame is exactly as long as its fields say: nothing may follow the payload.
 *
 * One encoder and one decoder, for both ends. The decoder never throws, reads only inside
 * the frame, and allocates nothing that grows with a length field: the payload it returns is
 * a view of the frame's own bytes (no copy), and its strings are at most as long as the
 * bytes they came from. The per-receiver members (`rid`, `seq`) come last in the header, so
 * a sender appends them to a header it built once ({@link appendBinarySeq},
 * {@link appendBinaryRid}) while every receiver shares the same payload bytes.
 */
import type { RoomPosition } from './history';
import { HISTORY_LIMITS } from './history';
import { MAX_ID_LENGTH, isValidEventName } from './names';
import type { RequestId, ServerRequestId } from './names';

/** The first byte of every binary frame; never a byte of UTF-8. */
export const BINARY_MAGIC = 0xf5;

/** The format version of the binary frame (the second byte). */
export const BINARY_VERSION = 1;

/** The bits of the flags byte; the others are reserved and must be 0. */
export const BinaryFlag = {
  ID: 0x01,
  ID_NUMBER: 0x02,
  POS: 0x04,
  RID: 0x08,
  SEQ: 0x10,
} as const;

const KNOWN_FLAGS = 0x1f;

/** Bounds of the binary frame (bytes unless said otherwise). */
export const BINARY_LIMITS = {
  /** The fixed part of the header: magic, version, flags, event length, payload length. */
  fixedHeader: 8,
  /** Longest event name. */
  maxEventLength: 255,
  /** Longest string `id` / `rid` in UTF-8 bytes (and at most 64 characters). */
  maxIdBytes: 255,
  /** Longest room or namespace of a `pos`, in UTF-8 bytes. */
  maxNameBytes: 0xffff,
  /** Longest epoch of a `pos`, in UTF-8 bytes (and at most 64 characters). */
  maxEpochBytes: 255,
  /** Largest payload the length field can say. */
  maxPayload: 0xffffffff,
} as const;

/** The only control event a binary frame may carry: `$ack`, the answer to a server request. */
export const BINARY_CONTROL_EVENTS: ReadonlySet<string> = new Set(['$ack']);

/** The members of a binary frame other than its payload. */
export interface BinaryFrameHead {
  /** An application event name, or `$ack` (with `rid`) for the answer to a server request. */
  event: string;
  /** A client request (client -> server) or its answer (server -> client). */
  id?: RequestId;
  /** Server -> client: a server request. Client -> server: in `$ack`. */
  rid?: ServerRequestId;
  /** Server -> client: the position in the session's stream. */
  seq?: number;
  /** Server -> client: the message's position in its room's history. */
  pos?: RoomPosition;
}

/** A binary message: its members and its bytes. */
export interface BinaryFrame extends BinaryFrameHead {
  data: Uint8Array;
}

/**
 * Why a frame was refused, finer than the wire code: `short` (less than the fixed header),
 * `magic`, `version`, `flags` (a reserved bit set), `truncated` (a length runs past the
 * end), `trailing` (bytes after the payload), `event`, `id`, `rid`, `seq`, `pos`.
 */
export type BinaryFrameFault =
  | 'short'
  | 'magic'
  | 'version'
  | 'flags'
  | 'truncated'
  | 'trailing'
  | 'event'
  | 'id'
  | 'rid'
  | 'seq'
  | 'pos';

/** The wire codes a refused binary frame gets (rows of the error table). */
export type BinaryFrameErrorCode =
  'invalid_binary_frame' | 'unsupported_binary_version' | 'invalid_event' | 'invalid_id';

/** What {@link decodeBinaryFrame} returns. */
export type BinaryDecodeResult =
  | { readonly ok: true; readonly frame: BinaryFrame }
  | {
      readonly ok: false;
      /** The `data.code` of the `error` event a server answers. */
      readonly code: BinaryFrameErrorCode;
      readonly fault: BinaryFrameFault;
      /** For people: what is wrong. */
      readonly message: string;
      /** The frame's request id when it was read before the fault (its error answers it). */
      readonly id?: RequestId;
    };

const TWO_32 = 0x1_0000_0000;
/** The high 32 bits of a u64 that still holds a safe integer. */
const MAX_HIGH = 0x1f_ffff;

// ------------------------------------------------------------------------- UTF-8

/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** UTF-8 of a well-formed string, without TextEncoder (the package is dependency-free). */
function utf8(text: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < text.length; i += 1) {
    let c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      c = 0x10000 + ((c - 0xd800) << 10) + (text.charCodeAt(i + 1) - 0xdc00);
      i += 1;
    }
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
    else {
      out.push(
        0xf0 | (c >> 18),
        0x80 | ((c >> 12) & 0x3f),
        0x80 | ((c >> 6) & 0x3f),
        0x80 | (c & 0x3f),
      );
    }
  }
  return Uint8Array.from(out);
}

/**
 * Strict UTF-8 of `bytes[start, end)`: undefined for an overlong form, a surrogate, a code
 * point past U+10FFFF or a cut sequence. The string has at most `end - start` code units.
 */
function readUtf8(bytes: Uint8Array, start: number, end: number): string | undefined {
  let text = '';
  let i = start;
  while (i < end) {
    const b = bytes[i]!;
    let c: number;
    let more: number;
    let min: number;
    if (b < 0x80) {
      text += String.fromCharCode(b);
      i += 1;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) [c, more, min] = [b & 0x1f, 1, 0x80];
    else if (b >= 0xe0 && b <= 0xef) [c, more, min] = [b & 0x0f, 2, 0x800];
    else if (b >= 0xf0 && b <= 0xf4) [c, more, min] = [b & 0x07, 3, 0x10000];
    else return undefined;
    if (i + more >= end) return undefined;
    for (let k = 1; k <= more; k += 1) {
      const next = bytes[i + k]!;
      if ((next & 0xc0) !== 0x80) return undefined;
      c = (c << 6) | (next & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return undefined;
    text += String.fromCodePoint(c);
    i += more + 1;
  }
  return text;
}

// ------------------------------------------------------------------------- encoder

function fail(kind: 'type' | 'range', message: string): never {
  throw kind === 'type' ? new TypeError(message) : new RangeError(message);
}

function isSafeCount(value: unknown, min: number): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min;
}

function idBytes(value: string, what: string): Uint8Array {
  if (value.length === 0 || value.length > MAX_ID_LENGTH || LONE_SURROGATE.test(value)) {
    fail('type', `${what} must be a well-formed string of 1-${MAX_ID_LENGTH} characters.`);
  }
  return utf8(value);
}

function nameBytes(value: unknown, what: string, max: number, maxChars?: number): Uint8Array {
  if (typeof value !== 'string' || value.length === 0 || LONE_SURROGATE.test(value)) {
    fail('type', `${what} must be a non-empty, well-formed string.`);
  }
  if (maxChars !== undefined && value.length > maxChars) {
    fail('range', `${what} is longer than ${maxChars} characters.`);
  }
  const bytes = utf8(value);
  if (bytes.length > max) fail('range', `${what} is longer than ${max} bytes of UTF-8.`);
  return bytes;
}

function writeU64(out: Uint8Array, at: number, value: number): void {
  const high = Math.floor(value / TWO_32);
  const low = value - high * TWO_32;
  writeU32(out, at, high);
  writeU32(out, at + 4, low);
}

function writeU32(out: Uint8Array, at: number, value: number): void {
  out[at] = value >>> 24;
  out[at + 1] = (value >>> 16) & 0xff;
  out[at + 2] = (value >>> 8) & 0xff;
  out[at + 3] = value & 0xff;
}

function writeU16(out: Uint8Array, at: number, value: number): void {
  out[at] = value >>> 8;
  out[at + 1] = value & 0xff;
}

/**
 * The header of a binary frame (everything before the payload) for a payload of
 * `payloadLength` bytes. The frame is this header followed by the payload, unchanged, so a
 * sender can keep one payload for many receivers and build (or append to) only the header.
 * Throws a TypeError for a malformed member and a RangeError for one past a bound.
 */
export function encodeBinaryHeader(head: BinaryFrameHead, payloadLength: number): Uint8Array {
  const { event, id, rid, seq, pos } = head;
  const control = typeof event === 'string' && BINARY_CONTROL_EVENTS.has(event);
  if (!control && !isValidEventName(event)) {
    fail('type', `Event name ${String(event)} is not valid: use letters, digits, ".", "_" or "-".`);
  }
  if (event.length > BINARY_LIMITS.maxEventLength) {
    fail('range', `Event name is longer than ${BINARY_LIMITS.maxEventLength} characters.`);
  }
  if (control && (rid === undefined || id !== undefined)) {
    fail('type', `${event} in a binary frame carries a "rid" and no "id".`);
  }
  if (!isSafeCount(payloadLength, 0) || payloadLength > BINARY_LIMITS.maxPayload) {
    fail('range', `The payload length must be 0 to ${BINARY_LIMITS.maxPayload} bytes.`);
  }
  let flags = 0;
  let size = BINARY_LIMITS.fixedHeader + event.length;
  let idText: Uint8Array | undefined;
  if (id !== undefined) {
    flags |= BinaryFlag.ID;
    if (typeof id === 'number') {
      if (!isSafeCount(id, 0)) fail('type', 'A numeric "id" must be an integer 0 to 2^53-1.');
      flags |= BinaryFlag.ID_NUMBER;
      size += 8;
    } else if (typeof id === 'string') {
      idText = idBytes(id, 'A string "id"');
      size += 1 + idText.length;
    } else fail('type', 'An "id" must be a string or an integer.');
  }
  let posParts: [Uint8Array, Uint8Array, Uint8Array, number] | undefined;
  if (pos !== undefined) {
    flags |= BinaryFlag.POS;
    const room = nameBytes(pos.room, 'pos.room', BINARY_LIMITS.maxNameBytes);
    const namespace = nameBytes(pos.namespace, 'pos.namespace', BINARY_LIMITS.maxNameBytes);
    if (!pos.namespace.startsWith('/')) fail('type', 'pos.namespace must start with "/".');
    const epoch = nameBytes(
      pos.epoch,
      'pos.epoch',
      BINARY_LIMITS.maxEpochBytes,
      HISTORY_LIMITS.maxEpochLength,
    );
    if (!isSafeCount(pos.offset, 1)) fail('type', 'pos.offset must be an integer 1 to 2^53-1.');
    posParts = [room, namespace, epoch, pos.offset];
    size += 2 + room.length + 2 + namespace.length + 1 + epoch.length + 8;
  }
  let ridText: Uint8Array | undefined;
  if (rid !== undefined) {
    if (typeof rid !== 'string') fail('type', 'A "rid" must be a string.');
    flags |= BinaryFlag.RID;
    ridText = idBytes(rid, 'A "rid"');
    size += 1 + ridText.length;
  }
  if (seq !== undefined) {
    if (!isSafeCount(seq, 1)) fail('type', '"seq" must be an integer 1 to 2^53-1.');
    flags |= BinaryFlag.SEQ;
    size += 8;
  }
  const out = new Uint8Array(size);
  out[0] = BINARY_MAGIC;
  out[1] = BINARY_VERSION;
  out[2] = flags;
  out[3] = event.length;
  writeU32(out, 4, payloadLength);
  let at = BINARY_LIMITS.fixedHeader;
  for (let i = 0; i < event.length; i += 1) out[at + i] = event.charCodeAt(i);
  at += event.length;
  if (typeof id === 'number') {
    writeU64(out, at, id);
    at += 8;
  } else if (idText !== undefined) {
    out[at] = idText.length;
    out.set(idText, at + 1);
    at += 1 + idText.length;
  }
  if (posParts !== undefined) {
    const [room, namespace, epoch, offset] = posParts;
    writeU16(out, at, room.length);
    out.set(room, at + 2);
    at += 2 + room.length;
    writeU16(out, at, namespace.length);
    out.set(namespace, at + 2);
    at += 2 + namespace.length;
    out[at] = epoch.length;
    out.set(epoch, at + 1);
    at += 1 + epoch.length;
    writeU64(out, at, offset);
    at += 8;
  }
  if (ridText !== undefined) {
    out[at] = ridText.length;
    out.set(ridText, at + 1);
    at += 1 + ridText.length;
  }
  if (seq !== undefined) writeU64(out, at, seq);
  return out;
}

/**
 * One binary frame: the header of {@link encodeBinaryHeader} and the payload, in one new
 * array (the payload is copied once). Throws as encodeBinaryHeader does, and a TypeError
 * when `data` is not a Uint8Array (a Node.js Buffer is one).
 */
export function encodeBinaryFrame(frame: BinaryFrame): Uint8Array {
  const { data } = frame;
  if (!(data instanceof Uint8Array)) fail('type', 'The data of a binary frame is a Uint8Array.');
  const header = encodeBinaryHeader(frame, data.length);
  const out = new Uint8Array(header.length + data.length);
  out.set(header, 0);
  out.set(data, header.length);
  return out;
}

/** Checks that `header` is one {@link encodeBinaryHeader} built without `rid`/`seq`. */
function appendable(header: Uint8Array, flag: number): void {
  if (!(header instanceof Uint8Array) || header.length < BINARY_LIMITS.fixedHeader) {
    fail('type', 'Not a binary frame header.');
  }
  if (header[0] !== BINARY_MAGIC || header[1] !== BINARY_VERSION) {
    fail('type', 'Not a binary frame header of version 1.');
  }
  if ((header[2]! & (flag === BinaryFlag.RID ? BinaryFlag.RID | BinaryFlag.SEQ : flag)) !== 0) {
    fail('type', 'The header already carries this member (or one that comes after it).');
  }
}

/** A header (without `seq`) with the session `seq` appended: the per-receiver member. */
export function appendBinarySeq(header: Uint8Array, seq: number): Uint8Array {
  appendable(header, BinaryFlag.SEQ);
  if (!isSafeCount(seq, 1)) fail('type', '"seq" must be an integer 1 to 2^53-1.');
  const out = new Uint8Array(header.length + 8);
  out.set(header, 0);
  out[2] = header[2]! | BinaryFlag.SEQ;
  writeU64(out, header.length, seq);
  return out;
}

/** A header (without `rid` and `seq`) made a server request by appending its `rid`. */
export function appendBinaryRid(header: Uint8Array, rid: ServerRequestId): Uint8Array {
  appendable(header, BinaryFlag.RID);
  if (typeof rid !== 'string') fail('type', 'A "rid" must be a string.');
  const text = idBytes(rid, 'A "rid"');
  const out = new Uint8Array(header.length + 1 + text.length);
  out.set(header, 0);
  out[2] = header[2]! | BinaryFlag.RID;
  out[header.length] = text.length;
  out.set(text, header.length + 1);
  return out;
}

// ------------------------------------------------------------------------- decoder

/** True when `bytes` starts like a binary frame (its magic byte). */
export function isBinaryFrame(bytes: Uint8Array): boolean {
  return bytes.length > 0 && bytes[0] === BINARY_MAGIC;
}

type Refusal = Extract<BinaryDecodeResult, { ok: false }>;

function refusal(
  code: BinaryFrameErrorCode,
  fault: BinaryFrameFault,
  message: string,
  id?: RequestId,
): Refusal {
  return id === undefined
    ? { ok: false, code, fault, message }
    : { ok: false, code, fault, message, id };
}

const TRUNCATED = (what: string): Refusal =>
  refusal(
    'invalid_binary_frame',
    'truncated',
    `The binary frame ends inside its ${what}: a length field says more than the frame holds.`,
  );

/**
 * Decodes one binary frame. Never throws: anything that is not a well-formed frame of
 * version 1 gives `{ok: false, code, fault, message}` (`id` too when the frame's request
 * id was read before the fault, so the refusal can answer it). The frame's `data` is a view
 * of `bytes` (no copy): a receiver that keeps it past the message must copy it.
 */
export function decodeBinaryFrame(bytes: Uint8Array): BinaryDecodeResult {
  try {
    return decode(bytes);
  } catch {
    // Not reached for a Uint8Array; a caller passing something else gets a refusal.
    return refusal('invalid_binary_frame', 'short', 'Not a binary frame.');
  }
}

function readU32(bytes: Uint8Array, at: number): number {
  return (
    bytes[at]! * 0x100_0000 + ((bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!)
  );
}

/** A u64 as a safe integer, or -1 when its high bits say it is not one. */
function readU64(bytes: Uint8Array, at: number): number {
  const high = readU32(bytes, at);
  if (high > MAX_HIGH) return -1;
  return high * TWO_32 + readU32(bytes, at + 4);
}

function decode(bytes: Uint8Array): BinaryDecodeResult {
  if (!(bytes instanceof Uint8Array)) {
    return refusal('invalid_binary_frame', 'short', 'Not a binary frame.');
  }
  const end = bytes.length;
  if (end < BINARY_LIMITS.fixedHeader) {
    return refusal(
      'invalid_binary_frame',
      end > 0 && bytes[0] !== BINARY_MAGIC ? 'magic' : 'short',
      `A binary frame starts with a header of ${BINARY_LIMITS.fixedHeader} bytes; this one has ${end}.`,
    );
  }
  if (bytes[0] !== BINARY_MAGIC) {
    return refusal(
      'invalid_binary_frame',
      'magic',
      'A binary frame starts with the byte 0xF5: send the envelope as a JSON text message, or a binary frame of docs/protocol.md.',
    );
  }
  if (bytes[1] !== BINARY_VERSION) {
    return refusal(
      'unsupported_binary_version',
      'version',
      `The binary frame has format version ${bytes[1]!}; this end reads version ${BINARY_VERSION}.`,
    );
  }
  const flags = bytes[2]!;
  if (
    (flags & ~KNOWN_FLAGS) !== 0 ||
    (flags & (BinaryFlag.ID | BinaryFlag.ID_NUMBER)) === BinaryFlag.ID_NUMBER
  ) {
    return refusal('invalid_binary_frame', 'flags', 'The binary frame sets a reserved flag bit.');
  }
  const eventLength = bytes[3]!;
  const payloadLength = readU32(bytes, 4);
  let at = BINARY_LIMITS.fixedHeader;
  if (eventLength === 0) {
    return refusal('invalid_event', 'event', 'The binary frame has an empty event name.');
  }
  if (at + eventLength > end) return TRUNCATED('event name');
  let event = '';
  for (let i = 0; i < eventLength; i += 1) event += String.fromCharCode(bytes[at + i]!);
  at += eventLength;

  let id: RequestId | undefined;
  if ((flags & BinaryFlag.ID) !== 0) {
    if ((flags & BinaryFlag.ID_NUMBER) !== 0) {
      if (at + 8 > end) return TRUNCATED('id');
      const value = readU64(bytes, at);
      if (value < 0) return refusal('invalid_id', 'id', 'The numeric "id" is larger than 2^53-1.');
      id = value;
      at += 8;
    } else {
      if (at + 1 > end) return TRUNCATED('id');
      const length = bytes[at]!;
      if (at + 1 + length > end) return TRUNCATED('id');
      const text = length === 0 ? undefined : readUtf8(bytes, at + 1, at + 1 + length);
      if (text === undefined || text.length > MAX_ID_LENGTH) {
        return refusal(
          'invalid_id',
          'id',
          `The string "id" must be 1-${MAX_ID_LENGTH} characters of well-formed UTF-8.`,
        );
      }
      id = text;
      at += 1 + length;
    }
  }
  const control = BINARY_CONTROL_EVENTS.has(event);
  if (!control && !isValidEventName(event)) {
    return refusal(
      'invalid_event',
      'event',
      'The event name of a binary frame must be letters, digits, ".", "_" or "-" (or "$ack").',
      id,
    );
  }

  let pos: RoomPosition | undefined;
  if ((flags & BinaryFlag.POS) !== 0) {
    const texts: string[] = [];
    for (const width of [2, 2, 1]) {
      if (at + width > end) return TRUNCATED('pos');
      const length = width === 2 ? (bytes[at]! << 8) | bytes[at + 1]! : bytes[at]!;
      at += width;
      if (at + length > end) return TRUNCATED('pos');
      const text = length === 0 ? undefined : readUtf8(bytes, at, at + length);
      if (text === undefined) {
        return refusal('invalid_binary_frame', 'pos', 'A name in "pos" is empty or not UTF-8.', id);
      }
      texts.push(text);
      at += length;
    }
    if (at + 8 > end) return TRUNCATED('pos');
    const offset = readU64(bytes, at);
    at += 8;
    const [room, namespace, epoch] = texts as [string, string, string];
    if (!namespace.startsWith('/') || epoch.length > HISTORY_LIMITS.maxEpochLength || offset < 1) {
      return refusal(
        'invalid_binary_frame',
        'pos',
        'The "pos" of a binary frame needs a namespace starting with "/", an epoch of at most 64 characters and an offset from 1.',
        id,
      );
    }
    pos = { room, namespace, epoch, offset };
  }

  let rid: ServerRequestId | undefined;
  if ((flags & BinaryFlag.RID) !== 0) {
    if (at + 1 > end) return TRUNCATED('rid');
    const length = bytes[at]!;
    if (at + 1 + length > end) return TRUNCATED('rid');
    const text = length === 0 ? undefined : readUtf8(bytes, at + 1, at + 1 + length);
    if (text === undefined || text.length > MAX_ID_LENGTH) {
      return refusal(
        'invalid_id',
        'rid',
        `The "rid" must be 1-${MAX_ID_LENGTH} characters of well-formed UTF-8.`,
        id,
      );
    }
    rid = text;
    at += 1 + length;
  }
  if (control && (rid === undefined || id !== undefined)) {
    return refusal(
      'invalid_id',
      'rid',
      `${event} in a binary frame carries a "rid" and no "id".`,
      id,
    );
  }

  let seq: number | undefined;
  if ((flags & BinaryFlag.SEQ) !== 0) {
    if (at + 8 > end) return TRUNCATED('seq');
    seq = readU64(bytes, at);
    at += 8;
    if (seq < 1) {
      return refusal('invalid_binary_frame', 'seq', '"seq" must be an integer 1 to 2^53-1.', id);
    }
  }

  const remaining = end - at;
  if (payloadLength > remaining) {
    return refusal(
      'invalid_binary_frame',
      'truncated',
      `The payload length says ${payloadLength} bytes; the frame holds ${remaining}.`,
      id,
    );
  }
  if (payloadLength < remaining) {
    return refusal(
      'invalid_binary_frame',
      'trailing',
      `${remaining - payloadLength} bytes follow the payload: the frame ends with its payload.`,
      id,
    );
  }
  const frame: BinaryFrame = { event, data: bytes.subarray(at, end) };
  if (id !== undefined) frame.id = id;
  if (pos !== undefined) frame.pos = pos;
  if (rid !== undefined) frame.rid = rid;
  if (seq !== undefined) frame.seq = seq;
  return { ok: true, frame };
}
