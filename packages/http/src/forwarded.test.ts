import { describe, expect, it } from '@jest/globals';
import {
  forwardedForAddress,
  parseForwardedHeader,
  resolveClientAddress,
  resolveForwarded,
} from './forwarded';
import { compileTrustProxy } from './trust-proxy';

const proxy = '10.0.0.1';
const trustProxy = compileTrustProxy(['10.0.0.0/8']);

describe('parseForwardedHeader', () => {
  it('parses several elements, parameters in any case, quoted values and escapes', () => {
    expect(
      parseForwardedHeader(
        'for=192.0.2.60;proto=http;by=203.0.113.43, For="[2001:db8:cafe::17]:4711";HOST="a.example", for="q\\"x"',
      ),
    ).toEqual([
      { for: '192.0.2.60', proto: 'http', by: '203.0.113.43', valid: true },
      { for: '[2001:db8:cafe::17]:4711', host: 'a.example', valid: true },
      { for: 'q"x', valid: true },
    ]);
  });

  it('skips empty list elements and unknown parameters', () => {
    expect(parseForwardedHeader(' , for=1.2.3.4;ext=1 ,, ')).toEqual([
      { for: '1.2.3.4', valid: true },
    ]);
  });

  it('marks elements that break the grammar as invalid, keeping the others', () => {
    const elements = parseForwardedHeader(
      'for=1.1.1.1, for=[::1], for=2.2.2.2;for=3.3.3.3, for=4.4.4.4',
    );
    expect(elements.map((e) => e.valid)).toEqual([true, false, false, true]);
    expect(elements[3]?.for).toBe('4.4.4.4');
    expect(parseForwardedHeader('for="unterminated')).toEqual([{ valid: false }]);
    expect(parseForwardedHeader('=x, for=5.5.5.5')[1]).toEqual({ for: '5.5.5.5', valid: true });
    expect(parseForwardedHeader('for=, for=6.6.6.6').map((e) => e.valid)).toEqual([false, true]);
    expect(parseForwardedHeader('for="a,b" x, for=7.7.7.7').map((e) => e.valid)).toEqual([
      false,
      true,
    ]);
  });
});

describe('forwardedForAddress', () => {
  it('takes IPv4 and bracketed IPv6, with or without a port', () => {
    expect(forwardedForAddress('192.0.2.43')).toBe('192.0.2.43');
    expect(forwardedForAddress('192.0.2.43:47011')).toBe('192.0.2.43');
    expect(forwardedForAddress('[2001:db8:cafe::17]')).toBe('2001:db8:cafe::17');
    expect(forwardedForAddress('[2001:db8:cafe::17]:4711')).toBe('2001:db8:cafe::17');
  });

  it.each([
    undefined,
    'unknown',
    '_hidden',
    '_SEVKISEK',
    '127.1',
    '0177.0.0.1',
    '2130706433',
    '2001:db8::1',
    '[2001:db8::1',
    '[1.2.3.4]',
    '[::1]:x',
    '1.2.3.4:0',
    'example.com',
  ])('gives nothing for %j', (value) => {
    expect(forwardedForAddress(value)).toBeUndefined();
  });
});

