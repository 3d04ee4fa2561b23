import { AbstractLogger } from './abstract-logger';
import { shouldUseColors } from './colors';
import type { LogLevelColors } from './colors';
import { prepareLogDirectory } from './directory';
import { createLogError } from './errors';
import type { LogError } from './errors';
import { formatLine, toContext, toMessage } from './format';
import { withLogScope } from './log-scope';
import { LogLevel, assertLevel } from './log-level';
import type { LogLevelName } from './log-level';
import type { LogContext } from './logger-interface';
import {
  checkBoolean,
  checkConsoleStream,
  checkDirectory,
  checkFileName,
  resolveLoggerOptions,
} from './options';
import type { LoggerOptions, ResolvedLoggerOptions } from './options';
import { isError } from './serialize';
import { WinstonSink } from './winston-sink';
import type { ConsoleStream, SinkConfig } from './winston-sink';

/**
 * The default logger, on winston: writes each line at or above the minimum level to the
 * console (coloured per level on a terminal) and to a log file (or one file per level).
 *
 * Two constructor forms: the spec's positional one,
 * `new Logger(minLogLevel = 'debug', logToConsole = true, logToFile = true, logDirectory?,
 * separateLogFiles = false)`, and `new Logger(options)` which also takes the console
 * stream, colours, file name and error handler.
 */
export class Logger extends AbstractLogger {
  /** The ANSI colour of each level's console lines (the spec's `$colors`). */
  readonly colors: LogLevelColors;
  private readonly options: ResolvedLoggerOptions;
  private readonly sink: WinstonSink;

  constructor(options: LoggerOptions);
  constructor(
    minLogLevel?: LogLevelName | string,
    logToConsole?: boolean,
    logToFile?: boolean,
    logDirectory?: string | null,
    separateLogFiles?: boolean,
  );
  constructor(
    first?: LoggerOptions | LogLevelName | string,
    logToConsole?: boolean,
    logToFile?: boolean,
    logDirectory?: string | null,
    separateLogFiles?: boolean,
  ) {
    super();
    let options: LoggerOptions;
    if (typeof first === 'object' && first !== null) {
      if (
        logToConsole !== undefined ||
        logToFile !== undefined ||
        logDirectory !== undefined ||
        separateLogFiles !== undefined
      ) {
        throw createLogError(
          TypeError,
          'PKG_ERR_LOG_INVALID_OPTION',
          'new Logger() takes either one options object or positional arguments, not both.',
        );
      }
      options = first;
    } else {
      options = { minLogLevel: first, logToConsole, logToFile, logDirectory, separateLogFiles };
    }
    this.options = resolveLoggerOptions(options);
    this.colors = this.options.colors;
    if (this.options.logToFile) this.prepareFiles(this.options);
    this.sink = new WinstonSink(this.sinkConfig(), (error) => this.reportError(error));
  }

  /**
   * Writes one line when `level` is at or above the minimum. Never throws, except a
   * TypeError (code PKG_ERR_LOG_INVALID_LEVEL) for a level name that does not exist.
   */
  log(level: LogLevelName | string, message: string, context?: LogContext): void {
    const name = assertLevel(level);
    if (LogLevel.toInt(name) > LogLevel.toInt(this.options.minLogLevel)) return;
    try {
      this.sink.write(
        name,
        formatLine(undefined, name, toMessage(message), withLogScope(toContext(context))),
      );
    } catch (err) {
      this.reportError(
        createLogError(
          Error,
          'PKG_ERR_LOG_WRITE_FAILED',
          `Could not write a log line (${isError(err) ? err.message : String(err)}); the line was dropped.`,
          err,
        ),
      );
    }
  }

  /** Logs a thrown value at error level; skips the serialising when error is not written. */
  override exception(error: unknown, context?: LogContext): void {
    if (LogLevel.toInt(LogLevel.ERROR) > LogLevel.toInt(this.options.minLogLevel)) return;
    super.exception(error, context);
  }

  /**
   * The line as it is written (without colour): `[<ISO time>] [<LEVEL>] <message>
   * <context JSON>`, with `{name}` placeholders filled from the context and the context
   * keys not used by a placeholder appended as JSON.
   */
  formatMessage(level: LogLevelName | string, message: string, context: LogContext = {}): string {
    return formatLine(undefined, assertLevel(level), toMessage(message), toContext(context));
  }

