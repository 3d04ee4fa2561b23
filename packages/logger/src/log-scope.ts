/**
 * Context that follows one unit of work (an HTTP request, a WebSocket message) through
 * every asynchronous step it takes: values set with {@link runWithLogContext} are added to
 * every line a {@link Logger} writes while that work runs, so the lines of one request can
 * be found together (request id, trace id, client id). Built on `AsyncLocalStorage`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** The values added to every line written inside a scope. */
export type LogScope = Readonly<Record<string, string | undefined>>;

// One store per process, also when this package is loaded twice (its ESM and CJS builds):
// a scope opened through one copy is seen by a Logger of the other.
const KEY = Symbol.for('@pkg/logger.scope');
const holder = globalThis as { [KEY]?: AsyncLocalStorage<LogScope> };
const storage: AsyncLocalStorage<LogScope> = (holder[KEY] ??= new AsyncLocalStorage<LogScope>());

/**
 * Runs `fn` with `scope` as the log context of everything it does, synchronously and in the
 * promises and callbacks it starts. Scopes nest: the inner one replaces the outer one (merge
 * them yourself with `{ ...currentLogContext(), ...more }`). Returns what `fn` returns.
 */
export function runWithLogContext<T>(scope: LogScope, fn: () => T): T {
  return storage.run(scope, fn);
}

/** The scope of the work running now, or undefined outside any scope. */
export function currentLogContext(): LogScope | undefined {
  return storage.getStore();
}

/**
 * `context` with the current scope's values added (the line's own keys win); `context`
 * itself when no scope is open. For loggers that implement `LoggerInterface` themselves.
 */
export function withLogScope(
  context: Readonly<Record<string, unknown>>,
): Readonly<Record<string, unknown>> {
  const scope = storage.getStore();
  if (scope === undefined) return context;
  const merged: Record<string, unknown> = {};
  for (const key of Object.keys(scope)) if (scope[key] !== undefined) merged[key] = scope[key];
  return Object.assign(merged, context);
}
