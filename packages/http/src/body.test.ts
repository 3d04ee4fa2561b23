import { describe, expect, it } from '@jest/globals';
import { isJsonMediaType, mediaType, parseBody, parseJsonSafely } from './body';
import { HttpError } from './errors';

const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');

describe('mediaType and isJsonMediaType', () => {
  it('lower-cases and drops parameters', () => {
    expect(mediaType('Application/JSON; charset=UTF-8')).toBe('application/json');
    expect(mediaType(undefined)).toBe('');
  });

  it('knows application/json and +json types', () => {
    expect(isJsonMediaType('application/json')).toBe(true);
    expect(isJsonMediaType('application/problem+json')).toBe(true);
    expect(isJsonMediaType('text/json')).toBe(false);
    expect(isJsonMediaType('application/jsonx')).toBe(false);
  });
});

describe('parseJsonSafely', () => {
  it('parses JSON', () => {
    expect(parseJsonSafely('{"a":[1,2,{"b":null}]}')).toEqual({ a: [1, 2, { b: null }] });
  });

  it.each([
    ['__proto__ at the top', '{"__proto__":{"polluted":1},"keep":1}'],
    ['__proto__ deeper down', '{"a":[{"b":{"__proto__":{"polluted":2}}}]}'],
    ['__proto__ spelled with an escape', '{"\\u005f_proto__":{"polluted":3}}'],
    ['constructor.prototype', '{"a":{"constructor":{"prototype":{"polluted":4}}}}'],
  ])('refuses %s by default with a 400 that says how to allow removal', (_name, text) => {
    let caught: unknown;
    try {
      parseJsonSafely(text);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(HttpError);
    expect((caught as HttpError).code).toBe('PKG_ERR_HTTP_INVALID_JSON');
    expect((caught as HttpError).status).toBe(400);
    expect((caught as HttpError).message).toContain("prototypeKeys: 'remove'");
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('keeps constructor values without a prototype member', () => {
    expect(parseJsonSafely('{"constructor":"plain","b":{"constructor":{"name":"x"}}}')).toEqual({
      constructor: 'plain',
      b: { constructor: { name: 'x' } },
    });
  });

  it("with 'remove', drops __proto__ keys at any depth, however they are spelled", () => {
    const parsed = parseJsonSafely(
      '{"__proto__":{"polluted":1},"a":{"__proto__":{"polluted":2}},"\\u005f_proto__":{"polluted":3},"keep":1}',
      'remove',
    ) as Record<string, unknown>;
    expect(Object.hasOwn(parsed, '__proto__')).toBe(false);
    expect(Object.hasOwn(parsed.a as object, '__proto__')).toBe(false);
    expect(parsed.keep).toBe(1);
    const merged = Object.assign({}, parsed, parsed.a);
    expect((merged as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("with 'remove', drops constructor keys that carry a prototype, keeps other constructor values", () => {
    const parsed = parseJsonSafely(
      '{"constructor":{"prototype":{"polluted":1}},"b":{"constructor":"plain"}}',
      'remove',
    ) as Record<string, Record<string, unknown>>;
    expect(Object.hasOwn(parsed, 'constructor')).toBe(false);
    expect(parsed.b?.constructor).toBe('plain');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('throws a 400 HttpError for malformed JSON, with the parser error as cause', () => {
    let caught: unknown;
    try {
      parseJsonSafely('{"a":');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(HttpError);
    expect((caught as HttpError).code).toBe('PKG_ERR_HTTP_INVALID_JSON');
    expect((caught as HttpError).status).toBe(400);
    expect((caught as HttpError).cause).toBeInstanceOf(SyntaxError);
  });
});

describe('parseBody', () => {
  it('parses JSON bodies, with a BOM or a +json type', () => {
    expect(parseBody(bytes('{"a":1}'), 'application/json')).toEqual({ a: 1 });
    expect(parseBody(bytes('\uFEFF[1]'), 'application/json; charset=utf-8')).toEqual([1]);
    expect(parseBody(bytes('"x"'), 'application/vnd.api+json')).toBe('x');
  });

  it('gives null for an empty JSON body and throws for a malformed one', () => {
    expect(parseBody(Buffer.alloc(0), 'application/json')).toBeNull();
    expect(parseBody(bytes('  '), 'application/json')).toBeNull();
    expect(() => parseBody(bytes('{nope}'), 'application/json')).toThrow(HttpError);
  });

  it('parses form bodies into prototype-free objects with arrays for repeated keys', () => {
    const form = parseBody(
      bytes('name=Ada+Lovelace&tag=a&tag=b&__proto__=x&__proto__=y'),
      'application/x-www-form-urlencoded',
    ) as Record<string, unknown>;
    expect(form.name).toBe('Ada Lovelace');
    expect(form.tag).toEqual(['a', 'b']);
    expect(Object.getPrototypeOf(form)).toBeNull();
    expect(Object.hasOwn(form, '__proto__')).toBe(false);
    expect(Object.getPrototypeOf(Object.assign({}, form))).toBe(Object.prototype);
    expect(parseBody(Buffer.alloc(0), 'application/x-www-form-urlencoded')).toEqual({});
  });

  it('refuses a form body with a malformed escape', () => {
    expect(() => parseBody(bytes('a=%zz'), 'application/x-www-form-urlencoded')).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_HTTP_INVALID_FORM', status: 400 }),
    );
  });

  it('decodes text bodies as UTF-8, or Latin-1 when the charset says so', () => {
    expect(parseBody(bytes('héllo'), 'text/plain')).toBe('héllo');
    expect(parseBody(Buffer.from([0x68, 0xe9]), 'text/plain; charset=ISO-8859-1')).toBe('hé');
    expect(parseBody(Buffer.alloc(0), 'text/plain')).toBe('');
  });

  it('keeps other bodies, and encoded bodies, as bytes', () => {
    const raw = Buffer.from([1, 2, 3]);
    expect(parseBody(raw, 'application/octet-stream')).toBe(raw);
    expect(parseBody(raw, undefined)).toBe(raw);
    expect(parseBody(bytes('{"a":1}'), 'application/json', 'gzip')).toEqual(bytes('{"a":1}'));
    expect(parseBody(bytes('{"a":1}'), 'application/json', 'identity')).toEqual({ a: 1 });
    expect(parseBody(Buffer.alloc(0), undefined)).toBeNull();
    expect(parseBody(Buffer.alloc(0), 'application/json', 'br')).toBeNull();
  });
});
