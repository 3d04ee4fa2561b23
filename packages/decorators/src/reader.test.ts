import { describe, expect, test } from '@jest/globals';
import type { Response } from '@pkg/http';
import type { DecError } from './errors';
import { HttpRoute } from './http-route';
import { RateLimit } from './rate-limit';
import { getControllerMetadata } from './reader';
import { OnConnect, OnDisconnect, SocketOn } from './socket';
import type { ControllerMetadata, WsContext, WsNext } from './types';

function thrown(fn: () => unknown): DecError {
  try {
    fn();
  } catch (error) {
    return error as DecError;
  }
  throw new Error('expected a throw');
}

const ok = {} as Response;
const logEvents = async (_context: WsContext, next: WsNext): Promise<void> => next();

function summary(metadata: ControllerMetadata): Record<string, string[]> {
  return {
    ws: metadata.socketRoutes.map((r) => `${r.event}->${String(r.handler)}`),
    http: metadata.httpRoutes.map((r) => `${r.method} ${r.path}->${String(r.handler)}`),
    connect: metadata.connectHandlers.map(String),
    disconnect: metadata.disconnectHandlers.map(String),
  };
}

abstract class BaseController {
  calls: string[] = [];

  @OnConnect()
  connected(clientId: string): void {
    this.calls.push(`base connected ${clientId}`);
  }

  @OnDisconnect()
  disconnected(_clientId: string): void {}

  @SocketOn('ping', { middlewares: [logEvents] })
  ping(_clientId: string): void {}

  @SocketOn('status')
  status(): string {
    return 'base status';
  }

  @HttpRoute('GET', '/health')
  @RateLimit(5, 1)
  health(): Response {
    return ok;
  }
}

