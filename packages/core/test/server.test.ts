// The Server object itself: both construction forms, run() and its errors, the settings it
// hands to node:http (timeouts, max connections), TLS, read-only properties, log().
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import path from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  HttpRoute,
  LocalAdapter,
  Logger,
  NullLogger,
  OnConnect,
  Response,
  Server,
  ServerConfig,
  SocketController,
  SocketOn,
} from '../src/index';
import { MemoryLogger, TestClient, cleanup, startServer } from './helpers';

afterEach(cleanup);

// A self-signed certificate for 127.0.0.1/localhost, valid until 2126, used only by tests.
const fixtures = path.join(__dirname, 'fixtures');
const key = readFileSync(path.join(fixtures, 'localhost-key.pem'));
const cert = readFileSync(path.join(fixtures, 'localhost-cert.pem'));

class HelloController extends SocketController {
  @HttpRoute('GET', '/hello')
  hello(): Response {
    return Response.json({ hello: 'world' });
  }

  @OnConnect()
  welcome(clientId: string): void {
    this.emit(clientId, 'welcome', {});
  }

  @SocketOn('echo')
  echo(clientId: string, data: Record<string, unknown>): void {
    this.emit(clientId, 'echo', data);
  }
}

describe('construction', () => {
  it('takes the spec positional form with defaults', () => {
    const server = new Server(undefined, undefined, undefined, undefined, new NullLogger());
    expect(server.getHost()).toBe('0.0.0.0');
    expect(server.getPort()).toBe(6001);
    expect(server.isDebug()).toBe(false);
    expect(server.isDebugMode).toBe(false);
    const custom = new Server(
      '127.0.0.1',
      7000,
      true,
      { allowed_origins: ['https://a.example'] },
      new NullLogger(),
    );
    expect(custom.getPort()).toBe(7000);
    expect(custom.isDebug()).toBe(true);
    expect(custom.getHttpHandler().getCorsConfig().getAllowedOrigins()).toEqual([
      'https://a.example',
    ]);
    expect(custom.getWebSocketHandler().getAllowedOrigins()).toEqual(['https://a.example']);
  });

  it('takes a ServerConfig, with the logger as fifth argument, and locks the config', () => {
    const config = new ServerConfig({ host: '127.0.0.1', port: 0 });
    const logger = new NullLogger();
    const server = new Server(config, undefined, undefined, undefined, logger);
    expect(server.getLogger()).toBe(logger);
    expect(server.getConfig()).toBe(config);
    expect(() => config.setPort(1)).toThrow(/already uses this configuration/);
  });

  it('refuses positional settings next to a ServerConfig, and a non-logger', () => {
    expect(() => new Server(new ServerConfig(), 8080)).toThrow(
      /put port, debug and cors in the configuration/,
    );
    expect(() => new Server('127.0.0.1', 0, false, {}, {} as unknown as NullLogger)).toThrow(
      /must be a LoggerInterface/,
    );
  });

  it('checks positional values like config keys', () => {
    expect(() => new Server('127.0.0.1', 70000)).toThrow(
      /"port" must be an integer from 0 to 65535/,
    );
  });

  it('creates a console Logger when none is given', () => {
    expect(new Server(new ServerConfig({ port: 0 })).getLogger()).toBeInstanceOf(Logger);
  });

  it('exposes the spec properties read-only', () => {
    const server = new Server('127.0.0.1', 0, false, {}, new NullLogger());
    expect(server.router).toBe(server.getRouter());
    expect(server.namespaceManager).toBe(server.getNamespaceManager());
    expect(server.middleware).toBe(server.getMiddleware());
    expect(server.httpHandler).toBe(server.getHttpHandler());
    expect(server.wsHandler).toBe(server.getWebSocketHandler());
    expect(server.socket).toBeNull();
    expect(server.clients.size).toBe(0);
    expect(server.clientTypes.size).toBe(0);
    expect(server.clientData.size).toBe(0);
    expect(server.state).toBe('idle');
    expect(() => {
      (server as unknown as { router: unknown }).router = null;
    }).toThrow(TypeError);
  });
});

