/**
 * The listeners of a client: server events and the client's own lifecycle events, `once`
 * wrappers that `off` can still find, and one way of reporting a listener's failure.
 */
import { createClientError } from './errors';
import { isValidEventName } from '@pkg/wire';

/** Names of the client's own events; a server message with one of them is not delivered. */
export const LIFECYCLE_EVENTS: ReadonlySet<string> = new Set([
  'connect',
  'disconnect',
  'connect_error',
  'reconnecting',
  'reconnect',
  'reconnect_failed',
  'reconnect_stopped',
  'error',
  'recovered',
  'refreshed',
  'refresh_error',
  'revoked',
]);

export type AnyListener = (data: never, info: never) => unknown;

interface OnceWrapper {
  (data: never, info: never): unknown;
  original: AnyListener;
}

/**
 * Rethrows asynchronously, so that the error reaches `window.onerror` or Node's
 * `uncaughtException` as an EventEmitter listener's would, without breaking the caller.
 */
export function reportAsync(err: unknown): void {
  setTimeout(() => {
    throw err;
  }, 0);
}

export class Listeners {
  readonly #map = new Map<string, AnyListener[]>();

  /** Adds a listener; throws a TypeError for a bad event name or a non-function. */
  add(event: unknown, listener: unknown, once: boolean): void {
    if (typeof event !== 'string' || (!LIFECYCLE_EVENTS.has(event) && !isValidEventName(event))) {
      throw createClientError(
        TypeError,
        'PKG_ERR_CLIENT_INVALID_ARGUMENT',
        `on(${JSON.stringify(event)}): the event name must use letters, digits, ".", "_" or "-".`,
      );
    }
    if (typeof listener !== 'function') {
      throw createClientError(
        TypeError,
        'PKG_ERR_CLIENT_INVALID_ARGUMENT',
        `on("${event}"): the listener must be a function.`,
      );
    }
    let entry = listener as AnyListener;
    if (once) {
      const wrapper = ((data: never, info: never): unknown => {
        this.remove(event, wrapper);
        return (listener as (d: never, i: never) => unknown)(data, info);
      }) as OnceWrapper;
      wrapper.original = listener as AnyListener;
      entry = wrapper;
    }
    const list = this.#map.get(event) ?? [];
    list.push(entry);
    this.#map.set(event, list);
  }

  /** Removes one listener (also one added with `once`), or all of the event. */
  remove(event: string, listener?: AnyListener): void {
    if (listener === undefined) {
      this.#map.delete(event);
      return;
    }
    const list = this.#map.get(event);
    if (!list) return;
    const index = list.findIndex(
      (l) => l === listener || (l as Partial<OnceWrapper>).original === listener,
    );
    if (index >= 0) list.splice(index, 1);
    if (list.length === 0) this.#map.delete(event);
  }

  /** The first listener of an event: the one whose result answers a server request. */
  first(event: string): AnyListener | undefined {
    return this.#map.get(event)?.[0];
  }

  /**
   * Calls every listener of an event. A listener that throws (or rejects) does not stop the
   * others; its error is reported with {@link reportAsync}.
   */
  call(event: string, payload: unknown, info?: unknown): void {
    for (const listener of [...(this.#map.get(event) ?? [])]) {
      try {
        const result = (listener as (p: unknown, i: unknown) => unknown)(payload, info);
        if (result instanceof Promise) result.catch(reportAsync);
      } catch (err) {
        reportAsync(err);
      }
    }
  }
}
