import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import winston from 'winston';
import { CaptureStream, listFiles, makeTempDir, readLines, removeTempDirs } from '../test/support';
import { logLevelColors } from './colors';
import type { LogError } from './errors';
import { MAX_HELD_LINES, WinstonSink } from './winston-sink';
import type { SinkConfig } from './winston-sink';

const sinks: WinstonSink[] = [];

function makeSink(config: SinkConfig, errors: LogError[] = []): WinstonSink {
  const sink = new WinstonSink(config, (err) => errors.push(err));
  sinks.push(sink);
  return sink;
}

/**
 * A sink that wrote `old` to app.log, switched to another file and back before anything was
 * flushed: the new app.log output holds its lines until the old one has finished.
 */
function reopenedWhileFlushing(): { dir: string; errors: LogError[]; sink: WinstonSink } {
  const dir = makeTempDir();
  const errors: LogError[] = [];
  const single = { directory: dir, fileName: 'app.log', separate: false };
  const sink = makeSink({ file: single }, errors);
  sink.write('info', 'old');
  sink.configure({ file: { ...single, fileName: 'other.log' } });
  sink.configure({ file: single });
  return { dir, errors, sink };
}

afterEach(async () => {
  await Promise.all(sinks.splice(0).map((s) => s.close()));
  removeTempDirs();
});

const plainConsole = (stream: CaptureStream): SinkConfig['console'] => ({
  stream,
  useColors: false,
  colors: logLevelColors,
});

