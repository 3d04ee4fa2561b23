import type { HandshakeHook } from '@pkg/core';

/** Client-data key of the display name chosen by the client. */
export const NAME_KEY = 'name';
/** Longest display name accepted, in characters. */
export const MAX_NAME_LENGTH = 32;

/** Returns why `value` is not a usable display name, or undefined when it is one. */
export function checkName(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.trim() === '' || value.length > MAX_NAME_LENGTH) {
    return `"name" must be a non-empty string of at most ${MAX_NAME_LENGTH} characters.`;
  }
  return undefined;
}

/**
 * WebSocket handshake hook: `?name=Ada` on the WebSocket URL sets the display name before
 * `welcome` and `user.joined` go out. A bad name is refused with 400; no name is fine.
 */
export const nameFromHandshake: HandshakeHook = (ctx) => {
  const name = ctx.query.get('name');
  if (name === null || name === '') return undefined;
  const problem = checkName(name);
  if (problem !== undefined) return { status: 400, message: problem };
  ctx.data[NAME_KEY] = name.trim();
  return undefined;
};
