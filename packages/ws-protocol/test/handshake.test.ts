import { afterEach, describe, expect, it } from '@jest/globals';
import { once } from 'node:events';
import { WebSocket } from 'ws';
import type { HandshakeContext, WsClient } from '../src/index';
import {
  cleanup,
  closed,
  collector,
  nextMessage,
  openClient,
  rawExchange,
  rawSocket,
  refusedClient,
  startServer,
  upgradeRequest,
} from './helpers';

afterEach(cleanup);

describe('origin policy', () => {
  it('accepts an allowed origin and reports the client', async () => {
    const ts = await startServer({ allowedOrigins: ['https://app.example.com'] });
    const connected = collector<WsClient>();
    ts.handler.onConnect(connected.push);

    const ws = await openClient(ts.url, { origin: 'https://app.example.com' });
    const client = await connected.next();

    expect(await ts.handshakes[0]).toBe(true);
    expect(ts.handler.size).toBe(1);
    expect(ts.handler.getClient(client.id)).toBe(client);
    expect(client.ip).toMatch(/127\.0\.0\.1$/);
    expect(client.request?.headers.origin).toBe('https://app.example.com');
    expect(ws.readyState).toBe(ws.OPEN);
  });

  it('with keepRequest false, gives the upgrade request to onConnect only', async () => {
    const ts = await startServer({ keepRequest: false });
    const seen = collector<{ client: WsClient; origin: string | undefined }>();
    ts.handler.onConnect((client, request) =>
      seen.push({ client, origin: request.headers.origin }),
    );
    await openClient(ts.url, { origin: 'https://app.example.com' });
    const { client, origin } = await seen.next();
    expect(origin).toBe('https://app.example.com');
    expect(client.request).toBeUndefined();
    expect(ts.handler.getClient(client.id)).toBe(client);
  });

  it('refuses another origin with 403 and a short body, without upgrading', async () => {
    const ts = await startServer({ allowedOrigins: ['https://app.example.com'] });
    const connected = collector<WsClient>();
    ts.handler.onConnect(connected.push);

    const answer = await refusedClient(ts.url, { origin: 'https://evil.example' });

    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toEqual({
      error: 'Forbidden',
      code: 'PKG_ERR_WS_ORIGIN_NOT_ALLOWED',
      message: 'Origin not allowed.',
    });
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers.connection).toBe('close');
    expect(await ts.handshakes[0]).toBe(false);
    expect(connected.items).toHaveLength(0);
    expect(ts.handler.size).toBe(0);
    expect(ts.logger.withCode('PKG_ERR_WS_ORIGIN_NOT_ALLOWED')[0]).toMatchObject({
      level: 'notice',
      context: { status: 403 },
    });
  });

  it('closes the socket after the 403', async () => {
    const ts = await startServer({ allowedOrigins: ['https://app.example.com'] });
    const text = await rawExchange(ts.port, upgradeRequest({ Origin: 'https://evil.example' }));
    expect(text.startsWith('HTTP/1.1 403 Forbidden\r\n')).toBe(true);
    expect(text).toMatch(
      /\r\n\r\n\{"error":"Forbidden","code":"PKG_ERR_WS_ORIGIN_NOT_ALLOWED",.*\}$/,
    );
  });

  it('allows a request without Origin by default, and refuses it when configured', async () => {
    const open = await startServer({ allowedOrigins: ['https://app.example.com'] });
    await openClient(open.url);
    expect(open.handler.size).toBe(1);

    const strict = await startServer({ allowMissingOrigin: false });
    const answer = await refusedClient(strict.url);
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toMatchObject({
      code: 'PKG_ERR_WS_ORIGIN_NOT_ALLOWED',
      message: 'Origin header required.',
    });
    await openClient(strict.url, { origin: 'https://any.example' });
    expect(strict.handler.size).toBe(1);
  });

  it('applies setAllowedOrigins to the next handshake', async () => {
    const ts = await startServer();
    expect(ts.handler.getAllowedOrigins()).toEqual(['*']);
    ts.handler.setAllowedOrigins(['https://*.example.com']);
    expect(ts.handler.getAllowedOrigins()).toEqual(['https://*.example.com']);

    await openClient(ts.url, { origin: 'https://app.example.com' });
    expect((await refusedClient(ts.url, { origin: 'https://example.org' })).status).toBe(403);
    expect(() => ts.handler.setAllowedOrigins(['nope'])).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_WS_INVALID_OPTION' }),
    );
    expect(ts.handler.getAllowedOrigins()).toEqual(['https://*.example.com']);
  });
});

