import { describe, expect, it } from '@jest/globals';
import type { AuthContext } from '@pkg/core';
import { DEMO_TOKENS, authenticate, createHelloAuth, type DemoUser } from './auth';

describe('authenticate', () => {
  it('finds nothing when neither header nor key is sent', () => {
    expect(authenticate(undefined, undefined)).toEqual({ kind: 'none' });
    expect(authenticate('', null)).toEqual({ kind: 'none' });
  });

  it('reads a Bearer token, whatever the case of the scheme', () => {
    expect(authenticate('Bearer alice-token', null)).toEqual({
      kind: 'user',
      user: DEMO_TOKENS['alice-token'],
    });
    expect(authenticate('bearer  bob-token ', null)).toMatchObject({ user: { id: 'bob' } });
  });

  it('reads ?key= when there is no Authorization header', () => {
    expect(authenticate(undefined, 'admin-token')).toMatchObject({ user: { role: 'admin' } });
  });

  it('prefers the header over ?key=', () => {
    expect(authenticate('Bearer nope', 'alice-token')).toEqual({ kind: 'invalid' });
  });

  it('calls unknown tokens, other schemes and inherited names invalid', () => {
    expect(authenticate('Bearer nope', null)).toEqual({ kind: 'invalid' });
    expect(authenticate('Basic YWxpY2U6eA==', null)).toEqual({ kind: 'invalid' });
    expect(authenticate('Bearer', null)).toEqual({ kind: 'invalid' });
    expect(authenticate(undefined, 'toString')).toEqual({ kind: 'invalid' });
    expect(authenticate(undefined, '__proto__')).toEqual({ kind: 'invalid' });
  });
});

describe('createHelloAuth ($hello.auth)', () => {
  const context = (auth: string | undefined, data: Record<string, unknown> = {}): AuthContext => ({
    clientId: 'c1',
    auth,
    data,
    ip: '127.0.0.1',
    resume: undefined,
    refresh: false,
    identity: undefined,
  });

  it('stores the user of a known token and accepts it with the user id as identity', () => {
    const stored: Array<[string, DemoUser]> = [];
    const handler = createHelloAuth((id, user) => stored.push([id, user]));
    expect(handler(context('admin-token'))).toEqual({ identity: 'admin' });
    expect(stored).toEqual([['c1', DEMO_TOKENS['admin-token']]]);
  });

  it('gives a user signed in by the handshake the same identity, a guest none', () => {
    const handler = createHelloAuth(() => undefined);
    expect(handler(context(undefined, { user: DEMO_TOKENS['bob-token'] }))).toEqual({
      identity: 'bob',
    });
    expect(handler(context(undefined, {}))).toBe(true);
  });

  it('accepts a client without credentials as it is, and refuses an unknown token with 401', () => {
    const stored: unknown[] = [];
    const handler = createHelloAuth((id, user) => stored.push([id, user]));
    expect(handler(context(undefined))).toBe(true);
    expect(handler(context(''))).toBe(true);
    expect(handler(context('nope'))).toEqual({ status: 401, message: 'Invalid token.' });
    expect(handler(context('__proto__'))).toEqual({ status: 401, message: 'Invalid token.' });
    expect(stored).toEqual([]);
  });
});
