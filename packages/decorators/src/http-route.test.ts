import { describe, expect, test } from '@jest/globals';
import type { Request, Response } from '@pkg/http';
import type { DecError } from './errors';
import { HttpRoute } from './http-route';
import { getControllerMetadata } from './reader';
import type { HttpNext } from './types';

function thrown(fn: () => unknown): DecError {
  try {
    fn();
  } catch (error) {
    return error as DecError;
  }
  throw new Error('expected a throw');
}

// The decorators never call handlers; a stand-in response keeps these tests independent
// of @pkg/http's implementation.
const ok = { stand: 'in' } as unknown as Response;
const cors = (_request: Request, next: HttpNext): Promise<Response> => next();
class Auth {
  handle(_request: Request, next: HttpNext): Promise<Response> {
    return next();
  }
}

describe('HttpRoute', () => {
  test('records method (upper case), path, handler and options', () => {
    class Users {
      @HttpRoute('GET', '/users/{id}', {
        middlewares: [Auth, cors],
        excludeGlobalMiddlewares: [cors],
      })
      show(_request: Request): Response {
        return ok;
      }

      @HttpRoute('post', '/users')
      async create(): Promise<Response> {
        return ok;
      }
    }
    expect(getControllerMetadata(Users).httpRoutes).toEqual([
      {
        method: 'GET',
        path: '/users/{id}',
        handler: 'show',
        middlewares: [Auth, cors],
        excludeGlobalMiddlewares: [cors],
      },
      {
        method: 'POST',
        path: '/users',
        handler: 'create',
        middlewares: [],
        excludeGlobalMiddlewares: [],
      },
    ]);
    expect(new Users().show({} as Request)).toBe(ok);
  });

  test('accepts every supported method in any case', () => {
    class All {
      @HttpRoute('get', '/a')
      @HttpRoute('POST', '/a')
      @HttpRoute('put', '/a')
      @HttpRoute('PATCH', '/a')
      @HttpRoute('delete', '/a')
      @HttpRoute('HEAD', '/a')
      @HttpRoute('Options' as 'OPTIONS', '/a')
      any(): Response {
        return ok;
      }
    }
    expect(getControllerMetadata(All).httpRoutes.map((r) => r.method)).toEqual([
      'GET',
      'POST',
      'PUT',
      'PATCH',
      'DELETE',
      'HEAD',
      'OPTIONS',
    ]);
  });

  test('refuses a method outside the supported set', () => {
    const error = thrown(() => {
      class Bad {
        // @ts-expect-error -- TRACE is not a supported method
        @HttpRoute('TRACE', '/x')
        trace(): Response {
          return ok;
        }
      }
      return Bad;
    });
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe('PKG_ERR_DEC_INVALID_METHOD');
    expect(error.message).toContain(
      '@HttpRoute() on method "trace": "TRACE" is not a supported HTTP method',
    );
  });

  test.each([
    ['users', 'does not start with "/"'],
    ['/users/{}', 'empty parameter "{}"'],
    ['/users/{id', 'unbalanced brace'],
    ['/users/{id}/posts/{id}', 'uses the parameter name "id" twice'],
  ])('refuses the path %p at class definition', (path, what) => {
    const error = thrown(() => {
      class Bad {
        @HttpRoute('GET', path)
        route(): Response {
          return ok;
        }
      }
      return Bad;
    });
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe('PKG_ERR_DEC_INVALID_PATH');
    expect(error.message).toContain('@HttpRoute() on method "route"');
    expect(error.message).toContain(what);
  });

  test('refuses a bad middleware entry', () => {
    const error = thrown(() => {
      class Bad {
        @HttpRoute('GET', '/x', {
          excludeGlobalMiddlewares: [new Auth() as unknown as typeof Auth],
        })
        route(): Response {
          return ok;
        }
      }
      return Bad;
    });
    expect(error.code).toBe('PKG_ERR_DEC_INVALID_MIDDLEWARE');
    expect(error.message).toContain('excludeGlobalMiddlewares[0] is an object');
    expect(error.message).toContain('not an instance');
  });

  test('refuses the same method and path pattern twice in one class', () => {
    const error = thrown(() => {
      class Bad {
        @HttpRoute('GET', '/users/{id}')
        byId(): Response {
          return ok;
        }

        @HttpRoute('get', '/users/{name}')
        byName(): Response {
          return ok;
        }
      }
      return Bad;
    });
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe('PKG_ERR_DEC_DUPLICATE_ROUTE');
    expect(error.message).toContain(
      '@HttpRoute() on method "byName": the route GET /users/{name} is already declared (as GET /users/{id}) on method "byId"',
    );

    const sameMethod = thrown(() => {
      class Bad {
        @HttpRoute('GET', '/a')
        @HttpRoute('GET', '/a')
        route(): Response {
          return ok;
        }
      }
      return Bad;
    });
    expect(sameMethod.message).toContain('the route GET /a is declared twice on this method');
  });

  test('allows the same path under different methods and different static paths', () => {
    class Fine {
      @HttpRoute('GET', '/users/{id}')
      @HttpRoute('HEAD', '/users/{id}')
      show(): Response {
        return ok;
      }

      @HttpRoute('DELETE', '/users/{id}')
      remove(): Response {
        return ok;
      }

      @HttpRoute('GET', '/users/me')
      me(): Response {
        return ok;
      }
    }
    expect(getControllerMetadata(Fine).httpRoutes).toHaveLength(4);
  });

  test('refuses static methods', () => {
    const error = thrown(() => {
      class Bad {
        @HttpRoute('GET', '/x')
        static route(): Response {
          return ok;
        }
      }
      return Bad;
    });
    expect(error.code).toBe('PKG_ERR_DEC_INVALID_TARGET');
  });
});
