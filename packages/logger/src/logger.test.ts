import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CaptureStream,
  LINE_HEAD,
  listFiles,
  makeTempDir,
  readLines,
  removeTempDirs,
  untimed,
} from '../test/support';
import { logLevelColors } from './colors';
import type { LogError } from './errors';
import { LogLevel } from './log-level';
import type { LogLevelName } from './log-level';
import { Logger } from './logger';
import type { LoggerOptions } from './options';

const LEVELS = LogLevel.getLevels();
const loggers: Logger[] = [];

afterEach(async () => {
  await Promise.all(loggers.splice(0).map((l) => l.close()));
  removeTempDirs();
});

/** A logger writing to a capture stream (and files in a temp dir, when asked). */
function consoleLogger(options: LoggerOptions = {}): { logger: Logger; out: CaptureStream } {
  const out = new CaptureStream();
  const logger = track(new Logger({ logToFile: false, consoleStream: out, ...options }));
  return { logger, out };
}

function track(logger: Logger): Logger {
  loggers.push(logger);
  return logger;
}

function thrown(fn: () => unknown): Error & { code?: string } {
  try {
    fn();
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('expected a throw');
}

describe('Logger constructor', () => {
  it('has the spec defaults: debug, console and file on, <cwd>/logs, one file', () => {
    const cwd = makeTempDir();
    const spy = jest.spyOn(process, 'cwd').mockReturnValue(cwd);
    try {
      const logger = track(new Logger());
      expect(logger.getMinLogLevel()).toBe('debug');
      expect(logger.getLogToConsole()).toBe(true);
      expect(logger.getLogToFile()).toBe(true);
      expect(logger.getLogDirectory()).toBe(join(cwd, 'logs'));
      expect(logger.getSeparateLogFiles()).toBe(false);
      expect(logger.getFileName()).toBe('app.log');
      expect(logger.getConsoleStream()).toBe(process.stdout);
      expect(logger.colors).toBe(logLevelColors);
      expect(existsSync(join(cwd, 'logs'))).toBe(true);
    } finally {
      spy.mockRestore();
    }
  });

  it('takes the spec positional arguments', () => {
    const dir = makeTempDir();
    const logger = track(new Logger('warning', false, true, dir, true));
    expect(logger.getMinLogLevel()).toBe('warning');
    expect(logger.getLogToConsole()).toBe(false);
    expect(logger.getLogToFile()).toBe(true);
    expect(logger.getLogDirectory()).toBe(dir);
    expect(logger.getSeparateLogFiles()).toBe(true);
  });

  it('accepts a LogLevel constant and a null directory (the default)', () => {
    const logger = track(new Logger(LogLevel.NOTICE, true, false, null));
    expect(logger.getMinLogLevel()).toBe('notice');
    expect(logger.getLogDirectory()).toBe(join(process.cwd(), 'logs'));
  });

  it('takes an options object', () => {
    const out = new CaptureStream(true);
    const logger = track(
      new Logger({ minLogLevel: 'error', logToFile: false, consoleStream: out, useColors: false }),
    );
    expect(logger.getMinLogLevel()).toBe('error');
    expect(logger.getConsoleStream()).toBe(out);
    expect(logger.getUseColors()).toBe(false);
  });

  it('refuses an options object mixed with positional arguments', () => {
    const err = thrown(() => new Logger({ logToFile: false } as LoggerOptions & string, true));
    expect(err).toBeInstanceOf(TypeError);
    expect(err.code).toBe('PKG_ERR_LOG_INVALID_OPTION');
  });

  it('throws a TypeError listing the valid levels for an unknown minimum level', () => {
    const err = thrown(() => new Logger('fatal', false, false));
    expect(err).toBeInstanceOf(TypeError);
    expect(err.code).toBe('PKG_ERR_LOG_INVALID_LEVEL');
    expect(err.message).toContain(
      'use one of emergency, alert, critical, error, warning, notice, info, debug',
    );
  });

  it('throws a TypeError for a positional argument of the wrong type', () => {
    const err = thrown(() => new Logger('info', 'yes' as unknown as boolean, false));
    expect(err.message).toBe('Logger option "logToConsole" must be a boolean, got string.');
  });

  it('fails at construction when the log directory cannot be created', () => {
    const parent = makeTempDir();
    writeFileSync(join(parent, 'file'), '');
    const err = thrown(() => new Logger('debug', false, true, join(parent, 'file', 'logs')));
    expect(err.code).toBe('PKG_ERR_LOG_DIRECTORY_UNWRITABLE');
    expect(err.message).toContain('Cannot create the log directory');
  });

  it('fails at construction when the log directory is a file', () => {
    const parent = makeTempDir();
    const file = join(parent, 'logs');
    writeFileSync(file, '');
    const err = thrown(() => new Logger({ logDirectory: file, logToConsole: false }));
    expect(err.code).toBe('PKG_ERR_LOG_DIRECTORY_UNWRITABLE');
    expect(err.message).toContain('is not a directory');
  });

  it('fails at construction when a per-level log file cannot be written', () => {
    const dir = makeTempDir();
    mkdirSync(join(dir, 'debug.log'));
    const err = thrown(() => new Logger('info', false, true, dir, true));
    expect(err.code).toBe('PKG_ERR_LOG_DIRECTORY_UNWRITABLE');
    expect(err.message).toContain('debug.log');
  });

  it('does not touch the directory when file output is off', () => {
    const parent = makeTempDir();
    const dir = join(parent, 'never');
    track(new Logger('debug', false, false, dir));
    expect(existsSync(dir)).toBe(false);
    writeFileSync(join(parent, 'file'), '');
    expect(() => track(new Logger('debug', false, false, join(parent, 'file')))).not.toThrow();
  });
});

describe('Logger level methods', () => {
  it.each(LEVELS)('%s() writes one line at that level', async (level) => {
    const { logger, out } = consoleLogger();
    logger[level]('hello {who}', { who: 'world' });
    await logger.close();
    expect(out.lines).toHaveLength(1);
    expect(out.lines[0]).toMatch(LINE_HEAD);
    expect(untimed(out.lines[0]!)).toBe(`[${level.toUpperCase()}] hello world`);
  });

  it('log() writes at the level it is given', async () => {
    const { logger, out } = consoleLogger();
    logger.log('notice', 'via log', { n: 1 });
    logger.log(LogLevel.ALERT, 'constant');
    await logger.close();
    expect(out.lines.map(untimed)).toEqual(['[NOTICE] via log {"n":1}', '[ALERT] constant']);
  });

  it('log() throws a TypeError listing the valid levels for an unknown level', () => {
    const { logger, out } = consoleLogger();
    const err = thrown(() => logger.log('fatal', 'x'));
    expect(err).toBeInstanceOf(TypeError);
    expect(err.code).toBe('PKG_ERR_LOG_INVALID_LEVEL');
    expect(err.message).toContain('"fatal"');
    expect(() => logger.log('ERROR', 'x')).toThrow(TypeError);
    expect(out.chunks).toEqual([]);
  });

  it('exception() writes class, message, stack and cause at error level', async () => {
    const dir = makeTempDir();
    const { logger } = consoleLogger({ logToConsole: false, logToFile: true, logDirectory: dir });
    const cause = Object.assign(new Error('ECONNRESET'), { code: 'ECONNRESET' });
    logger.exception(new RangeError('frame too big', { cause }), { clientId: 'c7' });
    await logger.close();
    const [line, ...rest] = readLines(join(dir, 'app.log'));
    expect(rest).toEqual([]);
    expect(line).toMatch(/^\[[^\]]+\] \[ERROR\] RangeError: frame too big \{/);
    const json = JSON.parse(line!.slice(line!.indexOf('{'))) as Record<string, unknown>;
    expect(json).toMatchObject({
      clientId: 'c7',
      exception: {
        class: 'RangeError',
        message: 'frame too big',
        stack: expect.stringContaining('RangeError: frame too big\n    at '),
        cause: { class: 'Error', message: 'ECONNRESET', code: 'ECONNRESET' },
      },
    });
  });

  it('exception() writes nothing when error level is below the minimum', async () => {
    const { logger, out } = consoleLogger({ minLogLevel: 'critical' });
    logger.exception(new Error('ignored'));
    await logger.close();
    expect(out.chunks).toEqual([]);
  });
});

describe('Logger level boundaries', () => {
  it.each(LEVELS)('with minimum %s, writes exactly the levels at or above it', async (min) => {
    const { logger, out } = consoleLogger({ minLogLevel: min });
    for (const level of LEVELS) logger.log(level, level);
    await logger.close();
    const expected = LEVELS.filter((l) => LogLevel.toInt(l) <= LogLevel.toInt(min));
    expect(out.lines.map((l) => l.split('] ').pop())).toEqual(expected);
    for (const level of LEVELS) {
      expect(logger.shouldLog(level)).toBe(expected.includes(level));
    }
  });

  it('shouldLog() is true at the minimum and false one step below it', () => {
    const { logger } = consoleLogger({ minLogLevel: 'warning' });
    expect(logger.shouldLog('error')).toBe(true);
    expect(logger.shouldLog('warning')).toBe(true);
    expect(logger.shouldLog('notice')).toBe(false);
  });

  it('shouldLog() throws a TypeError for an unknown level', () => {
    const { logger } = consoleLogger();
    expect(() => logger.shouldLog('trace')).toThrow(
      expect.objectContaining({ name: 'TypeError', code: 'PKG_ERR_LOG_INVALID_LEVEL' }),
    );
  });
});

describe('Logger.formatMessage', () => {
  it('returns the line that would be written, without colour', () => {
    const { logger } = consoleLogger({ useColors: true });
    const line = logger.formatMessage('info', 'User {id} joined', { id: 42, room: 'lobby' });
    expect(line).toMatch(LINE_HEAD);
    expect(untimed(line)).toBe('[INFO] User 42 joined {"room":"lobby"}');
  });

  it('uses an empty context by default', () => {
    const { logger } = consoleLogger();
    expect(untimed(logger.formatMessage('debug', 'plain {x}'))).toBe('[DEBUG] plain {x}');
  });

  it('throws a TypeError for an unknown level', () => {
    const { logger } = consoleLogger();
    expect(() => logger.formatMessage('verbose', 'x')).toThrow(TypeError);
  });
});

describe('Logger console output', () => {
  it('colours each level on a terminal', async () => {
    const out = new CaptureStream(true);
    const logger = track(new Logger({ logToFile: false, consoleStream: out }));
    for (const level of LEVELS) logger.log(level, 'x');
    await logger.close();
    expect(out.chunks).toHaveLength(8);
    out.chunks.forEach((chunk, i) => {
      const level = LEVELS[i] as LogLevelName;
      expect(chunk.startsWith(logLevelColors[level])).toBe(true);
      expect(chunk.endsWith('\x1b[0m\n')).toBe(true);
      expect(chunk).toContain(`[${level.toUpperCase()}] x`);
    });
  });

  it('writes plain lines when the stream is not a terminal', async () => {
    const { logger, out } = consoleLogger();
    logger.error('plain');
    await logger.close();
    expect(out.chunks).toHaveLength(1);
    expect(out.chunks[0]).not.toContain('\x1b[');
    expect(untimed(out.chunks[0]!)).toBe('[ERROR] plain\n');
  });

  it('writes plain lines on a terminal when NO_COLOR is set', async () => {
    const saved = process.env['NO_COLOR'];
    process.env['NO_COLOR'] = '1';
    try {
      const out = new CaptureStream(true);
      const logger = track(new Logger({ logToFile: false, consoleStream: out }));
      expect(logger.getUseColors()).toBe(false);
      logger.error('plain');
      await logger.close();
      expect(out.chunks[0]).not.toContain('\x1b[');
    } finally {
      if (saved === undefined) delete process.env['NO_COLOR'];
      else process.env['NO_COLOR'] = saved;
    }
  });

  it('uses custom colours from the options', async () => {
    const out = new CaptureStream(true);
    const logger = track(
      new Logger({ logToFile: false, consoleStream: out, colors: { info: '\x1b[34m' } }),
    );
    logger.info('blue');
    await logger.close();
    expect(logger.colors.info).toBe('\x1b[34m');
    const chunk = out.chunks[0]!;
    expect(chunk.startsWith('\x1b[34m[')).toBe(true);
    expect(chunk.endsWith('] [INFO] blue\x1b[0m\n')).toBe(true);
  });

  it('setUseColors() forces colours on or off and undefined goes back to automatic', async () => {
    const out = new CaptureStream(false);
    const logger = track(new Logger({ logToFile: false, consoleStream: out }));
    logger.setUseColors(true);
    expect(logger.getUseColors()).toBe(true);
    logger.info('on');
    logger.setUseColors(undefined);
    expect(logger.getUseColors()).toBe(false);
    logger.info('auto');
    await logger.close();
    expect(out.chunks[0]!.startsWith(logLevelColors.info)).toBe(true);
    expect(out.chunks[1]).not.toContain('\x1b[');
    expect(() => logger.setUseColors('yes' as unknown as boolean)).toThrow(TypeError);
  });

  it('setConsoleStream() moves console output and decides colours for the new stream', async () => {
    const first = new CaptureStream(false);
    const second = new CaptureStream(true);
    const logger = track(new Logger({ logToFile: false, consoleStream: first }));
    logger.info('one');
    logger.setConsoleStream(second);
    logger.info('two');
    await logger.close();
    expect(first.lines.map(untimed)).toEqual(['[INFO] one']);
    expect(second.chunks[0]!.startsWith(logLevelColors.info)).toBe(true);
    expect(() => logger.setConsoleStream({} as CaptureStream)).toThrow(TypeError);
    expect(logger.getConsoleStream()).toBe(second);
  });
});

describe('Logger file output', () => {
  it('writes every level to app.log in order, without colour', async () => {
    const dir = makeTempDir();
    const logger = track(new Logger({ logDirectory: dir, consoleStream: new CaptureStream(true) }));
    for (const level of LEVELS) logger.log(level, `${level} line`);
    await logger.close();
    expect(listFiles(dir)).toEqual(['app.log']);
    const lines = readLines(join(dir, 'app.log'));
    expect(lines.map(untimed)).toEqual(
      LEVELS.map((level) => `[${level.toUpperCase()}] ${level} line`),
    );
    expect(readFileSync(join(dir, 'app.log'), 'utf8')).not.toContain('\x1b[');
  });

  it('appends to an existing log file', async () => {
    const dir = makeTempDir();
    writeFileSync(join(dir, 'app.log'), 'earlier\n');
    const logger = track(new Logger('debug', false, true, dir));
    logger.info('later');
    await logger.close();
    expect(readLines(join(dir, 'app.log')).map(untimed)).toEqual(['earlier', '[INFO] later']);
  });

  it('writes one file per level when separateLogFiles is on', async () => {
    const dir = makeTempDir();
    const logger = track(new Logger('debug', false, true, dir, true));
    logger.error('e1');
    logger.info('i1');
    logger.error('e2');
    logger.emergency('down');
    await logger.close();
    expect(listFiles(dir)).toEqual(['emergency.log', 'error.log', 'info.log']);
    expect(readLines(join(dir, 'error.log')).map(untimed)).toEqual(['[ERROR] e1', '[ERROR] e2']);
    expect(readLines(join(dir, 'info.log')).map(untimed)).toEqual(['[INFO] i1']);
    expect(readLines(join(dir, 'emergency.log')).map(untimed)).toEqual(['[EMERGENCY] down']);
  });

  it('writes nothing to files below the minimum level', async () => {
    const dir = makeTempDir();
    const logger = track(new Logger('error', false, true, dir, true));
    logger.warning('dropped');
    logger.critical('kept');
    await logger.close();
    expect(listFiles(dir)).toEqual(['critical.log']);
  });

  it('keeps every line of a burst, in order, once closed', async () => {
    const dir = makeTempDir();
    const logger = track(new Logger('debug', false, true, dir));
    for (let i = 0; i < 2000; i += 1) logger.info(`line ${i}`);
    await logger.close();
    const lines = readLines(join(dir, 'app.log'));
    expect(lines).toHaveLength(2000);
    expect(lines.map((l) => l.split('] ').pop())).toEqual(
      Array.from({ length: 2000 }, (_, i) => `line ${i}`),
    );
  });

  it('writes circular and BigInt context without throwing', async () => {
    const dir = makeTempDir();
    const logger = track(new Logger('debug', false, true, dir));
    const context: Record<string, unknown> = { id: 10n ** 20n };
    context['self'] = context;
    expect(() => logger.info('odd context', context)).not.toThrow();
    await logger.close();
    expect(readLines(join(dir, 'app.log')).map(untimed)).toEqual([
      '[INFO] odd context {"id":"100000000000000000000","self":"[Circular]"}',
    ]);
  });

  it('uses the configured file name', async () => {
    const dir = makeTempDir();
    const logger = track(
      new Logger({ logDirectory: dir, logToConsole: false, fileName: 'ws.log' }),
    );
    logger.info('x');
    await logger.close();
    expect(listFiles(dir)).toEqual(['ws.log']);
  });

  it('can be used again after close()', async () => {
    const dir = makeTempDir();
    const logger = track(new Logger('debug', false, true, dir));
    logger.info('one');
    await logger.close();
    logger.info('two');
    await logger.close();
    await logger.close();
    expect(readLines(join(dir, 'app.log')).map(untimed)).toEqual(['[INFO] one', '[INFO] two']);
  });
});

describe('Logger setters', () => {
  it('setMinLogLevel() changes what is written', async () => {
    const { logger, out } = consoleLogger();
    logger.setMinLogLevel('error');
    expect(logger.getMinLogLevel()).toBe('error');
    logger.warning('dropped');
    logger.error('kept');
    logger.setMinLogLevel(LogLevel.DEBUG);
    logger.debug('kept too');
    await logger.close();
    expect(out.lines.map(untimed)).toEqual(['[ERROR] kept', '[DEBUG] kept too']);
  });

  it('setMinLogLevel() rejects an unknown level and keeps the old one', () => {
    const { logger } = consoleLogger({ minLogLevel: 'info' });
    expect(() => logger.setMinLogLevel('everything')).toThrow(TypeError);
    expect(logger.getMinLogLevel()).toBe('info');
  });

  it('setLogToConsole() turns console output off and on', async () => {
    const { logger, out } = consoleLogger();
    logger.setLogToConsole(false);
    logger.info('hidden');
    logger.setLogToConsole(true);
    logger.info('shown');
    await logger.close();
    expect(out.lines.map(untimed)).toEqual(['[INFO] shown']);
    expect(() => logger.setLogToConsole(1 as unknown as boolean)).toThrow(TypeError);
  });

  it('setLogToFile() turns file output off and on, checking the directory', async () => {
    const dir = makeTempDir();
    const logger = track(new Logger('debug', false, false, join(dir, 'logs')));
    logger.info('not in a file');
    logger.setLogToFile(true);
    expect(logger.getLogToFile()).toBe(true);
    logger.info('in the file');
    logger.setLogToFile(false);
    logger.info('not either');
    await logger.close();
    expect(readLines(join(dir, 'logs', 'app.log')).map(untimed)).toEqual(['[INFO] in the file']);
  });

  it('setLogToFile(true) throws for a bad directory and stays off', () => {
    const parent = makeTempDir();
    writeFileSync(join(parent, 'file'), '');
    const logger = track(new Logger('debug', false, false, join(parent, 'file')));
    expect(() => logger.setLogToFile(true)).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_LOG_DIRECTORY_UNWRITABLE' }),
    );
    expect(logger.getLogToFile()).toBe(false);
  });

  it('setLogDirectory() moves file output; lines before the move stay in the old file', async () => {
    const first = makeTempDir();
    const second = join(makeTempDir(), 'nested', 'logs');
    const logger = track(new Logger('debug', false, true, first));
    logger.info('old');
    logger.setLogDirectory(second);
    expect(logger.getLogDirectory()).toBe(second);
    logger.info('new');
    await logger.close();
    expect(readLines(join(first, 'app.log')).map(untimed)).toEqual(['[INFO] old']);
    expect(readLines(join(second, 'app.log')).map(untimed)).toEqual(['[INFO] new']);
  });

  it('setLogDirectory() throws for a bad directory and keeps the old one', async () => {
    const dir = makeTempDir();
    writeFileSync(join(dir, 'file'), '');
    const logger = track(new Logger('debug', false, true, dir));
    expect(() => logger.setLogDirectory(join(dir, 'file'))).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_LOG_DIRECTORY_UNWRITABLE' }),
    );
    expect(() => logger.setLogDirectory('')).toThrow(TypeError);
    expect(logger.getLogDirectory()).toBe(dir);
    logger.info('still here');
    await logger.close();
    expect(readLines(join(dir, 'app.log'))).toHaveLength(1);
  });

  it('setSeparateLogFiles() switches between one file and one per level', async () => {
    const dir = makeTempDir();
    const logger = track(new Logger('debug', false, true, dir));
    logger.info('combined');
    logger.setSeparateLogFiles(true);
    expect(logger.getSeparateLogFiles()).toBe(true);
    logger.info('separate');
    logger.setSeparateLogFiles(false);
    logger.info('combined again');
    await logger.close();
    expect(readLines(join(dir, 'app.log')).map(untimed)).toEqual([
      '[INFO] combined',
      '[INFO] combined again',
    ]);
    expect(readLines(join(dir, 'info.log')).map(untimed)).toEqual(['[INFO] separate']);
    expect(() => logger.setSeparateLogFiles('no' as unknown as boolean)).toThrow(TypeError);
  });

  it('setFileName() renames the single file for new lines', async () => {
    const dir = makeTempDir();
    const logger = track(new Logger('debug', false, true, dir));
    logger.setFileName('server.log');
    expect(logger.getFileName()).toBe('server.log');
    logger.info('x');
    await logger.close();
    expect(listFiles(dir)).toEqual(['server.log']);
    expect(() => logger.setFileName('../escape.log')).toThrow(TypeError);
  });

  it('console settings can change mid-burst without reordering the file', async () => {
    const dir = makeTempDir();
    const out = new CaptureStream();
    const logger = track(new Logger({ logDirectory: dir, consoleStream: out }));
    for (let i = 0; i < 1000; i += 1) logger.info(`a${i}`);
    logger.setUseColors(true).setConsoleStream(new CaptureStream()).setLogToConsole(false);
    for (let i = 0; i < 1000; i += 1) logger.info(`b${i}`);
    await logger.close();
    const expected = [
      ...Array.from({ length: 1000 }, (_, i) => `a${i}`),
      ...Array.from({ length: 1000 }, (_, i) => `b${i}`),
    ];
    expect(readLines(join(dir, 'app.log')).map((l) => l.split('] ').pop())).toEqual(expected);
    expect(out.lines).toHaveLength(1000);
  });

  it('setters return the logger, so they chain', () => {
    const { logger } = consoleLogger();
    expect(logger.setMinLogLevel('info').setLogToConsole(true).setUseColors(false)).toBe(logger);
  });
});

