import { describe, expect, it } from '@jest/globals';
import { defaultPort, parseHost, parsePort } from './host';

describe('parseHost', () => {
  it('parses names, ports and bracketed IPv6', () => {
    expect(parseHost('Example.COM')).toEqual({ hostname: 'example.com' });
    expect(parseHost('example.com:8080')).toEqual({ hostname: 'example.com', port: 8080 });
    expect(parseHost('127.0.0.1:3000')).toEqual({ hostname: '127.0.0.1', port: 3000 });
    expect(parseHost('[::1]')).toEqual({ hostname: '[::1]' });
    expect(parseHost('[2001:db8::1]:443')).toEqual({ hostname: '[2001:db8::1]', port: 443 });
  });

  it.each([
    '',
    'a b',
    'evil.com/path',
    'user@host',
    'host:',
    'host:0',
    'host:65536',
    'host:80x',
    '[::1',
    '[zz]',
    '[::1]x',
    '[fe80::1%eth0]',
    'a:1:2',
  ])('refuses %j', (value) => {
    expect(parseHost(value)).toBeUndefined();
  });
});

describe('parsePort and defaultPort', () => {
  it('accepts 1 to 65535 in decimal only', () => {
    expect(parsePort('1')).toBe(1);
    expect(parsePort('65535')).toBe(65535);
    expect(parsePort('0')).toBeUndefined();
    expect(parsePort('70000')).toBeUndefined();
    expect(parsePort('0x50')).toBeUndefined();
    expect(parsePort('')).toBeUndefined();
  });

  it('gives 443 for https and 80 otherwise', () => {
    expect(defaultPort('https')).toBe(443);
    expect(defaultPort('http')).toBe(80);
  });
});