describe('handshake hooks', () => {
  it('see headers, query, path, ip and origin, and attach data to the client', async () => {
    const ts = await startServer();
    const contexts: HandshakeContext[] = [];
    ts.handler.addHandshakeHook((ctx) => {
      contexts.push(ctx);
      ctx.data.user = ctx.query.get('key') === 'secret' ? 'alice' : undefined;
    });
    const connected = collector<WsClient>();
    ts.handler.onConnect(connected.push);

    await openClient(`${ts.url}/socket/v1?key=secret&room=a`, {
      origin: 'https://app.example.com',
      headers: { 'X-Trace': 'abc' },
    });
    const client = await connected.next();

    const ctx = contexts[0]!;
    expect(ctx.path).toBe('/socket/v1');
    expect(ctx.query.get('room')).toBe('a');
    expect(ctx.headers['x-trace']).toBe('abc');
    expect(ctx.origin).toBe('https://app.example.com');
    expect(ctx.ip).toBe(client.ip);
    expect(ctx.clientId).toBe(client.id);
    expect(ctx.request).toBe(client.request);
    expect(client.data).toEqual({ user: 'alice' });
  });

  it('refuse with their status, message and headers; later hooks do not run', async () => {
    const ts = await startServer();
    const ran: string[] = [];
    ts.handler
      .addHandshakeHook(async (ctx) => {
        ran.push('auth');
        await new Promise((resolve) => setImmediate(resolve));
        if (ctx.query.get('key') !== 'secret') {
          return { status: 401, message: 'Invalid key', headers: { 'WWW-Authenticate': 'Key' } };
        }
        return undefined;
      })
      .addHandshakeHook(() => {
        ran.push('second');
      });
    const connected = collector<WsClient>();
    ts.handler.onConnect(connected.push);

    const answer = await refusedClient(`${ts.url}/?key=wrong`);
    expect(answer).toMatchObject({
      status: 401,
      body: '{"error":"Unauthorized","code":"PKG_ERR_WS_HANDSHAKE_REFUSED","message":"Invalid key"}',
      headers: { 'www-authenticate': 'Key' },
    });
    expect(ran).toEqual(['auth']);
    expect(connected.items).toHaveLength(0);
    const refusal = ts.logger.withCode('PKG_ERR_WS_HANDSHAKE_REFUSED');
    expect(refusal).toHaveLength(1);
    // Logged with the path only: the query string may carry the token.
    expect(refusal[0]!.context).toMatchObject({ status: 401, path: '/' });
    expect(JSON.stringify(ts.logger.lines)).not.toContain('wrong');

    await openClient(`${ts.url}/?key=secret`);
    expect(ran).toEqual(['auth', 'auth', 'second']);
    expect(connected.items).toHaveLength(1);
  });

  it('turn a refusal status outside 400-599 into 500, and `false` into 403', async () => {
    const ts = await startServer();
    ts.handler.addHandshakeHook((ctx) =>
      ctx.query.has('false')
        ? (false as unknown as undefined)
        : { status: 200, message: 'not a refusal status' },
    );
    expect((await refusedClient(ts.url)).status).toBe(500);
    expect((await refusedClient(`${ts.url}/?false`)).status).toBe(403);
  });

  it('that throw answer 500 and are logged; the server keeps serving', async () => {
    const ts = await startServer();
    let fail = true;
    ts.handler.addHandshakeHook(async () => {
      if (fail) throw new Error('database down');
    });

    const answer = await refusedClient(ts.url);
    // A 500 says no more than its reason phrase; what failed is in the log.
    expect(answer).toMatchObject({ status: 500, body: '{"error":"Internal Server Error"}' });
    expect(ts.logger.withCode('PKG_ERR_WS_HANDSHAKE_HOOK_FAILED')[0]?.message).toBe(
      'database down',
    );
    fail = false;
    await openClient(ts.url);
    expect(ts.handler.size).toBe(1);
  });

  it('that take longer than handshakeTimeout answer 503', async () => {
    const ts = await startServer({ handshakeTimeout: 20 });
    let release!: () => void;
    const hanging = new Promise<void>((resolve) => {
      release = resolve;
    });
    ts.handler.addHandshakeHook(() => hanging);
    const answer = await refusedClient(ts.url);
    expect(answer.status).toBe(503);
    expect(JSON.parse(answer.body)).toEqual({
      error: 'Service Unavailable',
      code: 'PKG_ERR_WS_HANDSHAKE_TIMEOUT',
      message: 'Handshake timed out.',
    });
    release();
  });

  it('do not lead to an upgrade when the client left while they ran', async () => {
    const ts = await startServer();
    let entered!: () => void;
    const hookEntered = new Promise<void>((resolve) => {
      entered = resolve;
    });
    ts.handler.addHandshakeHook(async (ctx) => {
      entered();
      // Stands for a slow lookup that outlives the client's connection (FIN or reset).
      const socket = ctx.request.socket;
      if (socket.readable) await Promise.race([once(socket, 'end'), once(socket, 'close')]);
    });
    const connected = collector<WsClient>();
    ts.handler.onConnect(connected.push);

    const socket = await rawSocket(ts.port);
    socket.write(upgradeRequest());
    await hookEntered;
    socket.destroy();

    expect(await ts.handshakes[0]).toBe(false);
    expect(connected.items).toHaveLength(0);
    expect(ts.handler.size).toBe(0);
  });

  it('keep bytes a client sends before the 101 for ws', async () => {
    const ts = await startServer();
    ts.handler.addHandshakeHook(() => new Promise((resolve) => setTimeout(resolve, 10)));
    const messages = collector<string>();
    ts.handler.onMessage((_client, envelope) => messages.push(envelope.event));
    const socket = await rawSocket(ts.port);
    // A masked text frame {"event":"early","data":{}} sent right behind the request.
    const payload = Buffer.from('{"event":"early","data":{}}');
    const key = Buffer.from([9, 8, 7, 6]);
    const frame = Buffer.concat([
      Buffer.from([0x81, 0x80 | payload.length]),
      key,
      payload.map((b, i) => b ^ key[i % 4]!),
    ]);
    socket.write(Buffer.concat([Buffer.from(upgradeRequest()), frame]));
    expect(await messages.next()).toBe('early');
  });
});

