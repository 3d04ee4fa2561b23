// Holding up under abuse, over real sockets: protocol errors closing 1008, connection caps
// answered with 503 and Retry-After, the health check's reserve, the Host allow-list,
// handler and OnConnect timeouts, tables that do not grow with never-settling handlers, a
// logger that throws, and close() that always finishes (in a child process too).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { LoggerInterface } from '@pkg/logger';
import {
  HttpRoute,
  OnConnect,
  OnDisconnect,
  RateLimit,
  Response,
  Server,
  ServerConfig,
  SocketController,
  SocketOn,
} from '../src/index';
import { RawConnection, TestClient, cleanup, expectRefusedUpgrade, startServer } from './helpers';

afterEach(cleanup);

class HangController extends SocketController {
  handled = 0;
  disconnects: string[] = [];

  @SocketOn('hang')
  hang(): Promise<void> {
    this.handled += 1;
    return new Promise<void>(() => undefined);
  }

  @SocketOn('echo')
  echo(clientId: string, data: Record<string, unknown>): void {
    this.handled += 1;
    this.emit(clientId, 'echo', data);
  }

  @HttpRoute('GET', '/ping')
  ping(): Response {
    return Response.json({ pong: true });
  }

  @HttpRoute('GET', '/hang')
  hangHttp(): Promise<Response> {
    return new Promise<Response>(() => undefined);
  }

  @OnDisconnect()
  gone(clientId: string): void {
    this.disconnects.push(clientId);
  }
}

/** Sends a raw HTTP/1.1 request on a new connection and resolves with the whole answer. */
async function rawRequest(port: number, text: string): Promise<string> {
  const conn = await RawConnection.open(port);
  conn.write(text);
  await conn.ended;
  return conn.data;
}

describe('protocol errors', () => {
  it('closes a client with 1008 after repeated unknown events, answering only the first', async () => {
    const { wsUrl } = await startServer([new HangController()], { ws_max_protocol_errors: 5 });
    const client = await TestClient.connect(wsUrl);
    for (let i = 0; i < 30; i += 1) client.send('no.such.event');
    expect(await client.closed).toEqual({ code: 1008, reason: 'Too many protocol errors' });
    const errors = client.received.filter((e) => e.event === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]?.data['code']).toBe('unknown_event');
  });
});

describe('WebSocket rate limits', () => {
  class Limited extends SocketController {
    @SocketOn('limited')
    @RateLimit(1, 60)
    limited(clientId: string): void {
      this.emit(clientId, 'limited.ok', {});
    }
  }

  async function secondClientAnswer(config: Parameters<typeof startServer>[1]): Promise<string> {
    const ts = await startServer([new Limited()], config);
    const a = await TestClient.connect(ts.wsUrl);
    const b = await TestClient.connect(ts.wsUrl);
    a.send('limited');
    await a.next('limited.ok');
    b.send('limited');
    const answer = await Promise.race([b.next('limited.ok'), b.next('error')]);
    return answer.event === 'error' ? String(answer.data['code']) : answer.event;
  }

  it('counts per client address by default: a second connection shares the budget', async () => {
    expect(await secondClientAnswer({})).toBe('rate_limited');
  });

  it("counts per connection with ws_rate_limit_key 'client', or per the key a function gives", async () => {
    expect(await secondClientAnswer({ ws_rate_limit_key: 'client' })).toBe('limited.ok');
    expect(await secondClientAnswer({ ws_rate_limit_key: (id) => `user-of-${id}` })).toBe(
      'limited.ok',
    );
    expect(await secondClientAnswer({ ws_rate_limit_key: (_id, address) => address })).toBe(
      'rate_limited',
    );
  });
});

