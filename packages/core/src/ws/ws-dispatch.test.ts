import { describe, expect, it } from '@jest/globals';
import { SocketOn, type WsContext } from '@pkg/decorators';
import { RateLimiter } from '@pkg/http';
import { NullLogger } from '@pkg/logger';
import { ControllerRegistry } from '../routing/controller-registry';
import { Middleware } from '../routing/middleware';
import { SocketController } from '../routing/socket-controller';
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
  const errors: Array<{ clientId: string; code: string }> = [];
  const registry = new ControllerRegistry();
  const middleware = new Middleware();
  const dispatcher = new WsDispatcher(registry, {
    middleware,
    rateLimiter: new RateLimiter(),
    logger: new NullLogger(),
    sendEventError: (clientId, code) => void errors.push({ clientId, code }),
  });
  registry.register(new Chat());
  return { dispatcher, middleware, errors };
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

  it('answers internal_error for a throwing or rejecting handler, and never throws itself', async () => {
    const { dispatcher, errors } = setup();
    expect(dispatcher.dispatch('c1', 'throws', {})).toBeUndefined();
    await dispatcher.dispatch('c2', 'rejects', {});
    dispatcher.dispatch('c3', 'nope', {});
    expect(errors).toEqual([
      { clientId: 'c1', code: 'internal_error' },
      { clientId: 'c2', code: 'internal_error' },
      { clientId: 'c3', code: 'unknown_event' },
    ]);
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
