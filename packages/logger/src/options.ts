import { resolve } from 'node:path';
import { logLevelColors } from './colors';
import type { LogLevelColors } from './colors';
import { createLogError } from './errors';
import type { LogError } from './errors';
import { LogLevel, assertLevel } from './log-level';
import type { LogLevelName } from './log-level';
import type { ConsoleStream } from './winston-sink';

/** Options of {@link Logger}, for the options-object form of its constructor. */
export interface LoggerOptions {
  /** Least severe level that is written. Default `'debug'` (everything). */
  minLogLevel?: LogLevelName | string;
  /** Write lines to the console stream. Default `true`. */
  logToConsole?: boolean;
  /** Write lines to files in `logDirectory`. Default `true`. */
  logToFile?: boolean;
  /** Directory of the log files, created when missing. Default `<process.cwd()>/logs`. */
  logDirectory?: string | null;
  /** One file per level (`error.log`, `info.log`, ...) instead of one file. Default `false`. */
  separateLogFiles?: boolean;
  /** Name of the single log file. Default `'app.log'`. */
  fileName?: string;
  /** Where console lines go. Default `process.stdout`. */
  consoleStream?: ConsoleStream;
  /**
   * Colour console lines. Default: automatic, on when the console stream is a terminal
   * (`isTTY`) and `NO_COLOR` is not set.
   */
  useColors?: boolean;
  /** ANSI colour per level, merged over {@link logLevelColors}. */
  colors?: Partial<Record<LogLevelName, string>>;
  /**
   * Called when a line cannot be written (code `PKG_ERR_LOG_WRITE_FAILED`). Logging never
   * throws; this is where such failures become visible. Default: one line on stderr.
   */
  onError?: (error: LogError) => void;
}

/** The options after defaults and checks. */
export interface ResolvedLoggerOptions {
  minLogLevel: LogLevelName;
  logToConsole: boolean;
  logToFile: boolean;
  logDirectory: string;
  separateLogFiles: boolean;
  fileName: string;
  consoleStream: ConsoleStream;
  useColors: boolean | undefined;
  colors: LogLevelColors;
  onError: (error: LogError) => void;
}

/** The default log directory: `logs` under the current working directory. */
export function defaultLogDirectory(): string {
  return resolve(process.cwd(), 'logs');
}

/** Reports a write failure on stderr: the default `onError`. */
export function reportToStderr(error: LogError): void {
  try {
    process.stderr.write(`@pkg/logger: ${error.message}\n`);
  } catch {
    // stderr is gone too; nothing more can be done.
  }
}

const KNOWN_KEYS: ReadonlySet<string> = new Set([
  'minLogLevel',
  'logToConsole',
  'logToFile',
  'logDirectory',
  'separateLogFiles',
  'fileName',
  'consoleStream',
  'useColors',
  'colors',
  'onError',
]);

export function invalidOption(name: string, expected: string, value: unknown): TypeError {
  const got = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
  return createLogError(
    TypeError,
    'PKG_ERR_LOG_INVALID_OPTION',
    `Logger option "${name}" must be ${expected}, got ${got}.`,
  );
}

export function checkBoolean(name: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw invalidOption(name, 'a boolean', value);
  return value;
}

/** Resolves a directory to an absolute path; undefined and null give the default. */
export function checkDirectory(value: unknown): string {
  if (value === undefined || value === null) return defaultLogDirectory();
  if (typeof value !== 'string' || value.trim() === '') {
    throw invalidOption('logDirectory', 'a non-empty path string', value);
  }
  return resolve(value);
}

export function checkFileName(value: unknown): string {
  if (
    typeof value !== 'string' ||
    value === '' ||
    /[\\/]/.test(value) ||
    value === '.' ||
    value === '..'
  ) {
    throw invalidOption('fileName', 'a file name without a directory part', value);
  }
  return value;
}

export function checkConsoleStream(value: unknown): ConsoleStream {
  if (
    value === null ||
    (typeof value !== 'object' && typeof value !== 'function') ||
    typeof (value as { write?: unknown }).write !== 'function'
  ) {
    throw invalidOption('consoleStream', 'an object with a write(text) method', value);
  }
  return value as ConsoleStream;
}

export function checkColors(value: unknown): LogLevelColors {
  if (value === undefined) return logLevelColors;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalidOption('colors', 'an object of level name to ANSI code', value);
  }
  const merged: Record<string, string> = { ...logLevelColors };
  for (const [level, code] of Object.entries(value)) {
    assertLevel(level);
    if (typeof code !== 'string') throw invalidOption(`colors.${level}`, 'a string', code);
    merged[level] = code;
  }
  return Object.freeze(merged) as LogLevelColors;
}

/** Checks an options object once and fills in the defaults. */
export function resolveLoggerOptions(options: LoggerOptions): ResolvedLoggerOptions {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw invalidOption('options', 'an object', options);
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN_KEYS.has(key)) {
      throw createLogError(
        TypeError,
        'PKG_ERR_LOG_INVALID_OPTION',
        `Unknown Logger option "${key}": use ${[...KNOWN_KEYS].join(', ')}.`,
      );
    }
  }
  const {
    minLogLevel = LogLevel.DEBUG,
    logToConsole = true,
    logToFile = true,
    separateLogFiles = false,
    fileName = 'app.log',
    consoleStream = process.stdout,
    useColors,
    onError = reportToStderr,
  } = options;
  if (useColors !== undefined) checkBoolean('useColors', useColors);
  if (typeof onError !== 'function') throw invalidOption('onError', 'a function', onError);
  return {
    minLogLevel: assertLevel(minLogLevel),
    logToConsole: checkBoolean('logToConsole', logToConsole),
    logToFile: checkBoolean('logToFile', logToFile),
    logDirectory: checkDirectory(options.logDirectory),
    separateLogFiles: checkBoolean('separateLogFiles', separateLogFiles),
    fileName: checkFileName(fileName),
    consoleStream: checkConsoleStream(consoleStream),
    useColors,
    colors: checkColors(options.colors),
    onError,
  };
}
