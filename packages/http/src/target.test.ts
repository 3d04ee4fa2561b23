import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { HttpError } from './errors';
import { hasValidEscapes, parseQueryString, parseRequestTarget, SCAN_LIMIT } from './target';

function refusal(target: string): HttpError {
  try {
    parseRequestTarget(target);
  } catch (err) {
    return err as HttpError;
  }
  throw new Error(`${target} was accepted`);
}

describe('parseRequestTarget', () => {
  it('splits origin-form into path and query', () => {
    expect(parseRequestTarget('/users/7?full=1&x=2')).toEqual({
      path: '/users/7',
      query: 'full=1&x=2',
    });
    expect(parseRequestTarget('/')).toEqual({ path: '/', query: '' });
    expect(parseRequestTarget('/a?')).toEqual({ path: '/a', query: '' });
  });

  it('keeps the path exactly as sent: escapes, dot segments, double slashes, backslashes', () => {
    expect(parseRequestTarget('/files/a%20b').path).toBe('/files/a%20b');
    expect(parseRequestTarget('/a/../b').path).toBe('/a/../b');
    expect(parseRequestTarget('//x//y').path).toBe('//x//y');
    expect(parseRequestTarget('/a\\b\\..\\c').path).toBe('/a\\b\\..\\c');
  });

  it('takes the path and query of absolute-form, and * as is', () => {
    expect(parseRequestTarget('http://example.com/a?b=1')).toEqual({ path: '/a', query: 'b=1' });
    expect(parseRequestTarget('HTTPS://example.com')).toEqual({ path: '/', query: '' });
    expect(parseRequestTarget('http://example.com?q=1')).toEqual({ path: '/', query: 'q=1' });
    expect(parseRequestTarget('*')).toEqual({ path: '*', query: '' });
  });

  it('drops a fragment', () => {
    expect(parseRequestTarget('/a?b=1#frag')).toEqual({ path: '/a', query: 'b=1' });
  });

  it.each(['/a%zz', '/a%', '/a%2', '/%C3', '/%C3%28', '/%ED%A0%80'])(
    'refuses the malformed path escape in %s with a 400 HttpError',
    (target) => {
      const err = refusal(target);
      expect(err).toBeInstanceOf(HttpError);
      expect(err.code).toBe('PKG_ERR_HTTP_MALFORMED_URL');
      expect(err.status).toBe(400);
      expect(err.message).toContain('path');
    },
  );

  it.each(['/a?x=%', '/a?x=%zz', '/a?%E0%A4%A=1', '/a?x=%C3'])(
    'refuses the malformed query escape in %s',
    (target) => {
      expect(refusal(target).message).toContain('query');
    },
  );

  it('refuses targets that are neither origin-form, absolute-form nor *', () => {
    expect(refusal('users').code).toBe('PKG_ERR_HTTP_MALFORMED_URL');
    expect(refusal('ftp://x/y').code).toBe('PKG_ERR_HTTP_MALFORMED_URL');
    expect(refusal('').code).toBe('PKG_ERR_HTTP_MALFORMED_URL');
    expect(refusal('/a b').message).toContain('space or control');
    expect(refusal('/a\u0000').message).toContain('space or control');
  });

  it('refuses a control character before the fragment, in short and long targets alike', () => {
    const long = 'a'.repeat(SCAN_LIMIT);
    for (const pad of ['', long]) {
      expect(refusal(`/${pad}?q=a\u007fb`).message).toContain('space or control');
      expect(refusal(`/${pad}\tx`).message).toContain('space or control');
      // A control character wins over a malformed escape before it.
      expect(refusal(`/${pad}%zz?a b`).message).toContain('space or control');
      expect(parseRequestTarget(`/${pad}?q=1#a b`)).toEqual({ path: `/${pad}`, query: 'q=1' });
    }
  });

  it('splits every target as a plain split at "#" then "?" would, on both sides of the length limit', () => {
    // The split as first written: indexOf and a regular expression, whatever the length.
    const reference = (target: string): { path: string; query: string } | string => {
      const rest = target.split('#')[0]!;
      const mark = rest.indexOf('?');
      const path = mark === -1 ? rest : rest.slice(0, mark);
      const query = mark === -1 ? '' : rest.slice(mark + 1);
      // eslint-disable-next-line no-control-regex
      if (/[\u0000-\u0020\u007f]/.test(rest)) return 'space or control';
      if (!hasValidEscapes(path)) return 'path';
      if (!hasValidEscapes(query, true)) return 'query';
      return { path, query };
    };
    // Characters that matter to the split, escapes good and bad, and plain ones.
    const piece = fc.constantFrom(
      ...'a|Z|9|/|?|#|%|%2|%20|%C3%A9|%C3|%zz|+|=|&| |\t|\u0000|\u007f|é|😀|..'.split('|'),
    );
    const target = fc
      .tuple(fc.array(piece, { maxLength: 24 }), fc.boolean(), fc.integer({ min: 0, max: 3 }))
      .map(([pieces, long, at]) => {
        const body = pieces.join('');
        const pad = long ? 'p'.repeat(SCAN_LIMIT) : '';
        // The padding lands in the path, in the query or after the fragment.
        const spots = [`/${pad}${body}`, `/${body}${pad}`, `/x?${pad}${body}`, `/${body}#${pad}`];
        return spots[at]!;
      });
    fc.assert(
      fc.property(target, (t) => {
        const expected = reference(t);
        if (typeof expected === 'string') {
          const err = refusal(t);
          expect(err.code).toBe('PKG_ERR_HTTP_MALFORMED_URL');
          expect(err.message).toContain(expected);
        } else {
          expect(parseRequestTarget(t)).toEqual(expected);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('shortens very long targets in the message', () => {
    expect(refusal(`/${'a'.repeat(500)}%zz`).message).toContain('...');
  });
});

describe('hasValidEscapes', () => {
  it('checks escapes, optionally reading + as space', () => {
    expect(hasValidEscapes('plain')).toBe(true);
    expect(hasValidEscapes('caf%C3%A9')).toBe(true);
    expect(hasValidEscapes('%G0')).toBe(false);
    expect(hasValidEscapes('a+b%20c', true)).toBe(true);
  });
});

describe('parseQueryString', () => {
  it('decodes with URLSearchParams and gives arrays for repeated keys', () => {
    const query = parseQueryString('a=1&b=x+y&a=2&c=caf%C3%A9&a=3&empty=');
    expect(query.a).toEqual(['1', '2', '3']);
    expect(query.b).toBe('x y');
    expect(query.c).toBe('café');
    expect(query.empty).toBe('');
  });

  it('returns an object without a prototype and drops __proto__ keys', () => {
    const query = parseQueryString('__proto__=x&constructor=y&toString=z&%5F_proto__=w');
    expect(Object.getPrototypeOf(query)).toBeNull();
    expect(Object.hasOwn(query, '__proto__')).toBe(false);
    expect(Object.keys(query)).toEqual(['constructor', 'toString']);
    expect(query.constructor).toBe('y');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('cannot pollute Object.prototype through Object.assign or a naive deep merge', () => {
    const query = parseQueryString('__proto__=a&__proto__=b&constructor[prototype][p]=1');
    const merge = (target: Record<string, unknown>, source: Record<string, unknown>): void => {
      for (const key in source) {
        const value = source[key];
        if (value !== null && typeof value === 'object') {
          target[key] ??= {};
          merge(target[key] as Record<string, unknown>, value as Record<string, unknown>);
        } else {
          target[key] = value;
        }
      }
    };
    const assigned = Object.assign({}, query);
    expect(Object.getPrototypeOf(assigned)).toBe(Object.prototype);
    merge({}, query);
    const probe = {} as Record<string, unknown>;
    expect(probe[0]).toBeUndefined();
    expect(probe.p).toBeUndefined();
    expect(Object.keys(query)).toEqual(['constructor[prototype][p]']);
  });
});
