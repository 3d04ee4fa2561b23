import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  EVENT_NAME_PATTERN,
  isValidEventName,
  isValidRequestId,
  isValidServerRequestId,
  isWellFormedName,
} from './names';

describe('event names', () => {
  it('are letters, digits, ".", "_" and "-"; never a "$" (control events) or empty', () => {
    for (const ok of ['chat.message', 'a', 'A-b_c.9']) expect(isValidEventName(ok)).toBe(true);
    for (const bad of ['', '$hello', 'a b', 'é', 'x\ud800', 1, null]) {
      expect(isValidEventName(bad)).toBe(false);
    }
  });

  it('give the same answer the second time, and after more names than are remembered', () => {
    const name = fc.oneof(
      fc.stringMatching(/^[A-Za-z0-9._-]{1,12}$/),
      fc.string({ maxLength: 12 }),
      fc.constantFrom('', ' ', 'a\n', 'a\u0000', '$join', 'é', 'a.b'),
    );
    // Each name twice: the second answer may come from the names remembered.
    const sameAsPattern = fc.property(fc.array(name, { minLength: 1, maxLength: 20 }), (names) => {
      for (const n of [...names, ...names])
        expect(isValidEventName(n)).toBe(EVENT_NAME_PATTERN.test(n));
    });
    fc.assert(sameAsPattern, { numRuns: 200 });
    // Past the bound (512 names), names are no longer remembered but still checked.
    for (let i = 0; i < 600; i++) expect(isValidEventName(`filler.${i}`)).toBe(true);
    fc.assert(sameAsPattern, { numRuns: 200 });
    expect(isValidEventName('filler.599')).toBe(true);
    expect(isValidEventName('filler 1')).toBe(false);
    // Names too long to be remembered are checked every time, the same way.
    const long = 'x'.repeat(100_000);
    expect(isValidEventName(long)).toBe(true);
    expect(isValidEventName(long)).toBe(true);
    expect(isValidEventName(`${long} `)).toBe(false);
  });
});

describe('request ids', () => {
  it('a client id is a string of 1-64 characters or an integer 0 to 2^53-1', () => {
    for (const ok of ['r', 'x'.repeat(64), 0, 7, Number.MAX_SAFE_INTEGER]) {
      expect(isValidRequestId(ok)).toBe(true);
    }
    for (const bad of ['', 'x'.repeat(65), -1, 1.5, 2 ** 53, NaN, null, {}, true]) {
      expect(isValidRequestId(bad)).toBe(false);
    }
  });

  it('a server rid is a string only: an integer is refused', () => {
    expect(isValidServerRequestId('r12')).toBe(true);
    expect(isValidServerRequestId(12)).toBe(false);
    expect(isValidServerRequestId('')).toBe(false);
    expect(isValidServerRequestId('x'.repeat(65))).toBe(false);
  });
});

describe('isWellFormedName', () => {
  it('accepts well-formed UTF-16, including surrogate pairs, within the length', () => {
    expect(isWellFormedName('lobby', 8)).toBe(true);
    expect(isWellFormedName('a😀b', 8)).toBe(true);
  });

  it('refuses lone surrogates anywhere, the empty string, and names over the length', () => {
    for (const bad of ['x\ud800', '\udc00x', 'a\ud800b', '\ud800', '\udfff\ud800']) {
      expect(isWellFormedName(bad, 64)).toBe(false);
    }
    expect(isWellFormedName('', 8)).toBe(false);
    expect(isWellFormedName('123456789', 8)).toBe(false);
    expect(isWellFormedName(5, 8)).toBe(false);
  });
});
