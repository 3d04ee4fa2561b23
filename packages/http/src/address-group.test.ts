import { describe, expect, it } from '@jest/globals';
import { addressGroup } from './address-group';

describe('addressGroup', () => {
  it('keeps an IPv4 address, and unwraps IPv4-mapped IPv6', () => {
    expect(addressGroup('203.0.113.7')).toBe('203.0.113.7');
    expect(addressGroup('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('groups IPv6 addresses by their /64 by default', () => {
    const a = addressGroup('2001:db8:1:2::1');
    expect(a).toBe('2001:db8:1:2::/64');
    expect(addressGroup('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe(a);
    expect(addressGroup('2001:db8:1:3::1')).not.toBe(a);
  });

  it('groups by the given prefix: /48, and /128 is the address itself', () => {
    expect(addressGroup('2001:db8:1:2::1', 48)).toBe('2001:db8:1::/48');
    expect(addressGroup('2001:db8:1:ffff::1', 48)).toBe('2001:db8:1::/48');
    expect(addressGroup('2001:db8::1', 128)).toBe('2001:db8::1/128');
    expect(addressGroup('2001:db8::2', 128)).not.toBe(addressGroup('2001:db8::1', 128));
  });

  it('drops a zone index and leaves anything that is not an address as it is', () => {
    expect(addressGroup('fe80::1%eth0')).toBe('fe80::/64');
    expect(addressGroup('')).toBe('');
    expect(addressGroup('127.1')).toBe('127.1');
    expect(addressGroup('in-memory')).toBe('in-memory');
  });

  it('refuses a prefix outside 1..128', () => {
    expect(() => addressGroup('::1', 0)).toThrow(/from 1 to 128/);
    expect(() => addressGroup('::1', 129)).toThrow(RangeError);
    expect(() => addressGroup('::1', 64.5)).toThrow(RangeError);
  });
});
