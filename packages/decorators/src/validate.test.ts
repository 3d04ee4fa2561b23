import { describe, expect, test } from '@jest/globals';
import type { DecError } from './errors';
import {
  describeValue,
  httpRouteKey,
  httpSchemasOf,
  isMiddleware,
  normalizeHttpMethod,
  quoteMethod,
  validateEvent,
  validatePath,
  validateRateLimit,
  validateRouteOptions,
  validateSchema,
} from './validate';

const SITE = '@X() on method "m"';

function thrown(fn: () => unknown): DecError {
  try {
    fn();
  } catch (error) {
    return error as DecError;
  }
  throw new Error('expected a throw');
}

describe('describe / quoteMethod', () => {
  test('shows values by kind', () => {
    expect(describeValue('a')).toBe('"a"');
    expect(describeValue(null)).toBe('null');
    expect(describeValue([1])).toBe('an array');
    expect(describeValue({})).toBe('an object');
    expect(describeValue(3)).toBe('number 3');
    expect(describeValue(undefined)).toBe('undefined undefined');
    expect(describeValue(function named() {})).toBe('function named');
    expect(describeValue(() => {})).toBe('function (anonymous)');
  });

  test('quotes method names, symbols in brackets', () => {
    expect(quoteMethod('onChat')).toBe('"onChat"');
    expect(quoteMethod(Symbol('s'))).toBe('"[Symbol(s)]"');
  });
});

describe('validateEvent', () => {
  test.each(['chat', 'chat.message', 'a_b-c.9', 'X'])('accepts %p', (event) => {
    expect(validateEvent(event, SITE)).toBe(event);
  });

  test.each([
    ['', 'is empty'],
    ['chat message', 'contains characters outside'],
    ['chat/message', 'contains characters outside'],
    ['é', 'contains characters outside'],
    ['a\n', 'contains characters outside'],
  ])('refuses %p', (event, what) => {
    const error = thrown(() => validateEvent(event, SITE));
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe('PKG_ERR_DEC_INVALID_EVENT');
    expect(error.message).toContain(SITE);
    expect(error.message).toContain(what);
  });

  test('refuses a non-string', () => {
    expect(thrown(() => validateEvent(42, SITE)).message).toContain(
      'must be a string, got number 42',
    );
  });
});

describe('normalizeHttpMethod', () => {
  test.each([
    ['get', 'GET'],
    ['Post', 'POST'],
    ['PUT', 'PUT'],
    ['patch', 'PATCH'],
    ['delete', 'DELETE'],
    ['head', 'HEAD'],
    ['options', 'OPTIONS'],
  ])('normalises %p to %p', (input, output) => {
    expect(normalizeHttpMethod(input, SITE)).toBe(output);
  });

  test.each(['CONNECT', 'TRACE', 'FETCH', '', ' GET', 7, undefined])('refuses %p', (input) => {
    const error = thrown(() => normalizeHttpMethod(input, SITE));
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe('PKG_ERR_DEC_INVALID_METHOD');
    expect(error.message).toContain(SITE);
    expect(error.message).toContain('GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS');
  });
});

describe('validatePath', () => {
  test.each(['/', '/api/status', '/users/{id}', '/a/{b}/c/{d_2}', '/{_x}', '/files/a.b-c~d'])(
    'accepts %p',
    (path) => {
      expect(validatePath(path, SITE)).toBe(path);
    },
  );

  test.each([
    ['users', 'does not start with "/"'],
    ['', 'does not start with "/"'],
    ['/users/{}', 'empty parameter'],
    ['/users/{id', 'unbalanced brace'],
    ['/users/id}', 'unbalanced brace'],
    ['/users/{{id}', 'unbalanced brace'],
    ['/users/{id}{x}', 'malformed parameter segment'],
    ['/files/{name}.json', 'malformed parameter segment'],
    ['/users/{1d}', 'malformed parameter segment'],
    ['/users/{a-b}', 'malformed parameter segment'],
    ['/a/{id}/b/{id}', 'uses the parameter name "id" twice'],
    ['/search?q=1', 'query string'],
    ['/page#top', 'query string, fragment'],
    ['/a b', 'whitespace'],
    ['/a\u0000', 'control character'],
  ])('refuses %p', (path, what) => {
    const error = thrown(() => validatePath(path, SITE));
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe('PKG_ERR_DEC_INVALID_PATH');
    expect(error.message).toContain(SITE);
    expect(error.message).toContain(what);
  });

  test('refuses a non-string', () => {
    expect(thrown(() => validatePath(null, SITE)).message).toContain('must be a string, got null');
  });

  test('suggests the fixed path when the slash is missing', () => {
    expect(thrown(() => validatePath('users', SITE)).message).toContain('Write it as "/users"');
  });
});

