import { describe, expect, test } from '@jest/globals';
import type { Response } from '@pkg/http';
import type { DecError } from './errors';
import { HttpRoute } from './http-route';
import { RateLimit } from './rate-limit';
import { getControllerMetadata } from './reader';
import { OnConnect, SocketOn } from './socket';

function thrown(fn: () => unknown): DecError {
  try {
    fn();
  } catch (error) {
    return error as DecError;
  }
  throw new Error('expected a throw');
}

const ok = {} as Response;

describe('RateLimit', () => {
  test('attaches the rule to the method’s HTTP routes, above or below the route decorator', () => {
    class Api {
      @HttpRoute('POST', '/api/broadcast')
      @RateLimit(10, 60)
      broadcast(): Response {
        return ok;
      }

      @RateLimit({ maxCount: 3, timeWindow: 1 })
      @HttpRoute('GET', '/api/a')
      @HttpRoute('GET', '/api/b')
      both(): Response {
        return ok;
      }

      @HttpRoute('GET', '/api/free')
      free(): Response {
        return ok;
      }
    }
    const routes = getControllerMetadata(Api).httpRoutes;
    expect(routes.map((r) => [r.path, r.rateLimit])).toEqual([
      ['/api/broadcast', { maxCount: 10, timeWindow: 60 }],
      ['/api/a', { maxCount: 3, timeWindow: 1 }],
      ['/api/b', { maxCount: 3, timeWindow: 1 }],
      ['/api/free', undefined],
    ]);
    expect(routes[3]).not.toHaveProperty('rateLimit');
  });

  test('limits SocketOn events as well', () => {
    class Chat {
      @RateLimit(5, 10)
      @SocketOn('chat.message')
      message(): void {}
    }
    expect(getControllerMetadata(Chat).socketRoutes[0]?.rateLimit).toEqual({
      maxCount: 5,
      timeWindow: 10,
    });
  });

  test('each read returns a copy of the rule', () => {
    class Chat {
      @RateLimit(5, 10)
      @SocketOn('chat.message')
      message(): void {}
    }
    const first = getControllerMetadata(Chat).socketRoutes[0]!;
    first.rateLimit!.maxCount = 1000;
    expect(getControllerMetadata(Chat).socketRoutes[0]?.rateLimit?.maxCount).toBe(5);
  });

  test.each([
    [0, 60, 'maxCount must be a positive integer, got number 0'],
    [10, -1, 'timeWindow (seconds) must be a positive integer, got number -1'],
    [2.5, 60, 'maxCount must be a positive integer, got number 2.5'],
  ])('refuses RateLimit(%p, %p) at class definition', (maxCount, timeWindow, what) => {
    const error = thrown(() => {
      class Bad {
        @HttpRoute('GET', '/x')
        @RateLimit(maxCount, timeWindow)
        route(): Response {
          return ok;
        }
      }
      return Bad;
    });
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe('PKG_ERR_DEC_INVALID_RATE_LIMIT');
    expect(error.message).toContain('@RateLimit() on method "route"');
    expect(error.message).toContain(what);
  });

  test('refuses two RateLimits on one method', () => {
    const error = thrown(() => {
      class Bad {
        @HttpRoute('GET', '/x')
        @RateLimit(1, 1)
        @RateLimit(2, 2)
        route(): Response {
          return ok;
        }
      }
      return Bad;
    });
    expect(error.code).toBe('PKG_ERR_DEC_DUPLICATE_RATE_LIMIT');
    expect(error.message).toContain('already has a RateLimit');
  });

  test('without a route decorator: a TypeError naming class and method when read', () => {
    class Lonely {
      @RateLimit(1, 60)
      nothing(): void {}

      @OnConnect()
      @RateLimit(1, 60)
      connected(): void {}
    }
    const error = thrown(() => getControllerMetadata(Lonely));
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe('PKG_ERR_DEC_RATE_LIMIT_WITHOUT_ROUTE');
    expect(error.message).toContain('@RateLimit() on Lonely.nothing');
    expect(error.message).toContain('neither @HttpRoute() nor @SocketOn()');
  });

  test('on a lifecycle hook only: refused as well', () => {
    class Hooked {
      @OnConnect()
      @RateLimit(1, 60)
      connected(): void {}
    }
    expect(thrown(() => getControllerMetadata(Hooked)).message).toContain(
      '@RateLimit() on Hooked.connected',
    );
  });
});
