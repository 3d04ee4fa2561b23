import type { LogLevelName } from './log-level';

/** ANSI SGR sequence that ends a coloured line. */
export const ANSI_RESET = '\x1b[0m';

/** The ANSI colour each level's console line is written in. */
export type LogLevelColors = Readonly<Record<LogLevelName, string>>;

/** Default colours: the three most severe levels bold, debug dimmed to grey. */
export const logLevelColors: LogLevelColors = Object.freeze({
  emergency: '\x1b[1;37;41m', // bold white on red
  alert: '\x1b[1;35m', // bold magenta
  critical: '\x1b[1;31m', // bold red
  error: '\x1b[31m', // red
  warning: '\x1b[33m', // yellow
  notice: '\x1b[36m', // cyan
  info: '\x1b[32m', // green
  debug: '\x1b[90m', // grey
});

/** The part of a stream that decides whether colours are used. */
export interface ColorTarget {
  readonly isTTY?: boolean;
}

/**
 * Whether console lines get colours: an explicit choice wins; otherwise colours are used
 * when the stream is a terminal and `NO_COLOR` is not set to a non-empty value
 * (https://no-color.org).
 */
export function shouldUseColors(
  target: ColorTarget,
  explicit: boolean | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): boolean {
  if (explicit !== undefined) return explicit;
  const noColor = env['NO_COLOR'];
  if (noColor !== undefined && noColor !== '') return false;
  return target.isTTY === true;
}

/** Wraps a line in its level's colour. */
export function colorize(line: string, level: LogLevelName, colors: LogLevelColors): string {
  const code = colors[level];
  return code === '' ? line : `${code}${line}${ANSI_RESET}`;
}
