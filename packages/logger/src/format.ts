import type { LogLevelName } from './log-level';
import { isError, safeJson, stringify } from './serialize';

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
 * One log line: `[<ISO 8601 UTC time>] [<LEVEL>] <message> <context JSON>`. Line breaks in
 * the message are written as `\n` so that every entry stays on one line.
 */
export function formatLine(
  time: Date,
  level: LogLevelName,
  message: string,
  context: Readonly<Record<string, unknown>>,
): string {
  const { message: filled, used } = interpolate(message, context);
  const rest = remainingContext(context, used);
  const text = filled.replace(LINE_BREAK, '\\n');
  const suffix = rest === undefined ? '' : ` ${safeJson(rest, [context])}`;
  return `[${time.toISOString()}] [${level.toUpperCase()}] ${text}${suffix}`;
}
