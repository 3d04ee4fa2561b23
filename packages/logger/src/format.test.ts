import { describe, expect, it } from '@jest/globals';
import { formatLine, interpolate, remainingContext, toContext, toMessage } from './format';

const T = new Date('2024-05-01T12:34:56.789Z');

describe('interpolate', () => {
  it('fills {name} placeholders from the context', () => {
    const { message, used } = interpolate('User {user} joined {room}', {
      user: 'ann',
      room: 'lobby',
    });
    expect(message).toBe('User ann joined lobby');
    expect([...used]).toEqual(['user', 'room']);
  });

  it('fills the same placeholder twice', () => {
    expect(interpolate('{a}-{a}', { a: 1 }).message).toBe('1-1');
  });

  it('leaves a placeholder without a context key as it is', () => {
    const { message, used } = interpolate('Hello {missing}', { other: 1 });
    expect(message).toBe('Hello {missing}');
    expect(used.size).toBe(0);
  });

  it('accepts letters, digits, underscore and dot in names', () => {
    expect(interpolate('{a.b} {c_1}', { 'a.b': 'x', c_1: 'y' }).message).toBe('x y');
  });

  it('does not treat braces with other characters as placeholders', () => {
    expect(interpolate('{not valid} {"json":1} {}', { 'not valid': 1 }).message).toBe(
      '{not valid} {"json":1} {}',
    );
  });

  it('ignores inherited properties', () => {
    expect(interpolate('{toString}', {}).message).toBe('{toString}');
  });

  it('writes non-string values as text', () => {
    expect(
      interpolate('{n} {b} {big} {obj} {nil} {err}', {
        n: 1.5,
        b: true,
        big: 9n,
        obj: { k: 'v' },
        nil: null,
        err: new Error('oops'),
      }).message,
    ).toBe('1.5 true 9 {"k":"v"} null Error: oops');
  });

  it('does not fail on a getter that throws', () => {
    const context = {
      get bad(): never {
        throw new Error('no access');
      },
    };
    expect(interpolate('{bad}', context).message).toBe('[Unreadable: no access]');
  });
});

describe('remainingContext', () => {
  it('keeps the keys no placeholder used', () => {
    expect(remainingContext({ a: 1, b: 2, c: 3 }, new Set(['b']))).toEqual({ a: 1, c: 3 });
  });

  it('is undefined when every key was used or the context is empty', () => {
    expect(remainingContext({ a: 1 }, new Set(['a']))).toBeUndefined();
    expect(remainingContext({}, new Set())).toBeUndefined();
  });
});

describe('formatLine', () => {
  it('writes time, level, message and no JSON for an empty context', () => {
    expect(formatLine(T, 'info', 'Server started', {})).toBe(
      '[2024-05-01T12:34:56.789Z] [INFO] Server started',
    );
  });

  it('appends the unused context as JSON', () => {
    expect(formatLine(T, 'error', 'Client {id} failed', { id: 'c1', code: 1006, ok: false })).toBe(
      '[2024-05-01T12:34:56.789Z] [ERROR] Client c1 failed {"code":1006,"ok":false}',
    );
  });

  it('keeps a circular context on one line', () => {
    const context: Record<string, unknown> = { name: 'loop' };
    context['self'] = context;
    expect(formatLine(T, 'debug', 'x', context)).toBe(
      '[2024-05-01T12:34:56.789Z] [DEBUG] x {"name":"loop","self":"[Circular]"}',
    );
  });

  it('writes BigInt context values as strings', () => {
    expect(formatLine(T, 'notice', 'n', { id: 2n ** 70n })).toBe(
      '[2024-05-01T12:34:56.789Z] [NOTICE] n {"id":"1180591620717411303424"}',
    );
  });

  it('escapes line breaks so that an entry is always one line', () => {
    const line = formatLine(T, 'warning', 'first\nsecond\r\nthird {v}', { v: 'a\rb' });
    expect(line).toBe('[2024-05-01T12:34:56.789Z] [WARNING] first\\nsecond\\nthird a\\nb');
    expect(line.split('\n')).toHaveLength(1);
  });

  it('writes every level name in upper case', () => {
    expect(formatLine(T, 'emergency', 'm', {})).toContain('[EMERGENCY]');
    expect(formatLine(T, 'critical', 'm', {})).toContain('[CRITICAL]');
  });
});

describe('toContext and toMessage', () => {
  it('turns a missing context into an empty one', () => {
    expect(toContext(undefined)).toEqual({});
    expect(toContext(null)).toEqual({});
  });

  it('keeps a context that is not an object under "context"', () => {
    expect(toContext('text')).toEqual({ context: 'text' });
    expect(toContext([1, 2])).toEqual({ context: [1, 2] });
  });

  it('passes an object context through', () => {
    const context = { a: 1 };
    expect(toContext(context)).toBe(context);
  });

  it('turns a message that is not a string into text', () => {
    expect(toMessage('ok')).toBe('ok');
    expect(toMessage({ a: 1 })).toBe('{"a":1}');
    expect(toMessage(5)).toBe('5');
  });
});
