import type { LoggerInterface } from '@pkg/logger';

/** Something run() connects before it listens: the adapter, the rate-limit store. */
export interface Backend {
  /** How the log names it (`adapter`, `rate-limit store`). */
  readonly name: string;
  /** The object; its `connect()` (or, for an adapter, `ready()`) is awaited when it has one. */
  readonly target: unknown;
}

type Connectable = () => unknown;

function connectMethod(target: unknown): Connectable | undefined {
  if (typeof target !== 'object' || target === null) return undefined;
  const t = target as { connect?: unknown; ready?: unknown };
  if (typeof t.connect === 'function') return () => (t.connect as Connectable).call(target);
  if (typeof t.ready === 'function') return () => (t.ready as Connectable).call(target);
  return undefined;
}

/** What one backend's connect ended with. */
export type BackendOutcome = 'connected' | 'failed' | 'timeout' | 'none';

/**
 * Awaits the `connect()` of each backend that has one, all at once, for at most `timeoutMs`
 * (0: none is awaited), and logs the outcome of each: connected (info), failed or not
 * connected in time (warning, `PKG_ERR_CORE_BACKEND_UNAVAILABLE`). Never rejects: a backend
 * that is down keeps reconnecting on its own and follows its own failure policy meanwhile
 * (the Redis rate-limit store's `onError`), so the server still starts.
 */
export async function connectBackends(
  backends: readonly Backend[],
  timeoutMs: number,
  logger: LoggerInterface,
): Promise<BackendOutcome[]> {
  return Promise.all(
    backends.map(async ({ name, target }): Promise<BackendOutcome> => {
      const connect = connectMethod(target);
      if (connect === undefined || timeoutMs === 0) return 'none';
      const started = Date.now();
      let timer: NodeJS.Timeout | undefined;
      const expired = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), timeoutMs);
      });
      let outcome: BackendOutcome;
      let error: string | undefined;
      try {
        outcome = await Promise.race([
          Promise.resolve(connect()).then(() => 'connected' as const),
          expired,
        ]);
      } catch (err) {
        outcome = 'failed';
        error = err instanceof Error ? err.message : String(err);
      } finally {
        clearTimeout(timer);
      }
      const ms = Date.now() - started;
      if (outcome === 'connected') {
        logger.info(`The ${name} is connected`, { backend: name, ms });
      } else {
        logger.warning(
          outcome === 'timeout'
            ? `The ${name} did not connect within backend_connect_timeout; listening anyway, it keeps reconnecting`
            : `The ${name} failed to connect; listening anyway, it keeps reconnecting`,
          {
            code: 'PKG_ERR_CORE_BACKEND_UNAVAILABLE',
            backend: name,
            ms,
            backendConnectTimeout: timeoutMs,
            ...(error === undefined ? {} : { error }),
          },
        );
      }
      return outcome;
    }),
  );
}
