import { AbstractLogger } from './abstract-logger';
import { assertLevel } from './log-level';
import type { LogLevelName } from './log-level';
import type { LogContext } from './logger-interface';

/**
 * A logger that discards everything: the default of the other packages, so that nothing is
 * printed unless the application passes a logger. `log()` still rejects an unknown level
 * name, so code that works against a NullLogger in tests does not start throwing when a
 * real Logger is plugged in.
 */
export class NullLogger extends AbstractLogger {
  log(level: LogLevelName | string, _message: string, _context?: LogContext): void {
    assertLevel(level);
  }

  override exception(_error: unknown, _context?: LogContext): void {
    // Discarded without serialising the error.
  }
}
