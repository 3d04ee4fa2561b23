// Graceful close(): WebSocket clients closed with 1012 (restart) and their OnDisconnect handlers run,
// the health check answering 503 `draining`, in-flight HTTP requests finishing, the
// shutdown timeout cutting what does not finish, and the listener gone afterwards.
import { afterEach, describe, expect, it } from '@jest/globals';
import { HttpRoute, OnDisconnect, Response, SocketController, SocketOn } from '../src/index';
import {
  RawConnection,
  TestClient,
  cleanup,
  deferred,
  expectRefusedUpgrade,
  startServer,
} from './helpers';

afterEach(cleanup);

function makeController() {
  const disconnected: string[] = [];
  const entered = deferred();
  const release = deferred();
  class SlowController extends SocketController {
    @HttpRoute('GET', '/slow')
    async slow(): Promise<Response> {
      entered.resolve();
      await release.promise;
      return Response.json({ finished: true });
    }

    @HttpRoute('GET', '/hang')
    async hang(): Promise<Response> {
      entered.resolve();
      return new Promise<Response>(() => undefined);
    }

    @SocketOn('echo')
    echo(clientId: string, data: Record<string, unknown>): void {
      this.emit(clientId, 'echo', data);
    }

    @OnDisconnect()
    async gone(clientId: string): Promise<void> {
      await Promise.resolve();
      disconnected.push(clientId);
    }
  }
  return { controller: new SlowController(), disconnected, entered, release };
}

function parseResponses(raw: string): Array<{ status: number; headers: string; body: string }> {
  const out: Array<{ status: number; headers: string; body: string }> = [];
  let rest = raw;
  while (rest.startsWith('HTTP/1.1')) {
    const end = rest.indexOf('\r\n\r\n');
    const headers = rest.slice(0, end);
    const length = Number(/content-length: (\d+)/i.exec(headers)?.[1] ?? 0);
    const body = rest.slice(end + 4, end + 4 + length);
    out.push({ status: Number(headers.slice(9, 12)), headers, body });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}

/** Whether the text holds one complete response (headers and a Content-Length body). */
function isCompleteResponse(raw: string): boolean {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) return false;
  const length = Number(/content-length: (\d+)/i.exec(raw.slice(0, end))?.[1] ?? 0);
  return raw.length >= end + 4 + length;
}