describe('httpRouteKey', () => {
  test('ignores parameter names but not the method or static segments', () => {
    expect(httpRouteKey('GET', '/u/{id}')).toBe(httpRouteKey('GET', '/u/{name}'));
    expect(httpRouteKey('GET', '/u/{id}')).not.toBe(httpRouteKey('POST', '/u/{id}'));
    expect(httpRouteKey('GET', '/u/{id}')).not.toBe(httpRouteKey('GET', '/u/me'));
  });
});

describe('isMiddleware', () => {
  class WithHandle {
    handle(): void {}
  }
  class WithoutHandle {}
  class FieldHandle {
    handle = (): void => {};
  }
  test('accepts functions and classes with a handle method', () => {
    expect(isMiddleware(() => undefined)).toBe(true);
    expect(isMiddleware(async function named() {})).toBe(true);
    expect(isMiddleware(WithHandle)).toBe(true);
    expect(isMiddleware(class extends WithHandle {})).toBe(true);
  });
  test('refuses classes without a handle method, instances and other values', () => {
    expect(isMiddleware(WithoutHandle)).toBe(false);
    expect(isMiddleware(FieldHandle)).toBe(false);
    expect(isMiddleware(new WithHandle())).toBe(false);
    expect(isMiddleware('Auth')).toBe(false);
    expect(isMiddleware(null)).toBe(false);
  });
});

describe('validateRouteOptions', () => {
  const fn = (): void => {};
  class Mw {
    handle(): void {}
  }

  test('defaults to empty lists', () => {
    expect(validateRouteOptions(undefined, SITE)).toEqual({
      middlewares: [],
      excludeGlobalMiddlewares: [],
      schemas: {},
    });
    expect(validateRouteOptions({}, SITE)).toEqual({
      middlewares: [],
      excludeGlobalMiddlewares: [],
      schemas: {},
    });
  });

  test('copies the lists in order', () => {
    const middlewares = [fn, Mw];
    const result = validateRouteOptions({ middlewares, excludeGlobalMiddlewares: [Mw] }, SITE);
    expect(result).toEqual({ middlewares: [fn, Mw], excludeGlobalMiddlewares: [Mw], schemas: {} });
    middlewares.push(fn);
    expect(result.middlewares).toHaveLength(2);
  });

  test.each([null, 'x', [], 3])('refuses options %p', (options) => {
    const error = thrown(() => validateRouteOptions(options, SITE));
    expect(error.code).toBe('PKG_ERR_DEC_INVALID_OPTIONS');
    expect(error.message).toContain('must be an object');
  });

  test('refuses an unknown key, naming it', () => {
    const error = thrown(() => validateRouteOptions({ middleware: [fn] }, SITE));
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe('PKG_ERR_DEC_INVALID_OPTIONS');
    expect(error.message).toContain('unknown option "middleware"');
  });

  test('refuses a list that is not an array', () => {
    const error = thrown(() => validateRouteOptions({ middlewares: fn }, SITE));
    expect(error.code).toBe('PKG_ERR_DEC_INVALID_MIDDLEWARE');
    expect(error.message).toContain('"middlewares" must be an array');
  });

  test.each([
    ['middlewares', 'AuthMiddleware', 'middlewares[1] is "AuthMiddleware"'],
    ['excludeGlobalMiddlewares', new Mw(), 'excludeGlobalMiddlewares[1] is an object'],
    ['middlewares', class NoHandle {}, 'middlewares[1] is function NoHandle'],
  ])('refuses a bad entry in %s', (key, entry, what) => {
    const error = thrown(() => validateRouteOptions({ [key]: [fn, entry] }, SITE));
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe('PKG_ERR_DEC_INVALID_MIDDLEWARE');
    expect(error.message).toContain(SITE);
    expect(error.message).toContain(what);
    expect(error.message).toContain('neither a function nor a class with a handle method');
  });
});

