import { describe, expect, it } from '@jest/globals';
import { AbstractLogger } from './abstract-logger';
import type { LogContext, LoggerInterface } from './logger-interface';

interface Call {
  level: string;
  message: string;
  context: LogContext | undefined;
}

class RecordingLogger extends AbstractLogger {
  readonly calls: Call[] = [];
  log(level: string, message: string, context?: LogContext): void {
    this.calls.push({ level, message, context });
  }
}

describe('AbstractLogger', () => {
  it('is a LoggerInterface once log() is written', () => {
    const logger: LoggerInterface = new RecordingLogger();
    expect(typeof logger.exception).toBe('function');
  });

  it.each([
    'emergency',
    'alert',
    'critical',
    'error',
    'warning',
    'notice',
    'info',
    'debug',
  ] as const)('%s() logs at its own level with the message and context', (level) => {
    const logger = new RecordingLogger();
    const context = { user: 'ann' };
    logger[level]('hello {user}', context);
    logger[level]('no context');
    expect(logger.calls).toEqual([
      { level, message: 'hello {user}', context },
      { level, message: 'no context', context: undefined },
    ]);
  });

  it('exception() logs at error level with class, message, stack and cause', () => {
    const logger = new RecordingLogger();
    const cause = new Error('socket closed');
    logger.exception(new TypeError('bad frame', { cause }), { clientId: 'c1' });
    expect(logger.calls).toHaveLength(1);
    const [call] = logger.calls;
    expect(call!.level).toBe('error');
    expect(call!.message).toBe('TypeError: bad frame');
    expect(call!.context).toMatchObject({
      clientId: 'c1',
      exception: {
        class: 'TypeError',
        message: 'bad frame',
        stack: expect.stringContaining('TypeError: bad frame'),
        cause: { class: 'Error', message: 'socket closed' },
      },
    });
  });

  it('exception() accepts a thrown value that is not an Error', () => {
    const logger = new RecordingLogger();
    logger.exception('just a string');
    expect(logger.calls[0]).toMatchObject({
      level: 'error',
      message: 'string: just a string',
      context: { exception: { class: 'string', message: 'just a string' } },
    });
  });

  it('exception() drops a context it cannot read instead of throwing', () => {
    const logger = new RecordingLogger();
    const context = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('no keys');
        },
      },
    );
    expect(() => logger.exception(new Error('boom'), context)).not.toThrow();
    expect(logger.calls).toEqual([{ level: 'error', message: 'Error: boom', context: undefined }]);
  });

  it('exception() does not throw when log() itself throws', () => {
    class ThrowingLogger extends AbstractLogger {
      log(): void {
        throw new Error('broken sink');
      }
    }
    expect(() => new ThrowingLogger().exception(new Error('x'))).not.toThrow();
  });
});