describe('connection caps', () => {
  it('refuses the upgrade over max_connections_per_ip with 503 and Retry-After', async () => {
    const ts = await startServer([new HangController()], { max_connections_per_ip: 2 });
    const a = await TestClient.connect(ts.wsUrl);
    await TestClient.connect(ts.wsUrl);
    const refused = await expectRefusedUpgrade(ts.wsUrl);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(JSON.parse(refused.body)).toMatchObject({
      code: 'PKG_ERR_CORE_TOO_MANY_CONNECTIONS_PER_IP',
    });
    // A slot comes back when a client leaves.
    await a.close();
    while (ts.server.getLoad().webSocketClients > 1) await new Promise((r) => setTimeout(r, 5));
    const c = await TestClient.connect(ts.wsUrl);
    c.send('echo', { ok: 1 });
    expect((await c.next('echo')).data).toEqual({ ok: 1 });
  });

  it('answers 503 with Retry-After over max_connections, keeping a reserve for the health check', async () => {
    const ts = await startServer([new HangController()], {
      max_connections: 1,
      connection_reserve: 1,
      health_check_path: '/health',
    });
    await TestClient.connect(ts.wsUrl); // connection 1: the cap
    const reserve = await RawConnection.open(ts.port); // connection 2: the reserve
    while (ts.server.getLoad().connections < 2) await new Promise((r) => setTimeout(r, 5));
    reserve.write('GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await reserve.waitFor((d) => d.includes('"status":"healthy"'));
    expect(reserve.data).toMatch(/^HTTP\/1\.1 200/);

    const over = await rawRequest(ts.port, 'GET /ping HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect(over).toMatch(/^HTTP\/1\.1 503/);
    expect(over).toMatch(/retry-after: 5/i);
    expect(over).toMatch(/PKG_ERR_CORE_TOO_MANY_CONNECTIONS/);

    reserve.write('GET /ping HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await reserve.ended;
    expect(reserve.data).toMatch(/HTTP\/1\.1 503 Service Unavailable[\s\S]*retry-after: 5/i);
  });
});

describe('allowed_hosts', () => {
  it('refuses requests and upgrades whose Host is not allowed, serves those that are', async () => {
    const ts = await startServer([new HangController()], {
      allowed_hosts: ['localhost', '.example.com'],
    });
    const bad = await rawRequest(
      ts.port,
      'GET /ping HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n',
    );
    expect(bad).toMatch(/^HTTP\/1\.1 403/);
    expect(bad).toMatch(/PKG_ERR_CORE_HOST_NOT_ALLOWED/);
    const malformed = await rawRequest(
      ts.port,
      'GET /ping HTTP/1.1\r\nHost: a b\r\nConnection: close\r\n\r\n',
    );
    expect(malformed).toMatch(/^HTTP\/1\.1 400/);
    for (const host of [`localhost:${ts.port}`, 'api.example.com', 'EXAMPLE.com']) {
      const ok = await rawRequest(
        ts.port,
        `GET /ping HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`,
      );
      expect(ok).toMatch(/^HTTP\/1\.1 200/);
    }
    const upgrade = await expectRefusedUpgrade(ts.wsUrl, { headers: { Host: 'attacker.example' } });
    expect(upgrade.status).toBe(403);
    const client = await TestClient.connect(`ws://localhost:${ts.port}`);
    client.send('echo', { ok: true });
    expect((await client.next('echo')).data).toEqual({ ok: true });
  });
});

describe('user code cannot leak the server', () => {
  it('keeps its tables bounded under 10,000 messages to a never-settling handler, and empty after the client leaves', async () => {
    const controller = new HangController();
    const ts = await startServer([controller], {
      ws_max_messages_per_second: 0,
      ws_max_pending: 50,
    });
    const client = await TestClient.connect(ts.wsUrl);
    for (let i = 0; i < 10_000; i += 1) client.send('hang', { i });
    client.send('echo', { last: true });
    const busy = await client.next('error');
    expect(busy.data['code']).toBe('busy');
    // Wait until every message was read: the echo after them is refused as busy too, so
    // count handled + refused through the load instead.
    while (controller.handled < 50) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 50));
    const load = ts.server.getLoad();
    expect(load.pendingHandlers).toBe(50);
    expect(load.clientsWithPendingHandlers).toBe(1);
    expect(controller.handled).toBe(50);

    await client.close();
    while (controller.disconnects.length === 0) await new Promise((r) => setTimeout(r, 5));
    expect(ts.server.getLoad()).toEqual({
      connections: 0,
      webSocketClients: 0,
      pendingHandlers: 0,
      clientsWithPendingHandlers: 0,
      addresses: 0,
      openClients: 0,
      sessions: 0,
      awaySessions: 0,
      sessionBytes: 0,
      historyRooms: 0,
      recoveries: 0,
    });
  });

  it('answers handler_timeout to a SocketOn handler that runs past ws_handler_timeout, and holds it until its client goes', async () => {
    const ts = await startServer([new HangController()], { ws_handler_timeout: 100 });
    const client = await TestClient.connect(ts.wsUrl);
    client.send('hang');
    expect((await client.next('error')).data['code']).toBe('handler_timeout');
    // Still running, so it keeps its ws_max_pending slot; its client's departure frees it.
    expect(ts.server.getLoad().pendingHandlers).toBe(1);
    await client.close();
    const deadline = Date.now() + 2000;
    while (ts.server.getLoad().pendingHandlers !== 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(ts.server.getLoad().pendingHandlers).toBe(0);
    expect(
      ts.logger.lines.some((l) => l.context?.['code'] === 'PKG_ERR_CORE_HANDLER_TIMEOUT'),
    ).toBe(true);
  });

  it('answers 503 to an HTTP handler that runs past http_handler_timeout', async () => {
    const ts = await startServer([new HangController()], { http_handler_timeout: 100 });
    const res = await fetch(`${ts.base}/hang`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await res.json()).toEqual({
      error: 'Service Unavailable',
      code: 'PKG_ERR_CORE_HANDLER_TIMEOUT',
    });
  });

  it('closes a client whose OnConnect never settles with 1011, runs OnDisconnect once and drops its queued messages', async () => {
    const events: string[] = [];
    class StuckConnect extends SocketController {
      @OnConnect()
      stuck(): Promise<void> {
        events.push('connect');
        return new Promise<void>(() => undefined);
      }
      @SocketOn('echo')
      echo(): void {
        events.push('echo');
      }
      @OnDisconnect()
      gone(): void {
        events.push('disconnect');
      }
    }
    const ts = await startServer([new StuckConnect()], { connect_timeout: 100 });
    const client = await TestClient.connect(ts.wsUrl);
    client.send('echo');
    expect(await client.closed).toEqual({ code: 1011, reason: 'OnConnect timeout' });
    while (!events.includes('disconnect')) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 20));
    expect(events).toEqual(['connect', 'disconnect']);
    expect(
      ts.logger.lines.some((l) => l.context?.['code'] === 'PKG_ERR_CORE_CONNECT_TIMEOUT'),
    ).toBe(true);
    expect(ts.server.getLoad().pendingHandlers).toBe(0);
  });

  it('keeps serving when every call into its logger throws', async () => {
    const throwing = new Proxy({} as LoggerInterface, {
      get: () => () => {
        throw new Error('logger down');
      },
    });
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown): void => void rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    const originalError = console.error;
    console.error = () => undefined;
    const server = new Server(
      new ServerConfig({
        host: '127.0.0.1',
        port: 0,
        heartbeat_interval: 0,
        cors: { allowed_origins: ['https://ok.example'] },
      }),
      undefined,
      undefined,
      undefined,
      throwing,
    );
    try {
      server.registerController(new HangController());
      await server.run();
      const port = server.getPort();
      // Error paths that log: a refused origin, an unknown route, an unknown event.
      const refused = await expectRefusedUpgrade(`ws://127.0.0.1:${port}`, {
        headers: { Origin: 'https://evil.example' },
      });
      expect(refused.status).toBe(403);
      expect((await fetch(`http://127.0.0.1:${port}/nope`)).status).toBe(404);
      const client = await TestClient.connect(`ws://127.0.0.1:${port}`, {
        headers: { Origin: 'https://ok.example' },
      });
      client.send('no.such');
      expect((await client.next('error')).data['code']).toBe('unknown_event');
      client.send('echo', { alive: true });
      expect((await client.next('echo')).data).toEqual({ alive: true });
      await client.close();
      await server.close();
      await new Promise((r) => setImmediate(r));
      expect(rejections).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
      console.error = originalError;
      await server.close();
    }
  });

  it('never lets the logger throw out of log() or setClientData()', () => {
    const throwing = new Proxy({} as LoggerInterface, {
      get: () => () => {
        throw new Error('logger down');
      },
    });
    const originalError = console.error;
    console.error = () => undefined;
    try {
      const server = new Server(
        new ServerConfig({ host: '127.0.0.1', port: 0, debug: true }),
        undefined,
        undefined,
        undefined,
        throwing,
      );
      // Both write a debug line: in debug mode, and for a client that is not connected.
      expect(() => server.log('a line')).not.toThrow();
      expect(server.setClientData('nobody', 'key', 1)).toBe(false);
      // The user's own logger is still what getLogger() returns.
      expect(server.getLogger()).toBe(throwing);
    } finally {
      console.error = originalError;
    }
  });
});

