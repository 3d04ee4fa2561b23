import { describe, expect, it } from '@jest/globals';
import { runInNewContext } from 'node:vm';
import {
  MAX_CAUSE_DEPTH,
  MAX_DEPTH,
  errorClass,
  isError,
  normalize,
  safeJson,
  serializeError,
  stringify,
} from './serialize';

describe('normalize', () => {
  it('keeps JSON values as they are', () => {
    const value = { a: 1, b: 'two', c: [true, null], d: { e: -0.5 } };
    expect(normalize(value)).toEqual(value);
  });

  it('replaces a reference back to an ancestor with [Circular]', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a['self'] = a;
    a['list'] = [a, { parent: a }];
    expect(normalize(a)).toEqual({
      name: 'a',
      self: '[Circular]',
      list: ['[Circular]', { parent: '[Circular]' }],
    });
  });

  it('treats an object seen twice in sibling positions as a repeat, not a cycle', () => {
    const shared = { id: 1 };
    expect(normalize({ x: shared, y: shared })).toEqual({ x: { id: 1 }, y: { id: 1 } });
  });

  it('counts objects passed as `within` as ancestors', () => {
    const root: Record<string, unknown> = {};
    root['me'] = root;
    expect(normalize({ me: root['me'] }, [root])).toEqual({ me: '[Circular]' });
  });

  it('writes BigInt as a decimal string', () => {
    expect(normalize({ big: 12345678901234567890n, neg: -1n })).toEqual({
      big: '12345678901234567890',
      neg: '-1',
    });
  });

  it('writes values JSON has no form for as text', () => {
    function namedFn(): void {}
    expect(
      normalize({
        nan: Number.NaN,
        inf: Number.NEGATIVE_INFINITY,
        sym: Symbol('s'),
        fn: namedFn,
        anon: (
          () => () =>
            undefined
        )(),
        undef: undefined,
      }),
    ).toEqual({
      nan: 'NaN',
      inf: '-Infinity',
      sym: 'Symbol(s)',
      fn: '[Function: namedFn]',
      anon: '[Function]',
    });
  });

  it('writes undefined array items as null, like JSON.stringify', () => {
    expect(normalize([1, undefined, 3])).toEqual([1, null, 3]);
  });

  it('writes dates as ISO strings and invalid dates as text', () => {
    expect(normalize({ d: new Date(0), bad: new Date(Number.NaN) })).toEqual({
      d: '1970-01-01T00:00:00.000Z',
      bad: 'Invalid Date',
    });
  });

  it('writes maps as objects, sets as arrays and binary data as a size', () => {
    expect(
      normalize({
        map: new Map<unknown, unknown>([
          ['a', 1],
          [2, 'b'],
        ]),
        set: new Set([1, 2]),
        buf: Buffer.from('abc'),
      }),
    ).toEqual({ map: { a: 1, '2': 'b' }, set: [1, 2], buf: '[Buffer 3 bytes]' });
  });

  it('uses toJSON when an object has one', () => {
    const money = { toJSON: () => ({ amount: 5, currency: 'EUR' }) };
    expect(normalize({ money })).toEqual({ money: { amount: 5, currency: 'EUR' } });
  });

  it('stops at the maximum depth', () => {
    let deep: Record<string, unknown> = { leaf: true };
    for (let i = 0; i < MAX_DEPTH + 5; i += 1) deep = { next: deep };
    const text = JSON.stringify(normalize(deep));
    expect(text).toContain('"[Object]"');
    expect(text).not.toContain('leaf');
  });

  it('records a getter that throws instead of throwing', () => {
    const obj = {
      ok: 1,
      get broken(): never {
        throw new Error('nope');
      },
    };
    expect(normalize(obj)).toEqual({ ok: 1, broken: '[Unreadable: nope]' });
  });

  it('records a toJSON that throws instead of throwing', () => {
    const obj = {
      toJSON(): never {
        throw new Error('bad toJSON');
      },
    };
    expect(normalize({ obj })).toEqual({ obj: '[Unserializable: bad toJSON]' });
  });

  it('survives a revoked proxy', () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(normalize({ p: proxy })).toEqual({ p: expect.stringMatching(/^\[Unserializable: /) });
  });

  it('turns errors inside a context into records', () => {
    const result = normalize({ err: new RangeError('out') }) as { err: Record<string, unknown> };
    expect(result.err).toMatchObject({ class: 'RangeError', message: 'out' });
    expect(result.err['stack']).toEqual(expect.stringContaining('RangeError: out'));
  });
});