describe('resolveForwarded', () => {
  it('ignores every forwarded header from an untrusted peer', () => {
    const info = resolveForwarded(
      '203.0.113.5',
      {
        'x-forwarded-for': '1.2.3.4',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'evil.example',
        forwarded: 'for=5.6.7.8;proto=https',
      },
      trustProxy,
    );
    expect(info).toEqual({ ip: '203.0.113.5', trusted: false, source: 'none' });
  });

  it('walks X-Forwarded-For from the right, skipping trusted proxies', () => {
    const headers = { 'x-forwarded-for': '6.6.6.6, 198.51.100.7, 10.0.0.9, 10.0.0.8' };
    expect(resolveClientAddress(proxy, headers, trustProxy)).toBe('198.51.100.7');
  });

  it('gives the leftmost address when every hop is trusted', () => {
    expect(
      resolveClientAddress(proxy, { 'x-forwarded-for': '10.1.1.1, 10.2.2.2' }, trustProxy),
    ).toBe('10.1.1.1');
    expect(resolveClientAddress(proxy, { 'x-forwarded-for': '1.1.1.1, 2.2.2.2' }, () => true)).toBe(
      '1.1.1.1',
    );
  });

  it('stops at a non-canonical entry and takes the proxy that reported it', () => {
    for (const forged of ['127.1', '0x7f.1', '0177.0.0.1', '2130706433', 'junk', '']) {
      const headers = { 'x-forwarded-for': `${forged}, 10.0.0.7` };
      expect(resolveClientAddress(proxy, headers, trustProxy)).toBe('10.0.0.7');
      expect(resolveClientAddress(proxy, { 'x-forwarded-for': forged }, trustProxy)).toBe(proxy);
    }
    // A trust-everything setting still never answers a non-canonical address.
    expect(resolveClientAddress(proxy, { 'x-forwarded-for': '127.1' }, () => true)).toBe(proxy);
  });

  it('reads the rightmost X-Forwarded-Proto, -Host and -Port values', () => {
    const info = resolveForwarded(
      proxy,
      {
        'x-forwarded-for': '198.51.100.7',
        'x-forwarded-proto': 'http, HTTPS',
        'x-forwarded-host': 'evil.example, shop.example:8443',
        'x-forwarded-port': '9443',
      },
      trustProxy,
    );
    expect(info).toEqual({
      ip: '198.51.100.7',
      trusted: true,
      source: 'x-forwarded',
      proto: 'https',
      host: { hostname: 'shop.example', port: 8443 },
      port: 9443,
    });
  });

  it('ignores invalid X-Forwarded-Proto, -Host and -Port values', () => {
    const info = resolveForwarded(
      proxy,
      {
        'x-forwarded-proto': 'javascript',
        'x-forwarded-host': 'a b/c',
        'x-forwarded-port': '99999',
      },
      trustProxy,
    );
    expect(info).toEqual({
      ip: proxy,
      trusted: true,
      source: 'x-forwarded',
      proto: undefined,
      host: undefined,
      port: undefined,
    });
  });

  it('joins repeated header lines', () => {
    const headers = { 'x-forwarded-for': ['198.51.100.7', '10.0.0.3'] } as unknown as Record<
      string,
      string
    >;
    expect(resolveClientAddress(proxy, headers, trustProxy)).toBe('198.51.100.7');
  });

  it('reads RFC 7239 Forwarded when no X-Forwarded-* header is present', () => {
    const info = resolveForwarded(
      proxy,
      { forwarded: 'for=192.0.2.60;proto=https;host=shop.example, for=10.0.0.5;proto=http' },
      trustProxy,
    );
    expect(info).toEqual({
      ip: '192.0.2.60',
      trusted: true,
      source: 'forwarded',
      proto: 'https',
      host: { hostname: 'shop.example' },
    });
  });

  it('reads bracketed IPv6 with a port from Forwarded', () => {
    expect(
      resolveClientAddress(proxy, { forwarded: 'for="[2001:DB8:cafe::17]:4711"' }, trustProxy),
    ).toBe('2001:db8:cafe::17');
  });

  it('takes the reporting proxy for unknown and obfuscated identifiers, with its proto and host', () => {
    for (const id of ['unknown', '_hidden', '"_x"']) {
      const info = resolveForwarded(
        proxy,
        { forwarded: `for=${id};proto=https;host=a.example, for=10.0.0.4` },
        trustProxy,
      );
      expect(info.ip).toBe('10.0.0.4');
      expect(info.proto).toBe('https');
      expect(info.host).toEqual({ hostname: 'a.example' });
    }
  });

  it('stops at a malformed element and uses none of its values', () => {
    const info = resolveForwarded(
      proxy,
      { forwarded: 'for=1.2.3.4;proto=https;proto=http, for=10.0.0.4' },
      trustProxy,
    );
    expect(info).toEqual({ ip: '10.0.0.4', trusted: true, source: 'forwarded' });
  });

  it('never takes a non-canonical Forwarded address', () => {
    expect(resolveClientAddress(proxy, { forwarded: 'for=127.1' }, trustProxy)).toBe(proxy);
    expect(resolveClientAddress(proxy, { forwarded: 'for="0177.0.0.1:80"' }, trustProxy)).toBe(
      proxy,
    );
  });

  it('prefers the X-Forwarded-* family and never mixes it with Forwarded', () => {
    const info = resolveForwarded(
      proxy,
      {
        'x-forwarded-for': '198.51.100.7',
        forwarded: 'for=192.0.2.60;proto=https;host=other.example',
      },
      trustProxy,
    );
    expect(info.ip).toBe('198.51.100.7');
    expect(info.source).toBe('x-forwarded');
    expect(info.proto).toBeUndefined();
    expect(info.host).toBeUndefined();
  });

  it('uses the socket address when a trusted peer sends no forwarded header', () => {
    expect(resolveForwarded('::ffff:10.0.0.1', {}, trustProxy)).toEqual({
      ip: '10.0.0.1',
      trusted: true,
      source: 'none',
    });
  });

  it('answers an empty address when the socket has none', () => {
    expect(resolveForwarded(undefined, { 'x-forwarded-for': '1.2.3.4' }, () => true)).toEqual({
      ip: '',
      trusted: false,
      source: 'none',
    });
  });
});