describe('WinstonSink', () => {
  it('writes nothing and opens nothing when both outputs are off', async () => {
    const dir = makeTempDir();
    const sink = makeSink({});
    sink.write('error', 'line');
    await sink.close();
    expect(listFiles(dir)).toEqual([]);
  });

  it('writes console lines with a newline, coloured when asked', async () => {
    const stream = new CaptureStream();
    const sink = makeSink({ console: { stream, useColors: true, colors: logLevelColors } });
    sink.write('warning', 'careful');
    sink.write('debug', 'detail');
    await sink.close();
    expect(stream.chunks).toEqual(['\x1b[33mcareful\x1b[0m\n', '\x1b[90mdetail\x1b[0m\n']);
  });

  it('writes every level to one file', async () => {
    const dir = makeTempDir();
    const sink = makeSink({ file: { directory: dir, fileName: 'app.log', separate: false } });
    sink.write('info', 'one');
    sink.write('error', 'two');
    await sink.close();
    expect(listFiles(dir)).toEqual(['app.log']);
    expect(readLines(join(dir, 'app.log'))).toEqual(['one', 'two']);
  });

  it('writes each level to its own file, opening only the files that are used', async () => {
    const dir = makeTempDir();
    const sink = makeSink({ file: { directory: dir, fileName: 'app.log', separate: true } });
    sink.write('info', 'i1');
    sink.write('error', 'e1');
    sink.write('info', 'i2');
    await sink.close();
    expect(listFiles(dir)).toEqual(['error.log', 'info.log']);
    expect(readLines(join(dir, 'info.log'))).toEqual(['i1', 'i2']);
    expect(readLines(join(dir, 'error.log'))).toEqual(['e1']);
  });

  it('flushes the old outputs when reconfigured and writes new lines to the new ones', async () => {
    const first = makeTempDir();
    const second = makeTempDir();
    const sink = makeSink({ file: { directory: first, fileName: 'app.log', separate: false } });
    sink.write('info', 'before');
    sink.configure({ file: { directory: second, fileName: 'app.log', separate: false } });
    sink.write('info', 'after');
    await sink.close();
    expect(readLines(join(first, 'app.log'))).toEqual(['before']);
    expect(readLines(join(second, 'app.log'))).toEqual(['after']);
  });

  it('keeps a file in order when it is reopened before its old lines were flushed', async () => {
    const dir = makeTempDir();
    const single = { directory: dir, fileName: 'app.log', separate: false };
    const sink = makeSink({ file: single });
    const lines = (prefix: string): string[] =>
      Array.from({ length: 2000 }, (_, i) => `${prefix}${i}`);
    for (const line of lines('a')) sink.write('info', line);
    sink.configure({ file: { ...single, separate: true } });
    sink.write('info', 'between');
    sink.configure({ file: single });
    for (const line of lines('b')) sink.write('info', line);
    await sink.close();
    expect(readLines(join(dir, 'app.log'))).toEqual([...lines('a'), ...lines('b')]);
    expect(readLines(join(dir, 'info.log'))).toEqual(['between']);
  });

  it('keeps the order across several reconfigurations made before any flush ended', async () => {
    const dir = makeTempDir();
    const single = { directory: dir, fileName: 'app.log', separate: false };
    const sink = makeSink({ file: single });
    const expected: string[] = [];
    for (let round = 0; round < 5; round += 1) {
      for (let i = 0; i < 300; i += 1) {
        sink.write('info', `r${round}-${i}`);
        expected.push(`r${round}-${i}`);
      }
      sink.configure({ file: { ...single, fileName: `other${round}.log` } });
      sink.configure({ file: single });
    }
    await sink.close();
    expect(readLines(join(dir, 'app.log'))).toEqual(expected);
  });

  it('holds at most MAX_HELD_LINES lines behind a flush and reports the ones it dropped', async () => {
    const { dir, errors, sink } = reopenedWhileFlushing();
    // Synchronous writes: the old file cannot finish flushing before the last of them.
    const lines = Array.from({ length: MAX_HELD_LINES + 3 }, (_, i) => `n${i}`);
    for (const line of lines) sink.write('info', line);
    await sink.close();
    expect(readLines(join(dir, 'app.log'))).toEqual(['old', ...lines.slice(0, MAX_HELD_LINES)]);
    expect(errors.map((e) => e.code)).toEqual(['PKG_ERR_LOG_WRITE_FAILED']);
    expect(errors[0]!.message).toContain(`3 log line(s) were dropped: more than ${MAX_HELD_LINES}`);
  });

  it('reports a held line that cannot be written, writes the rest and still closes', async () => {
    const { dir, errors, sink } = reopenedWhileFlushing();
    sink.write('info', 'held-1');
    sink.write('info', 'boom');
    sink.write('info', 'held-2');
    const original = winston.Logger.prototype.log;
    const spy = jest.spyOn(winston.Logger.prototype, 'log').mockImplementation(function (
      this: winston.Logger,
      ...args: unknown[]
    ) {
      const entry = args[0] as { message?: unknown } | undefined;
      if (entry?.message === 'boom') throw new Error('transport broke');
      return (original as (...a: unknown[]) => winston.Logger).apply(this, args);
    });
    try {
      await sink.close();
    } finally {
      spy.mockRestore();
    }
    expect(readLines(join(dir, 'app.log'))).toEqual(['old', 'held-1', 'held-2']);
    expect(errors.map((e) => e.message)).toEqual([
      'Could not write a log line to a log file (transport broke); the line was dropped.',
    ]);
  });

  it('leaves the files open when only the console settings change', async () => {
    const dir = makeTempDir();
    const first = new CaptureStream();
    const second = new CaptureStream();
    const file = { directory: dir, fileName: 'app.log', separate: false };
    const sink = makeSink({ console: plainConsole(first), file });
    sink.write('info', 'one');
    sink.configure({ console: plainConsole(second), file });
    sink.write('info', 'two');
    sink.configure({ file: { ...file } });
    sink.write('info', 'three');
    await sink.close();
    expect(first.lines).toEqual(['one']);
    expect(second.lines).toEqual(['two']);
    expect(readLines(join(dir, 'app.log'))).toEqual(['one', 'two', 'three']);
  });

  it('reports a file it cannot open and keeps writing to the console', async () => {
    const dir = makeTempDir();
    const errors: LogError[] = [];
    const stream = new CaptureStream();
    const sink = makeSink(
      {
        console: plainConsole(stream),
        file: { directory: dir, fileName: 'app.log', separate: false },
      },
      errors,
    );
    mkdirSync(join(dir, 'app.log'));
    sink.write('error', 'first');
    sink.write('error', 'second');
    await sink.close();
    expect(stream.lines).toEqual(['first', 'second']);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.code).toBe('PKG_ERR_LOG_WRITE_FAILED');
    expect(errors[0]!.message).toContain(`the log file "${join(dir, 'app.log')}" (EISDIR`);
  });

  it('reports a log directory that disappeared and was replaced by a file', async () => {
    const parent = makeTempDir();
    const dir = join(parent, 'logs');
    mkdirSync(dir);
    const errors: LogError[] = [];
    const sink = makeSink(
      { file: { directory: dir, fileName: 'app.log', separate: false } },
      errors,
    );
    rmSync(dir, { recursive: true });
    writeFileSync(dir, 'not a directory');
    sink.write('info', 'lost');
    await sink.close();
    expect(errors.map((e) => e.code)).toEqual(['PKG_ERR_LOG_WRITE_FAILED']);
    expect(existsSync(join(dir, 'app.log'))).toBe(false);
  });

  it('reports a console stream that throws and carries on', async () => {
    const errors: LogError[] = [];
    let calls = 0;
    const stream = {
      write(): boolean {
        calls += 1;
        if (calls === 1) throw new Error('EPIPE');
        return true;
      },
    };
    const sink = makeSink(
      { console: { stream, useColors: false, colors: logLevelColors } },
      errors,
    );
    sink.write('info', 'a');
    sink.write('info', 'b');
    await sink.close();
    expect(calls).toBe(2);
    expect(errors.map((e) => e.message)).toEqual([
      'Could not write a log line to the console stream (EPIPE); the line was dropped.',
    ]);
  });

  it('can be closed twice and used again after closing', async () => {
    const dir = makeTempDir();
    const sink = makeSink({ file: { directory: dir, fileName: 'app.log', separate: false } });
    await sink.close();
    sink.write('info', 'one');
    await sink.close();
    await sink.close();
    sink.write('info', 'two');
    await sink.close();
    expect(readLines(join(dir, 'app.log'))).toEqual(['one', 'two']);
  });
});
