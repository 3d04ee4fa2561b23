import { createLogError } from './errors';

/** The eight level names, as PSR-3 and RFC 5424 spell them. */
export type LogLevelName =
  'emergency' | 'alert' | 'critical' | 'error' | 'warning' | 'notice' | 'info' | 'debug';

/** Level names ordered by RFC 5424 severity: the index is the severity (0 = most severe). */
const LEVELS: readonly LogLevelName[] = Object.freeze([
  'emergency',
  'alert',
  'critical',
  'error',
  'warning',
  'notice',
  'info',
  'debug',
]);

const SEVERITY: ReadonlyMap<string, number> = new Map(LEVELS.map((name, i) => [name, i]));

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'symbol') return value.toString();
  if (value === null || typeof value !== 'object') return String(value);
  return Array.isArray(value) ? 'an array' : 'an object';
}

function invalidLevel(level: unknown): TypeError {
  return createLogError(
    TypeError,
    'PKG_ERR_LOG_INVALID_LEVEL',
    `Unknown log level ${describe(level)}: use one of ${LEVELS.join(', ')} (lower case).`,
  );
}

/**
 * The eight RFC 5424 levels. The constants hold the level names; `toInt` and `toString`
 * convert between a name and its severity (emergency 0 ... debug 7, lower is more severe).
 */
export const LogLevel = Object.freeze({
  EMERGENCY: 'emergency',
  ALERT: 'alert',
  CRITICAL: 'critical',
  ERROR: 'error',
  WARNING: 'warning',
  NOTICE: 'notice',
  INFO: 'info',
  DEBUG: 'debug',

  /** All level names, most severe first. A new array on every call. */
  getLevels(): LogLevelName[] {
    return [...LEVELS];
  },

  /** True when `level` is one of the eight names (exact, lower-case match). */
  isValidLevel(level: string): level is LogLevelName {
    return typeof level === 'string' && SEVERITY.has(level);
  },

  /** The RFC 5424 severity of a level name. Throws a TypeError listing the valid names. */
  toInt(level: string): number {
    const severity = typeof level === 'string' ? SEVERITY.get(level) : undefined;
    if (severity === undefined) throw invalidLevel(level);
    return severity;
  },

  /**
   * The level name of an RFC 5424 severity (0-7). Throws a TypeError for a value that is
   * not an integer and a RangeError for an integer outside 0-7.
   */
  toString(level: number): LogLevelName {
    if (typeof level !== 'number' || !Number.isInteger(level)) {
      throw createLogError(
        TypeError,
        'PKG_ERR_LOG_INVALID_SEVERITY',
        `A severity must be an integer from 0 (emergency) to 7 (debug), got ${describe(level)}.`,
      );
    }
    const name = LEVELS[level];
    if (name === undefined) {
      throw createLogError(
        RangeError,
        'PKG_ERR_LOG_INVALID_SEVERITY',
        `Severity ${level} is out of range: use an integer from 0 (emergency) to 7 (debug).`,
      );
    }
    return name;
  },
} as const);

/** Returns `level` typed as a level name, or throws the TypeError of {@link LogLevel.toInt}. */
export function assertLevel(level: unknown): LogLevelName {
  if (typeof level === 'string' && SEVERITY.has(level)) return level as LogLevelName;
  throw invalidLevel(level);
}
