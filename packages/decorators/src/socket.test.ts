import { describe, expect, test } from '@jest/globals';
import type { DecError } from './errors';
import { getControllerMetadata } from './reader';
import { OnConnect, OnDisconnect, SocketOn } from './socket';
import type { EventData, WsContext, WsNext } from './types';

function thrown(fn: () => unknown): DecError {
  try {
    fn();
  } catch (error) {
    return error as DecError;
  }
  throw new Error('expected a throw');
}

const requireUser = async (_context: WsContext, next: WsNext): Promise<void> => next();
class Audit {
  async handle(_context: WsContext, next: WsNext): Promise<void> {
    await next();
  }
}

describe('SocketOn', () => {
  test('records the event, the handler name and the options', () => {
    class Chat {
      @SocketOn('chat.message', {
        middlewares: [requireUser, Audit],
        excludeGlobalMiddlewares: [Audit],
      })
      onMessage(clientId: string, data: EventData): string {
        return `${clientId}:${JSON.stringify(data)}`;
      }

      @SocketOn('chat.typing')
      onTyping(): void {}
    }
    expect(getControllerMetadata(Chat).socketRoutes).toEqual([
      {
        event: 'chat.message',
        handler: 'onMessage',
        middlewares: [requireUser, Audit],
        excludeGlobalMiddlewares: [Audit],
      },
      { event: 'chat.typing', handler: 'onTyping', middlewares: [], excludeGlobalMiddlewares: [] },
    ]);
    // The method itself is left as written.
    expect(new Chat().onMessage('c1', { a: 1 })).toBe('c1:{"a":1}');
  });

  test('several events on one method keep the order they are written in', () => {
    class Aliases {
      @SocketOn('first')
      @SocketOn('second')
      @SocketOn('third')
      handle(): void {}
    }
    expect(getControllerMetadata(Aliases).socketRoutes.map((r) => r.event)).toEqual([
      'first',
      'second',
      'third',
    ]);
  });

  test('takes symbol-named methods', () => {
    const kPing = Symbol('ping');
    class Pinger {
      @SocketOn('ping')
      [kPing](): void {}
    }
    expect(getControllerMetadata(Pinger).socketRoutes[0]?.handler).toBe(kPing);
  });

  test('does not see later changes to the middleware arrays', () => {
    const middlewares = [requireUser];
    class Copy {
      @SocketOn('a', { middlewares })
      a(): void {}
    }
    middlewares.push(requireUser);
    expect(getControllerMetadata(Copy).socketRoutes[0]?.middlewares).toEqual([requireUser]);
  });

  test.each([
    ['', 'the event name is empty'],
    ['chat message', 'contains characters outside A-Z a-z 0-9 . _ -'],
    ['chat:message', 'contains characters outside'],
  ])('refuses the event name %p at class definition', (event, what) => {
    const error = thrown(() => {
      class Bad {
        @SocketOn(event)
        onIt(): void {}
      }
      return Bad;
    });
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe('PKG_ERR_DEC_INVALID_EVENT');
    expect(error.message).toContain('@SocketOn() on method "onIt"');
    expect(error.message).toContain(what);
  });

  test('refuses a middleware that is neither a function nor a class with handle', () => {
    class NotMiddleware {}
    const error = thrown(() => {
      class Bad {
        @SocketOn('x', { middlewares: [NotMiddleware as unknown as typeof Audit] })
        onX(): void {}
      }
      return Bad;
    });
    expect(error).toBeInstanceOf(TypeError);
    expect(error.code).toBe('PKG_ERR_DEC_INVALID_MIDDLEWARE');
    expect(error.message).toContain(
      '@SocketOn() on method "onX": middlewares[0] is function NotMiddleware',
    );
  });

  test('refuses unknown options', () => {
    const error = thrown(() => {
      class Bad {
        // @ts-expect-error -- "middleware" is not an option
        @SocketOn('x', { middleware: [requireUser] })
        onX(): void {}
      }
      return Bad;
    });
    expect(error.code).toBe('PKG_ERR_DEC_INVALID_OPTIONS');
    expect(error.message).toContain('unknown option "middleware"');
  });

  test('refuses the same event twice in one class, on one method or two', () => {
    const twoMethods = thrown(() => {
      class Bad {
        @SocketOn('same')
        first(): void {}

        @SocketOn('same')
        second(): void {}
      }
      return Bad;
    });
    expect(twoMethods).toBeInstanceOf(TypeError);
    expect(twoMethods.code).toBe('PKG_ERR_DEC_DUPLICATE_ROUTE');
    expect(twoMethods.message).toContain(
      '@SocketOn() on method "second": the event "same" is already handled by method "first"',
    );

    const oneMethod = thrown(() => {
      class Bad {
        @SocketOn('same')
        @SocketOn('same')
        only(): void {}
      }
      return Bad;
    });
    expect(oneMethod.code).toBe('PKG_ERR_DEC_DUPLICATE_ROUTE');
    expect(oneMethod.message).toContain('declared twice on this method');
  });

  test('refuses static and #private methods', () => {
    const staticError = thrown(() => {
      class Bad {
        @SocketOn('x')
        static onX(): void {}
      }
      return Bad;
    });
    expect(staticError.code).toBe('PKG_ERR_DEC_INVALID_TARGET');
    expect(staticError.message).toContain('static method "onX"');

    const privateError = thrown(() => {
      class Bad {
        @SocketOn('x')
        #onX(): void {}
        use(): void {
          this.#onX();
        }
      }
      return Bad;
    });
    expect(privateError.code).toBe('PKG_ERR_DEC_INVALID_TARGET');
    expect(privateError.message).toContain('private method "#onX"');
  });

  test('refuses fields and accessors', () => {
    const error = thrown(() => {
      class Bad {
        // @ts-expect-error -- a field is not a method
        @SocketOn('x')
        handler = (): void => {};
      }
      return Bad;
    });
    expect(error.code).toBe('PKG_ERR_DEC_INVALID_TARGET');
    expect(error.message).toContain(
      'can only decorate methods, but was applied to the field "handler"',
    );

    const getter = thrown(() => {
      class Bad {
        // @ts-expect-error -- a getter is not a method
        @SocketOn('x')
        get handler(): () => void {
          return () => {};
        }
      }
      return Bad;
    });
    expect(getter.message).toContain('applied to the getter "handler"');
  });
});

