import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  BINARY_LIMITS,
  BINARY_MAGIC,
  appendBinaryRid,
  appendBinarySeq,
  decodeBinaryFrame,
  encodeBinaryFrame,
  encodeBinaryHeader,
  isBinaryFrame,
  type BinaryFrame,
  type BinaryFrameHead,
} from './binary';
import { wireErrors } from './error-codes';

const NAME_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-';
const eventName = fc
  .array(fc.constantFrom(...NAME_CHARS), { minLength: 1, maxLength: 255 })
  .map((chars) => chars.join(''));
/** Well-formed strings (no lone surrogate) of 1 to `max` UTF-16 code units. */
const text = (max: number): fc.Arbitrary<string> =>
  fc
    .string({ unit: 'grapheme', minLength: 1, maxLength: max })
    .filter((s) => s.length >= 1 && s.length <= max);
const safeInt = (min: number): fc.Arbitrary<number> =>
  fc.oneof(
    fc.integer({ min, max: 1000 }),
    fc.constantFrom(Math.max(min, 0xffffffff), Math.max(min, 2 ** 32), Number.MAX_SAFE_INTEGER),
    fc.maxSafeNat().filter((n) => n >= min),
  );
const payload = fc.oneof(
  fc.uint8Array({ maxLength: 300 }),
  fc.nat({ max: 2000 }).map((n) => new Uint8Array(n)),
  fc.nat({ max: 2000 }).map((n) => new Uint8Array(n).fill(0xff)),
);
const position = fc.record({
  room: text(128),
  namespace: text(40).map((s) => `/${s}`),
  epoch: text(64),
  offset: safeInt(1),
});
const frame: fc.Arbitrary<BinaryFrame> = fc
  .record(
    {
      event: eventName,
      data: payload,
      id: fc.oneof(safeInt(0), text(64)),
      rid: text(64),
      seq: safeInt(1),
      pos: position,
    },
    { requiredKeys: ['event', 'data'] },
  )
  .map((f) => f as BinaryFrame);

/** The frame's members without undefined ones, for comparison. */
function members(f: BinaryFrame): Record<string, unknown> {
  return Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined));
}

describe('encodeBinaryFrame / decodeBinaryFrame', () => {
  it('round-trips every frame: events, ids, rid, seq, pos, empty / 0x00 / 0xff payloads', () => {
    fc.assert(
      fc.property(frame, (f) => {
        const bytes = encodeBinaryFrame(f);
        const read = decodeBinaryFrame(bytes);
        expect(read.ok).toBe(true);
        if (!read.ok) return;
        const { data, ...rest } = read.frame;
        const { data: sent, ...expected } = members(f) as unknown as BinaryFrame;
        expect(rest).toEqual(expected);
        expect(Buffer.from(data).equals(Buffer.from(sent))).toBe(true);
        // The payload is a view of the frame, never a copy.
        expect(data.buffer).toBe(bytes.buffer);
        expect(data.byteOffset + data.length).toBe(bytes.byteOffset + bytes.length);
      }),
      { numRuns: 500 },
    );
  });

  it('builds the layout of docs/protocol.md byte for byte', () => {
    const bytes = encodeBinaryFrame({ event: 'a.b', id: 7, seq: 2, data: Uint8Array.of(1, 2) });
    expect([...bytes]).toEqual([
      0xf5,
      1,
      0x01 | 0x02 | 0x10,
      3,
      0,
      0,
      0,
      2,
      0x61,
      0x2e,
      0x62,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      7, // id
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      2, // seq
      1,
      2,
    ]);
    const withPos = encodeBinaryHeader(
      { event: 'e', id: 'x', rid: 'r1', pos: { room: 'é', namespace: '/', epoch: 'E', offset: 3 } },
      0,
    );
    expect([...withPos]).toEqual([
      0xf5,
      1,
      0x01 | 0x04 | 0x08,
      1,
      0,
      0,
      0,
      0,
      0x65,
      1,
      0x78, // id "x"
      0,
      2,
      0xc3,
      0xa9,
      0,
      1,
      0x2f,
      1,
      0x45,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      3, // pos
      2,
      0x72,
      0x31, // rid
    ]);
  });

  it('costs 8 bytes + the event name + the members over the payload (64 KiB: < 64 B)', () => {
    const data = new Uint8Array(64 * 1024);
    const bytes = encodeBinaryFrame({ event: 'doc.update', data, seq: 123456, id: 99 });
    expect(bytes.length - data.length).toBe(8 + 10 + 8 + 8);
  });

  it('appends seq and rid to a header built once, as building them in would', () => {
    fc.assert(
      fc.property(frame, text(64), safeInt(1), (f, rid, seq) => {
        const { rid: _r, seq: _s, data, ...head } = f;
        const base = encodeBinaryHeader(head, data.length);
        const appended = appendBinarySeq(appendBinaryRid(base, rid), seq);
        expect([...appended]).toEqual([...encodeBinaryHeader({ ...head, rid, seq }, data.length)]);
        expect([...appendBinarySeq(base, seq)]).toEqual([
          ...encodeBinaryHeader({ ...head, seq }, data.length),
        ]);
      }),
      { numRuns: 200 },
    );
    const withSeq = encodeBinaryHeader({ event: 'e', seq: 1 }, 0);
    expect(() => appendBinaryRid(withSeq, 'r')).toThrow(TypeError);
    expect(() => appendBinarySeq(withSeq, 2)).toThrow(TypeError);
  });

  it('refuses to encode what the decoder would refuse', () => {
    const data = new Uint8Array(0);
    const bad: Array<BinaryFrameHead & { data?: unknown }> = [
      { event: '' },
      { event: 'has space' },
      { event: '$hello' },
      { event: '$ack' }, // without rid
      { event: '$ack', rid: 'r', id: 1 },
      { event: 'x'.repeat(256) },
      { event: 'e', id: -1 },
      { event: 'e', id: 1.5 },
      { event: 'e', id: 2 ** 53 },
      { event: 'e', id: '' },
      { event: 'e', id: 'x'.repeat(65) },
      { event: 'e', id: '\ud800' },
      { event: 'e', rid: '' },
      { event: 'e', seq: 0 },
      { event: 'e', pos: { room: 'r', namespace: 'ns', epoch: 'e', offset: 1 } },
      { event: 'e', pos: { room: 'r', namespace: '/', epoch: 'e', offset: 0 } },
      { event: 'e', pos: { room: 'r', namespace: '/', epoch: 'e'.repeat(65), offset: 1 } },
      { event: 'e', pos: { room: '', namespace: '/', epoch: 'e', offset: 1 } },
    ];
    for (const head of bad) {
      expect(() => encodeBinaryFrame({ data, ...head } as BinaryFrame)).toThrow();
    }
    expect(() => encodeBinaryFrame({ event: 'e', data: [1, 2] as unknown as Uint8Array })).toThrow(
      TypeError,
    );
    expect(() => encodeBinaryHeader({ event: 'e' }, 2 ** 32)).toThrow(RangeError);
    expect(encodeBinaryFrame({ event: '$ack', rid: 'r9', data }).length).toBe(8 + 4 + 3);
  });
});

