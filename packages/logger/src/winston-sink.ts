import { Writable } from 'node:stream';
import { join } from 'node:path';
import winston from 'winston';
import { colorize } from './colors';
import type { LogLevelColors } from './colors';
import { probeLogFile } from './directory';
import { createLogError } from './errors';
import { MESSAGE } from './format';
import type { LogError } from './errors';
import { LogLevel } from './log-level';
import type { LogLevelName } from './log-level';
import { isError } from './serialize';

/**
 * How long `close()` waits for winston to flush before giving up and reporting it. Only
 * reached when a file stream hangs (its disk vanished, say); a healthy flush takes
 * milliseconds.
 */
export const CLOSE_TIMEOUT_MS = 10_000;

/**
 * How many file lines are kept while earlier log files are still being flushed (see
 * `FileChannel.held`). A healthy flush takes milliseconds; the bound only matters while a
 * file stream hangs, and past it lines are dropped and reported instead of piling up.
 */
export const MAX_HELD_LINES = 10_000;

/** Winston's level table for the RFC 5424 levels: the severity is the priority. */
const WINSTON_LEVELS: Record<string, number> = Object.fromEntries(
  LogLevel.getLevels().map((name) => [name, LogLevel.toInt(name)]),
);

/** Anything console lines can be written to: `process.stdout`, a stream, a test double. */
export interface ConsoleStream {
  write(chunk: string): unknown;
  readonly isTTY?: boolean;
}

/** Where lines go. A missing member turns that output off. */
export interface SinkConfig {
  readonly console?: {
    readonly stream: ConsoleStream;
    readonly useColors: boolean;
    readonly colors: LogLevelColors;
  };
  readonly file?: {
    readonly directory: string;
    /** The single file's name; unused when `separate` is on (then it is `<level>.log`). */
    readonly fileName: string;
    readonly separate: boolean;
  };
}

type Reporter = (error: LogError) => void;

function writeFailed(what: string, cause: unknown): LogError {
  const detail = isError(cause) ? cause.message : String(cause);
  return createLogError(
    Error,
    'PKG_ERR_LOG_WRITE_FAILED',
    `Could not write a log line to ${what} (${detail}); the line was dropped.`,
    cause,
  );
}

/**
 * Hands console lines to the configured stream. It never emits 'error' (a stream that
 * throws is reported instead), so winston's Stream transport above it keeps working.
 */
class ConsoleWriter extends Writable {
  constructor(
    private readonly target: ConsoleStream,
    private readonly report: Reporter,
  ) {
    super({ decodeStrings: false });
  }

  override _write(chunk: unknown, _encoding: string, callback: () => void): void {
    try {
      this.target.write(typeof chunk === 'string' ? chunk : String(chunk));
    } catch (err) {
      this.report(writeFailed('the console stream', err));
    }
    callback();
  }
}

/** A line kept back until the files it may share with earlier outputs are flushed. */
interface HeldLine {
  readonly level: LogLevelName;
  readonly line: string;
}

/**
 * The winston logger for one file configuration, with the files opened so far (or that
 * failed to open).
 */
interface FileChannel {
  readonly logger: winston.Logger;
  readonly config: NonNullable<SinkConfig['file']>;
  readonly files: Set<string>;
  /**
   * Lines written while an earlier file channel was still flushing. Two write streams
   * appending to one file interleave their writes, so a reopened file could get new lines
   * before old ones; the new channel writes nothing until every earlier one has finished.
   * `undefined` once the channel writes directly.
   */
  held: HeldLine[] | undefined;
  /** How many lines were dropped because `held` was full. */
  dropped: number;
  /** Settles when the held lines have been written (at once when nothing was earlier). */
  readonly ready: Promise<void>;
}

function sameConsole(a: SinkConfig['console'], b: SinkConfig['console']): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.stream === b.stream && a.useColors === b.useColors && a.colors === b.colors;
}

function sameFile(a: SinkConfig['file'], b: SinkConfig['file']): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.directory === b.directory && a.fileName === b.fileName && a.separate === b.separate;
}

/**
 * Writes finished lines through winston: one winston logger with a Stream transport for
 * the console, and one with a File transport per log file, each file opened when its first
 * line arrives. Console and files are separate loggers, so that changing one never closes
 * and reopens the other.
 */
export class WinstonSink {
  private config: SinkConfig;
  private consoleLogger: winston.Logger | undefined;
  private fileChannel: FileChannel | undefined;
  private readonly closing = new Set<Promise<void>>();
  /** File channels that were retired and are still flushing. */
  private readonly retiringFiles = new Set<Promise<void>>();

  constructor(
    config: SinkConfig,
    private readonly report: Reporter,
  ) {
    this.config = config;
  }

  /**
   * Switches to a new configuration. An output whose settings changed is ended (its lines
   * are flushed in the background, and `close()` waits for them); the new one opens on the
   * next line. An output whose settings did not change is left alone.
   */
  configure(config: SinkConfig): void {
    if (!sameConsole(this.config.console, config.console)) this.retireConsole();
    if (!sameFile(this.config.file, config.file)) this.retireFiles();
    this.config = config;
  }