describe('refusals of requests (protocol version 1)', () => {
  /** Connects and says $hello, so that messages with an id are requests. */
  async function helloClient(url: string): Promise<TestClient> {
    const client = await TestClient.connect(url);
    client.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1 } }));
    expect((await client.next('$welcome')).event).toBe('$welcome');
    return client;
  }
  const request = (client: TestClient, event: string, id: number): void =>
    client.sendRaw(JSON.stringify({ event, data: {}, id }));

  it('answers the id of each request refused as busy, and of one that timed out', async () => {
    const ts = await startServer([new HangController()], {
      ws_max_pending: 1,
      ws_handler_timeout: 200,
    });
    const client = await helloClient(ts.wsUrl);
    request(client, 'hang', 1);
    request(client, 'hang', 2);
    request(client, 'hang', 3);
    // Both refusals arrive within ws_error_reply_interval: answers to ids are never spaced.
    expect(await client.next('error')).toMatchObject({ id: 2, data: { code: 'busy' } });
    expect(await client.next('error')).toMatchObject({ id: 3, data: { code: 'busy' } });
    expect(await client.next('error')).toMatchObject({
      id: 1,
      data: { code: 'handler_timeout' },
    });
    // The hanging handler keeps its slot until it settles or its client goes.
    expect(ts.server.getLoad().pendingHandlers).toBe(1);
    request(client, 'hang', 4);
    expect(await client.next('error')).toMatchObject({ id: 4, data: { code: 'busy' } });
  });

  it('answers a request that timed out once: the late result of its handler is dropped', async () => {
    let finish: (value: { late: true }) => void = () => undefined;
    class SlowController extends SocketController {
      @SocketOn('slow')
      slow(): Promise<{ late: true }> {
        return new Promise((resolve) => {
          finish = resolve;
        });
      }
      @SocketOn('fast')
      fast(): { fast: true } {
        return { fast: true };
      }
    }
    const ts = await startServer([new SlowController()], { ws_handler_timeout: 100 });
    const client = await helloClient(ts.wsUrl);
    request(client, 'slow', 1);
    expect(await client.next('error')).toMatchObject({
      id: 1,
      data: { code: 'handler_timeout' },
    });
    // The handler finishes after its timeout; a request sent after that is answered, and
    // nothing else for id 1 arrived in between.
    finish({ late: true });
    await new Promise((r) => setImmediate(r));
    request(client, 'fast', 2);
    expect(await client.next('fast')).toMatchObject({ id: 2, data: { fast: true } });
    expect(client.received.filter((e) => (e as { id?: unknown }).id === 1)).toEqual([
      expect.objectContaining({ event: 'error', id: 1 }),
    ]);
  });

  it('ends the session of a client closed for connect_timeout: OnDisconnect runs at once and a resume starts fresh', async () => {
    const events: string[] = [];
    class StuckConnect extends SocketController {
      @OnConnect()
      stuck(): Promise<void> {
        events.push('connect');
        return new Promise<void>(() => undefined);
      }
      @OnDisconnect()
      gone(): void {
        events.push('disconnect');
      }
    }
    const ts = await startServer([new StuckConnect()], { connect_timeout: 100 });
    const client = await TestClient.connect(ts.wsUrl);
    client.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1 } }));
    const welcome = await client.next('$welcome');
    expect(welcome.data['session']).toEqual(expect.any(String));
    expect(await client.closed).toEqual({ code: 1011, reason: 'OnConnect timeout' });
    // Without the session ending here, OnDisconnect would wait for recovery_window (2 min).
    while (!events.includes('disconnect')) await new Promise((r) => setTimeout(r, 5));
    expect(events).toEqual(['connect', 'disconnect']);
    const again = await TestClient.connect(ts.wsUrl);
    again.sendRaw(
      JSON.stringify({
        event: '$hello',
        data: { v: 1, resume: { session: welcome.data['session'], seq: 0 } },
      }),
    );
    expect((await again.next('$welcome')).data).toMatchObject({ resumed: false });
    while (events.length < 3) await new Promise((r) => setTimeout(r, 5));
    expect(events).toEqual(['connect', 'disconnect', 'connect']);
  });

  it('answers the id of each request over the inbound budget', async () => {
    const ts = await startServer([new HangController()], { ws_max_messages_per_second: 1 });
    const client = await helloClient(ts.wsUrl);
    // The $hello took one of the burst of two.
    request(client, 'echo', 1);
    request(client, 'echo', 2);
    request(client, 'echo', 3);
    // The handler emits echo, then its (empty) result answers the request.
    expect(await client.next('echo')).toMatchObject({ data: {} });
    expect(await client.next('echo')).toMatchObject({ id: 1, data: null });
    expect(await client.next('error')).toMatchObject({
      id: 2,
      data: { code: 'too_many_messages' },
    });
    expect(await client.next('error')).toMatchObject({
      id: 3,
      data: { code: 'too_many_messages' },
    });
  });
});

