import type { LoggerInterface } from '@pkg/logger';

function toConsole(level: string) {
  return (message: string, context?: Record<string, unknown>): void => {
    if (context === undefined) console.error(`[${level}] ${message}`);
    else console.error(`[${level}] ${message}`, context);
  };
}

function ignore(): void {}

/**
 * The logger used when none is given: error and more severe lines (and exceptions) go to
 * `console.error`, the rest is dropped. A handler that throws is therefore never silent, and
 * the package needs no logging runtime of its own; pass a `Logger` from `@pkg/logger` (or any
 * `LoggerInterface`) for levels, files and formatting.
 */
export function createFallbackLogger(): LoggerInterface {
  const severe = new Set(['emergency', 'alert', 'critical', 'error']);
  return {
    emergency: toConsole('emergency'),
    alert: toConsole('alert'),
    critical: toConsole('critical'),
    error: toConsole('error'),
    warning: ignore,
    notice: ignore,
    info: ignore,
    debug: ignore,
    log(level, message, context) {
      if (severe.has(String(level))) toConsole(String(level))(message, context);
    },
    exception(error, context) {
      const err = error instanceof Error ? error : new Error(String(error));
      console.error(`[error] ${err.stack ?? err.message}`, context ?? '');
    },
  };
}