  /** True when lines at `level` are written: `level` is at or above the minimum severity. */
  shouldLog(level: LogLevelName | string): boolean {
    return LogLevel.toInt(level) <= LogLevel.toInt(this.options.minLogLevel);
  }

  getMinLogLevel(): LogLevelName {
    return this.options.minLogLevel;
  }

  /** Sets the least severe level that is written. */
  setMinLogLevel(level: LogLevelName | string): this {
    this.options.minLogLevel = assertLevel(level);
    return this;
  }

  getLogToConsole(): boolean {
    return this.options.logToConsole;
  }

  setLogToConsole(enabled: boolean): this {
    this.options.logToConsole = checkBoolean('logToConsole', enabled);
    return this.reconfigure();
  }

  getLogToFile(): boolean {
    return this.options.logToFile;
  }

  /** Turns file output on or off; turning it on checks the directory (and may throw). */
  setLogToFile(enabled: boolean): this {
    checkBoolean('logToFile', enabled);
    if (enabled) this.prepareFiles(this.options);
    this.options.logToFile = enabled;
    return this.reconfigure();
  }

  /** The absolute path of the log directory. */
  getLogDirectory(): string {
    return this.options.logDirectory;
  }

  /**
   * Moves file output to another directory (null or undefined: the default). When file
   * output is on, the directory is checked first, and a bad one throws and changes nothing.
   */
  setLogDirectory(directory: string | null | undefined): this {
    const logDirectory = checkDirectory(directory);
    if (this.options.logToFile) this.prepareFiles({ ...this.options, logDirectory });
    this.options.logDirectory = logDirectory;
    return this.reconfigure();
  }

  getSeparateLogFiles(): boolean {
    return this.options.separateLogFiles;
  }

  /** One file per level (`<level>.log`) when on, one file (`fileName`) when off. */
  setSeparateLogFiles(enabled: boolean): this {
    const separateLogFiles = checkBoolean('separateLogFiles', enabled);
    if (this.options.logToFile) this.prepareFiles({ ...this.options, separateLogFiles });
    this.options.separateLogFiles = separateLogFiles;
    return this.reconfigure();
  }

  getFileName(): string {
    return this.options.fileName;
  }

  /** Name of the single log file (used while separateLogFiles is off). */
  setFileName(fileName: string): this {
    const checked = checkFileName(fileName);
    if (this.options.logToFile) this.prepareFiles({ ...this.options, fileName: checked });
    this.options.fileName = checked;
    return this.reconfigure();
  }

  getConsoleStream(): ConsoleStream {
    return this.options.consoleStream;
  }

  /** Sends console lines to another stream; automatic colours are decided again for it. */
  setConsoleStream(stream: ConsoleStream): this {
    this.options.consoleStream = checkConsoleStream(stream);
    return this.reconfigure();
  }

  /** Whether console lines are coloured right now. */
  getUseColors(): boolean {
    return shouldUseColors(this.options.consoleStream, this.options.useColors);
  }

  /** Forces colours on or off; `undefined` goes back to automatic (terminal, `NO_COLOR`). */
  setUseColors(enabled: boolean | undefined): this {
    if (enabled !== undefined) checkBoolean('useColors', enabled);
    this.options.useColors = enabled;
    return this.reconfigure();
  }

  /**
   * Flushes every line written so far to its file and stream and closes the files. The
   * logger stays usable: a later line opens the files again.
   */
  close(): Promise<void> {
    return this.sink.close();
  }

  private reconfigure(): this {
    this.sink.configure(this.sinkConfig());
    return this;
  }

  private sinkConfig(): SinkConfig {
    const o = this.options;
    return {
      console: o.logToConsole
        ? {
            stream: o.consoleStream,
            useColors: shouldUseColors(o.consoleStream, o.useColors),
            colors: this.colors,
          }
        : undefined,
      file: o.logToFile
        ? { directory: o.logDirectory, fileName: o.fileName, separate: o.separateLogFiles }
        : undefined,
    };
  }

  private prepareFiles(o: ResolvedLoggerOptions): void {
    const names = o.separateLogFiles
      ? LogLevel.getLevels().map((level) => `${level}.log`)
      : [o.fileName];
    prepareLogDirectory(o.logDirectory, names);
  }

  private reportError(error: LogError): void {
    try {
      this.options.onError(error);
    } catch {
      // An error handler that throws must not turn a log call into an exception.
    }
  }
}
