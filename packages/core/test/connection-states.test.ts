// The connection state machine over real sockets: a refused or unfinished authentication
// never replays a message or runs the auth handlers again, every held request is answered
// once, only `open` connections get deliveries and count, `auth_timeout` bounds the whole
// authentication, and the server runs one heartbeat of its own.
import { afterEach, describe, expect, it } from '@jest/globals';
import { connect as netConnect } from 'node:net';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import {
  LocalAdapter,
  SocketOn,
  type AdapterHost,
  type AuthContext,
  type AuthResult,
  type Server,
  type ServerConfigOptions,
} from '../src/index';
import {
  ConnectionRecorder,
  TestClient,
  cleanup,
  deferred,
  startServer,
  type Envelope,
  type MemoryLogger,
} from './helpers';

afterEach(cleanup);

interface Message extends Envelope {
  id?: unknown;
  seq?: number;
}

class App extends ConnectionRecorder {
  @SocketOn('add')
  add(_clientId: string, data: unknown): number {
    const { a, b } = data as { a: number; b: number };
    return a + b;
  }
}

type Handler = (ctx: AuthContext) => AuthResult | Promise<AuthResult>;

async function setup(
  handler: Handler | undefined,
  config: ServerConfigOptions = {},
  prepare?: (server: Server) => void,
): Promise<{
  server: Server;
  app: App;
  url: string;
  port: number;
  base: string;
  logger: MemoryLogger;
}> {
  const app = new App();
  const { server, wsUrl, port, base, logger } = await startServer(
    [app],
    { shutdown_timeout: 200, health_check_path: '/health', ...config },
    (s) => {
      if (handler !== undefined) s.addAuthHandler(handler);
      prepare?.(s);
    },
  );
  return { server, app, url: wsUrl, port, base, logger };
}

const connectV1 = (url: string): Promise<TestClient> => TestClient.connect(url, {}, ['pkg.v1']);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const request = (client: TestClient, event: string, data: unknown, id: unknown): void =>
  client.sendRaw(JSON.stringify({ event, data, id }));

/** The health check answers within `ms` (the event loop is not starved). */
async function healthAnswers(base: string, ms = 1000): Promise<number> {
  const res = await fetch(`${base}/health`, { signal: AbortSignal.timeout(ms) });
  return res.status;
}

/** A masked client text frame (RFC 6455), for a client written byte by byte. */
function textFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = randomBytes(4);
  const masked = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
  return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, masked]);
}

/** Reads server frames after the 101 answer: text messages and the close code. */
function readFrames(data: Buffer): { texts: string[]; close: number | undefined } {
  const texts: string[] = [];
  let close: number | undefined;
  let at = data.indexOf('\r\n\r\n') + 4;
  while (at + 2 <= data.length) {
    const opcode = data[at]! & 0x0f;
    let len = data[at + 1]! & 0x7f;
    let start = at + 2;
    if (len === 126) {
      len = data.readUInt16BE(at + 2);
      start = at + 4;
    }
    if (start + len > data.length) break;
    const body = data.subarray(start, start + len);
    if (opcode === 1) texts.push(body.toString());
    if (opcode === 8) close = body.readUInt16BE(0);
    at = start + len;
  }
  return { texts, close };
}

