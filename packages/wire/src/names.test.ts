import { describe, expect, it } from '@jest/globals';
import {
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
