import { describe, expect, it } from '@jest/globals';
import { SocketOn, type WsContext } from '@pkg/decorators';
import { RateLimiter } from '@pkg/http';
import { NullLogger } from '@pkg/logger';
import { ControllerRegistry } from './controller-registry';
import { Middleware } from './middleware';
import { SocketController } from './socket-controller';
import { WsDispatcher } from './ws-dispatch';

const handled: unknown[][] = [];

class Chat extends SocketController {
  @SocketOn('sync')
  sync(clientId: string, data: Record<string, unknown>, context: WsContext): void {
    handled.push(['sync', clientId, data, context.event]);
  }

  @SocketOn('async')
  async later(clientId: string): Promise<void> {
    await Promise.resolve();
    handled.push(['async', clientId]);
  }

  @SocketOn('throws')
  throws(): void {
    throw new Error('handler failed');
  }

  @SocketOn('rejects')
  async rejects(): Promise<void> {
    await Promise.resolve();
    throw new Error('handler rejected');
  }
}

function setup() {
  handled.length = 0;
  const registry = new ControllerRegistry();
  const middleware = new Middleware();
  const dispatcher = new WsDispatcher(registry, {
    middleware,
    rateLimiter: new RateLimiter(),
    logger: new NullLogger(),
  });
  registry.register(new Chat());
  return { dispatcher, middleware };
}

describe('WsDispatcher', () => {
  it('handles a synchronous handler with an empty chain at once, without a promise', () => {
    const { dispatcher } = setup();
    expect(dispatcher.dispatch('c1', 'sync', { a: 1 })).toBeUndefined();
    expect(handled).toEqual([['sync', 'c1', { a: 1 }, 'sync']]);
  });

  it('gives a promise for an asynchronous handler, settled when it is done', async () => {
    const { dispatcher } = setup();
    const work = dispatcher.dispatch('c1', 'async', {});
    expect(work).toBeInstanceOf(Promise);
    await work;
    expect(handled).toEqual([['async', 'c1']]);
  });

  it('comes to internal_error for a throwing or rejecting handler, and never throws itself', async () => {
    const { dispatcher } = setup();
    expect(dispatcher.dispatch('c1', 'throws', {})).toMatchObject({
      kind: 'refusal',
      code: 'internal_error',
    });
    await expect(dispatcher.dispatch('c2', 'rejects', {})).resolves.toMatchObject({
      kind: 'refusal',
      code: 'internal_error',
    });
    expect(dispatcher.dispatch('c3', 'nope', {})).toMatchObject({
      kind: 'refusal',
      code: 'unknown_event',
      extra: { event: 'nope' },
    });
  });

  it("answers a request with its handler's result, and sends nothing itself", async () => {
    const { dispatcher } = setup();
    expect(dispatcher.dispatch('c1', 'sync', {}, 1)).toEqual({ kind: 'answer', result: undefined });
    await expect(dispatcher.dispatch('c1', 'async', {}, 2)).resolves.toEqual({
      kind: 'answer',
      result: undefined,
    });
  });

  it('comes to forbidden for a request a middleware stopped, and to nothing without an id', async () => {
    const { dispatcher, middleware } = setup();
    middleware.addWebSocketMiddleware(() => undefined);
    expect(await dispatcher.dispatch('c1', 'sync', {}, 'r1')).toMatchObject({
      kind: 'refusal',
      code: 'forbidden',
    });
    expect(await dispatcher.dispatch('c1', 'sync', {})).toBeUndefined();
    expect(handled).toEqual([]);
  });

  it('runs a global middleware added after registration', async () => {
    const { dispatcher, middleware } = setup();
    middleware.addWebSocketMiddleware(async (context, next) => {
      handled.push(['mw', context.event]);
      await next();
    });
    await dispatcher.dispatch('c1', 'sync', {});
    expect(handled).toEqual([
      ['mw', 'sync'],
      ['sync', 'c1', {}, 'sync'],
    ]);
  });
});
