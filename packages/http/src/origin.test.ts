import { describe, expect, it } from '@jest/globals';
import { normalizeOriginEntry, serializeOrigin } from './origin';

describe('serializeOrigin', () => {
  it('spells an origin as browsers send it', () => {
    expect(serializeOrigin('https://app.example.com')).toBe('https://app.example.com');
    expect(serializeOrigin('https://app.example.com:443')).toBe('https://app.example.com');
    expect(serializeOrigin('HTTP://App.Example:80/')).toBe('http://app.example');
    expect(serializeOrigin('http://app.example:443')).toBe('http://app.example:443');
    expect(serializeOrigin('http://[::1]:8080')).toBe('http://[::1]:8080');
  });

  it('is undefined for what is not an origin', () => {
    for (const text of [
      'null',
      '',
      'app.example',
      'https://a.example/path',
      'https://a.example?x',
      'https://u@a.example',
    ]) {
      expect([text, serializeOrigin(text)]).toEqual([text, undefined]);
    }
  });
});

describe('normalizeOriginEntry', () => {
  it('keeps * and null, and spells origins and subdomain patterns as serializeOrigin does', () => {
    expect(normalizeOriginEntry('*')).toBe('*');
    expect(normalizeOriginEntry('null')).toBe('null');
    expect(normalizeOriginEntry('HTTPS://App.example.com:443')).toBe('https://app.example.com');
    expect(normalizeOriginEntry('https://*.Example.org:443')).toBe('https://*.example.org');
    expect(normalizeOriginEntry('https://*.example.org:8443')).toBe('https://*.example.org:8443');
    expect(normalizeOriginEntry('https://a.*.example.org')).toBeUndefined();
    expect(normalizeOriginEntry('not an origin')).toBeUndefined();
  });
});
