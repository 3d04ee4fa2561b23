import { describe, expect, it, jest } from '@jest/globals';
import { join, resolve } from 'node:path';
import { logLevelColors } from './colors';
import { createLogError } from './errors';
import { defaultLogDirectory, reportToStderr, resolveLoggerOptions } from './options';
import type { LoggerOptions } from './options';

function optionError(options: unknown): Error & { code?: string } {
  try {
    resolveLoggerOptions(options as LoggerOptions);
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('expected a throw');
}

describe('resolveLoggerOptions', () => {
  it('fills in the defaults', () => {
    const o = resolveLoggerOptions({});
    expect(o).toEqual({
      minLogLevel: 'debug',
      logToConsole: true,
      logToFile: true,
      logDirectory: join(process.cwd(), 'logs'),
      separateLogFiles: false,
      fileName: 'app.log',
      consoleStream: process.stdout,
      useColors: undefined,
      colors: logLevelColors,
      onError: reportToStderr,
    });
  });

  it('treats undefined and null the same as a missing logDirectory', () => {
    expect(resolveLoggerOptions({ logDirectory: undefined }).logDirectory).toBe(
      defaultLogDirectory(),
    );
    expect(resolveLoggerOptions({ logDirectory: null }).logDirectory).toBe(defaultLogDirectory());
  });

  it('resolves a relative logDirectory against the working directory', () => {
    expect(resolveLoggerOptions({ logDirectory: 'var/log' }).logDirectory).toBe(resolve('var/log'));
  });

  it('keeps the given values', () => {
    const stream = { write: () => true };
    const onError = (): void => {};
    const o = resolveLoggerOptions({
      minLogLevel: 'warning',
      logToConsole: false,
      logToFile: false,
      logDirectory: '/var/log/app',
      separateLogFiles: true,
      fileName: 'server.log',
      consoleStream: stream,
      useColors: false,
      onError,
    });
    expect(o).toMatchObject({
      minLogLevel: 'warning',
      logToConsole: false,
      logToFile: false,
      logDirectory: '/var/log/app',
      separateLogFiles: true,
      fileName: 'server.log',
      useColors: false,
    });
    expect(o.consoleStream).toBe(stream);
    expect(o.onError).toBe(onError);
  });

  it('merges colours over the defaults', () => {
    const o = resolveLoggerOptions({ colors: { info: '\x1b[34m', debug: '' } });
    expect(o.colors).toEqual({ ...logLevelColors, info: '\x1b[34m', debug: '' });
    expect(Object.isFrozen(o.colors)).toBe(true);
  });

  it('rejects an unknown option and names the known ones', () => {
    const err = optionError({ level: 'info' });
    expect(err).toBeInstanceOf(TypeError);
    expect(err.code).toBe('PKG_ERR_LOG_INVALID_OPTION');
    expect(err.message).toMatch(/^Unknown Logger option "level": use minLogLevel, logToConsole/);
  });

  it('rejects an unknown level with the level error', () => {
    const err = optionError({ minLogLevel: 'verbose' });
    expect(err).toBeInstanceOf(TypeError);
    expect(err.code).toBe('PKG_ERR_LOG_INVALID_LEVEL');
  });

  it.each(['logToConsole', 'logToFile', 'separateLogFiles', 'useColors'])(
    'rejects a %s that is not a boolean',
    (name) => {
      const err = optionError({ [name]: 'yes' });
      expect(err).toBeInstanceOf(TypeError);
      expect(err.code).toBe('PKG_ERR_LOG_INVALID_OPTION');
      expect(err.message).toBe(`Logger option "${name}" must be a boolean, got string.`);
    },
  );

  it.each([[''], ['   '], [42], [{}]])('rejects the log directory %p', (dir) => {
    expect(optionError({ logDirectory: dir }).message).toMatch(
      /^Logger option "logDirectory" must be a non-empty path string/,
    );
  });

  it.each([[''], ['a/b.log'], ['..'], ['a\\b'], [7]])('rejects the file name %p', (name) => {
    expect(optionError({ fileName: name }).code).toBe('PKG_ERR_LOG_INVALID_OPTION');
  });

  it.each([[null], [{}], ['stdout'], [{ write: 'no' }]])('rejects the console stream %p', (s) => {
    expect(optionError({ consoleStream: s }).message).toMatch(
      /^Logger option "consoleStream" must be an object with a write\(text\) method/,
    );
  });

  it('rejects colours for an unknown level or with a code that is not a string', () => {
    expect(optionError({ colors: { fatal: '\x1b[31m' } }).code).toBe('PKG_ERR_LOG_INVALID_LEVEL');
    expect(optionError({ colors: { info: 1 } }).message).toBe(
      'Logger option "colors.info" must be a string, got number.',
    );
    expect(optionError({ colors: ['red'] }).message).toMatch(/got an array/);
  });

  it('rejects an onError that is not a function', () => {
    expect(optionError({ onError: 'log' }).message).toBe(
      'Logger option "onError" must be a function, got string.',
    );
  });

  it('rejects options that are not an object', () => {
    expect(optionError(null).message).toBe('Logger option "options" must be an object, got null.');
    expect(optionError([]).message).toMatch(/got an array/);
  });
});

describe('reportToStderr', () => {
  it('writes one line to stderr', () => {
    const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      reportToStderr(createLogError(Error, 'PKG_ERR_LOG_WRITE_FAILED', 'disk full'));
      expect(write).toHaveBeenCalledWith('@pkg/logger: disk full\n');
    } finally {
      write.mockRestore();
    }
  });

  it('does not throw when stderr fails', () => {
    const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => {
      throw new Error('EPIPE');
    });
    try {
      expect(() =>
        reportToStderr(createLogError(Error, 'PKG_ERR_LOG_WRITE_FAILED', 'x')),
      ).not.toThrow();
    } finally {
      write.mockRestore();
    }
  });
});
