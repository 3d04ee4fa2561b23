/**
 * Reading the query strings and bodies of the admin endpoints: every parameter once, of the
 * expected shape, within its bounds; anything else is a 400 `PKG_ERR_ADMIN_BAD_QUERY` that
 * names the parameter. Cursors are opaque to the page: base64url of a small JSON value.
 */
import { Buffer } from 'node:buffer';
import type { ConnectionCursor, ConnectionSort, Request } from '@pkg/core';
import { AdminRequestError } from './errors';
import type { RoomKey } from './local-views';

/** The longest search text and id accepted (longer ones are refused, not cut). */
export const MAX_TEXT = 256;

function bad(message: string): AdminRequestError {
  return new AdminRequestError('PKG_ERR_ADMIN_BAD_QUERY', message);
}

/** One query parameter as text; undefined when absent; a 400 when repeated or too long. */
export function text(request: Request, name: string, max = MAX_TEXT): string | undefined {
  const value: unknown = request.getQuery(name);
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw bad(`${name} must be given once, as text.`);
  if (value.length > max) throw bad(`${name} must be at most ${max} characters.`);
  return value;
}

/** A whole number parameter within [min, max]; `fallback` when absent. */
export function whole(
  request: Request,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const value = text(request, name, 20);
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw bad(`${name} must be a whole number from ${min} to ${max}.`);
  }
  return Number(value);
}

/** One of the given words; `fallback` when absent. */
export function oneOf<T extends string>(
  request: Request,
  name: string,
  words: readonly T[],
  fallback: T,
): T {
  const value = text(request, name, 32);
  if (value === undefined) return fallback;
  if (!(words as readonly string[]).includes(value)) {
    throw bad(`${name} must be one of ${words.join(', ')}.`);
  }
  return value as T;
}

export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

function decodeCursor(request: Request): unknown {
  const value = text(request, 'cursor', 1024);
  if (value === undefined || value === '') return undefined;
  try {
    return JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as unknown;
  } catch {
    throw bad('cursor must be the `next` of a page, as the server gave it.');
  }
}

/** The `cursor` of a connections page. */
export function connectionCursor(request: Request): ConnectionCursor | null {
  const value = decodeCursor(request);
  if (value === undefined) return null;
  const c = value as { key?: unknown; id?: unknown };
  if (
    typeof value !== 'object' ||
    value === null ||
    typeof c.key !== 'number' ||
    !Number.isSafeInteger(c.key) ||
    typeof c.id !== 'string' ||
    c.id.length > MAX_TEXT
  ) {
    throw bad('cursor must be the `next` of a connections page, as the server gave it.');
  }
  return { key: c.key, id: c.id };
}

/** The `cursor` of a rooms page. */
export function roomCursor(request: Request): RoomKey | null {
  const value = decodeCursor(request);
  if (value === undefined) return null;
  if (
    !Array.isArray(value) ||
    value.length !== 2 ||
    typeof value[0] !== 'string' ||
    typeof value[1] !== 'string'
  ) {
    throw bad('cursor must be the `next` of a rooms page, as the server gave it.');
  }
  return [value[0], value[1]];
}

export const SORTS: readonly ConnectionSort[] = ['age', 'traffic'];

/** A required text field of a JSON body. */
export function field(body: unknown, name: string, required = true): string | undefined {
  const value =
    typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[name] : undefined;
  if (value === undefined || value === null) {
    if (required) throw bad(`the JSON body needs "${name}" (a non-empty string).`);
    return undefined;
  }
  if (typeof value !== 'string' || value === '' || value.length > MAX_TEXT) {
    throw bad(`"${name}" must be a non-empty string of at most ${MAX_TEXT} characters.`);
  }
  return value;
}
