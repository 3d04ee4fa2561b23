import { describe, expect, it } from '@jest/globals';
import { HttpRoute, OnConnect, SocketOn } from '@pkg/decorators';
import { Response } from '@pkg/http';
import { ControllerRegistry, type AddedRoutes } from './controller-registry';
import { SocketController } from './socket-controller';

class First extends SocketController {
  @SocketOn('chat')
  chat(): void {}

  @HttpRoute('GET', '/users/{id}')
  user(): Response {
    return Response.text('u');
  }

  @OnConnect()
  hello(): void {}
}

class Clash extends SocketController {
  @SocketOn('other')
  other(): void {}

  @HttpRoute('GET', '/users/{name}')
  user(): Response {
    return Response.text('clash');
  }
}

describe('ControllerRegistry', () => {
  it('records routes and hooks, and tells listeners what was added', () => {
    const registry = new ControllerRegistry();
    const added: AddedRoutes[] = [];
    registry.onRoutesAdded((routes) => added.push(routes));
    registry.register(new First());
    expect([...registry.wsRoutes.keys()]).toEqual(['chat']);
    expect(registry.httpRoutes.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /users/{id}']);
    expect(registry.hooks.map((h) => h.names.connect)).toEqual([['hello']]);
    expect(added.map((a) => [a.ws.length, a.http.length])).toEqual([[1, 1]]);
    expect(registry.matchHttpRoute('GET', '/users/7')?.params).toEqual({ id: '7' });
    expect(registry.matchHttpRoute('GET', '/users/%zz')).toBeNull();
  });

  it('registers a controller whole or not at all', () => {
    const registry = new ControllerRegistry();
    registry.register(new First());
    expect(() => registry.register(new Clash())).toThrow(/declared twice/);
    // The clash was on the HTTP route; its WebSocket event was not registered either.
    expect(registry.wsRoutes.has('other')).toBe(false);
    expect(() => registry.register({} as SocketController)).toThrow(TypeError);
  });
});
