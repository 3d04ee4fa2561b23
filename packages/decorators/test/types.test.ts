// Type test: `tsc -p tsconfig.json` type-checks this file, and every `@ts-expect-error`
// below must stay an error, so a wrong handler signature that starts compiling fails the
// typecheck. Jest runs it too: the runtime cannot see types, so the same classes are still
// recorded, which the tests assert. Only the `Request` and `Response` types of @pkg/http
// are used.
import { describe, expect, test } from '@jest/globals';
import type { Request, Response } from '@pkg/http';
import {
  getControllerMetadata,
  HttpRoute,
  OnConnect,
  OnDisconnect,
  RateLimit,
  SocketOn,
} from '@pkg/decorators';
import type {
  ControllerMetadata,
  HttpMethod,
  HttpMiddleware,
  HttpNext,
  EventData,
  WsContext,
  WsMiddleware,
  WsNext,
} from '@pkg/decorators';

const ok = {} as Response;

interface ChatPayload {
  text: string;
}

const wsFn = async (_context: WsContext, next: WsNext): Promise<void> => next();
class WsClass {
  handle(_context: WsContext, next: WsNext): Promise<void> {
    return next();
  }
}
const httpFn = (_request: Request, next: HttpNext): Promise<Response> => next();
class HttpClass {
  async handle(_request: Request, next: HttpNext): Promise<Response> {
    return next();
  }
}

class Accepted {
  @SocketOn('a', { middlewares: [wsFn, WsClass], excludeGlobalMiddlewares: [WsClass] })
  full(_clientId: string, _data: EventData, _context: WsContext): void {}

  @SocketOn('b')
  typedInterface(_clientId: string, _data: ChatPayload): void {}

  @SocketOn('c')
  typedArray(_clientId: string, _data: string[]): void {}

  @SocketOn('d')
  unknownData(_clientId: string, _data: unknown): void {}

  @SocketOn('e')
  optionalData(_clientId: string, _data?: { room: string }): void {}

  @SocketOn('e2')
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- untyped code must still compile
  anyData(_clientId: string, _data: any): void {}

  @SocketOn('e3')
  unionData(_clientId: string, _data: Record<string, string> | string[]): void {}

  @SocketOn('f')
  clientOnly(_clientId: string): void {}

  @SocketOn('g')
  noParameters(): void {}

  @SocketOn('h')
  async asyncHandler(_clientId: string, _data: object): Promise<void> {}

  @OnConnect()
  connected(_clientId: string): void {}

  @OnDisconnect()
  async disconnected(): Promise<void> {}

  @HttpRoute('GET', '/sync', {
    middlewares: [httpFn, HttpClass],
    excludeGlobalMiddlewares: [httpFn],
  })
  sync(_request: Request): Response {
    return ok;
  }

  @HttpRoute('post', '/async')
  async promised(_request: Request): Promise<Response> {
    return ok;
  }

  @HttpRoute('DELETE', '/no-request')
  noRequest(): Response {
    return ok;
  }

  @HttpRoute('PUT', '/limited')
  @RateLimit(10, 60)
  limited(_request: Request): Response {
    return ok;
  }

  @RateLimit({ maxCount: 3, timeWindow: 1 })
  @SocketOn('limited')
  limitedEvent(_clientId: string, _data: EventData): void {}
}

