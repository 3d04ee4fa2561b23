// Shared by the logger tests: a console stream that records what it is given, and
// temporary directories that are removed after each test.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A console stream double: records every chunk; `isTTY` decides automatic colours. */
export class CaptureStream {
  readonly chunks: string[] = [];
  constructor(readonly isTTY = false) {}

  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return true;
  }

  /** The lines written so far, without their line endings. */
  get lines(): string[] {
    return this.chunks.join('').split('\n').slice(0, -1);
  }
}

const dirs: string[] = [];

/** A fresh temporary directory, removed by {@link removeTempDirs}. */
export function makeTempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pkg-logger-'));
  dirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** The lines of a log file. */
export function readLines(file: string): string[] {
  return readFileSync(file, 'utf8').split('\n').slice(0, -1);
}

/** The file names in a directory, sorted. */
export function listFiles(dir: string): string[] {
  return readdirSync(dir).sort();
}

/** `[<ISO time>] [LEVEL] ` at the start of a line. */
export const LINE_HEAD = /^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\] \[[A-Z]+\] /;

/** A line without its timestamp, for exact comparisons. */
export function untimed(line: string): string {
  return line.replace(/^\[[^\]]+\] /, '');
}
