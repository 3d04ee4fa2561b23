import type { LogContext, LoggerInterface } from '@pkg/logger';

// The same default as @pkg/ws-protocol's (src/fallback-logger.ts there), copied on purpose: the package graph
// (tools/scripts/check-graph.mjs) lets neither package import the other, and lets both
// take only types from @pkg/logger, so that installing one does not install winston. No
// package both may import at run time exists, so each keeps these few lines. Change both
// together.

const SEVERE: ReadonlySet<string> = new Set(['emergency', 'alert', 'critical', 'error']);

function write(level: string, message: string, context: LogContext | undefined): void {
  if (context === undefined) console.error(`[${level}] ${message}`);
  else console.error(`[${level}] ${message}`, context);
}

function severe(level: string) {
  return (message: string, context?: LogContext): void => write(level, message, context);
}

function ignore(): void {}

/**
 * The logger used when none is given: `error` and more severe lines, and exceptions with
 * their stack, go to `console.error`; `warning`, `notice`, `info` and `debug` are dropped.
 * A handler that throws is therefore never silent, and the package needs no logging runtime
 * of its own. Pass a `Logger` from `@pkg/logger` (or any `LoggerInterface`) for levels,
 * files and formatting.
 */
export function createFallbackLogger(): LoggerInterface {
  return {
    emergency: severe('emergency'),
    alert: severe('alert'),
    critical: severe('critical'),
    error: severe('error'),
    warning: ignore,
    notice: ignore,
    info: ignore,
    debug: ignore,
    log(level, message, context) {
      if (SEVERE.has(level)) write(level, message, context);
    },
    exception(error, context) {
      const text =
        error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
      write('error', text, context);
    },
  };
}
