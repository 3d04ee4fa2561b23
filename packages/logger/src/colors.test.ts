import { describe, expect, it } from '@jest/globals';
import { ANSI_RESET, colorize, logLevelColors, shouldUseColors } from './colors';
import { LogLevel } from './log-level';

const ESC = '\x1b[';

describe('logLevelColors', () => {
  it('has an ANSI SGR code for every level', () => {
    expect(Object.keys(logLevelColors).sort()).toEqual(LogLevel.getLevels().sort());
    for (const code of Object.values(logLevelColors)) {
      expect(code.startsWith(ESC) && code.endsWith('m')).toBe(true);
      expect(code.slice(2, -1)).toMatch(/^[0-9;]+$/);
    }
  });

  it('gives each level its own colour', () => {
    expect(new Set(Object.values(logLevelColors)).size).toBe(8);
  });

  it('is frozen', () => {
    expect(Object.isFrozen(logLevelColors)).toBe(true);
  });
});

describe('colorize', () => {
  it('wraps the line in the level colour and a reset', () => {
    expect(colorize('line', 'error', logLevelColors)).toBe(`\x1b[31mline${ANSI_RESET}`);
  });

  it('leaves a line plain when its colour is empty', () => {
    expect(colorize('line', 'info', { ...logLevelColors, info: '' })).toBe('line');
  });
});

describe('shouldUseColors', () => {
  it('colours a terminal', () => {
    expect(shouldUseColors({ isTTY: true }, undefined, {})).toBe(true);
  });

  it('does not colour a stream that is not a terminal', () => {
    expect(shouldUseColors({ isTTY: false }, undefined, {})).toBe(false);
    expect(shouldUseColors({}, undefined, {})).toBe(false);
  });

  it('does not colour when NO_COLOR is set, even on a terminal', () => {
    expect(shouldUseColors({ isTTY: true }, undefined, { NO_COLOR: '1' })).toBe(false);
  });

  it('ignores an empty NO_COLOR, as no-color.org says', () => {
    expect(shouldUseColors({ isTTY: true }, undefined, { NO_COLOR: '' })).toBe(true);
  });

  it('lets an explicit choice win over the stream and the environment', () => {
    expect(shouldUseColors({ isTTY: false }, true, { NO_COLOR: '1' })).toBe(true);
    expect(shouldUseColors({ isTTY: true }, false, {})).toBe(false);
  });

  it('reads process.env by default', () => {
    const saved = process.env['NO_COLOR'];
    try {
      process.env['NO_COLOR'] = '1';
      expect(shouldUseColors({ isTTY: true }, undefined)).toBe(false);
      delete process.env['NO_COLOR'];
      expect(shouldUseColors({ isTTY: true }, undefined)).toBe(true);
    } finally {
      if (saved === undefined) delete process.env['NO_COLOR'];
      else process.env['NO_COLOR'] = saved;
    }
  });
});