/** Wrong signatures: compile errors, but valid values, so the runtime records them. */
function wrongSignatures(): (abstract new () => unknown)[] {
  class WrongSocket {
    // @ts-expect-error -- the client id is a string
    @SocketOn('a')
    numericClientId(_clientId: number): void {}

    // @ts-expect-error -- data is an object or an array, never a string
    @SocketOn('b')
    stringData(_clientId: string, _data: string): void {}

    // @ts-expect-error -- data is an object or an array, never a number
    @SocketOn('c')
    numberData(_clientId: string, _data: number): void {}

    // @ts-expect-error -- data is never a primitive, not even in a union
    @SocketOn('c2')
    primitiveUnion(_clientId: string, _data: string | number): void {}

    // @ts-expect-error -- the third parameter is the WsContext
    @SocketOn('d')
    wrongContext(_clientId: string, _data: object, _context: string): void {}

    // @ts-expect-error -- nothing is passed for a fourth parameter
    @SocketOn('e')
    tooMany(_clientId: string, _data: object, _context: WsContext, _extra: number): void {}
  }

  class WrongLifecycle {
    // @ts-expect-error -- the client id is a string
    @OnConnect()
    numericId(_clientId: number): void {}

    // @ts-expect-error -- a connect handler gets only the client id
    @OnConnect()
    withData(_clientId: string, _data: object): void {}

    // @ts-expect-error -- a disconnect handler gets only the client id
    @OnDisconnect()
    withReason(_clientId: string, _reason: string): void {}
  }

  class WrongHttp {
    // @ts-expect-error -- a route returns a Response, an object or nothing, not a string
    @HttpRoute('GET', '/string')
    returnsString(_request: Request): string {
      return 'text';
    }

    // @ts-expect-error -- a promise must resolve to a Response
    @HttpRoute('GET', '/promise')
    async promisesString(_request: Request): Promise<string> {
      return 'text';
    }

    // @ts-expect-error -- the parameter is the Request
    @HttpRoute('GET', '/param')
    wrongParameter(_request: string): Response {
      return ok;
    }

    // @ts-expect-error -- a route gets only the request
    @HttpRoute('GET', '/two')
    twoParameters(_request: Request, _extra: string): Response {
      return ok;
    }

    // @ts-expect-error -- a socket handler is not an HTTP route
    @HttpRoute('GET', '/socket-shaped')
    socketShaped(_clientId: string, _data: object): void {}
  }

  class WrongOptions {
    // @ts-expect-error -- an HTTP middleware cannot run on a WebSocket event
    @SocketOn('a', { middlewares: [httpFn] })
    httpMiddlewareOnSocket(): void {}

    // @ts-expect-error -- a WebSocket middleware class cannot run on an HTTP route
    @HttpRoute('GET', '/ws-mw', { excludeGlobalMiddlewares: [WsClass] })
    wsMiddlewareOnHttp(): Response {
      return ok;
    }
  }

  return [WrongSocket, WrongLifecycle, WrongHttp, WrongOptions];
}

/** Wrong values the compiler catches; never run (the runtime refuses them as well). */
export function wrongValues(): void {
  // @ts-expect-error -- TRACE is not a supported method
  HttpRoute('TRACE', '/x');
  // @ts-expect-error -- the path is a string
  HttpRoute('GET', 42);
  // @ts-expect-error -- the event name is a string
  SocketOn(1);
  // @ts-expect-error -- a middleware is named by reference, not by string
  SocketOn('a', { middlewares: ['AuthMiddleware'] });
  // @ts-expect-error -- a middleware class is passed, not an instance
  HttpRoute('GET', '/x', { middlewares: [new HttpClass()] });
  // @ts-expect-error -- the option is called middlewares
  SocketOn('a', { middleware: [wsFn] });
  // @ts-expect-error -- RateLimit needs both numbers
  RateLimit(10);
  // @ts-expect-error -- numbers, not strings
  RateLimit('10', 60);
  // @ts-expect-error -- the object form needs timeWindow
  RateLimit({ maxCount: 10 });
  // @ts-expect-error -- the reader takes the class, not an instance
  getControllerMetadata(new Accepted());
  // @ts-expect-error -- OnConnect takes no arguments
  OnConnect('connect');
}

describe('typing', () => {
  test('accepted signatures are recorded with precisely typed metadata', () => {
    const metadata: ControllerMetadata = getControllerMetadata(Accepted);
    const methods: HttpMethod[] = metadata.httpRoutes.map((route) => route.method);
    expect(methods).toEqual(['GET', 'POST', 'DELETE', 'PUT']);
    const wsMiddlewares: WsMiddleware[] = metadata.socketRoutes[0]!.middlewares;
    const httpMiddlewares: HttpMiddleware[] = metadata.httpRoutes[0]!.middlewares;
    expect(wsMiddlewares).toEqual([wsFn, WsClass]);
    expect(httpMiddlewares).toEqual([httpFn, HttpClass]);
    expect(metadata.socketRoutes.map((route) => route.event)).toEqual([
      'a',
      'b',
      'c',
      'd',
      'e',
      'e2',
      'e3',
      'f',
      'g',
      'h',
      'limited',
    ]);
    expect(metadata.connectHandlers).toEqual(['connected']);
    expect(metadata.disconnectHandlers).toEqual(['disconnected']);
    expect(metadata.httpRoutes[3]?.rateLimit).toEqual({ maxCount: 10, timeWindow: 60 });
  });

  test('wrong signatures are compile errors only: the runtime cannot see them', () => {
    const counts = wrongSignatures().map((controller) => {
      const metadata = getControllerMetadata(controller);
      return (
        metadata.socketRoutes.length +
        metadata.httpRoutes.length +
        metadata.connectHandlers.length +
        metadata.disconnectHandlers.length
      );
    });
    expect(counts).toEqual([6, 3, 5, 2]);
  });
});
