/**
 * Errors that become `error` events: a thrown error that carries an `eventCode` (a wire code
 * such as `too_many_rooms`) and optionally `eventData` is answered to the client with that
 * code, its message and the data (with the request's `id`), not as `internal_error`. Core's
 * own errors get `eventCode` from the `coreErrorCodes` table (problems the client caused);
 * an adapter or a built-in controller may throw one to refuse a message.
 */
/** A wire code: lower-case words joined by `_`, as in the `error` table of docs/protocol.md. */
const EVENT_CODE = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * The `error` event a thrown value asks for: an error carrying `eventCode` (core's errors
 * for problems the client caused, such as `too_many_rooms`, or a handler's own refusal)
 * and optionally `eventData` (e.g. `{room, namespace}`). Null for any other failure.
 */
export function eventErrorOf(
  err: unknown,
): { code: string; message: string; data: Record<string, unknown> } | null {
  if (!(err instanceof Error)) return null;
  const { eventCode, eventData } = err as Error & { eventCode?: unknown; eventData?: unknown };
  if (typeof eventCode !== 'string' || !EVENT_CODE.test(eventCode)) return null;
  const data =
    typeof eventData === 'object' && eventData !== null && !Array.isArray(eventData)
      ? { ...(eventData as Record<string, unknown>) }
      : {};
  return { code: eventCode, message: err.message, data };
}

/**
 * An error that a handler throws to refuse a message: the dispatcher answers it with the
 * `error` event `{code: eventCode, message, ...eventData}` (with the request's `id`).
 */
export function refusal(
  eventCode: string,
  message: string,
  eventData: Record<string, unknown>,
): Error {
  const err = new Error(message);
  Object.defineProperty(err, 'eventCode', { value: eventCode, enumerable: true });
  Object.defineProperty(err, 'eventData', { value: eventData, enumerable: false });
  return err;
}