describe('malformed handshakes', () => {
  const cases: [string, string, RegExp][] = [
    ['a POST upgrade', upgradeRequest({}, 'POST / HTTP/1.1'), /^HTTP\/1\.1 400 Bad Request\r\n/],
    [
      'an HTTP/1.0 upgrade',
      upgradeRequest({}, 'GET / HTTP/1.0'),
      /^HTTP\/1\.1 400 [^]*1\.1 or later/,
    ],
    ['a foreign Upgrade', upgradeRequest({ Upgrade: 'h2c' }), /^HTTP\/1\.1 400 /],
    ['a missing key', upgradeRequest({ 'Sec-WebSocket-Key': null }), /^HTTP\/1\.1 400 /],
    ['a malformed key', upgradeRequest({ 'Sec-WebSocket-Key': 'abc' }), /^HTTP\/1\.1 400 /],
    [
      'version 8',
      upgradeRequest({ 'Sec-WebSocket-Version': '8' }),
      /^HTTP\/1\.1 426 Upgrade Required\r\n[^]*Sec-WebSocket-Version: 13\r\n/,
    ],
    [
      'a missing version',
      upgradeRequest({ 'Sec-WebSocket-Version': null }),
      /^HTTP\/1\.1 426 [^]*Sec-WebSocket-Version: 13\r\n/,
    ],
  ];

  it.each(cases)('answers %s and leaves the server unharmed', async (_name, request, expected) => {
    const ts = await startServer();
    const text = await rawExchange(ts.port, request);
    expect(text).toMatch(expected);
    expect(text).toMatch(/Connection: close\r\n/);
    expect(await ts.handshakes[0]).toBe(false);

    await openClient(ts.url);
    expect(ts.handler.size).toBe(1);
  });

  it('survives clients that reset in the middle of a handshake', async () => {
    const ts = await startServer();
    ts.handler.addHandshakeHook(() => new Promise((resolve) => setTimeout(resolve, 5)));
    for (let i = 0; i < 5; i += 1) {
      const socket = await rawSocket(ts.port);
      socket.write(upgradeRequest());
      socket.resetAndDestroy();
    }
    const results = await Promise.all(
      await new Promise<Promise<boolean>[]>((resolve) => {
        const check = (): void => {
          if (ts.handshakes.length === 5) resolve(ts.handshakes);
          else setImmediate(check);
        };
        check();
      }),
    );
    expect(results).toEqual([false, false, false, false, false]);
    await openClient(ts.url);
    expect(ts.handler.size).toBe(1);
  });

  it('accepts a call without the head buffer (an empty head)', async () => {
    const ts = await startServer();
    ts.server.removeAllListeners('upgrade');
    ts.server.on('upgrade', (req, socket) => {
      ts.handshakes.push(ts.handler.performHandshake(req, socket, undefined as never));
    });
    await openClient(ts.url);
    expect(await ts.handshakes[0]).toBe(true);
  });

  it('refuses a client id that is already connected with 500', async () => {
    const ts = await startServer();
    ts.server.removeAllListeners('upgrade');
    ts.server.on('upgrade', (req, socket, head) => {
      ts.handshakes.push(ts.handler.performHandshake(req, socket, head, 'fixed-id'));
    });
    await openClient(ts.url);
    expect((await refusedClient(ts.url)).status).toBe(500);
    expect(ts.logger.withCode('PKG_ERR_WS_DUPLICATE_CLIENT_ID')).toHaveLength(1);
    expect(ts.handler.getClient('fixed-id')).toBeDefined();
  });
});

