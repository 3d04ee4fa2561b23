import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { encodeKeyName, roomKey } from './room-key';

/** Names as hostile as a client can make them: separators, NUL, newlines, lone surrogates. */
const hostile = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({
    unit: fc.constantFrom(
      '/',
      ':',
      '\n',
      '\u0000',
      '%',
      'u',
      'D',
      '8',
      '{',
      '}',
      'a',
      '\ud800',
      '\udc00',
    ),
    maxLength: 12,
  }),
);

describe('roomKey', () => {
  it('keeps the pairs apart that joining with a separator confuses', () => {
    expect(roomKey('/', 'team\nsecret')).not.toBe(roomKey('/\nteam', 'secret'));
    expect(roomKey('/', 'team\u0000secret')).not.toBe(roomKey('/\u0000team', 'secret'));
    expect(roomKey('/', 'a:b')).not.toBe(roomKey('/:a', 'b'));
    expect(roomKey('/', '%uD800')).not.toBe(roomKey('/', '\ud800'));
  });

  it('gives two pairs one key only when they are the same pair', () => {
    fc.assert(
      fc.property(hostile, hostile, hostile, hostile, (n1, r1, n2, r2) => {
        const same = n1 === n2 && r1 === r2;
        expect(roomKey(n1, r1) === roomKey(n2, r2)).toBe(same);
      }),
      { numRuns: 5000 },
    );
  });

  it('splits back into the pair it was made of (well-formed names)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 10 }),
        fc.string({ unit: 'grapheme', maxLength: 10 }),
        (namespace, room) => {
          const parts = roomKey(namespace, room).split(':');
          expect(parts.map(decodeURIComponent)).toEqual([namespace, room]);
        },
      ),
    );
  });

  it('is printable ASCII without braces, so a Redis hash tag can wrap it', () => {
    fc.assert(
      fc.property(hostile, hostile, (namespace, room) => {
        expect(roomKey(namespace, room)).toMatch(/^[A-Za-z0-9%_.!~*'()-]*:[A-Za-z0-9%_.!~*'()-]*$/);
        expect(encodeKeyName(namespace)).not.toMatch(/[:{}]/);
      }),
    );
  });
});