  /** Sends one finished (uncoloured) line at `level` to every configured output. */
  write(level: LogLevelName, line: string): void {
    const { console: toConsole, file } = this.config;
    if (toConsole !== undefined) {
      this.consoleLogger ??= this.openConsole(toConsole);
      this.consoleLogger.log({ level, message: line });
    }
    if (file !== undefined) {
      const channel = (this.fileChannel ??= this.openFiles(file));
      if (channel.held === undefined) this.writeFile(channel, level, line);
      else if (channel.held.length < MAX_HELD_LINES) channel.held.push({ level, line });
      else channel.dropped += 1;
    }
  }

  /** Flushes and closes every transport; a later `write` opens new ones. */
  async close(): Promise<void> {
    this.retireConsole();
    this.retireFiles();
    await Promise.all([...this.closing]);
  }

  private createLogger(): winston.Logger {
    const logger = winston.createLogger({
      levels: WINSTON_LEVELS,
      level: LogLevel.DEBUG,
      exitOnError: false,
      format: winston.format((info) => info)(),
    });
    logger.on('error', (err: unknown) => this.report(writeFailed('a log transport', err)));
    return logger;
  }

  private openFiles(config: NonNullable<SinkConfig['file']>): FileChannel {
    const earlier = [...this.retiringFiles];
    const held: HeldLine[] | undefined = earlier.length > 0 ? [] : undefined;
    const channel: FileChannel = {
      logger: this.createLogger(),
      config,
      files: new Set(),
      held,
      dropped: 0,
      ready:
        held === undefined
          ? Promise.resolve()
          : Promise.all(earlier).then(() => this.release(channel)),
    };
    return channel;
  }

  /** Writes a channel's held lines, in order, and lets later lines through directly. */
  private release(channel: FileChannel): void {
    const held = channel.held ?? [];
    channel.held = undefined;
    for (const { level, line } of held) {
      try {
        this.writeFile(channel, level, line);
      } catch (err) {
        // As `Logger.log` does for a line written at once: report it and go on.
        this.report(writeFailed('a log file', err));
      }
    }
    if (channel.dropped > 0) {
      this.report(
        createLogError(
          Error,
          'PKG_ERR_LOG_WRITE_FAILED',
          `${channel.dropped} log line(s) were dropped: more than ${MAX_HELD_LINES} lines ` +
            'arrived while the previous log files were still being flushed. Check that the ' +
            'log directory is writable and its disk responsive.',
        ),
      );
    }
  }

  private writeFile(channel: FileChannel, level: LogLevelName, line: string): void {
    const { separate, fileName } = channel.config;
    this.ensureFile(channel, separate ? `${level}.log` : fileName, level);
    if (channel.logger.transports.length > 0) channel.logger.log({ level, message: line });
  }

  private openConsole(target: NonNullable<SinkConfig['console']>): winston.Logger {
    const { useColors, colors } = target;
    const logger = this.createLogger();
    logger.add(
      new winston.transports.Stream({
        stream: new ConsoleWriter(target.stream, this.report),
        eol: '\n',
        format: winston.format((info) => {
          const line = String(info.message);
          info[MESSAGE] = useColors ? colorize(line, info.level as LogLevelName, colors) : line;
          return info;
        })(),
      }),
    );
    return logger;
  }

  private ensureFile(channel: FileChannel, fileName: string, level: LogLevelName): void {
    if (channel.files.has(fileName)) return;
    channel.files.add(fileName);
    const file = channel.config;
    const path = join(file.directory, fileName);
    try {
      // winston opens files asynchronously and cannot report a failed open; checking here
      // turns that into a reported error instead of lines that vanish.
      probeLogFile(path);
      const only = file.separate ? level : undefined;
      channel.logger.add(
        new winston.transports.File({
          dirname: file.directory,
          filename: fileName,
          eol: '\n',
          format: winston.format((info) => {
            if (only !== undefined && info.level !== only) return false;
            info[MESSAGE] = String(info.message);
            return info;
          })(),
        }),
      );
    } catch (err) {
      this.report(writeFailed(`the log file "${path}"`, err));
    }
  }

  private retireConsole(): void {
    const logger = this.consoleLogger;
    this.consoleLogger = undefined;
    if (logger !== undefined) this.track(this.finish(logger));
  }

  private retireFiles(): void {
    const channel = this.fileChannel;
    this.fileChannel = undefined;
    if (channel === undefined) return;
    // The held lines are written before the channel ends; the next channel waits for both.
    const flushed = channel.ready.then(() => this.finish(channel.logger));
    const done = flushed.finally(() => this.retiringFiles.delete(done));
    this.retiringFiles.add(done);
    this.track(done);
  }

  private track(flush: Promise<void>): void {
    const done = flush.finally(() => this.closing.delete(done));
    this.closing.add(done);
  }

  private finish(logger: winston.Logger): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.report(
          createLogError(
            Error,
            'PKG_ERR_LOG_WRITE_FAILED',
            `Log output was not flushed within ${CLOSE_TIMEOUT_MS} ms; the last lines may be missing.`,
          ),
        );
        resolve();
      }, CLOSE_TIMEOUT_MS);
      timer.unref();
      logger.once('finish', () => {
        clearTimeout(timer);
        logger.close();
        resolve();
      });
      logger.end();
    });
  }
}
