import { describe, expect, it } from '@jest/globals';
import type { HandshakeContext } from '@pkg/core';
import { DEMO_TOKENS } from './auth';
import { checkName, displayName, nameFromHandshake } from './names';

function ctx(query: string): HandshakeContext {
  return { query: new URLSearchParams(query), data: {} } as unknown as HandshakeContext;
}

describe('display names', () => {
  it('accepts 1-32 characters', () => {
    expect(checkName('Ada')).toBeUndefined();
    expect(checkName('n'.repeat(32))).toBeUndefined();
    expect(checkName('n'.repeat(33))).toMatch(/at most 32/);
    expect(checkName('  ')).toMatch(/non-empty/);
    expect(checkName(3)).toMatch(/string/);
  });

  it('stores ?name= from the handshake, trimmed', () => {
    const context = ctx('name=%20Ada%20');
    expect(nameFromHandshake(context)).toBeUndefined();
    expect(context.data).toEqual({ name: 'Ada' });
  });

  it('ignores a missing name and refuses a bad one with 400', () => {
    const none = ctx('');
    expect(nameFromHandshake(none)).toBeUndefined();
    expect(none.data).toEqual({});
    expect(nameFromHandshake(ctx(`name=${'n'.repeat(40)}`))).toMatchObject({ status: 400 });
  });
});

describe('displayName', () => {
  it('shows a signed-in user under the account name, whatever name was chosen', () => {
    expect(displayName(DEMO_TOKENS['alice-token'], 'Bob', 'id.1')).toBe('Alice');
  });

  it('marks every guest, so no guest can pass as a signed-in user', () => {
    expect(displayName(undefined, 'Alice', 'id.1')).toBe('guest-Alice');
    const anonymous = displayName(undefined, undefined, 'id.1');
    expect(anonymous).toMatch(/^guest-[0-9a-f]{6}$/);
    expect(displayName(undefined, undefined, 'id.2')).not.toBe(anonymous);
  });
});
