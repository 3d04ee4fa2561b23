import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prepareLogDirectory, probeLogFile } from './directory';

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

let tmp: string;

beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), 'pkg-logger-dir-'));
});

afterEach(() => {
  chmodSync(tmp, 0o700);
  rmSync(tmp, { recursive: true, force: true });
});

function thrown(fn: () => void): Error & { code?: string; cause?: unknown } {
  try {
    fn();
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('expected a throw');
}

describe('prepareLogDirectory', () => {
  it('creates a missing directory and its parents', () => {
    const dir = join(tmp, 'a', 'b', 'logs');
    prepareLogDirectory(dir, ['app.log']);
    expect(statSync(dir).isDirectory()).toBe(true);
    expect(existsSync(join(dir, 'app.log'))).toBe(false);
  });

  it('accepts an existing directory with an existing writable log file', () => {
    writeFileSync(join(tmp, 'app.log'), 'old line\n');
    expect(() => prepareLogDirectory(tmp, ['app.log'])).not.toThrow();
  });

  it('fails clearly when the directory cannot be created (a parent is a file)', () => {
    writeFileSync(join(tmp, 'file'), '');
    const dir = join(tmp, 'file', 'logs');
    const err = thrown(() => prepareLogDirectory(dir, ['app.log']));
    expect(err.code).toBe('PKG_ERR_LOG_DIRECTORY_UNWRITABLE');
    expect(err.message).toContain(
      `Cannot create the log directory "${dir}" (ENOTDIR: not a directory, mkdir`,
    );
    expect(err.message).toContain('pick another logDirectory');
    expect((err.cause as { code?: string }).code).toBe('ENOTDIR');
  });

  it('fails clearly when the path is a file, not a directory', () => {
    const file = join(tmp, 'not-a-dir');
    writeFileSync(file, '');
    const err = thrown(() => prepareLogDirectory(file, ['app.log']));
    expect(err.code).toBe('PKG_ERR_LOG_DIRECTORY_UNWRITABLE');
    expect(err.message).toMatch(/not-a-dir" exists but is not a directory: /);
  });

  it('fails clearly when a log file exists but is a directory', () => {
    mkdirSync(join(tmp, 'error.log'));
    const err = thrown(() => prepareLogDirectory(tmp, ['info.log', 'error.log']));
    expect(err.code).toBe('PKG_ERR_LOG_DIRECTORY_UNWRITABLE');
    expect(err.message).toBe(
      `The log file "${join(tmp, 'error.log')}" exists but is not a regular file: pick another logDirectory, fix its permissions, or set logToFile to false.`,
    );
  });

  // Root may write anywhere, so under root (as in CI) the check runs in a child process as
  // the unprivileged user `nobody`, through the built package's public constructor.
  function unwritableError(target: string): { code?: string; message: string } {
    if (!isRoot) {
      return thrown(() => prepareLogDirectory(target, ['app.log']));
    }
    const dist = join(__dirname, '..', 'dist', 'index.cjs');
    if (!existsSync(dist))
      throw new Error(`${dist} is missing: build @pkg/logger first (pnpm build)`);
    chmodSync(tmp, 0o755);
    // Load the package first, then drop to nobody: the checkout itself may be unreadable to
    // nobody (a private temp directory), the log directory under test is not.
    const script = `
      const { Logger } = require(${JSON.stringify(dist)});
      process.setgid(65534);
      process.setuid(65534);
      try { new Logger('debug', false, true, ${JSON.stringify(target)}); console.log('{}'); }
      catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }`;
    const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    return JSON.parse(out) as { code?: string; message: string };
  }

  it('fails clearly when the directory is read-only', () => {
    const dir = join(tmp, 'ro');
    mkdirSync(dir, 0o500);
    if (isRoot) chmodSync(dir, 0o555);
    const err = unwritableError(dir);
    expect(err.code).toBe('PKG_ERR_LOG_DIRECTORY_UNWRITABLE');
    expect(err.message).toContain('is not writable (EACCES');
  });

  it('fails clearly when an existing log file is read-only', () => {
    writeFileSync(join(tmp, 'app.log'), '', { mode: isRoot ? 0o444 : 0o400 });
    const err = unwritableError(tmp);
    expect(err.code).toBe('PKG_ERR_LOG_DIRECTORY_UNWRITABLE');
    expect(err.message).toContain('is not writable (EACCES');
  });
});

describe('probeLogFile', () => {
  it('creates the file without writing to it', () => {
    const file = join(tmp, 'app.log');
    probeLogFile(file);
    expect(statSync(file).size).toBe(0);
  });

  it('throws the fs error when the file cannot be opened', () => {
    expect(() => probeLogFile(join(tmp, 'missing-dir', 'app.log'))).toThrow(
      expect.objectContaining({ code: 'ENOENT' }),
    );
  });

  it('fails instead of hanging on a FIFO that nobody reads', () => {
    const fifo = join(tmp, 'fifo.log');
    execFileSync('mkfifo', [fifo]);
    expect(() => probeLogFile(fifo)).toThrow(expect.objectContaining({ code: 'ENXIO' }));
  });
});
