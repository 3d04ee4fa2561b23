import { accessSync, closeSync, constants, mkdirSync, openSync, statSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { join } from 'node:path';
import { createLogError } from './errors';
import { isError } from './serialize';

const HOW_TO_FIX = 'pick another logDirectory, fix its permissions, or set logToFile to false';

function reason(err: unknown): string {
  if (!isError(err)) return String(err);
  const code = (err as NodeJS.ErrnoException).code;
  return code && !err.message.startsWith(code) ? `${code}: ${err.message}` : err.message;
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // ENOTDIR: a parent is a file; mkdir then reports it in the user's terms.
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw err;
  }
}

/**
 * Makes sure that log files can be written in `directory`, synchronously, so that a bad
 * directory is an error when the logger is configured and not a lost line later: creates the
 * directory (and its parents) when missing, checks that it is a writable directory, and that
 * each of `fileNames` that already exists is a writable regular file.
 * Throws an Error with code PKG_ERR_LOG_DIRECTORY_UNWRITABLE.
 */
export function prepareLogDirectory(directory: string, fileNames: readonly string[]): void {
  const fail = (problem: string, cause?: unknown): never => {
    throw createLogError(
      Error,
      'PKG_ERR_LOG_DIRECTORY_UNWRITABLE',
      `${problem}: ${HOW_TO_FIX}.`,
      cause,
    );
  };
  let stats: Stats | undefined;
  try {
    stats = statOrUndefined(directory);
  } catch (err) {
    fail(`Cannot inspect the log directory "${directory}" (${reason(err)})`, err);
  }
  if (stats === undefined) {
    try {
      mkdirSync(directory, { recursive: true });
    } catch (err) {
      fail(`Cannot create the log directory "${directory}" (${reason(err)})`, err);
    }
  } else if (!stats.isDirectory()) {
    fail(`The log directory "${directory}" exists but is not a directory`);
  }
  try {
    accessSync(directory, constants.W_OK | constants.X_OK);
  } catch (err) {
    fail(`The log directory "${directory}" is not writable (${reason(err)})`, err);
  }
  for (const name of fileNames) {
    const file = join(directory, name);
    try {
      const fileStats = statOrUndefined(file);
      if (fileStats === undefined) continue;
      if (!fileStats.isFile()) fail(`The log file "${file}" exists but is not a regular file`);
      accessSync(file, constants.W_OK);
    } catch (err) {
      if ((err as { code?: unknown }).code === 'PKG_ERR_LOG_DIRECTORY_UNWRITABLE') throw err;
      fail(`The log file "${file}" is not writable (${reason(err)})`, err);
    }
  }
}

/**
 * Opens `file` for appending (creating it) and closes it again; throws the fs error when
 * that fails. Non-blocking, so a FIFO without a reader fails (ENXIO) instead of hanging.
 */
export function probeLogFile(file: string): void {
  const { O_WRONLY, O_APPEND, O_CREAT, O_NONBLOCK } = constants;
  closeSync(openSync(file, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK, 0o666));
}
