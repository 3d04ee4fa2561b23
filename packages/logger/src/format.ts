import winston from 'winston';
import type { LogLevelName } from './log-level';
import { isError, safeJson, stringify } from './serialize';

/** Where logform and winston keep the finished text of a line (triple-beam's MESSAGE). */
export const MESSAGE = Symbol.for('message');

/** A placeholder: `{name}` where name is letters, digits, `_` and `.` (as PSR-3 has it). */
const PLACEHOLDER = /\{([A-Za-z0-9_.]+)\}/g;
const LINE_BREAK = /\r\n|\r|\n/g;

/** The message as text: a string as it is, anything else (from plain JavaScript) as JSON. */
export function toMessage(value: unknown): string {
  return typeof value === 'string' ? value : stringify(value);
}

/**
 * The context as a record: undefined and null give an empty one; a value that is not an
 * object (possible from plain JavaScript) is kept under the key `context`.
 */
export function toContext(value: unknown): Readonly<Record<string, unknown>> {
  if (value === undefined || value === null) return EMPTY;
  if (typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  return { context: value };
}

const EMPTY: Readonly<Record<string, unknown>> = Object.freeze({});

/** Reads one context value; a getter that throws gives a marker instead of an exception. */
function read(context: Readonly<Record<string, unknown>>, key: string): unknown {
  try {
    return context[key];
  } catch (err) {
    return `[Unreadable: ${isError(err) ? err.message : String(err)}]`;
  }
}

/**
 * Fills `{name}` placeholders from `context`. Returns the message and the context keys that
 * were used. A placeholder whose key is not an own property of the context stays as it is.
 */
export function interpolate(
  message: string,
  context: Readonly<Record<string, unknown>>,
): { message: string; used: Set<string> } {
  const used = new Set<string>();
  if (!message.includes('{')) return { message, used };
  const filled = message.replace(PLACEHOLDER, (whole, key: string) => {
    if (!Object.prototype.hasOwnProperty.call(context, key)) return whole;
    used.add(key);
    return stringify(read(context, key));
  });
  return { message: filled, used };
}

/** The context keys that no placeholder used, or undefined when none are left. */
export function remainingContext(
  context: Readonly<Record<string, unknown>>,
  used: ReadonlySet<string>,
): Record<string, unknown> | undefined {
  let rest: Record<string, unknown> | undefined;
  for (const key of Object.keys(context)) {
    if (used.has(key)) continue;
    rest ??= {};
    rest[key] = read(context, key);
  }
  return rest;
}

/**
 * The PSR-3 step that logform has no format for (its `splat` fills `%s`, not `{name}`):
 * fills the placeholders from `info.context`, escapes line breaks, and writes the context
 * keys no placeholder used as JSON.
 */
const placeholders = winston.format((info) => {
  const context = info['context'] as Readonly<Record<string, unknown>>;
  const { message, used } = interpolate(String(info.message), context);
  const rest = remainingContext(context, used);
  info['text'] = message.replace(LINE_BREAK, '\\n');
  info['contextJson'] = rest === undefined ? '' : ` ${safeJson(rest, [context])}`;
  return info;
});

/**
 * The line as a logform pipeline: logform's `timestamp` (ISO 8601 UTC, kept when the info
 * already has one), the placeholders, then `printf` for the layout. It runs once per line,
 * before winston: the console and the files get the same text with the same time.
 */
const lineFormat = winston.format.combine(
  winston.format.timestamp(),
  placeholders(),
  winston.format.printf(
    (info) =>
      `[${String(info['timestamp'])}] [${info.level.toUpperCase()}] ${String(info['text'])}${String(info['contextJson'])}`,
  ),
);

/**
 * One log line: `[<ISO 8601 UTC time>] [<LEVEL>] <message> <context JSON>`. Line breaks in
 * the message are written as `\n` so that every entry stays on one line. `time` undefined
 * means now.
 */
export function formatLine(
  time: Date | undefined,
  level: LogLevelName,
  message: string,
  context: Readonly<Record<string, unknown>>,
): string {
  const info: winston.Logform.TransformableInfo = { level, message, context };
  if (time !== undefined) info['timestamp'] = time.toISOString();
  const done = lineFormat.transform(info);
  return typeof done === 'object' ? String(done[MESSAGE]) : '';
}
