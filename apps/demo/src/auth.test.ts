import { describe, expect, it } from '@jest/globals';
import { DEMO_TOKENS, authenticate } from './auth';

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
