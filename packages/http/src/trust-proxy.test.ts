import { describe, expect, it } from '@jest/globals';
import { compileTrustProxy, isCanonicalIp, normalizeIp } from './trust-proxy';

describe('isCanonicalIp', () => {
  it.each([
    '127.0.0.1',
    '0.0.0.0',
    '255.255.255.255',
    '10.1.2.3',
    '::1',
    '::',
    '2001:db8::1',
    '2001:DB8:0:0:0:0:0:1',
    '::ffff:10.0.0.1',
    'fe80::1',
  ])('accepts %s', (address) => {
    expect(isCanonicalIp(address)).toBe(true);
  });

  it.each([
    '127.1',
    '0x7f.1',
    '0x7f.0.0.1',
    '0177.0.0.1',
    '2130706433',
    '127.0.0.01',
    '256.0.0.1',
    '1.2.3',
    '1.2.3.4.5',
    '',
    ' 1.2.3.4',
    'fe80::1%eth0',
    '::ffff:0177.0.0.1',
    'localhost',
    '1.2.3.4:80',
    '[::1]',
  ])('refuses %j', (address) => {
    expect(isCanonicalIp(address)).toBe(false);
  });
});

describe('normalizeIp', () => {
  it('writes IPv4-mapped IPv6 as the dotted quad', () => {
    expect(normalizeIp('::ffff:127.0.0.1')).toBe('127.0.0.1');
  });

  it('writes IPv6 in RFC 5952 form', () => {
    expect(normalizeIp('2001:DB8:0:0:0:0:0:1')).toBe('2001:db8::1');
    expect(normalizeIp('::1')).toBe('::1');
  });

  it('keeps a zone index and returns non-addresses unchanged', () => {
    expect(normalizeIp('fe80::1%eth0')).toBe('fe80::1%eth0');
    expect(normalizeIp('127.1')).toBe('127.1');
    expect(normalizeIp('')).toBe('');
  });
});

describe('compileTrustProxy', () => {
  it('trusts nobody by default, for false and for an empty list', () => {
    for (const setting of [undefined, false, []] as const) {
      const trust = compileTrustProxy(setting);
      expect(trust('127.0.0.1')).toBe(false);
      expect(trust('10.0.0.1')).toBe(false);
    }
  });

  it('trusts every peer for true', () => {
    const trust = compileTrustProxy(true);
    expect(trust('203.0.113.9')).toBe(true);
    expect(trust('::1')).toBe(true);
  });

  it('trusts exactly the listed addresses', () => {
    const trust = compileTrustProxy(['10.0.0.1', '2001:db8::5']);
    expect(trust('10.0.0.1')).toBe(true);
    expect(trust('10.0.0.2')).toBe(false);
    expect(trust('2001:db8::5')).toBe(true);
    expect(trust('2001:0db8:0:0:0:0:0:5')).toBe(true);
    expect(trust('2001:db8::6')).toBe(false);
  });

  it('trusts addresses inside CIDR ranges, IPv4 and IPv6', () => {
    const trust = compileTrustProxy(['10.0.0.0/8', '192.168.1.0/24', 'fd00::/8']);
    expect(trust('10.255.1.2')).toBe(true);
    expect(trust('11.0.0.1')).toBe(false);
    expect(trust('192.168.1.77')).toBe(true);
    expect(trust('192.168.2.1')).toBe(false);
    expect(trust('fd12:3456::1')).toBe(true);
    expect(trust('fe80::1')).toBe(false);
  });

  it('matches IPv4-mapped IPv6 peers against IPv4 entries, and mapped entries against IPv4 peers', () => {
    expect(compileTrustProxy(['127.0.0.1'])('::ffff:127.0.0.1')).toBe(true);
    expect(compileTrustProxy(['10.0.0.0/8'])('::ffff:10.9.9.9')).toBe(true);
    expect(compileTrustProxy(['::ffff:10.0.0.0/104'])('10.3.2.1')).toBe(true);
    expect(compileTrustProxy(['::ffff:10.0.0.1'])('10.0.0.1')).toBe(true);
  });

  it('knows the names loopback, linklocal and uniquelocal', () => {
    const trust = compileTrustProxy(['loopback', 'uniquelocal']);
    expect(trust('127.0.0.5')).toBe(true);
    expect(trust('::1')).toBe(true);
    expect(trust('172.16.4.4')).toBe(true);
    expect(trust('fc00::1')).toBe(true);
    expect(trust('169.254.0.1')).toBe(false);
    expect(compileTrustProxy(['linklocal'])('169.254.0.1')).toBe(true);
  });

  it('never trusts a non-canonical spelling of a trusted address', () => {
    const trust = compileTrustProxy(['127.0.0.1', '10.0.0.0/8']);
    for (const forged of ['127.1', '0x7f.1', '0177.0.0.1', '2130706433', '012.0.0.1', 'junk', '']) {
      expect(trust(forged)).toBe(false);
    }
  });

  it('ignores a zone index on a socket address when matching', () => {
    expect(compileTrustProxy(['fe80::/10'])('fe80::1%eth0')).toBe(true);
  });

  it('returns a custom predicate as it is', () => {
    const custom = (address: string): boolean => address.startsWith('10.');
    expect(compileTrustProxy(custom)).toBe(custom);
  });

  it.each([
    ['127.1', 'canonical form'],
    ['0177.0.0.1', 'canonical form'],
    ['10.0.0.0/33', 'prefix length must be 0 to 32'],
    ['fd00::/129', 'prefix length must be 0 to 128'],
    ['10.0.0.0/08', 'prefix length'],
    ['10.0.0.0/', 'prefix length'],
    ['not-an-ip', 'canonical form'],
  ])('refuses the entry %j, naming it', (entry, why) => {
    let caught: unknown;
    try {
      compileTrustProxy([entry]);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(TypeError);
    expect((caught as { code: string }).code).toBe('PKG_ERR_HTTP_INVALID_TRUST_PROXY');
    expect((caught as Error).message).toContain(JSON.stringify(entry));
    expect((caught as Error).message).toContain(why);
  });

  it('refuses entries that are not strings and settings that are not lists', () => {
    expect(() => compileTrustProxy([42 as unknown as string])).toThrow(
      /entry 42: it is not a string/,
    );
    expect(() => compileTrustProxy('10.0.0.1' as unknown as string[])).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_HTTP_INVALID_TRUST_PROXY' }),
    );
  });
});