describe('Logger never throws into the caller', () => {
  it('reports a console stream that throws, and still writes the file', async () => {
    const dir = makeTempDir();
    const errors: LogError[] = [];
    const logger = track(
      new Logger({
        logDirectory: dir,
        consoleStream: {
          write() {
            throw new Error('stream closed');
          },
        },
        onError: (err) => errors.push(err),
      }),
    );
    expect(() => logger.info('survives')).not.toThrow();
    await logger.close();
    expect(readLines(join(dir, 'app.log')).map(untimed)).toEqual(['[INFO] survives']);
    expect(errors.map((e) => e.code)).toEqual(['PKG_ERR_LOG_WRITE_FAILED']);
    expect(errors[0]!.message).toContain('stream closed');
  });

  it('reports a log file that became unusable after construction', async () => {
    const parent = makeTempDir();
    const dir = join(parent, 'logs');
    const errors: LogError[] = [];
    const out = new CaptureStream();
    const logger = track(
      new Logger({ logDirectory: dir, consoleStream: out, onError: (e) => errors.push(e) }),
    );
    rmSync(dir, { recursive: true });
    writeFileSync(dir, '');
    expect(() => logger.error('to console only')).not.toThrow();
    await logger.close();
    expect(out.lines.map(untimed)).toEqual(['[ERROR] to console only']);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toContain(join(dir, 'app.log'));
  });

  it('writes to stderr by default when a line cannot be written', async () => {
    const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const logger = track(
        new Logger({
          logToFile: false,
          consoleStream: {
            write() {
              throw new Error('gone');
            },
          },
        }),
      );
      logger.info('x');
      await logger.close();
      expect(write).toHaveBeenCalledWith(
        '@pkg/logger: Could not write a log line to the console stream (gone); the line was dropped.\n',
      );
    } finally {
      write.mockRestore();
    }
  });

  it('survives an onError handler that throws', async () => {
    const logger = track(
      new Logger({
        logToFile: false,
        consoleStream: {
          write() {
            throw new Error('stream');
          },
        },
        onError: () => {
          throw new Error('handler');
        },
      }),
    );
    expect(() => logger.critical('x')).not.toThrow();
    await expect(logger.close()).resolves.toBeUndefined();
  });

  it('logs a context whose getters throw', async () => {
    const { logger, out } = consoleLogger();
    const context = {
      ok: 1,
      get secret(): string {
        throw new Error('denied');
      },
    };
    expect(() => logger.info('user {secret}', context)).not.toThrow();
    await logger.close();
    expect(out.lines.map(untimed)).toEqual(['[INFO] user [Unreadable: denied] {"ok":1}']);
  });

  it('reports instead of throwing when the context cannot even be listed', async () => {
    const errors: LogError[] = [];
    const { logger, out } = consoleLogger({ onError: (e) => errors.push(e) });
    const context = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error('no keys');
        },
      },
    );
    expect(() => logger.info('x', context)).not.toThrow();
    await logger.close();
    expect(out.chunks).toEqual([]);
    expect(errors.map((e) => e.message)).toEqual([
      'Could not write a log line (no keys); the line was dropped.',
    ]);
  });

  it('accepts a message that is not a string from plain JavaScript', async () => {
    const { logger, out } = consoleLogger();
    logger.info({ event: 'x' } as unknown as string);
    await logger.close();
    expect(out.lines.map(untimed)).toEqual(['[INFO] {"event":"x"}']);
  });
});