describe('validateRateLimit', () => {
  test('takes positional and object forms', () => {
    expect(validateRateLimit(10, 60, 2, SITE)).toEqual({ maxCount: 10, timeWindow: 60 });
    expect(validateRateLimit({ maxCount: 1, timeWindow: 1 }, undefined, 1, SITE)).toEqual({
      maxCount: 1,
      timeWindow: 1,
    });
  });

  test.each([
    [0, 60, 'maxCount must be a positive integer, got number 0'],
    [-1, 60, 'maxCount must be a positive integer'],
    [1.5, 60, 'maxCount must be a positive integer, got number 1.5'],
    [Number.NaN, 60, 'maxCount'],
    [Number.POSITIVE_INFINITY, 60, 'maxCount'],
    ['10', 60, 'maxCount must be a positive integer, got "10"'],
    [10, 0, 'timeWindow (seconds) must be a positive integer, got number 0'],
    [10, 0.5, 'timeWindow (seconds)'],
    [10, undefined, 'timeWindow (seconds) must be a positive integer, got undefined'],
  ])('refuses (%p, %p)', (maxCount, timeWindow, what) => {
    const error = thrown(() => validateRateLimit(maxCount, timeWindow, 2, SITE));
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe('PKG_ERR_DEC_INVALID_RATE_LIMIT');
    expect(error.message).toContain(SITE);
    expect(error.message).toContain(what);
  });

  test('refuses bad object forms', () => {
    expect(thrown(() => validateRateLimit({ maxCount: 1 }, undefined, 1, SITE)).message).toContain(
      'timeWindow',
    );
    const unknownKey = thrown(() =>
      validateRateLimit({ max: 1, timeWindow: 1 }, undefined, 1, SITE),
    );
    expect(unknownKey.code).toBe('PKG_ERR_DEC_INVALID_RATE_LIMIT');
    expect(unknownKey.message).toContain('unknown option "max"');
    // An object and a second argument: the object is taken as maxCount and refused.
    expect(
      thrown(() => validateRateLimit({ maxCount: 1, timeWindow: 1 }, 5, 2, SITE)).message,
    ).toContain('maxCount must be a positive integer, got an object');
  });
});

describe('schema options', () => {
  const schema = {
    '~standard': { version: 1, vendor: 'test', validate: (value: unknown) => ({ value }) },
  };

  test('accepts Standard Schemas under the listed keys only', () => {
    expect(validateRouteOptions({ schema }, SITE, ['schema']).schemas).toEqual({ schema });
    expect(() => validateRouteOptions({ schema }, SITE)).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_DEC_INVALID_OPTIONS' }) as unknown as Error,
    );
  });

  test.each([
    ['a plain object', { type: 'string' }],
    ['a wrong version', { '~standard': { version: 2, validate: () => ({ value: 1 }) } }],
    ['no validate function', { '~standard': { version: 1 } }],
    ['a string', 'z.string()'],
  ])('refuses %s with PKG_ERR_DEC_INVALID_SCHEMA', (_name, value) => {
    expect(() => validateSchema(value, 'body', SITE)).toThrow(
      expect.objectContaining({
        code: 'PKG_ERR_DEC_INVALID_SCHEMA',
        message: expect.stringContaining('"body" must be a Standard Schema'),
      }) as unknown as Error,
    );
  });

  test('keeps only the HTTP parts that have a schema', () => {
    expect(httpSchemasOf({})).toBeUndefined();
    expect(httpSchemasOf({ body: schema as never })).toEqual({ body: schema });
  });
});

describe('Express-style path parameters', () => {
  test('are refused with the brace form in the message', () => {
    expect(() => validatePath('/users/:id', SITE)).toThrow(
      expect.objectContaining({
        code: 'PKG_ERR_DEC_INVALID_PATH',
        message: expect.stringContaining('Write parameters in braces: "/users/{id}"'),
      }) as unknown as Error,
    );
  });

  test('a colon inside a segment is still a literal', () => {
    expect(validatePath('/time/12:30', SITE)).toBe('/time/12:30');
  });
});
