// Handlers without decorators: server.on / server.route / server.onConnect /
// server.onDisconnect register through the same decorators and registry as decorated
// controllers (same checks, schemas, middleware, rate limits), over real sockets.
import { afterEach, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import {
  HttpRoute,
  Response,
  SocketController,
  type HttpMiddlewareFn,
  type Server,
  type WsMiddlewareFn,
} from '../src/index';
import { TestClient, cleanup, startServer } from './helpers';

afterEach(cleanup);

const tagged: WsMiddlewareFn = (context, next) => {
  context.setAttribute('tag', 'from-middleware');
  return next();
};
const needsKey: HttpMiddlewareFn = (request, next) =>
  request.getHeader('x-key') === 'k' ? next() : Response.json({ error: 'Unauthorized' }, 401);

function routes(server: Server, events: string[]): void {
  server
    .onConnect(function (clientId) {
      this.emit(clientId, 'hello', { clientId });
    })
    .onDisconnect((clientId) => {
      events.push(`gone ${clientId}`);
    })
    .on(
      'echo',
      function (clientId, data, context) {
        this.emit(clientId, 'echo', { ...data, tag: context.getAttribute<string>('tag') ?? null });
      },
      {
        schema: z.object({ text: z.string().max(5) }),
        middlewares: [tagged],
        rateLimit: { maxCount: 2, timeWindow: 60 },
      },
    )
    .on('room.shout', function (clientId, data) {
      this.broadcast('shout', data, { except: clientId });
    })
    .route(
      'GET',
      '/items/{id}',
      (_request, { params }) => ({ id: params.id, double: params.id * 2 }),
      { params: z.object({ id: z.coerce.number() }), middlewares: [needsKey] },
    )
    .route('post', '/limited', () => undefined, { rateLimit: { maxCount: 1, timeWindow: 60 } });
}

describe('programmatic handlers', () => {
  it('run WebSocket events with schemas, middleware, rate limits and lifecycle hooks', async () => {
    const events: string[] = [];
    const { wsUrl } = await startServer([], {}, (server) => routes(server, events));
    const client = await TestClient.connect(wsUrl);
    const { clientId } = (await client.next('hello')).data as { clientId: string };
    client.send('echo', { text: 'hi' });
    expect((await client.next('echo')).data).toEqual({ text: 'hi', tag: 'from-middleware' });
    client.send('echo', { text: 'far too long' });
    expect((await client.next('error')).data).toMatchObject({
      code: 'validation_failed',
      issues: [{ path: ['text'] }],
    });
    client.send('echo', { text: 'x' });
    expect((await client.next('error')).data).toMatchObject({ code: 'rate_limited' });
    await client.close();
    await new Promise<void>((resolve) => {
      const wait = (): void => void (events.length > 0 ? resolve() : setImmediate(wait));
      wait();
    });
    expect(events).toEqual([`gone ${clientId}`]);
  });

  it('broadcast from a handler with the options object', async () => {
    const { wsUrl } = await startServer([], {}, (server) => routes(server, []));
    const a = await TestClient.connect(wsUrl);
    const b = await TestClient.connect(wsUrl);
    a.send('room.shout', { n: 1 });
    expect((await b.next('shout')).data).toEqual({ n: 1 });
    b.send('room.shout', { n: 2 });
    expect((await a.next('shout')).data).toEqual({ n: 2 });
    expect(a.pending().filter((e) => e.event === 'shout')).toEqual([]);
  });

  it('serve HTTP routes with schemas, middleware and rate limits', async () => {
    const { base } = await startServer([], {}, (server) => routes(server, []));
    expect((await fetch(`${base}/items/4`)).status).toBe(401);
    const ok = await fetch(`${base}/items/4`, { headers: { 'x-key': 'k' } });
    expect(await ok.json()).toEqual({ id: 4, double: 8 });
    const bad = await fetch(`${base}/items/four`, { headers: { 'x-key': 'k' } });
    expect(bad.status).toBe(400);
    expect((await fetch(`${base}/limited`, { method: 'POST' })).status).toBe(204);
    expect((await fetch(`${base}/limited`, { method: 'POST' })).status).toBe(429);
  });

  it('share one registry with decorated controllers: duplicates are refused', async () => {
    class Items extends SocketController {
      @HttpRoute('GET', '/items/{itemId}')
      show() {
        return {};
      }
    }
    const { server } = await startServer([new Items()]);
    expect(() => server.route('GET', '/items/{id}', () => ({}))).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_CORE_DUPLICATE_ROUTE' }) as unknown as Error,
    );
    expect(() => server.on('bad event', () => undefined)).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_DEC_INVALID_EVENT' }) as unknown as Error,
    );
    expect(() => server.route('GET', '/users/:id', () => ({}))).toThrow(/"\/users\/\{id\}"/);
    expect(() => server.on('x', 'not a function' as never)).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_CORE_INVALID_ARGUMENT' }) as unknown as Error,
    );
    expect(() => server.on('y', () => undefined, { schema: { type: 'object' } as never })).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_DEC_INVALID_SCHEMA' }) as unknown as Error,
    );
  });

  it('type the handler from the schema', async () => {
    const { server, base } = await startServer();
    const schema = z.object({ n: z.coerce.number() });
    // @ts-expect-error -- the schema outputs n as a number
    server.on('typed', (_clientId, _data: { n: string }) => undefined, { schema });
    server.on('typed2', (_clientId, data) => void data.n.toFixed(), { schema });
    server.route('GET', '/typed', (_request, input) => ({ n: input.query.n.toFixed() }), {
      query: schema,
    });
    // @ts-expect-error -- a route returns a Response, an object or nothing
    server.route('GET', '/typed2', () => 5);
    expect(await (await fetch(`${base}/typed?n=3`)).json()).toEqual({ n: '3' });
  });
});