describe('run()', () => {
  it('listens on port 0 and reports the bound port', async () => {
    const { server, base } = await startServer([new HelloController()]);
    expect(server.getPort()).toBeGreaterThan(0);
    expect(server.state).toBe('running');
    expect(await (await fetch(`${base}/hello`)).json()).toEqual({ hello: 'world' });
  });

  it('applies timeouts and the connection limit to the node:http server', async () => {
    const { server } = await startServer([], {
      headers_timeout: 4000,
      request_timeout: 8000,
      keep_alive_timeout: 3000,
      max_connections: 50,
    });
    const node = server.socket!;
    expect(node.headersTimeout).toBe(4000);
    expect(node.requestTimeout).toBe(8000);
    expect(node.keepAliveTimeout).toBe(3000);
    // max_connections is answered with 503 by the server, not enforced by Node with resets.
    expect(node.maxConnections).toBeUndefined();
  });

  it('hands the WebSocket limits to the handler: a message over max_message_size closes with 1009', async () => {
    const { wsUrl } = await startServer([new HelloController()], { max_message_size: 64 });
    const client = await TestClient.connect(wsUrl);
    await client.next('welcome');
    client.send('echo', { text: 'x'.repeat(100) });
    expect((await client.closed).code).toBe(1009);
  });

  it('refuses connections over max_connections', async () => {
    const { wsUrl } = await startServer([new HelloController()], { max_connections: 1 });
    const first = await TestClient.connect(wsUrl);
    await first.next('welcome');
    await expect(TestClient.connect(wsUrl)).rejects.toThrow();
    first.send('echo', { ok: 1 });
    expect((await first.next('echo')).data).toEqual({ ok: 1 });
  });

  it('rejects with a helpful message when the port is taken', async () => {
    const { port } = await startServer([]);
    const second = new Server('127.0.0.1', port, false, {}, new NullLogger());
    await expect(second.run()).rejects.toThrow(
      /Cannot listen on 127\.0\.0\.1:\d+: .*Another process uses this port/,
    );
    expect(second.state).toBe('closed');
  });

  it('runs once', async () => {
    const { server } = await startServer([]);
    await expect(server.run()).rejects.toMatchObject({ code: 'PKG_ERR_CORE_ALREADY_RUNNING' });
    expect(() => server.setAdapter(new LocalAdapter())).toThrow(/before run\(\)/);
  });
});

describe('TLS', () => {
  it('serves HTTPS and WSS on one port when key and cert are configured', async () => {
    const { server, port } = await startServer([new HelloController()], { tls: { key, cert } });
    expect(server.socket).not.toBeNull();
    const body = await new Promise<string>((resolve, reject) => {
      const req = httpsRequest(
        { host: '127.0.0.1', port, path: '/hello', ca: cert, servername: 'localhost' },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve(text));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(JSON.parse(body)).toEqual({ hello: 'world' });

    const client = await TestClient.connect(`wss://127.0.0.1:${port}`, { ca: cert });
    await client.next('welcome');
    client.send('echo', { secure: true });
    expect((await client.next('echo')).data).toEqual({ secure: true });
    expect(server.getClientType(server.getAllClients()[0]!)).toBe('ws');
  });
});

describe('log()', () => {
  it('writes only in debug mode', () => {
    const quiet = new MemoryLogger();
    new Server('127.0.0.1', 0, false, {}, quiet).log('hidden');
    expect(quiet.lines.some((l) => l.message === 'hidden')).toBe(false);
    const loud = new MemoryLogger();
    new Server('127.0.0.1', 0, true, {}, loud).log('shown');
    expect(loud.lines).toContainEqual({ level: 'debug', message: 'shown' });
  });
});

describe('WebSocket options set through ServerConfig', () => {
  it('closes with 1003 on a binary message when ws_binary_messages is "close"', async () => {
    const { wsUrl } = await startServer([], { ws_binary_messages: 'close' });
    const client = await TestClient.connect(wsUrl);
    client.ws.send(Buffer.from([1, 2, 3]));
    expect((await client.closed).code).toBe(1003);
  });

  it('answers a binary message with an error event by default', async () => {
    const { wsUrl } = await startServer([]);
    const client = await TestClient.connect(wsUrl);
    client.ws.send(Buffer.from([1, 2, 3]));
    const error = await client.next('error');
    expect(typeof error.data['code']).toBe('string');
    expect(client.ws.readyState).toBe(client.ws.OPEN);
  });
});
