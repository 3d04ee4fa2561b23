// The spec's States and transitions table, over real sockets: handshake and OnConnect,
// ping/pong, disconnects (client side and disconnectClient) with OnDisconnect, rooms; plus
// client ids, types and data, OnConnect/OnDisconnect across two controllers, origins and
// handshake middleware.
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  HttpRoute,
  OnConnect,
  OnDisconnect,
  Response,
  SocketController,
  SocketOn,
  type Server,
  type Request,
} from '../src/index';
import { TestClient, cleanup, deferred, expectRefusedUpgrade, startServer } from './helpers';

afterEach(cleanup);

/** Records lifecycle calls of two controllers in one shared log. */
function controllers() {
  const log: string[] = [];
  const disconnected = new Map<string, ReturnType<typeof deferred<void>>>();
  const whenDisconnected = (id: string) => {
    let d = disconnected.get(id);
    if (!d) {
      d = deferred();
      disconnected.set(id, d);
    }
    return d.promise;
  };

  class First extends SocketController<Server> {
    dataSeenOnDisconnect: unknown;
    connectedSeenOnDisconnect: boolean | undefined;

    @OnConnect()
    onConnect(clientId: string): void {
      log.push(`first.connect ${clientId}`);
      this.emit(clientId, 'welcome', { clientId });
    }

    @OnDisconnect()
    onDisconnect(clientId: string): void {
      this.dataSeenOnDisconnect = this.getServer().getClientData(clientId, 'name');
      this.connectedSeenOnDisconnect = this.getServer().isConnected(clientId);
      log.push(`first.disconnect ${clientId}`);
    }

    @SocketOn('whoami')
    whoami(clientId: string): void {
      const server = this.getServer();
      this.emit(clientId, 'whoami', {
        clientId,
        type: server.getClientType(clientId) ?? null,
        namespaces: server.getNamespaceManager().getNamespacesForClient(clientId),
        rooms: server.getNamespaceManager().getRoomsForClient(clientId),
        data: server.getClientData(clientId) as Record<string, unknown>,
      });
    }

    @SocketOn('set.name')
    setName(clientId: string, data: { name?: unknown }): void {
      this.getServer().setClientData(clientId, 'name', data.name);
      this.emit(clientId, 'name.set', {});
    }

    @SocketOn('room.join')
    join(clientId: string, data: { room: string; namespace?: string }): void {
      this.joinRoom(clientId, data.room, data.namespace ?? '/');
      this.emit(clientId, 'rooms', {
        rooms: this.getServer().getNamespaceManager().getRoomsForClient(clientId, data.namespace),
      });
    }

    @SocketOn('room.leave')
    leave(clientId: string, data: { room: string }): void {
      this.leaveRoom(clientId, data.room);
      this.emit(clientId, 'rooms', {
        rooms: this.getServer().getNamespaceManager().getRoomsForClient(clientId),
      });
    }

    @SocketOn('room.leaveAll')
    leaveAll(clientId: string): void {
      this.getServer().leaveAllRooms(clientId);
      this.emit(clientId, 'rooms', {
        rooms: this.getServer().getNamespaceManager().getRoomsForClient(clientId),
      });
    }

    @SocketOn('kick.me')
    kickMe(clientId: string): void {
      this.disconnectClient(clientId);
    }

    @HttpRoute('GET', '/whoami')
    http(request: Request): Response {
      const id = String(request.getAttribute('clientId'));
      return Response.json({ id, type: this.getServer().getClientType(id) ?? null });
    }
  }

  class Second extends SocketController {
    @OnConnect()
    async onConnect(clientId: string): Promise<void> {
      await Promise.resolve();
      log.push(`second.connect ${clientId}`);
    }

    @OnDisconnect()
    async onDisconnect(clientId: string): Promise<void> {
      await Promise.resolve();
      log.push(`second.disconnect ${clientId}`);
      disconnected.get(clientId)?.resolve();
      if (!disconnected.has(clientId)) {
        const d = deferred();
        d.resolve();
        disconnected.set(clientId, d);
      }
    }
  }

  return { log, first: new First(), second: new Second(), whenDisconnected };
}