describe('a refused authentication never replays (the freeze)', () => {
  it.each([
    [
      'a synchronous',
      (calls: { n: number }): Handler =>
        (ctx) => (calls.n++, ctx.auth === 'good'),
    ],
    [
      'an asynchronous',
      (calls: { n: number }): Handler =>
        async (ctx) => (calls.n++, ctx.auth === 'good'),
    ],
  ])(
    'runs %s auth handler once for a version 0 message, answers its id once, closes 4401, and /health still answers',
    async (_kind, make) => {
      const calls = { n: 0 };
      const { url, app, base } = await setup(make(calls), { hello_wait: 0 });
      const client = await TestClient.connect(url);
      await sleep(20);
      request(client, 'add', { a: 1, b: 2 }, 1);
      const closed = await client.closed;
      expect(closed).toEqual({ code: 4401, reason: 'Unauthorized' });
      expect(calls.n).toBe(1);
      const answers = client.received.filter((m) => (m as Message).id === 1);
      expect(answers).toEqual([
        {
          event: 'error',
          id: 1,
          data: { code: 'unauthorized', message: 'Unauthorized', status: 401 },
        },
      ]);
      expect(app.connects).toEqual([]);
      expect(await healthAnswers(base)).toBe(200);
    },
  );

  it('holds the first message of a pkg.v1 client that is not $hello, runs the handlers once, refuses it', async () => {
    const calls = { n: 0 };
    const { url, base } = await setup((ctx) => (calls.n++, ctx.auth === 'good'), {
      hello_wait: 60_000,
    });
    const client = await connectV1(url);
    request(client, 'add', { a: 1, b: 2 }, 'r1');
    client.send('add', { a: 1, b: 1 });
    expect((await client.closed).code).toBe(4401);
    expect(calls.n).toBe(1);
    expect(client.received.filter((m) => (m as Message).id === 'r1')).toHaveLength(1);
    expect(client.received.some((m) => m.event === 'add')).toBe(false);
    expect(await healthAnswers(base)).toBe(200);
  });

  it('refuses a frame sent in the same packet as the upgrade request, once', async () => {
    const calls = { n: 0 };
    const { port, base } = await setup(async (ctx) => (calls.n++, ctx.auth === 'good'), {
      hello_wait: 0,
    });
    const socket = netConnect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', () => undefined);
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      Buffer.concat([
        Buffer.from(
          `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        ),
        textFrame(JSON.stringify({ event: 'add', data: { a: 1, b: 2 }, id: 9 })),
      ]),
    );
    let frames = readFrames(Buffer.concat(chunks));
    for (let i = 0; i < 200 && frames.close === undefined; i += 1) {
      await sleep(10);
      frames = readFrames(Buffer.concat(chunks));
    }
    socket.destroy();
    expect(frames.close).toBe(4401);
    expect(calls.n).toBe(1);
    expect(frames.texts.map((t) => JSON.parse(t) as Message).filter((m) => m.id === 9)).toEqual([
      {
        event: 'error',
        id: 9,
        data: { code: 'unauthorized', message: 'Unauthorized', status: 401 },
      },
    ]);
    expect(await healthAnswers(base)).toBe(200);
  });
});

describe('held messages while the auth handlers run', () => {
  it('answers each held request exactly once: busy past the bound, unauthorized on refusal', async () => {
    const decision = deferred<AuthResult>();
    const { url, app } = await setup(() => decision.promise, { max_pending_requests: 2 });
    const client = await connectV1(url);
    client.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1, auth: 'x' } }));
    for (const id of [1, 2, 3]) request(client, 'add', { a: id, b: 0 }, id);
    const busy = (await client.next('error')) as Message;
    expect(busy).toMatchObject({ id: 3, data: { code: 'busy' } });
    decision.resolve({ status: 403, message: 'Banned' });
    expect(await client.closed).toEqual({ code: 4403, reason: 'Banned' });
    const ids = client.received.map((m) => (m as Message).id).filter((id) => id !== undefined);
    expect(ids.sort()).toEqual([1, 2, 3]);
    expect(client.received.filter((m) => (m as Message).id === 1)[0]?.data).toMatchObject({
      code: 'forbidden',
    });
    expect(app.connects).toEqual([]);
  });

  it('dispatches the held requests in order after $welcome when accepted', async () => {
    const decision = deferred<AuthResult>();
    const { url, app } = await setup(() => decision.promise);
    const client = await connectV1(url);
    client.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1, auth: 'x' } }));
    request(client, 'add', { a: 1, b: 1 }, 1);
    request(client, 'add', { a: 2, b: 2 }, 2);
    await sleep(30);
    expect(client.pending()).toEqual([]);
    decision.resolve(true);
    expect((await client.next()).event).toBe('$welcome');
    expect(await client.next()).toEqual({ event: 'add', id: 1, data: 2 });
    expect(await client.next()).toEqual({ event: 'add', id: 2, data: 4 });
    expect(app.connects).toHaveLength(1);
  });
});

describe('only open connections get deliveries and count', () => {
  it('keeps broadcasts, sends, counts and the adapter path away from refused and authenticating clients', async () => {
    const pendingAuth = deferred<AuthResult>();
    let host: AdapterHost | undefined;
    const { url, server } = await setup(
      (ctx) => (ctx.auth === 'slow' ? pendingAuth.promise : ctx.auth === 'good'),
      { hello_wait: 0, auth_timeout: 60_000 },
      (s) =>
        s.setAdapter(
          new (class extends LocalAdapter {
            override attach(h: AdapterHost): void {
              host = h;
              super.attach(h);
            }
          })(),
        ),
    );
    // A version 0 client refused without credentials: kept open until auth_timeout.
    const refused = await TestClient.connect(url);
    // A pkg.v1 client whose $hello is still being checked.
    const checking = await connectV1(url);
    checking.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1, auth: 'slow' } }));
    const good = await connectV1(url);
    good.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1, auth: 'good' } }));
    const welcome = await good.next('$welcome');
    const goodId = welcome.data['clientId'] as string;
    await sleep(20);

    expect(server.getClientCount()).toBe(1);
    expect(await server.countClients()).toBe(1);
    expect(await server.fetchClientIds()).toEqual([goodId]);
    expect(server.getAllClients()).toEqual([goodId]);
    expect(server.getLoad()).toMatchObject({ webSocketClients: 3, openClients: 1 });

    expect(server.broadcast('news', { n: 1 })).toBe(1);
    // What a cluster adapter does with a broadcast for "everyone" from another instance.
    const everyone = [...server.getWebSocketHandler().getClients()].map((c) => c.id);
    expect(everyone).toHaveLength(3);
    expect(host!.deliver(everyone, '{"event":"news","data":{"n":2}}')).toBe(1);
    for (const id of everyone.filter((i) => i !== goodId)) {
      expect(server.send(id, 'direct', {})).toBe(false);
    }
    expect((await good.next('news')).data).toEqual({ n: 1 });
    expect((await good.next('news')).data).toEqual({ n: 2 });
    await sleep(30);
    expect(refused.received).toEqual([]);
    expect(checking.received).toEqual([]);

    pendingAuth.resolve(true);
    expect((await checking.next()).event).toBe('$welcome');
    expect(server.getClientCount()).toBe(2);
  });
});

describe('the health check and the lifecycle logs count open clients only', () => {
  it('reports server.clients and the draining log count without refused or authenticating connections', async () => {
    const pendingAuth = deferred<AuthResult>();
    const { url, server, base, logger } = await setup(
      (ctx) => (ctx.auth === 'slow' ? pendingAuth.promise : ctx.auth === 'good'),
      { hello_wait: 0, auth_timeout: 60_000 },
    );
    // Refused without credentials (kept open until auth_timeout), still being checked, open.
    await TestClient.connect(url);
    const checking = await connectV1(url);
    checking.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1, auth: 'slow' } }));
    const good = await connectV1(url);
    good.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1, auth: 'good' } }));
    await good.next('$welcome');
    await sleep(20);
    expect(server.getLoad()).toMatchObject({ webSocketClients: 3, openClients: 1 });
    const health = (await (await fetch(`${base}/health`)).json()) as {
      server: { clients: number };
    };
    expect(health.server.clients).toBe(1);
    expect(server.getHealth().server.clients).toBe(1);
    pendingAuth.resolve(true);
    await checking.next('$welcome');
    expect(server.getHealth().server.clients).toBe(2);
    server.drain();
    const line = logger.lines.find((l) => l.message === 'Server draining');
    expect(line?.context).toEqual({ clients: 2 });
  });
});

describe('auth_timeout bounds the whole authentication', () => {
  it('closes 4401 with a reason when an auth handler never settles, answering held requests', async () => {
    const never = deferred<AuthResult>();
    const { url, app, server } = await setup(() => never.promise, { auth_timeout: 150 });
    const client = await connectV1(url);
    client.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1, auth: 'x' } }));
    request(client, 'add', { a: 1, b: 1 }, 5);
    expect(await client.closed).toEqual({ code: 4401, reason: 'auth timeout' });
    expect(client.received.map((m) => [m.event, (m as Message).id, m.data['code']])).toEqual([
      ['error', undefined, 'auth_timeout'],
      ['error', 5, 'auth_timeout'],
    ]);
    // Settling late changes nothing.
    never.resolve(true);
    await sleep(20);
    expect(app.connects).toEqual([]);
    expect(server.getLoad()).toMatchObject({ webSocketClients: 0, openClients: 0 });
  });
});

describe('one server-side heartbeat', () => {
  it('does not close a silent version 1 client that answers ping frames; terminates one that does not', async () => {
    const { url, app } = await setup(undefined, {
      heartbeat_interval: 300,
      heartbeat_timeout: 300,
      recovery_window: 0,
    });
    const silent = await connectV1(url);
    silent.sendRaw(
      JSON.stringify({
        event: '$hello',
        data: { v: 1, heartbeat: { interval: 1000, timeout: 1000 } },
      }),
    );
    expect((await silent.next('$welcome')).data['heartbeat']).toEqual({
      interval: 1000,
      timeout: 1000,
    });
    const deaf = new WebSocket(url, { autoPong: false });
    const deafClosed = new Promise<number>((resolve) =>
      deaf.once('close', (code) => resolve(code)),
    );
    // Longer than the asked interval + timeout: only ping frames decide.
    await sleep(2500);
    expect(silent.ws.readyState).toBe(WebSocket.OPEN);
    expect(await deafClosed).toBe(1006);
    expect(app.disconnects).toHaveLength(1);
  }, 10_000);
});
