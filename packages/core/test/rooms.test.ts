// Membership through a running server: many real clients in rooms of several namespaces,
// disconnected in the three ways a client can go (it closes, disconnectClient, close()),
// leave nothing behind in the namespace manager nor in the client tables. The 10,000-client
// run connects in memory (server.connect): no file descriptors, no child process.
import { afterEach, describe, expect, it } from '@jest/globals';
import type { WebSocket } from 'ws';
import {
  NullLogger,
  OnConnect,
  OnDisconnect,
  Server,
  ServerConfig,
  SocketController,
} from '../src/index';
import { TestClient, cleanup, deferred, startServer } from './helpers';

afterEach(cleanup);

const CLIENTS = 300;

class MemberController extends SocketController {
  readonly #expected: number;
  readonly #done = deferred();
  #disconnects = 0;

  constructor(expected: number) {
    super();
    this.#expected = expected;
  }

  /** Resolves once that many OnDisconnect handlers have run. */
  get allGone(): Promise<void> {
    return this.#done.promise;
  }

  @OnConnect()
  joined(clientId: string): void {
    const n = Number(this.getServer().getClientData(clientId, 'n'));
    const joined = [
      this.joinRoom(clientId, `room-${n % 10}`),
      this.joinRoom(clientId, `team-${n % 3}`, '/teams'),
      ...(n % 2 === 0 ? [this.joinRoom(clientId, 'even')] : []),
    ];
    this.emit(clientId, 'ready', { clientId, joined });
  }

  @OnDisconnect()
  left(): void {
    this.#disconnects += 1;
    if (this.#disconnects === this.#expected) this.#done.resolve();
  }
}

describe('membership over real sockets', () => {
  it(`removes ${CLIENTS} clients in rooms from everything, however they disconnect`, async () => {
    const controller = new MemberController(CLIENTS);
    const { server, wsUrl } = await startServer([controller], {}, (s) =>
      s.addHandshakeMiddleware((ctx) => {
        ctx.data['n'] = Number(ctx.query.get('n'));
      }),
    );
    const clients = await Promise.all(
      Array.from({ length: CLIENTS }, async (_, n) => {
        const client = await TestClient.connect(`${wsUrl}/?n=${n}`);
        const ready = (await client.next('ready')).data;
        expect(ready['joined']).toEqual(n % 2 === 0 ? [true, true, true] : [true, true]);
        const id = ready['clientId'] as string;
        return { client, id };
      }),
    );

    const nm = server.getNamespaceManager();
    expect(nm.getStats()).toEqual({ namespaces: 2, rooms: 14, clients: CLIENTS });
    expect(nm.getClientsInNamespace('/')).toHaveLength(CLIENTS);
    expect(nm.getClientsInRoom('even')).toHaveLength(CLIENTS / 2);
    expect(server.clientTypes.size).toBe(CLIENTS);
    expect(new Set(clients.map((c) => c.id)).size).toBe(CLIENTS);

    // A third close their connection, a third are disconnected by the server, the rest are
    // closed by close().
    const third = CLIENTS / 3;
    await Promise.all(clients.slice(0, third).map(({ client }) => client.close()));
    for (const { id } of clients.slice(third, 2 * third)) server.disconnectClient(id);
    await Promise.all(clients.slice(third, 2 * third).map(({ client }) => client.closed));
    await server.close();
    await controller.allGone;

    expect(nm.getStats()).toEqual({ namespaces: 0, rooms: 0, clients: 0 });
    expect(nm.namespaces.size).toBe(0);
    expect(nm.rooms.size).toBe(0);
    expect(nm.clientNamespaces.size).toBe(0);
    expect(nm.clientRooms.size).toBe(0);
    expect(server.getClientCount()).toBe(0);
    expect(server.clientTypes.size).toBe(0);
    expect(server.clientData.size).toBe(0);
    for (const { id } of clients) expect(server.getClientData(id)).toBeUndefined();
  });

  it('registers 10,000 clients in rooms and leaves nothing once they all disconnect', async () => {
    // In memory (server.connect): the membership bookkeeping is what is under test, and the
    // real socket adds nothing to it (the 300-client test above covers the real sockets).
    const count = 10_000;
    const controller = new MemberController(count);
    const server = new Server(
      new ServerConfig({ port: 0, heartbeat_interval: 0 }),
      undefined,
      undefined,
      undefined,
      new NullLogger(),
    );
    server.registerController(controller);
    server.addHandshakeMiddleware((ctx) => {
      ctx.data['n'] = Number(ctx.query.get('n'));
    });
    const open = async (n: number): Promise<WebSocket> => {
      const ws = await server.connect({ path: `/?n=${n}` });
      await new Promise<void>((resolve) => {
        const onMessage = (raw: Buffer): void => {
          if ((JSON.parse(String(raw)) as { event: string }).event !== 'ready') return;
          ws.off('message', onMessage);
          resolve();
        };
        ws.on('message', onMessage);
      });
      return ws;
    };
    const sockets: WebSocket[] = [];
    for (let i = 0; i < count; i += 250) {
      sockets.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(250, count - i) }, (_, k) => open(i + k)),
        )),
      );
    }

    const nm = server.getNamespaceManager();
    expect(nm.getStats()).toEqual({ namespaces: 2, rooms: 14, clients: count });
    expect(server.getClientCount()).toBe(count);
    expect(nm.getClientsInRoom('even')).toHaveLength(count / 2);
    expect(nm.getClientsInNamespace('/teams')).toHaveLength(count);

    for (const ws of sockets) ws.close();
    await controller.allGone;
    // The last client's data is forgotten right after its OnDisconnect handlers return.
    await new Promise((resolve) => setImmediate(resolve));

    expect(nm.getStats()).toEqual({ namespaces: 0, rooms: 0, clients: 0 });
    expect(nm.namespaces.size).toBe(0);
    expect(nm.rooms.size).toBe(0);
    expect(nm.clientNamespaces.size).toBe(0);
    expect(nm.clientRooms.size).toBe(0);
    expect(server.getClientCount()).toBe(0);
    expect(server.clientData.size).toBe(0);
  }, 180_000);
});
