import type { LogContext, LoggerInterface } from '@pkg/logger';

const LEVELS = [
  'emergency',
  'alert',
  'critical',
  'error',
  'warning',
  'notice',
  'info',
  'debug',
] as const;

const kGuarded = Symbol('guardedLogger');

/**
 * Wraps a user-supplied logger so that no call into it can throw: a logger that throws (a
 * full disk, a bug in a transport) loses that line, never a connection or the process. The
 * first failure is reported once on `console.error`. Wrapping twice returns the same wrapper.
 */
export function guardLogger(logger: LoggerInterface): LoggerInterface {
  if ((logger as { [kGuarded]?: true })[kGuarded] === true) return logger;
  let reported = false;
  const failed = (err: unknown): void => {
    if (reported) return;
    reported = true;
    try {
      console.error('The logger threw; its log lines are dropped when it does.', err);
    } catch {
      // Nothing else to do: logging must never fail the caller.
    }
  };
  // Inherits from the logger, so `instanceof` and its other members still see the original.
  const guarded = Object.assign(Object.create(logger) as object, {
    [kGuarded]: true,
    log(level: string, message: string, context?: LogContext): void {
      try {
        logger.log(level, message, context);
      } catch (err) {
        failed(err);
      }
    },
    exception(error: unknown, context?: LogContext): void {
      try {
        logger.exception(error, context);
      } catch (err) {
        failed(err);
      }
    },
  }) as Record<string | symbol, unknown>;
  for (const level of LEVELS) {
    guarded[level] = (message: string, context?: LogContext): void => {
      try {
        logger[level](message, context);
      } catch (err) {
        failed(err);
      }
    };
  }
  return guarded as unknown as LoggerInterface;
}