describe('close()', () => {
  it('closes WebSocket clients with 1012 (restart), runs their OnDisconnect handlers, then resolves', async () => {
    const { controller, disconnected } = makeController();
    const { server, base } = await startServer([controller]);
    const a = await TestClient.connect(`ws://127.0.0.1:${server.getPort()}`);
    const b = await TestClient.connect(`ws://127.0.0.1:${server.getPort()}`);
    a.send('echo', {});
    await a.next('echo');
    const ids = server.getAllClients();
    expect(ids).toHaveLength(2);

    await server.close();
    expect(server.state).toBe('closed');
    expect((await a.closed).code).toBe(1012);
    expect((await b.closed).code).toBe(1012);
    expect(disconnected.sort()).toEqual([...ids].sort());
    expect(server.getClientCount()).toBe(0);
    expect(server.getNamespaceManager().getStats()).toEqual({
      namespaces: 0,
      rooms: 0,
      clients: 0,
    });
    await expect(fetch(`${base}/slow`)).rejects.toThrow();
  });

  it('drain() answers the health check 503 draining and refuses upgrades, still serving HTTP', async () => {
    const { controller } = makeController();
    const { server, base, wsUrl } = await startServer([controller], {
      health_check_path: '/health',
    });
    expect((await fetch(`${base}/health`)).status).toBe(200);
    const client = await TestClient.connect(wsUrl);

    server.drain();
    expect(server.state).toBe('draining');
    const res = await fetch(`${base}/health`);
    expect(res.status).toBe(503);
    expect(res.headers.get('connection')).toBe('close');
    const doc = (await res.json()) as { status: string; server: { clients: number } };
    expect(doc.status).toBe('draining');
    expect(doc.server.clients).toBe(1);
    expect((await expectRefusedUpgrade(wsUrl)).status).toBe(503);
    // Existing clients and plain HTTP are still served until close().
    client.send('echo', { still: true });
    expect((await client.next('echo')).data).toEqual({ still: true });

    await server.close();
    expect((await client.closed).code).toBe(1012);
  });

  it('answers the health check 503 draining over the wire while close() is in progress', async () => {
    const { controller, entered, release } = makeController();
    const { server, port, base } = await startServer([controller], {
      health_check_path: '/health',
    });
    // An in-flight request keeps close() from finishing.
    const slow = await RawConnection.open(port);
    slow.write('GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await entered.promise;
    // A connection with a request under way is not idle, so close() does not cut it: the
    // load balancer's check that is being sent when shutdown starts gets its answer.
    const probe = await RawConnection.open(port);
    probe.write('GET /health HTTP/1.1\r\nHost: localhost\r\n');
    // A full round trip after the write: the server has read the probe's first bytes.
    expect((await fetch(`${base}/health`)).status).toBe(200);

    const closing = server.close();
    probe.write('\r\n');
    await probe.waitFor(isCompleteResponse);
    const [health] = parseResponses(probe.data);
    expect(health!.status).toBe(503);
    expect(health!.headers).toMatch(/connection: close/i);
    expect(JSON.parse(health!.body)).toMatchObject({ status: 'draining', server: { clients: 0 } });

    release.resolve();
    await closing;
    expect(server.state).toBe('closed');
  });

  it('lets an in-flight request finish, answered with Connection: close', async () => {
    const { controller, entered, release } = makeController();
    const { server, port } = await startServer([controller]);
    const conn = await RawConnection.open(port);
    conn.write('GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await entered.promise;

    let closed = false;
    const closing = server.close().then(() => (closed = true));
    expect(server.state).toBe('draining');
    expect(server.getHealth().status).toBe('draining');
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(false);
    release.resolve();
    await closing;
    await conn.ended;

    const [slow] = parseResponses(conn.data);
    expect(slow!.status).toBe(200);
    expect(JSON.parse(slow!.body)).toEqual({ finished: true });
    expect(slow!.headers).toMatch(/connection: close/i);
  });

  it('cuts requests still running after shutdown_timeout', async () => {
    const { controller, entered } = makeController();
    const { server, port, logger } = await startServer([controller], { shutdown_timeout: 20 });
    const conn = await RawConnection.open(port);
    conn.write('GET /hang HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await entered.promise;
    await server.close();
    await conn.ended;
    expect(conn.data).toBe('');
    expect(logger.lines.some((l) => l.message.startsWith('Shutdown timeout'))).toBe(true);
  });

  it('refuses WebSocket upgrades while draining', async () => {
    const { controller, entered, release } = makeController();
    const { server, port } = await startServer([controller]);
    const conn = await RawConnection.open(port);
    conn.write('GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await entered.promise;
    const closed = server.close();
    conn.write(
      'GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
    );
    await conn.waitFor((d) => d.includes('503'));
    release.resolve();
    await closed;
    expect(conn.data).toMatch(/HTTP\/1\.1 503/);
    expect(conn.data).not.toMatch(/101 Switching Protocols/);
  });

  it('waits for a run() in progress, then closes', async () => {
    const { Server, NullLogger } = await import('../src/index');
    const server = new Server('127.0.0.1', 0, false, {}, new NullLogger());
    const running = server.run();
    const closing = server.close();
    await running;
    await closing;
    expect(server.state).toBe('closed');
    expect(server.socket?.listening).toBe(false);
  });

  it('returns the same promise when called twice, and works before run()', async () => {
    const { controller } = makeController();
    const { server } = await startServer([controller]);
    const first = server.close();
    expect(server.close()).toBe(first);
    await first;

    const { Server, NullLogger } = await import('../src/index');
    const idle = new Server('127.0.0.1', 0, false, {}, new NullLogger());
    await idle.close();
    expect(idle.state).toBe('closed');
    await expect(idle.run()).rejects.toMatchObject({ code: 'PKG_ERR_CORE_ALREADY_RUNNING' });
  });
});
