import type { LogLevelName } from './log-level';
import type { LogContext, LoggerInterface } from './logger-interface';
import { toContext } from './format';
import { errorClass, isError, serializeError } from './serialize';

/**
 * Implements the eight level methods and `exception()` on top of `log()`, so that a custom
 * logger (one that forwards to another library, say) only has to write `log()`.
 */
export abstract class AbstractLogger implements LoggerInterface {
  abstract log(level: LogLevelName | string, message: string, context?: LogContext): void;

  emergency(message: string, context?: LogContext): void {
    this.log('emergency', message, context);
  }

  alert(message: string, context?: LogContext): void {
    this.log('alert', message, context);
  }

  critical(message: string, context?: LogContext): void {
    this.log('critical', message, context);
  }

  error(message: string, context?: LogContext): void {
    this.log('error', message, context);
  }

  warning(message: string, context?: LogContext): void {
    this.log('warning', message, context);
  }

  notice(message: string, context?: LogContext): void {
    this.log('notice', message, context);
  }

  info(message: string, context?: LogContext): void {
    this.log('info', message, context);
  }

  debug(message: string, context?: LogContext): void {
    this.log('debug', message, context);
  }

  /**
   * Logs at error level. The message is `<Class>: <message>`; the context gets an
   * `exception` member with the class, message, stack, code and `cause` chain.
   */
  exception(error: unknown, context?: LogContext): void {
    let message = 'Error';
    try {
      const record = serializeError(error);
      message = `${isError(error) ? errorClass(error) : record.class}: ${record.message}`;
      this.log('error', message, { ...toContext(context), exception: record });
    } catch {
      // Never throw from a log call: a context whose getters throw is dropped instead.
      try {
        this.log('error', message);
      } catch {
        // The logger itself failed; there is nowhere left to report it.
      }
    }
  }
}
