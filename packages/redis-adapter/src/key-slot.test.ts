import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { SLOTS, keySlot } from './key-slot';

describe('keySlot', () => {
  it('gives the slots Redis gives', () => {
    // CLUSTER KEYSLOT on Redis 7.0.
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('123456789')).toBe(12739);
    expect(keySlot('')).toBe(0);
  });

  it('hashes only the hash tag when there is a non-empty one', () => {
    expect(keySlot('{user1000}.following')).toBe(keySlot('user1000'));
    expect(keySlot('a{user1000}b{x}')).toBe(keySlot('user1000'));
    // An empty tag, or none closed, hashes the whole key.
    expect(keySlot('{}x')).toBe(keySlot('{}x'));
    expect(keySlot('{}x')).not.toBe(keySlot('x'));
    expect(keySlot('{abc')).not.toBe(keySlot('abc'));
  });

  it('hashes the UTF-8 bytes, and always lands in a slot', () => {
    expect(keySlot('é')).toBe(keySlot('\u00e9'));
    fc.assert(
      fc.property(fc.string(), (key) => {
        const slot = keySlot(key);
        return Number.isInteger(slot) && slot >= 0 && slot < SLOTS;
      }),
    );
  });
});
