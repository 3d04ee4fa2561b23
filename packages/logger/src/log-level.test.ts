import { describe, expect, it } from '@jest/globals';
import { LogLevel, assertLevel } from './log-level';

const ORDER = ['emergency', 'alert', 'critical', 'error', 'warning', 'notice', 'info', 'debug'];

describe('LogLevel constants', () => {
  it('hold the eight lower-case level names', () => {
    expect([
      LogLevel.EMERGENCY,
      LogLevel.ALERT,
      LogLevel.CRITICAL,
      LogLevel.ERROR,
      LogLevel.WARNING,
      LogLevel.NOTICE,
      LogLevel.INFO,
      LogLevel.DEBUG,
    ]).toEqual(ORDER);
  });

  it('cannot be changed', () => {
    expect(Object.isFrozen(LogLevel)).toBe(true);
  });
});

describe('LogLevel.getLevels', () => {
  it('lists every level, most severe first', () => {
    expect(LogLevel.getLevels()).toEqual(ORDER);
  });

  it('returns a new array each time, so callers cannot change the table', () => {
    const levels = LogLevel.getLevels();
    levels.pop();
    expect(LogLevel.getLevels()).toHaveLength(8);
  });
});

describe('LogLevel.isValidLevel', () => {
  it.each(ORDER)('accepts %s', (level) => {
    expect(LogLevel.isValidLevel(level)).toBe(true);
  });

  it.each(['', 'ERROR', 'Error', 'warn', 'fatal', 'trace', 'emerg', 'crit', ' info', 'toString'])(
    'rejects %j',
    (level) => {
      expect(LogLevel.isValidLevel(level)).toBe(false);
    },
  );

  it('rejects values that are not strings', () => {
    expect(LogLevel.isValidLevel(3 as unknown as string)).toBe(false);
    expect(LogLevel.isValidLevel(undefined as unknown as string)).toBe(false);
  });
});

describe('LogLevel.toInt', () => {
  it.each(ORDER.map((name, severity) => [name, severity] as const))(
    'maps %s to RFC 5424 severity %i',
    (name, severity) => {
      expect(LogLevel.toInt(name)).toBe(severity);
    },
  );

  it('throws a TypeError that lists the valid levels for an unknown name', () => {
    expect(() => LogLevel.toInt('fatal')).toThrow(TypeError);
    try {
      LogLevel.toInt('fatal');
    } catch (err) {
      expect((err as { code?: string }).code).toBe('PKG_ERR_LOG_INVALID_LEVEL');
      expect((err as Error).message).toBe(
        'Unknown log level "fatal": use one of emergency, alert, critical, error, warning, notice, info, debug (lower case).',
      );
    }
  });

  it('describes a value that is not a string in the error', () => {
    expect(() => LogLevel.toInt(7 as unknown as string)).toThrow('Unknown log level 7');
    expect(() => LogLevel.toInt({} as unknown as string)).toThrow('Unknown log level an object');
  });
});

describe('LogLevel.toString', () => {
  it.each(ORDER.map((name, severity) => [severity, name] as const))(
    'maps severity %i to %s',
    (severity, name) => {
      expect(LogLevel.toString(severity)).toBe(name);
    },
  );

  it('round-trips with toInt', () => {
    for (const name of LogLevel.getLevels()) {
      expect(LogLevel.toString(LogLevel.toInt(name))).toBe(name);
    }
  });

  it.each([-1, 8, 100])('throws a RangeError for severity %i', (severity) => {
    expect(() => LogLevel.toString(severity)).toThrow(RangeError);
    expect(() => LogLevel.toString(severity)).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_LOG_INVALID_SEVERITY' }),
    );
  });

  it.each([1.5, Number.NaN, Number.POSITIVE_INFINITY])('throws a TypeError for %p', (value) => {
    expect(() => LogLevel.toString(value)).toThrow(TypeError);
  });

  it('throws a TypeError for a value that is not a number', () => {
    expect(() => LogLevel.toString('3' as unknown as number)).toThrow(
      'A severity must be an integer from 0 (emergency) to 7 (debug), got "3".',
    );
  });
});

describe('assertLevel', () => {
  it('returns a valid name unchanged', () => {
    expect(assertLevel('notice')).toBe('notice');
  });

  it('throws the same TypeError as toInt', () => {
    expect(() => assertLevel('verbose')).toThrow(
      expect.objectContaining({ name: 'TypeError', code: 'PKG_ERR_LOG_INVALID_LEVEL' }),
    );
  });
});
