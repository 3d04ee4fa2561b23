// The package as a user sees it: only the public entry point, real files in a temp dir.
import { afterEach, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import * as api from '@pkg/logger';
import { LogLevel, Logger, NullLogger, logErrorCodes } from '@pkg/logger';
import type { LogContext, LoggerInterface } from '@pkg/logger';
import {
  CaptureStream,
  listFiles,
  makeTempDir,
  readLines,
  removeTempDirs,
  untimed,
} from './support';

const loggers: Logger[] = [];

afterEach(async () => {
  await Promise.all(loggers.splice(0).map((l) => l.close()));
  removeTempDirs();
});

/** Code elsewhere in the library only knows the interface. */
function handleRequest(logger: LoggerInterface, context: LogContext): void {
  logger.info('GET {path} from {ip}', context);
  try {
    throw new Error('handler failed', { cause: new TypeError('undefined is not a function') });
  } catch (err) {
    logger.exception(err, { path: context['path'] });
  }
  logger.debug('done');
}

describe('@pkg/logger public API', () => {
  it('exports exactly the documented values', () => {
    expect(Object.keys(api).sort()).toEqual([
      'AbstractLogger',
      'LogLevel',
      'Logger',
      'NullLogger',
      'currentLogContext',
      'logErrorCodes',
      'logLevelColors',
      'runWithLogContext',
      'withLogScope',
    ]);
  });

  it('logs a request to the console and per-level files through LoggerInterface', async () => {
    const dir = makeTempDir();
    const out = new CaptureStream(false);
    const logger = new Logger(LogLevel.INFO, true, true, dir, true).setConsoleStream(out);
    loggers.push(logger);

    handleRequest(logger, { path: '/api/status', ip: '10.0.0.7', ms: 3 });
    await logger.close();

    expect(out.lines).toHaveLength(2);
    expect(untimed(out.lines[0]!)).toBe('[INFO] GET /api/status from 10.0.0.7 {"ms":3}');
    expect(untimed(out.lines[1]!)).toMatch(
      /^\[ERROR\] Error: handler failed \{"path":"\/api\/status","exception":\{/,
    );
    expect(listFiles(dir)).toEqual(['error.log', 'info.log']);
    expect(readLines(join(dir, 'info.log')).map(untimed)).toEqual([
      '[INFO] GET /api/status from 10.0.0.7 {"ms":3}',
    ]);
    const [errorLine] = readLines(join(dir, 'error.log'));
    const record = JSON.parse(errorLine!.slice(errorLine!.indexOf('{'))) as {
      exception: { class: string; cause: { class: string; message: string } };
    };
    expect(record.exception.class).toBe('Error');
    expect(record.exception.cause).toMatchObject({
      class: 'TypeError',
      message: 'undefined is not a function',
    });
  });

  it('lets NullLogger stand in wherever a logger is expected', () => {
    expect(() => handleRequest(new NullLogger(), { path: '/', ip: '::1' })).not.toThrow();
  });

  it('publishes the error codes every thrown error carries', () => {
    for (const make of [
      () => LogLevel.toInt('nope'),
      () => LogLevel.toString(9),
      () => new Logger({ unknown: true } as never),
    ]) {
      let code: unknown;
      try {
        make();
      } catch (err) {
        code = (err as { code?: unknown }).code;
      }
      expect(Object.keys(logErrorCodes)).toContain(code);
    }
  });
});