describe('client ids and options', () => {
  it('generates ids unique across clients by default, or uses generateId', async () => {
    const ts = await startServer();
    const ids = collector<string>();
    ts.handler.onConnect((c) => ids.push(c.id));
    await openClient(ts.url);
    await openClient(ts.url);
    await ids.next();
    await ids.next();
    expect(new Set(ids.items).size).toBe(2);
    expect(ids.items[0]!.split('.')[0]).toBe(ids.items[1]!.split('.')[0]);

    let n = 0;
    const custom = await startServer({ generateId: () => `user-${++n}` });
    const customIds = collector<string>();
    custom.handler.onConnect((c) => customIds.push(c.id));
    await openClient(custom.url);
    expect(await customIds.next()).toBe('user-1');
  });

  it('takes the client IP from the clientIp option', async () => {
    const ts = await startServer({
      clientIp: (req) => String(req.headers['x-forwarded-for'] ?? req.socket.remoteAddress),
    });
    const clients = collector<WsClient>();
    ts.handler.onConnect(clients.push);
    await openClient(ts.url, { headers: { 'X-Forwarded-For': '203.0.113.9' } });
    expect((await clients.next()).ip).toBe('203.0.113.9');
  });

  it('leaves permessage-deflate off by default and negotiates it when enabled', async () => {
    const plain = await startServer();
    const a = await openClient(plain.url, { perMessageDeflate: true });
    expect(a.extensions).toBe('');

    const deflate = await startServer({ perMessageDeflate: { threshold: 16 } });
    const b = await openClient(deflate.url, { perMessageDeflate: true });
    expect(b.extensions).toMatch(/^permessage-deflate/);
    const received = nextMessage(b);
    const [client] = [...deflate.handler.getClients()];
    deflate.handler.send(client!.id, 'big', { text: 'x'.repeat(1000) });
    expect(await received).toEqual({ event: 'big', data: { text: 'x'.repeat(1000) } });
  });

  it('answers a plain HTTP request through the server, not the handler', async () => {
    const ts = await startServer();
    const text = await rawExchange(
      ts.port,
      'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(text).toMatch(/^HTTP\/1\.1 426 /);
    expect(ts.handshakes).toHaveLength(0);
  });

  it('closes a connected client with a normal close when the client leaves', async () => {
    const ts = await startServer();
    const gone = collector<number>();
    ts.handler.onDisconnect((_c, code) => gone.push(code));
    const ws = await openClient(ts.url);
    const done = closed(ws);
    ws.close(1000, 'bye');
    expect((await done).code).toBe(1000);
    expect(await gone.next()).toBe(1000);
    expect(ts.handler.size).toBe(0);
  });
});

describe('subprotocols', () => {
  async function offer(url: string, protocols: string[]): Promise<WebSocket> {
    const ws = new WebSocket(url, protocols);
    opened.push(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return ws;
  }
  const opened: WebSocket[] = [];
  afterEach(() => {
    for (const ws of opened.splice(0)) ws.terminate();
  });

  it('selects and echoes pkg.v1 when the handler speaks version 1, wherever it is offered', async () => {
    const ts = await startServer({ controlEvents: true });
    const alone = await offer(ts.url, ['pkg.v1']);
    expect(alone.protocol).toBe('pkg.v1');
    const second = await offer(ts.url, ['chat.v2', 'pkg.v1']);
    expect(second.protocol).toBe('pkg.v1');
    const [client] = [...ts.handler.getClients()];
    expect(client!.socket.protocol).toBe('pkg.v1');
  });

  it("still negotiates an application's own subprotocol: the first offered", async () => {
    const v1 = await startServer({ controlEvents: true });
    expect((await offer(v1.url, ['chat.v2'])).protocol).toBe('chat.v2');
    expect((await offer(v1.url, ['chat.v2', 'chat.v1'])).protocol).toBe('chat.v2');
    const plain = await startServer();
    expect((await offer(plain.url, ['chat.v2'])).protocol).toBe('chat.v2');
    expect((await offer(plain.url, ['pkg.v1', 'chat.v2'])).protocol).toBe('chat.v2');
  });

  it('does not select pkg.v1 without controlEvents (the handler does not speak version 1)', async () => {
    const ts = await startServer();
    const ws = new WebSocket(ts.url, ['pkg.v1']);
    opened.push(ws);
    const error = await new Promise<Error>((resolve) => ws.once('error', resolve));
    // `ws` as a client refuses a handshake that selects none of the offered subprotocols.
    expect(error.message).toBe('Server sent no subprotocol');
  });
});