describe('connection lifecycle', () => {
  it('completes the handshake, records the client as ws in namespace / and runs OnConnect of every controller', async () => {
    const { log, first, second } = controllers();
    const { server, wsUrl } = await startServer([first, second]);
    const client = await TestClient.connect(wsUrl);
    const welcome = await client.next('welcome');
    const id = welcome.data['clientId'] as string;
    expect(typeof id).toBe('string');
    expect(id).toMatch(/^[A-Za-z0-9_-]+\.[0-9a-z]+$/);

    client.send('whoami');
    const who = await client.next('whoami');
    expect(who.data).toEqual({ clientId: id, type: 'ws', namespaces: ['/'], rooms: [], data: {} });
    // OnConnect handlers of both controllers ran, in registration order, before the message.
    expect(log).toEqual([`first.connect ${id}`, `second.connect ${id}`]);
    expect(server.isConnected(id)).toBe(true);
    expect(server.getClientCount()).toBe(1);
    expect(server.getAllClients()).toEqual([id]);
    expect(server.clientTypes.get(id)).toBe('ws');
  });

  it("holds a client's messages until its OnConnect handlers finish, then handles all in order", async () => {
    const gate = deferred();
    const threeArrived = deferred();
    const seen: string[] = [];
    class Slow extends SocketController {
      @OnConnect()
      async connected(): Promise<void> {
        seen.push('connect:start');
        await gate.promise;
        seen.push('connect:end');
      }

      @SocketOn('step')
      step(clientId: string, data: { n: number }): void {
        seen.push(`step ${data.n}`);
        if (data.n === 5) this.emit(clientId, 'done', {});
      }
    }
    let arrived = 0;
    const { wsUrl } = await startServer([new Slow()], {}, (server) =>
      server.getWebSocketHandler().onMessage(() => {
        if (++arrived === 3) threeArrived.resolve();
      }),
    );
    const client = await TestClient.connect(wsUrl);
    for (const n of [1, 2, 3]) client.send('step', { n });
    await threeArrived.promise;
    expect(seen).toEqual(['connect:start']);
    gate.resolve();
    for (const n of [4, 5]) client.send('step', { n });
    await client.next('done');
    expect(seen).toEqual([
      'connect:start',
      'connect:end',
      'step 1',
      'step 2',
      'step 3',
      'step 4',
      'step 5',
    ]);
  });

  it('answers a ping frame with a pong', async () => {
    const { wsUrl } = await startServer([]);
    const client = await TestClient.connect(wsUrl);
    const pong = new Promise<Buffer>((resolve) => client.ws.once('pong', resolve));
    client.ws.ping(Buffer.from('hello'));
    expect((await pong).toString()).toBe('hello');
  });

  it('runs OnDisconnect of every controller when the client disconnects, with its data still readable', async () => {
    const { log, first, second, whenDisconnected } = controllers();
    const { server, wsUrl } = await startServer([first, second]);
    const client = await TestClient.connect(wsUrl);
    const id = (await client.next('welcome')).data['clientId'] as string;
    client.send('set.name', { name: 'ada' });
    await client.next('name.set');
    const gone = whenDisconnected(id);
    await client.close();
    await gone;
    expect(log).toEqual([
      `first.connect ${id}`,
      `second.connect ${id}`,
      `first.disconnect ${id}`,
      `second.disconnect ${id}`,
    ]);
    expect(first.dataSeenOnDisconnect).toBe('ada');
    expect(first.connectedSeenOnDisconnect).toBe(false);
    expect(server.isConnected(id)).toBe(false);
    expect(server.getClientData(id)).toBeUndefined();
    expect(server.getClientCount()).toBe(0);
    expect(server.getNamespaceManager().getStats()).toEqual({
      namespaces: 0,
      rooms: 0,
      clients: 0,
    });
  });

  it('disconnectClient closes the connection (1000) and runs OnDisconnect', async () => {
    const { log, first, second, whenDisconnected } = controllers();
    const { server, wsUrl } = await startServer([first, second]);
    const client = await TestClient.connect(wsUrl);
    const id = (await client.next('welcome')).data['clientId'] as string;
    const gone = whenDisconnected(id);
    server.disconnectClient(id);
    expect((await client.closed).code).toBe(1000);
    await gone;
    expect(log).toContain(`first.disconnect ${id}`);
    expect(log).toContain(`second.disconnect ${id}`);
  });

  it('a handler can disconnect its own client through the controller', async () => {
    const { first, second, whenDisconnected } = controllers();
    const { wsUrl } = await startServer([first, second]);
    const client = await TestClient.connect(wsUrl);
    const id = (await client.next('welcome')).data['clientId'] as string;
    const gone = whenDisconnected(id);
    client.send('kick.me');
    expect((await client.closed).code).toBe(1000);
    await gone;
  });

  it('joinRoom / leaveRoom / leaveAllRooms move the client in and out of rooms', async () => {
    const { first } = controllers();
    const { server, wsUrl } = await startServer([first]);
    const client = await TestClient.connect(wsUrl);
    const id = (await client.next('welcome')).data['clientId'] as string;
    client.send('room.join', { room: 'a' });
    expect((await client.next('rooms')).data).toEqual({ rooms: ['a'] });
    client.send('room.join', { room: 'b' });
    expect((await client.next('rooms')).data).toEqual({ rooms: ['a', 'b'] });
    client.send('room.join', { room: 'c', namespace: '/other' });
    expect((await client.next('rooms')).data).toEqual({ rooms: ['c'] });
    client.send('room.leave', { room: 'a' });
    expect((await client.next('rooms')).data).toEqual({ rooms: ['b'] });
    client.send('room.leaveAll');
    expect((await client.next('rooms')).data).toEqual({ rooms: [] });
    const nm = server.getNamespaceManager();
    expect(nm.getRoomsForClient(id, '/other')).toEqual([]);
    expect(nm.getNamespacesForClient(id).sort()).toEqual(['/', '/other']);
    expect(nm.getStats().rooms).toBe(0);
  });

  it('keeps a client in its rooms until it disconnects, then removes it from everything', async () => {
    const { first, second, whenDisconnected } = controllers();
    const { server, wsUrl } = await startServer([first, second]);
    const a = await TestClient.connect(wsUrl);
    const idA = (await a.next('welcome')).data['clientId'] as string;
    const b = await TestClient.connect(wsUrl);
    await b.next('welcome');
    a.send('room.join', { room: 'r' });
    await a.next('rooms');
    b.send('room.join', { room: 'r' });
    await b.next('rooms');
    expect(server.getNamespaceManager().getClientsInRoom('r')).toHaveLength(2);
    const gone = whenDisconnected(idA);
    await a.close();
    await gone;
    expect(server.getNamespaceManager().getClientsInRoom('r')).not.toContain(idA);
    expect(server.getNamespaceManager().getClientsInRoom('r')).toHaveLength(1);
  });

  it('logs an OnConnect that throws and an OnDisconnect that rejects; the other handlers, the client and other clients carry on', async () => {
    const { log, first, second, whenDisconnected } = controllers();
    class Failing extends SocketController {
      @OnConnect()
      onConnect(): void {
        throw new Error('connect failed');
      }

      @OnDisconnect()
      async onDisconnect(): Promise<void> {
        await Promise.resolve();
        throw new Error('disconnect failed');
      }
    }
    // Registered between the two recording controllers: the second still runs after it.
    const { server, wsUrl, logger } = await startServer([first, new Failing(), second]);
    const a = await TestClient.connect(wsUrl);
    const idA = (await a.next('welcome')).data['clientId'] as string;
    a.send('whoami');
    expect((await a.next('whoami')).data['type']).toBe('ws');
    expect(log).toEqual([`first.connect ${idA}`, `second.connect ${idA}`]);

    const gone = whenDisconnected(idA);
    await a.close();
    await gone;
    expect(log).toContain(`first.disconnect ${idA}`);
    expect(log).toContain(`second.disconnect ${idA}`);
    expect(logger.exceptions.map((e) => (e.error as Error).message)).toEqual([
      'connect failed',
      'disconnect failed',
    ]);
    expect(logger.exceptions.map((e) => e.context?.['code'])).toEqual([
      'PKG_ERR_CORE_HANDLER_FAILED',
      'PKG_ERR_CORE_HANDLER_FAILED',
    ]);

    const b = await TestClient.connect(wsUrl);
    await b.next('welcome');
    b.send('whoami');
    expect((await b.next('whoami')).data['type']).toBe('ws');
    expect(server.getClientCount()).toBe(1);
  });

  it('ignores joinRoom for a client that is not connected', async () => {
    const { server } = await startServer([]);
    expect(server.joinRoom('nobody', 'r')).toBe(false);
    expect(server.getNamespaceManager().getStats().rooms).toBe(0);
    expect(server.setClientData('nobody', 'k', 1)).toBe(false);
    expect(() => server.joinRoom('nobody', '')).toThrow(TypeError);
  });

  it('classifies an HTTP connection as http and gives the request its client id', async () => {
    const { first } = controllers();
    const { base } = await startServer([first]);
    const res = await fetch(`${base}/whoami`);
    const body = (await res.json()) as { id: string; type: string };
    expect(body.type).toBe('http');
    expect(body.id).toMatch(/^[A-Za-z0-9_-]+\.[0-9a-z]+$/);
  });

  it('gives every client a distinct id', async () => {
    const { first } = controllers();
    const { wsUrl } = await startServer([first]);
    const clients = await Promise.all([1, 2, 3].map(() => TestClient.connect(wsUrl)));
    const ids = await Promise.all(
      clients.map(async (c) => (await c.next('welcome')).data['clientId']),
    );
    expect(new Set(ids).size).toBe(3);
  });
});