describe('serializeError', () => {
  it('records class, message and stack', () => {
    const record = serializeError(new TypeError('bad type'));
    expect(record.class).toBe('TypeError');
    expect(record.message).toBe('bad type');
    expect(record.stack).toMatch(/^TypeError: bad type\n\s+at /);
  });

  it('uses the subclass name', () => {
    class DatabaseError extends Error {}
    expect(serializeError(new DatabaseError('down')).class).toBe('DatabaseError');
  });

  it('records code and other own properties', () => {
    const err = Object.assign(new Error('denied'), { code: 'EACCES', path: '/x', errno: -13 });
    expect(serializeError(err)).toMatchObject({ code: 'EACCES', path: '/x', errno: -13 });
  });

  it('follows the cause chain, recursively', () => {
    const root = new Error('disk');
    const mid = new Error('write failed', { cause: root });
    const top = new Error('save failed', { cause: mid });
    const record = serializeError(top);
    expect(record.cause).toMatchObject({
      class: 'Error',
      message: 'write failed',
      cause: { class: 'Error', message: 'disk' },
    });
  });

  it('records a cause that is not an error as a value', () => {
    expect(serializeError(new Error('x', { cause: { status: 503 } })).cause).toEqual({
      status: 503,
    });
  });

  it(`bounds the cause chain at ${MAX_CAUSE_DEPTH} links`, () => {
    let err = new Error('e0');
    for (let i = 1; i <= MAX_CAUSE_DEPTH + 3; i += 1) err = new Error(`e${i}`, { cause: err });
    let link: unknown = serializeError(err);
    let links = 0;
    while (typeof link === 'object' && link !== null && 'cause' in link) {
      link = (link as { cause: unknown }).cause;
      links += 1;
    }
    expect(links).toBe(MAX_CAUSE_DEPTH + 1);
    expect(link).toBe('[Cause chain truncated]');
  });

  it('stops at a cause cycle', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(serializeError(a)).toMatchObject({
      message: 'a',
      cause: { message: 'b', cause: '[Circular]' },
    });
  });

  it('records the inner errors of an AggregateError', () => {
    const record = serializeError(new AggregateError([new Error('one'), 'two'], 'both failed'));
    expect(record.class).toBe('AggregateError');
    expect(record.errors).toEqual([expect.objectContaining({ message: 'one' }), 'two']);
  });

  it('records a thrown value that is not an error with its type as the class', () => {
    expect(serializeError('plain string')).toEqual({ class: 'string', message: 'plain string' });
    expect(serializeError({ code: 1 })).toEqual({ class: 'object', message: '{"code":1}' });
    expect(serializeError(null)).toEqual({ class: 'null', message: 'null' });
    expect(serializeError(undefined)).toEqual({ class: 'undefined', message: 'undefined' });
  });

  it('recognises errors from another realm', () => {
    const foreign = runInNewContext('new TypeError("elsewhere")') as unknown;
    expect(foreign instanceof Error).toBe(false);
    expect(isError(foreign)).toBe(true);
    expect(serializeError(foreign)).toMatchObject({ class: 'TypeError', message: 'elsewhere' });
  });
});

describe('errorClass', () => {
  it('falls back to the name when the constructor is Object', () => {
    const err = Object.assign(Object.create(Error.prototype) as Error, { name: 'Custom' });
    Object.defineProperty(err, 'constructor', { value: Object });
    expect(errorClass(err)).toBe('Custom');
  });
});

describe('safeJson', () => {
  it('never throws, even for a circular BigInt-holding value', () => {
    const v: Record<string, unknown> = { n: 1n };
    v['v'] = v;
    expect(safeJson(v)).toBe('{"n":"1","v":"[Circular]"}');
  });

  it('writes undefined as the word undefined', () => {
    expect(safeJson(undefined)).toBe('undefined');
  });
});

describe('stringify', () => {
  it.each([
    ['text', 'text'],
    [42, '42'],
    [false, 'false'],
    [10n, '10'],
    [undefined, 'undefined'],
    [null, 'null'],
    [{ a: 1 }, '{"a":1}'],
    [[1, 2], '[1,2]'],
    [new Date(0), '1970-01-01T00:00:00.000Z'],
    [new RangeError('bad'), 'RangeError: bad'],
    [Symbol('x'), 'Symbol(x)'],
  ])('writes %p as %j', (value, text) => {
    expect(stringify(value)).toBe(text);
  });
});