describe('getControllerMetadata', () => {
  test('a class without decorators has nothing', () => {
    class Plain {}
    expect(getControllerMetadata(Plain)).toEqual({
      socketRoutes: [],
      httpRoutes: [],
      connectHandlers: [],
      disconnectHandlers: [],
    });
  });

  test('reads an abstract base class', () => {
    expect(summary(getControllerMetadata(BaseController))).toEqual({
      ws: ['ping->ping', 'status->status'],
      http: ['GET /health->health'],
      connect: ['connected'],
      disconnect: ['disconnected'],
    });
  });

  test('a subclass without decorators inherits everything', () => {
    class Plain extends BaseController {}
    expect(getControllerMetadata(Plain)).toEqual(getControllerMetadata(BaseController));
  });

  test('inherited handlers come first, then the subclass’s own, through several levels', () => {
    class Middle extends BaseController {
      @SocketOn('middle')
      middle(): void {}
    }
    class Leaf extends Middle {
      @HttpRoute('GET', '/leaf')
      leaf(): Response {
        return ok;
      }

      @OnConnect()
      leafConnected(): void {}
    }
    expect(summary(getControllerMetadata(Leaf))).toEqual({
      ws: ['ping->ping', 'status->status', 'middle->middle'],
      http: ['GET /health->health', 'GET /leaf->leaf'],
      connect: ['connected', 'leafConnected'],
      disconnect: ['disconnected'],
    });
    // The base classes are unaffected by what their subclasses declare.
    expect(summary(getControllerMetadata(Middle)).http).toEqual(['GET /health->health']);
    expect(summary(getControllerMetadata(BaseController)).ws).toEqual([
      'ping->ping',
      'status->status',
    ]);
  });

  test('a re-decorated method replaces everything the base declared for that name', () => {
    class Override extends BaseController {
      @SocketOn('ping.v2')
      override ping(): void {}

      @HttpRoute('GET', '/healthz')
      override health(): Response {
        return ok;
      }
    }
    const metadata = getControllerMetadata(Override);
    expect(summary(metadata)).toEqual({
      // the overriding method keeps the place where the base declared it
      ws: ['ping.v2->ping', 'status->status'],
      http: ['GET /healthz->health'],
      connect: ['connected'],
      disconnect: ['disconnected'],
    });
    // the base's options and rate limit went with the base's declaration
    expect(metadata.socketRoutes[0]?.middlewares).toEqual([]);
    expect(metadata.httpRoutes[0]).not.toHaveProperty('rateLimit');
  });

  test('a re-decorated lifecycle method can drop out of the hooks by taking another role', () => {
    class Quiet extends BaseController {
      @SocketOn('connected')
      override connected(): void {}
    }
    const metadata = getControllerMetadata(Quiet);
    expect(metadata.connectHandlers).toEqual([]);
    expect(summary(metadata).ws).toContain('connected->connected');
  });

  test('a method overridden without decorators keeps the inherited routes, and the override runs', () => {
    class Custom extends BaseController {
      override status(): string {
        return 'custom status';
      }

      override connected(clientId: string): void {
        this.calls.push(`custom connected ${clientId}`);
      }
    }
    const metadata = getControllerMetadata(Custom);
    expect(metadata).toEqual(getControllerMetadata(BaseController));

    // What a server does with the metadata: call the named method on the instance.
    const controller = new Custom();
    const route = metadata.socketRoutes.find((r) => r.event === 'status')!;
    const handler = (controller as unknown as Record<string | symbol, () => unknown>)[
      route.handler
    ]!;
    expect(handler.call(controller)).toBe('custom status');
    for (const name of metadata.connectHandlers) {
      (controller as unknown as Record<string | symbol, (id: string) => void>)[name]!.call(
        controller,
        'c1',
      );
    }
    expect(controller.calls).toEqual(['custom connected c1']);
  });

  test('a subclass declaring the same event or method+path on another method takes it over', () => {
    class Takeover extends BaseController {
      @SocketOn('ping')
      newPing(): void {}

      @HttpRoute('get', '/health')
      newHealth(): Response {
        return ok;
      }
    }
    const metadata = getControllerMetadata(Takeover);
    expect(summary(metadata)).toEqual({
      ws: ['status->status', 'ping->newPing'],
      http: ['GET /health->newHealth'],
      connect: ['connected'],
      disconnect: ['disconnected'],
    });
    expect(metadata.httpRoutes[0]).not.toHaveProperty('rateLimit');
  });

  test('a route takeover compares path patterns, not parameter names', () => {
    class Base {
      @HttpRoute('GET', '/items/{id}')
      byId(): Response {
        return ok;
      }
    }
    class Derived extends Base {
      @HttpRoute('GET', '/items/{slug}')
      bySlug(): Response {
        return ok;
      }
    }
    expect(summary(getControllerMetadata(Derived)).http).toEqual(['GET /items/{slug}->bySlug']);
  });

  test('RateLimit in a subclass override without the route decorator is refused, naming the subclass', () => {
    class LimitOnly extends BaseController {
      @RateLimit(1, 1)
      override health(): Response {
        return ok;
      }
    }
    const error = thrown(() => getControllerMetadata(LimitOnly));
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe('PKG_ERR_DEC_RATE_LIMIT_WITHOUT_ROUTE');
    expect(error.message).toContain('@RateLimit() on LimitOnly.health');
    expect(error.message).toContain('must repeat the route decorators');
  });

  test('names anonymous classes and symbol-named methods in errors', () => {
    const kHidden = Symbol('hidden');
    const Anonymous = (() =>
      class {
        @RateLimit(1, 1)
        [kHidden](): void {}
      })();
    expect(thrown(() => getControllerMetadata(Anonymous)).message).toContain(
      '@RateLimit() on (anonymous class).[Symbol(hidden)]',
    );
  });

  test('returns fresh arrays on every call', () => {
    class Mutable extends BaseController {}
    const first = getControllerMetadata(Mutable);
    first.socketRoutes.pop();
    first.socketRoutes[0]!.middlewares.push(logEvents);
    first.connectHandlers.push('extra');
    const second = getControllerMetadata(Mutable);
    expect(second.socketRoutes).toHaveLength(2);
    expect(second.socketRoutes[0]?.middlewares).toEqual([logEvents]);
    expect(second.connectHandlers).toEqual(['connected']);
  });

  test('reads classes that also carry other libraries’ metadata', () => {
    function tagged(_value: unknown, context: ClassMethodDecoratorContext): void {
      context.metadata['other-library'] = true;
    }
    class Mixed {
      @tagged
      @SocketOn('mixed')
      handler(): void {}
    }
    class OtherOnly extends Mixed {
      @tagged
      unrelated(): void {}
    }
    expect(summary(getControllerMetadata(OtherOnly)).ws).toEqual(['mixed->handler']);
  });

  test.each([
    [
      new (class Instance {})(),
      'got an object. Pass the class itself; for an instance, pass instance.constructor.',
    ],
    [null, 'got null.'],
    ['ChatController', 'got "ChatController".'],
  ])('refuses %p with a TypeError', (value, what) => {
    const error = thrown(() =>
      getControllerMetadata(value as unknown as abstract new () => unknown),
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe('PKG_ERR_DEC_INVALID_CONTROLLER');
    expect(error.message).toContain(`getControllerMetadata() needs a controller class, ${what}`);
  });
});