describe('decodeBinaryFrame on hostile input', () => {
  /** The decoder's outcome, checked: never throws, codes from the wire table, views only. */
  function decodeChecked(bytes: Uint8Array): ReturnType<typeof decodeBinaryFrame> {
    const read = decodeBinaryFrame(bytes);
    if (read.ok) {
      expect(read.frame.data.buffer).toBe(bytes.buffer);
      expect(read.frame.data.length).toBeLessThanOrEqual(bytes.length);
      const strings = [read.frame.event, read.frame.rid, read.frame.id, read.frame.pos?.room];
      for (const s of strings) {
        if (typeof s === 'string') expect(s.length).toBeLessThanOrEqual(bytes.length);
      }
    } else {
      expect(Object.hasOwn(wireErrors, read.code)).toBe(true);
      expect(read.message.length).toBeGreaterThan(10);
    }
    return read;
  }

  it('never throws on random bytes, with or without the magic and version', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 600 }),
        fc.boolean(),
        fc.nat({ max: 0x1f }),
        (bytes, headed, flags) => {
          if (headed && bytes.length >= 3) {
            bytes[0] = BINARY_MAGIC;
            bytes[1] = 1;
            bytes[2] = flags;
          }
          decodeChecked(bytes);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('refuses every truncation of a valid frame (and every extension) with invalid_binary_frame', () => {
    fc.assert(
      fc.property(
        frame,
        fc.nat(),
        fc.uint8Array({ minLength: 1, maxLength: 8 }),
        (f, cut, extra) => {
          const bytes = encodeBinaryFrame(f);
          const at = cut % bytes.length;
          const short = decodeChecked(bytes.subarray(0, at));
          expect(short.ok).toBe(false);
          if (!short.ok) expect(short.code).toBe('invalid_binary_frame');
          const longer = new Uint8Array(bytes.length + extra.length);
          longer.set(bytes);
          longer.set(extra, bytes.length);
          const long = decodeChecked(longer);
          expect(long).toMatchObject({
            ok: false,
            code: 'invalid_binary_frame',
            fault: 'trailing',
          });
        },
      ),
      { numRuns: 500 },
    );
  });

  it('refuses oversized length fields without allocating what they claim', () => {
    const before = process.memoryUsage().arrayBuffers;
    fc.assert(
      fc.property(
        frame,
        fc.nat({ max: 40 }),
        fc.integer({ min: 1, max: 255 }),
        (f, index, value) => {
          const bytes = encodeBinaryFrame(f);
          // Raise one byte of the header (a length field, often) past what the frame holds.
          const at = Math.min(3 + index, bytes.length - f.data.length - 1);
          if (at < 3) return;
          const copy = Uint8Array.from(bytes);
          copy[at] = Math.max(copy[at]!, value);
          decodeChecked(copy);
          copy[4] = 0xff; // payload length >= 4 GiB - 16 MiB
          expect(decodeChecked(copy).ok).toBe(false);
        },
      ),
      { numRuns: 1000 },
    );
    const claims4GiB = Uint8Array.of(0xf5, 1, 0, 1, 0xff, 0xff, 0xff, 0xff, 0x61);
    expect(decodeChecked(claims4GiB)).toMatchObject({ ok: false, fault: 'truncated' });
    // Nothing the size of a claimed length was kept or made: ArrayBuffer memory barely moves.
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(8 * 1024 * 1024);
  });

  it('names each fault with its wire code', () => {
    const ok = encodeBinaryFrame({ event: 'e', id: 'q', data: Uint8Array.of(9) });
    const cases: Array<[number[], string, string]> = [
      [[], 'invalid_binary_frame', 'short'],
      [[0x7b, 0x7d], 'invalid_binary_frame', 'magic'],
      [[0x7b, 1, 0, 1, 0, 0, 0, 0, 0x65], 'invalid_binary_frame', 'magic'],
      [[0xf5, 2, 0, 1, 0, 0, 0, 0, 0x65], 'unsupported_binary_version', 'version'],
      [[0xf5, 1, 0x20, 1, 0, 0, 0, 0, 0x65], 'invalid_binary_frame', 'flags'],
      [[0xf5, 1, 0x02, 1, 0, 0, 0, 0, 0x65], 'invalid_binary_frame', 'flags'],
      [[0xf5, 1, 0, 0, 0, 0, 0, 0], 'invalid_event', 'event'],
      [[0xf5, 1, 0, 1, 0, 0, 0, 0, 0x24], 'invalid_event', 'event'],
      [[0xf5, 1, 0, 1, 0, 0, 0, 0, 0xe9], 'invalid_event', 'event'],
      [[0xf5, 1, 0x03, 1, 0, 0, 0, 0, 0x65, 0, 0x20, 0, 0, 0, 0, 0, 0], 'invalid_id', 'id'],
      [[0xf5, 1, 0x01, 1, 0, 0, 0, 0, 0x65, 1, 0xff], 'invalid_id', 'id'],
      [[0xf5, 1, 0x01, 1, 0, 0, 0, 0, 0x65, 0], 'invalid_id', 'id'],
      [[0xf5, 1, 0x01, 1, 0, 0, 0, 0, 0x65, 2, 0xc0, 0x80], 'invalid_id', 'id'], // overlong
      [[0xf5, 1, 0x01, 1, 0, 0, 0, 0, 0x65, 3, 0xed, 0xa0, 0x80], 'invalid_id', 'id'], // surrogate
      [[0xf5, 1, 0x10, 1, 0, 0, 0, 0, 0x65, 0, 0, 0, 0, 0, 0, 0, 0], 'invalid_binary_frame', 'seq'],
      [[0xf5, 1, 0x08, 4, 0, 0, 0, 0, 0x24, 0x61, 0x63, 0x6b, 0], 'invalid_id', 'rid'],
      [[0xf5, 1, 0, 4, 0, 0, 0, 0, 0x24, 0x61, 0x63, 0x6b], 'invalid_id', 'rid'],
      [[...ok.subarray(0, -1)], 'invalid_binary_frame', 'truncated'],
      [[...ok, 0], 'invalid_binary_frame', 'trailing'],
    ];
    for (const [bytes, code, fault] of cases) {
      expect({ bytes, read: decodeBinaryFrame(Uint8Array.from(bytes)) }).toMatchObject({
        bytes,
        read: { ok: false, code, fault },
      });
    }
    // A fault after a valid id carries it, so the refusal can answer the request.
    const badEvent = encodeBinaryFrame({ event: 'e', id: 5, data: new Uint8Array(0) });
    badEvent[8] = 0x20;
    expect(decodeBinaryFrame(badEvent)).toMatchObject({ ok: false, code: 'invalid_event', id: 5 });
    expect(decodeBinaryFrame('nope' as unknown as Uint8Array)).toMatchObject({ ok: false });
  });

  it('reads a frame inside a larger buffer (a Buffer slice) without looking past it', () => {
    const bytes = encodeBinaryFrame({ event: 'e', data: Uint8Array.of(1, 2, 3) });
    const pool = new Uint8Array(100).fill(7);
    pool.set(bytes, 40);
    const view = pool.subarray(40, 40 + bytes.length);
    const read = decodeBinaryFrame(view);
    expect(read.ok && [...read.frame.data]).toEqual([1, 2, 3]);
    expect(decodeBinaryFrame(pool.subarray(40, 40 + bytes.length - 1)).ok).toBe(false);
    expect(isBinaryFrame(view)).toBe(true);
    expect(isBinaryFrame(new TextEncoder().encode('{"event":"e"}'))).toBe(false);
  });

  it('keeps the fixed header within 16 bytes', () => {
    expect(BINARY_LIMITS.fixedHeader).toBeLessThanOrEqual(16);
  });
});
