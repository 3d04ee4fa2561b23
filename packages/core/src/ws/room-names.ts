import { createCoreError, type CoreErrorCode } from '../errors';

/**
 * The rules for room and namespace names, checked where a name enters (the namespace
 * manager, the adapter bridge, `RoomsController`) before any membership changes:
 *
 * - a non-empty string of at most `max_room_name_length` UTF-16 code units (default 128);
 * - well-formed UTF-16: no lone surrogate (`"x\ud800"`), which has no UTF-8 form, so it
 *   could not be written to a Redis channel name, a log line or another instance.
 *
 * Event names need no such check: the envelope's pattern `^[A-Za-z0-9._-]+$` is ASCII.
 */
export const DEFAULT_MAX_ROOM_NAME_LENGTH = 128;

/** Matches a surrogate that is not half of a pair (the `u` flag reads pairs as one code point). */
const LONE_SURROGATE = /\p{Surrogate}/u;

/** Whether a string is well-formed UTF-16 (`String.prototype.isWellFormed`, ES2024). */
export function isWellFormed(value: string): boolean {
  return !LONE_SURROGATE.test(value);
}

/** A name for an error message: JSON-quoted (lone surrogates escaped), at most 40 characters. */
export function quoteName(value: string): string {
  const shown = value.length > 40 ? `${value.slice(0, 40)}...` : value;
  return JSON.stringify(shown);
}

/** What is wrong with a room or namespace name, or null when it is acceptable. */
export function nameProblem(
  kind: 'room' | 'namespace',
  value: unknown,
  max: number,
): string | null {
  if (typeof value !== 'string' || value.length === 0) {
    return `the ${kind} name must be a non-empty string`;
  }
  if (value.length > max) {
    return `the ${kind} name ${quoteName(value)} has ${value.length} characters, more than the ${max} allowed (max_room_name_length)`;
  }
  if (!isWellFormed(value)) {
    return `the ${kind} name ${quoteName(value)} is not well-formed UTF-16 (it has a lone surrogate); use valid Unicode text`;
  }
  return null;
}

/**
 * An error about one room, with the `error` event data a client gets for it (`room`,
 * `namespace`) when a handler lets it through.
 */
export function roomError<C extends new (message: string) => Error>(
  Ctor: C,
  code: CoreErrorCode,
  message: string,
  room: unknown,
  namespace: unknown,
): InstanceType<C> {
  const err = createCoreError(Ctor, code, message);
  const data: Record<string, unknown> = {};
  if (typeof room === 'string') data['room'] = room;
  if (typeof namespace === 'string') data['namespace'] = namespace;
  Object.defineProperty(err, 'eventData', { value: data, enumerable: false });
  return err as InstanceType<C>;
}

/** Throws `PKG_ERR_CORE_INVALID_ROOM_NAME` (a TypeError) unless both names are acceptable. */
export function checkRoomName(
  method: string,
  room: unknown,
  namespace: unknown,
  max: number,
): void {
  const problem = nameProblem('room', room, max) ?? nameProblem('namespace', namespace, max);
  if (problem !== null) {
    throw roomError(
      TypeError,
      'PKG_ERR_CORE_INVALID_ROOM_NAME',
      `${method}: ${problem}. Nothing was joined.`,
      room,
      namespace,
    );
  }
}