describe('OnConnect / OnDisconnect', () => {
  test('record the handler names in class order', () => {
    class Presence {
      @OnConnect()
      welcome(_clientId: string): void {}

      @OnDisconnect()
      goodbye(_clientId: string): void {}

      @OnConnect()
      @OnDisconnect()
      count(): void {}
    }
    const metadata = getControllerMetadata(Presence);
    expect(metadata.connectHandlers).toEqual(['welcome', 'count']);
    expect(metadata.disconnectHandlers).toEqual(['goodbye', 'count']);
    expect(metadata.socketRoutes).toEqual([]);
    expect(metadata.httpRoutes).toEqual([]);
  });

  test('refuse being applied twice to one method', () => {
    const error = thrown(() => {
      class Bad {
        @OnConnect()
        @OnConnect()
        hello(): void {}
      }
      return Bad;
    });
    expect(error.code).toBe('PKG_ERR_DEC_DUPLICATE_ROUTE');
    expect(error.message).toContain(
      '@OnConnect() on method "hello": @OnConnect() is applied twice',
    );
  });

  test('refuse static methods', () => {
    const error = thrown(() => {
      class Bad {
        @OnDisconnect()
        static bye(): void {}
      }
      return Bad;
    });
    expect(error.code).toBe('PKG_ERR_DEC_INVALID_TARGET');
    expect(error.message).toContain('@OnDisconnect() was applied to the static method "bye"');
  });
});
