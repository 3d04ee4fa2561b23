import { Response, type Request } from '@pkg/http';
import type { LoggerInterface } from '@pkg/logger';
import { RETRY_AFTER_SECONDS } from '../config/defaults';

type Dispatch = (request: Request) => Response | Promise<Response>;

/**
 * Bounds the time of an asynchronous HTTP chain (middleware and handler): past `ms` the
 * request is answered 503 with `Retry-After`, code `PKG_ERR_CORE_HANDLER_TIMEOUT`, and what the
 * handler produces later is dropped. A synchronous answer costs nothing. `ms` 0 = no limit.
 */
export function withHttpTimeout(ms: number, logger: LoggerInterface, next: Dispatch): Dispatch {
  if (ms === 0) return next;
  return (request) => {
    const result = next(request);
    if (result instanceof Response) return result;
    return new Promise<Response>((resolve, reject) => {
      const timer = setTimeout(() => {
        logger.warning('HTTP handler did not finish in time; answered 503', {
          code: 'PKG_ERR_CORE_HANDLER_TIMEOUT',
          method: request.getMethod(),
          path: request.getPath(),
          timeout: ms,
        });
        resolve(
          Response.error(
            503,
            { code: 'PKG_ERR_CORE_HANDLER_TIMEOUT' },
            { 'Retry-After': String(RETRY_AFTER_SECONDS) },
          ),
        );
      }, ms);
      // The request's socket keeps the process up while it matters; close() has its own.
      timer.unref();
      result.then(
        (response) => {
          clearTimeout(timer);
          resolve(response);
        },
        (err: unknown) => {
          clearTimeout(timer);
          reject(err);
        },
      );
    });
  };
}

/**
 * Bounds a client's OnConnect phase: resolves true when the handlers finished in time, false
 * when `ms` passed first (after calling `expired`, which closes the client). `ms` 0 = no limit.
 */
export function connectDeadline<C>(
  ms: number,
  expired: (client: C) => void,
): (client: C, phase: Promise<void>) => Promise<boolean> {
  return (clientId, phase) => {
    const done = phase.then(() => true);
    if (ms === 0) return done;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => {
        expired(clientId);
        resolve(false);
      }, ms);
      timer.unref();
    });
    return Promise.race([done, late]).finally(() => clearTimeout(timer));
  };
}

/** Resolves when `promise` settles or at `deadline` (epoch ms), whichever is first. The
 * timer is not unref'd: a shutdown waiting here keeps the process alive until it is done. */
export async function until(promise: Promise<unknown>, deadline: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const left = Math.max(0, deadline - Date.now());
  try {
    await Promise.race([
      promise.then(
        () => undefined,
        () => undefined,
      ),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, left);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
