// Membership through a running server: many real clients in rooms of several namespaces,
// disconnected in the three ways a client can go (it closes, disconnectClient, close()),
// leave nothing behind in the namespace manager nor in the client tables. The 10,000-client
// run keeps its client sockets in a child process: both ends in one process would need
// 20,000 file descriptors, the usual per-process limit.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from '@jest/globals';
import { OnConnect, OnDisconnect, SocketController } from '../src/index';
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
    const count = 10_000;
    const controller = new MemberController(count);
    const { server, wsUrl } = await startServer(
      [controller],
      { max_connections: count + 100 },
      (s) =>
        s.addHandshakeMiddleware((ctx) => {
          ctx.data['n'] = Number(ctx.query.get('n'));
        }),
    );
    // The clients: plain `ws` in a child process, 250 handshakes at a time, each waiting for
    // the server's `ready` (sent once OnConnect has joined its rooms). A line on stdin closes
    // them all.
    const script = `
      const WebSocket = require(process.env.WS_PATH);
      const sockets = [];
      function open(n) {
        return new Promise((resolve, reject) => {
          const s = new WebSocket(process.env.WS_URL + '/?n=' + n, { perMessageDeflate: false });
          sockets.push(s);
          s.on('message', (raw) => { if (JSON.parse(raw).event === 'ready') resolve(); });
          s.on('error', reject);
        });
      }
      (async () => {
        const count = Number(process.env.COUNT);
        for (let i = 0; i < count; i += 250) {
          await Promise.all(Array.from({ length: Math.min(250, count - i) }, (_, k) => open(i + k)));
        }
        console.log('connected ' + sockets.length);
        process.stdin.once('data', () => {
          let closed = 0;
          for (const s of sockets) {
            s.on('close', () => { if (++closed === sockets.length) process.exit(0); });
            s.close();
          }
        });
      })().catch((err) => { console.error(err); process.exit(1); });`;
    const child = spawn(process.execPath, ['-e', script], {
      env: { ...process.env, WS_PATH: require.resolve('ws'), WS_URL: wsUrl, COUNT: String(count) },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const exited = once(child, 'exit');
    try {
      const lines = createInterface({ input: child.stdout! });
      const [first] = (await once(lines, 'line')) as [string];
      expect(first).toBe(`connected ${count}`);

      const nm = server.getNamespaceManager();
      expect(nm.getStats()).toEqual({ namespaces: 2, rooms: 14, clients: count });
      expect(server.getClientCount()).toBe(count);
      expect(nm.getClientsInRoom('even')).toHaveLength(count / 2);
      expect(nm.getClientsInNamespace('/teams')).toHaveLength(count);

      child.stdin!.write('close\n');
      await controller.allGone;
      const [code] = (await exited) as [number | null];
      expect(code).toBe(0);

      expect(nm.getStats()).toEqual({ namespaces: 0, rooms: 0, clients: 0 });
      expect(nm.namespaces.size).toBe(0);
      expect(nm.rooms.size).toBe(0);
      expect(nm.clientNamespaces.size).toBe(0);
      expect(nm.clientRooms.size).toBe(0);
      expect(server.getClientCount()).toBe(0);
      expect(server.clientData.size).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill();
    }
  }, 180_000);
});
