import type { LogLevelName } from './log-level';

/**
 * Values that go with a log line. Keys named by `{placeholders}` in the message fill them;
 * the rest are appended to the line as JSON.
 */
export type LogContext = Record<string, unknown>;

/**
 * What every part of the library logs through (PSR-3 in TypeScript). Implementations must
 * not throw from a log call, except for an unknown level name passed to `log()`, which is a
 * programming error and a TypeError.
 */
export interface LoggerInterface {
  /** The system is unusable. */
  emergency(message: string, context?: LogContext): void;
  /** Action must be taken immediately. */
  alert(message: string, context?: LogContext): void;
  /** Critical conditions. */
  critical(message: string, context?: LogContext): void;
  /** Runtime errors that do not need immediate action but should be recorded. */
  error(message: string, context?: LogContext): void;
  /** Exceptional occurrences that are not errors. */
  warning(message: string, context?: LogContext): void;
  /** Normal but significant events. */
  notice(message: string, context?: LogContext): void;
  /** Interesting events. */
  info(message: string, context?: LogContext): void;
  /** Detailed debug information. */
  debug(message: string, context?: LogContext): void;
  /** Logs at any level, given by name. */
  log(level: LogLevelName | string, message: string, context?: LogContext): void;
  /** Logs a thrown value at error level, with its class, message, stack and cause. */
  exception(error: unknown, context?: LogContext): void;
}
