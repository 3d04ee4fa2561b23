import { describe, expect, it } from '@jest/globals';
import { compileOriginPolicy } from './origin';

describe('compileOriginPolicy', () => {
  it("allows any origin with '*'", () => {
    const allowed = compileOriginPolicy(['*'], true);
    expect(allowed('https://anything.example')).toBe(true);
    expect(allowed('null')).toBe(true);
  });

  it('matches exact origins case-insensitively, ignoring default ports and a trailing slash', () => {
    const allowed = compileOriginPolicy(['https://App.example.com', 'http://localhost:3000'], true);
    expect(allowed('https://app.example.com')).toBe(true);
    expect(allowed('https://APP.EXAMPLE.COM:443')).toBe(true);
    expect(allowed('https://app.example.com/')).toBe(true);
    expect(allowed('http://localhost:3000')).toBe(true);
    expect(allowed('http://app.example.com')).toBe(false);
    expect(allowed('https://app.example.com:8443')).toBe(false);
    expect(allowed('http://localhost:3001')).toBe(false);
    expect(allowed('https://app.example.com.evil.test')).toBe(false);
    expect(allowed('null')).toBe(false);
    expect(allowed('garbage')).toBe(false);
  });

  it('matches subdomain patterns but not the bare domain', () => {
    const allowed = compileOriginPolicy(['https://*.example.com'], true);
    expect(allowed('https://a.example.com')).toBe(true);
    expect(allowed('https://a.b.example.com')).toBe(true);
    expect(allowed('https://example.com')).toBe(false);
    expect(allowed('http://a.example.com')).toBe(false);
    expect(allowed('https://a.example.com:8443')).toBe(false);
    expect(allowed('https://evilexample.com')).toBe(false);
  });

  it('decides a missing origin by allowMissingOrigin', () => {
    expect(compileOriginPolicy(['*'], true)(undefined)).toBe(true);
    expect(compileOriginPolicy(['*'], false)(undefined)).toBe(false);
    expect(compileOriginPolicy(['https://a.example'], false)('')).toBe(false);
  });

  it('refuses everything but a missing origin with an empty list', () => {
    const allowed = compileOriginPolicy([], true);
    expect(allowed('https://a.example')).toBe(false);
    expect(allowed(undefined)).toBe(true);
  });

  it('throws a TypeError naming an entry that is not an origin', () => {
    for (const entry of ['example.com', 'https://a*.example.com', '*.example.com', '']) {
      expect(() => compileOriginPolicy([entry], true)).toThrow(
        expect.objectContaining({ name: 'TypeError', code: 'PKG_ERR_WS_INVALID_OPTION' }),
      );
    }
    expect(() => compileOriginPolicy(['example.com'], true)).toThrow(
      /"example.com" is not an origin/,
    );
    expect(() => compileOriginPolicy([5 as unknown as string], true)).toThrow(/must be a string/);
  });
});