describe('handshake: origins and handshake middleware', () => {
  it('uses the CORS allowed_origins for WebSocket handshakes and refuses others with 403', async () => {
    const { wsUrl } = await startServer([], { cors: { allowed_origins: ['https://app.example'] } });
    const ok = await TestClient.connect(wsUrl, { origin: 'https://app.example' });
    expect(ok.ws.readyState).toBe(ok.ws.OPEN);
    const refused = await expectRefusedUpgrade(wsUrl, { origin: 'https://evil.example' });
    expect(refused.status).toBe(403);
  });

  it('uses ws_allowed_origins instead when it is set', async () => {
    const { wsUrl } = await startServer([], {
      cors: { allowed_origins: ['https://app.example'] },
      ws_allowed_origins: ['https://ws.example'],
    });
    expect((await expectRefusedUpgrade(wsUrl, { origin: 'https://app.example' })).status).toBe(403);
    const ok = await TestClient.connect(wsUrl, { origin: 'https://ws.example' });
    expect(ok.ws.readyState).toBe(ok.ws.OPEN);
  });

  it('refuses a connection without Origin when allow_missing_origin is false', async () => {
    const { wsUrl } = await startServer([], { allow_missing_origin: false });
    expect((await expectRefusedUpgrade(wsUrl)).status).toBe(403);
  });

  it('runs handshake middleware: refuses with its status, attaches data to the client', async () => {
    const { first } = controllers();
    const { wsUrl } = await startServer([first], {}, (server) => {
      server.addHandshakeMiddleware((ctx) => {
        const token = ctx.query.get('token');
        if (token === 'bad') return { status: 401, message: 'Invalid token.' };
        if (token) ctx.data['user'] = { token };
        return undefined;
      });
    });
    const refused = await expectRefusedUpgrade(`${wsUrl}/?token=bad`);
    expect(refused.status).toBe(401);
    expect(refused.body).toContain('Invalid token.');

    const anonymous = await TestClient.connect(wsUrl);
    await anonymous.next('welcome');
    anonymous.send('whoami');
    expect((await anonymous.next('whoami')).data['data']).toEqual({});

    const user = await TestClient.connect(`${wsUrl}/?token=t1`);
    await user.next('welcome');
    user.send('whoami');
    expect((await user.next('whoami')).data['data']).toEqual({ user: { token: 't1' } });
  });
});
