import { describe, expect, it } from '@jest/globals';
import type { HandshakeContext } from '@pkg/core';
import { createOriginCheck } from './origin-check';

function ctx(origin: string | undefined, host = 'demo.test:6001'): HandshakeContext {
  return { origin, headers: { host } } as unknown as HandshakeContext;
}

describe('createOriginCheck', () => {
  const check = createOriginCheck(['https://app.example']);

  it('accepts listed origins, the same origin and clients without an Origin', () => {
    expect(check(ctx('https://app.example'))).toBeUndefined();
    expect(check(ctx('HTTPS://APP.EXAMPLE'))).toBeUndefined();
    expect(check(ctx('http://demo.test:6001'))).toBeUndefined();
    expect(check(ctx(undefined))).toBeUndefined();
  });

  it('refuses other origins with 403', () => {
    expect(check(ctx('https://evil.example'))).toEqual({
      status: 403,
      message: 'Origin not allowed.',
    });
    expect(check(ctx('http://demo.test:6002'))).toMatchObject({ status: 403 });
    expect(check(ctx('null'))).toMatchObject({ status: 403 });
  });

  it('accepts everything with *', () => {
    expect(createOriginCheck(['*'])(ctx('https://evil.example'))).toBeUndefined();
  });
});
