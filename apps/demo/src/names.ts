import { createHash } from 'node:crypto';
import type { ControllerHost, HandshakeHook } from '@pkg/core';
import { USER_KEY, type DemoUser } from './auth';

/** Client-data key of the display name chosen by the client. */
export const NAME_KEY = 'name';
/** Longest display name accepted, in characters. */
export const MAX_NAME_LENGTH = 32;
/** What every guest's display name starts with; signed-in users never carry it. */
export const GUEST_PREFIX = 'guest-';

/** Returns why `value` is not a usable display name, or undefined when it is one. */
export function checkName(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.trim() === '' || value.length > MAX_NAME_LENGTH) {
    return `"name" must be a non-empty string of at most ${MAX_NAME_LENGTH} characters.`;
  }
  return undefined;
}

/**
 * The name others see. A signed-in user is always shown under the account's name (a chosen
 * name is ignored), so nobody can sign as someone else. A guest is always marked: `guest-`
 * and the chosen name (`guest-Alice` is plainly not Alice), or `guest-` and six hex digits
 * of a hash of the client id when no name was chosen.
 */
export function displayName(
  user: DemoUser | undefined,
  chosen: string | undefined,
  clientId: string,
): string {
  if (user !== undefined) return user.name;
  if (chosen !== undefined && chosen !== '') return `${GUEST_PREFIX}${chosen}`;
  return `${GUEST_PREFIX}${createHash('sha256').update(clientId).digest('hex').slice(0, 6)}`;
}

/** The user a client signed in as (the client's data `user`), undefined for a guest. */
export function userOf(
  host: Pick<ControllerHost, 'getClientData'>,
  clientId: string,
): DemoUser | undefined {
  return host.getClientData(clientId, USER_KEY) as DemoUser | undefined;
}

/** The name others see of a connected client, in the chat and in presence alike. */
export function nameOf(host: Pick<ControllerHost, 'getClientData'>, clientId: string): string {
  const chosen = host.getClientData(clientId, NAME_KEY);
  return displayName(
    userOf(host, clientId),
    typeof chosen === 'string' ? chosen : undefined,
    clientId,
  );
}

/**
 * WebSocket handshake hook: `?name=Ada` on the WebSocket URL sets the chosen name before
 * `welcome` goes out. A bad name is refused with 400; no name is fine.
 */
export const nameFromHandshake: HandshakeHook = (ctx) => {
  const name = ctx.query.get('name');
  if (name === null || name === '') return undefined;
  const problem = checkName(name);
  if (problem !== undefined) return { status: 400, message: problem };
  ctx.data[NAME_KEY] = name.trim();
  return undefined;
};