describe('shutdown', () => {
  it('close() resolves with a never-settling SocketOn handler, and refuses requests that arrive once it stops accepting', async () => {
    const controller = new HangController();
    const ts = await startServer([controller], { shutdown_timeout: 300 });
    const client = await TestClient.connect(ts.wsUrl);
    client.send('hang');
    while (controller.handled < 1) await new Promise((r) => setTimeout(r, 5));
    // A request whose headers are under way when close() begins: answered 503, not served.
    const late = await RawConnection.open(ts.port);
    late.write('GET /ping HTTP/1.1\r\nHost: localhost\r\n');
    while (ts.server.getLoad().connections < 2) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 20));
    const closing = ts.server.close();
    late.write('\r\n');
    await closing;
    expect(ts.server.getLoad().pendingHandlers).toBe(0);
    expect(late.data).toMatch(/^HTTP\/1\.1 503[\s\S]*PKG_ERR_CORE_DRAINING/);
    expect((await client.closed).code).toBe(1001);
    expect(controller.disconnects).toHaveLength(1);
  });

  it('keeps the process alive until close() finished, with never-settling handlers, so the code after it runs', async () => {
    const dist = path.resolve(__dirname, '..', 'dist', 'index.cjs');
    if (!existsSync(dist)) throw new Error(`Build @pkg/core first (${dist} is missing).`);
    // Plain JavaScript: the decorator is applied by hand, as TC39 decorators are called.
    const script = `
      const core = require(process.env.CORE_PATH);
      const WebSocket = require(process.env.WS_PATH);
      class Hang extends core.SocketController {
        hang() { return new Promise(() => {}); }
        gone() { return new Promise(() => {}); }
      }
      const metadata = {};
      const context = (name) => ({ kind: 'method', name, static: false, private: false, metadata,
        addInitializer() {}, access: { has: () => true, get: (o) => o[name] } });
      core.SocketOn('hang')(Hang.prototype.hang, context('hang'));
      core.OnDisconnect()(Hang.prototype.gone, context('gone'));
      Object.defineProperty(Hang, Symbol.metadata ?? Symbol.for('Symbol.metadata'), { value: metadata });
      const server = new core.Server(new core.ServerConfig({ host: '127.0.0.1', port: 0,
        heartbeat_interval: 0, shutdown_timeout: 300 }), undefined, undefined, undefined, new core.NullLogger());
      server.registerController(new Hang());
      server.run().then(() => {
        const ws = new WebSocket('ws://127.0.0.1:' + server.getPort());
        ws.on('error', () => {});
        ws.on('open', () => {
          ws.send(JSON.stringify({ event: 'hang', data: {} }));
          setTimeout(async () => {
            // Nothing but close() is left: the client goes, its OnDisconnect never settles.
            await server.close();
            console.log('after close ' + server.state);
          }, 50);
        });
      });
    `;
    const child = spawn(process.execPath, ['-e', script], {
      env: { ...process.env, CORE_PATH: dist, WS_PATH: require.resolve('ws') },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const [code] = (await once(child, 'exit')) as [number];
    expect(out.trim()).toBe('after close closed');
    expect(code).toBe(0);
  });
});
