// Conformance of the real Server to docs/protocol.md, written from the document alone as a
// client in another language would read it: every rule (MUST/SHOULD, table rows, control
// events, error codes, close codes) is one test, named after the section that states it.
// The clients are plain `ws` sockets and `fetch`; nothing of @pkg/client is used.
// Rules the document left open are tested as the project decided them, in the
// 'clarified rules' block. The last test reads the document's error-code and close-code
// tables and fails when a listed code is exercised by no test above it (so it needs the
// whole file to run, not a `-t` subset).
// Longer than 400 lines on purpose: one file per document keeps the rules in its order.
import { afterEach, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { encodeBinaryFrame } from '@pkg/wire';
import WebSocket from 'ws';
import { connect as netConnect, type Socket } from 'node:net';
import type { WsContext } from '@pkg/decorators';
import {
  OnConnect,
  OnDisconnect,
  RateLimit,
  RoomsController,
  SocketController,
  SocketOn,
  type AuthHandler,
  type RoomsControllerOptions,
  type Server,
  type ServerConfigOptions,
} from '@pkg/core';
import {
  RawConnection,
  TestClient,
  cleanup,
  deferred,
  expectRefusedUpgrade,
  startServer,
  type MemoryLogger,
} from './helpers';
import {
  connectV1,
  documentTables,
  documentedCloseCodes,
  documentedErrorCodes,
  exercised,
  expectClose,
  expectError,
  hello,
  maskedFrame,
  next,
  parseFrames,
  request,
  sendJson,
  sleep,
  until,
  within,
  type Message,
} from './protocol-conformance-kit';

afterEach(cleanup);

/** The application every test runs: one handler per kind of answer the document names. */
class App extends SocketController {
  /** `connect <id>`, `disconnect <id>`, `handled <event>`, in the order they happened. */
  readonly log: string[] = [];
  /** OnConnect waits for this when set (to hold a client in OnConnect). */
  connectGate: Promise<void> | null = null;
  slow = deferred<unknown>();

  @OnConnect()
  async connected(clientId: string): Promise<void> {
    this.log.push(`connect ${clientId}`);
    if (this.connectGate) await this.connectGate;
    this.emit(clientId, 'app.hello', { clientId });
  }

  @OnDisconnect()
  disconnected(clientId: string): void {
    this.log.push(`disconnect ${clientId}`);
  }

  @SocketOn('echo')
  echo(clientId: string, data: unknown): unknown {
    this.log.push('handled echo');
    this.emit(clientId, 'echoed', data as Record<string, unknown>);
    return data;
  }

  @SocketOn('value')
  value(_clientId: string, data: unknown): unknown {
    return (data as { value: unknown }).value;
  }

  @SocketOn('nothing')
  nothing(): void {}

  @SocketOn('fail')
  fail(): never {
    throw new Error('secret detail of the failure');
  }

  @SocketOn('bigint')
  bigint(): unknown {
    return { n: BigInt(1) };
  }

  @SocketOn('slow')
  wait(): Promise<unknown> {
    this.log.push('handled slow');
    return this.slow.promise;
  }

  @SocketOn('hang')
  hang(): Promise<never> {
    return new Promise(() => undefined);
  }

  @SocketOn('guarded', {
    middlewares: [
      (context: WsContext, next: () => Promise<void>) =>
        (context.data as { pass?: boolean }).pass ? next() : undefined,
    ],
  })
  guarded(): string {
    return 'passed';
  }

  @RateLimit(1, 60)
  @SocketOn('once')
  once(): string {
    return 'first';
  }

  @SocketOn('typed', { schema: z.object({ n: z.number() }).catchall(z.number()) })
  typed(_clientId: string, data: { n: number }): number {
    return data.n;
  }

  @SocketOn('whoami')
  whoami(clientId: string): unknown {
    return { clientId, data: this.getServer().getClientData(clientId) };
  }

  @SocketOn('remember')
  remember(clientId: string, data: unknown): void {
    this.getServer().setClientData(clientId, 'note', (data as { note: string }).note);
  }

  @SocketOn('keys')
  keys(_clientId: string, data: unknown): string[] {
    return Object.keys(data as object);
  }

  connects(): string[] {
    return this.log.filter((l) => l.startsWith('connect ')).map((l) => l.slice(8));
  }

  disconnects(): string[] {
    return this.log.filter((l) => l.startsWith('disconnect ')).map((l) => l.slice(11));
  }

  handled(event: string): number {
    return this.log.filter((l) => l === `handled ${event}`).length;
  }
}

interface Setup {
  server: Server;
  app: App;
  url: string;
  base: string;
  port: number;
  logger: MemoryLogger;
}

async function setup(
  config: ServerConfigOptions = {},
  prepare?: (server: Server) => void,
  rooms: RoomsControllerOptions = {},
): Promise<Setup> {
  const app = new App();
  const ts = await startServer(
    [app, new RoomsController(rooms)],
    { shutdown_timeout: 300, ...config },
    prepare,
  );
  return { server: ts.server, app, url: ts.wsUrl, base: ts.base, port: ts.port, logger: ts.logger };
}

/** A version 0 client: no subprotocol; resolves once OnConnect greeted it. */
async function connectV0(url: string): Promise<{ client: TestClient; clientId: string }> {
  const client = await TestClient.connect(url);
  const greeting = await next(client, 'app.hello');
  return { client, clientId: greeting.data['clientId'] as string };
}

/** A version 1 client past `$welcome` and the greeting of OnConnect. */
async function ready(
  url: string,
  data: Record<string, unknown> = { v: 1 },
): Promise<{ client: TestClient; welcome: Record<string, unknown> }> {
  const done = await hello(url, data);
  await next(done.client, 'app.hello');
  return done;
}

/** What arrived and was not consumed, after `ms` of quiet. */
async function leftover(client: TestClient, ms = 150): Promise<Message[]> {
  await sleep(ms);
  return client.pending() as Message[];
}

/** The socket under a `ws` client, to write bytes a correct client never would. */
const rawSocket = (client: TestClient): Socket =>
  (client.ws as unknown as { _socket: Socket })._socket;

const UPGRADE_HEAD =
  'GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n';

/** An auth handler that accepts `good`, refuses `banned` with 403 and the rest with 401. */
const tokens: AuthHandler = (ctx) => {
  if (ctx.data['user'] !== undefined) return true;
  if (ctx.auth === 'good') return true;
  if (ctx.auth === 'banned') return { status: 403, message: 'Banned' };
  return { status: 401, message: 'Invalid token' };
};

// =================================================================================== v0

describe('§ Connecting', () => {
  it('refuses an upgrade with 503 while the server is draining', async () => {
    const { server, url } = await setup();
    server.drain();
    expect((await expectRefusedUpgrade(url)).status).toBe(503);
  });

  it('refuses an upgrade without Sec-WebSocket-Key with 400', async () => {
    const { port } = await setup();
    const conn = await RawConnection.open(port);
    conn.write(`${UPGRADE_HEAD}Sec-WebSocket-Version: 13\r\n\r\n`);
    expect(
      await within(
        conn.waitFor((d) => d.includes('\r\n\r\n')),
        'an answer',
      ),
    ).toMatch(/^HTTP\/1\.1 400/);
  });

  it('refuses an upgrade whose method is not GET with 400', async () => {
    const { port } = await setup();
    const conn = await RawConnection.open(port);
    conn.write(
      UPGRADE_HEAD.replace('GET', 'POST') +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nContent-Length: 0\r\n\r\n',
    );
    const answer = await within(
      conn.waitFor((d) => d.includes('\r\n\r\n')),
      'an answer',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
  });

  it('refuses Sec-WebSocket-Version other than 13 with 426 and Sec-WebSocket-Version: 13', async () => {
    const { url } = await setup();
    const refused = await expectRefusedUpgrade(url, { protocolVersion: 8 });
    expect(refused.status).toBe(426);
    expect(refused.headers['sec-websocket-version']).toBe('13');
  });

  it('refuses an Origin outside ws_allowed_origins with 403 and accepts one inside or none', async () => {
    const { url } = await setup({ ws_allowed_origins: ['https://good.test'] });
    expect((await expectRefusedUpgrade(url, { origin: 'https://evil.test' })).status).toBe(403);
    const ok = await TestClient.connect(url, { origin: 'https://good.test' });
    expect((await next(ok, 'app.hello')).event).toBe('app.hello');
    await connectV0(url);
  });

  it('uses the CORS allowed_origins when ws_allowed_origins is not set', async () => {
    const { url } = await setup({ cors: { allowed_origins: ['https://good.test'] } });
    expect((await expectRefusedUpgrade(url, { origin: 'https://evil.test' })).status).toBe(403);
    const ok = await TestClient.connect(url, { origin: 'https://good.test' });
    expect((await next(ok, 'app.hello')).event).toBe('app.hello');
  });

  it('refuses with the status of handshake middleware, and 500 when it throws; body is the JSON error body', async () => {
    const { url } = await setup({}, (server) =>
      server.addHandshakeMiddleware((ctx) => {
        if (ctx.query.get('key') === 'throw') throw new Error('middleware broke');
        if (ctx.query.get('key') !== 'k') return { status: 401, message: 'Invalid key' };
        return undefined;
      }),
    );
    const refused = await expectRefusedUpgrade(`${url}/?key=bad`);
    expect(refused.status).toBe(401);
    expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(refused.body)).toEqual({
      error: 'Unauthorized',
      code: 'PKG_ERR_WS_HANDSHAKE_REFUSED',
      message: 'Invalid key',
    });
    const thrown = await expectRefusedUpgrade(`${url}/?key=throw`);
    expect(thrown.status).toBe(500);
    expect(JSON.parse(thrown.body)).toEqual({ error: 'Internal Server Error' });
    await connectV0(`${url}/?key=k`);
  });

  it('never logs the query string of a refused handshake', async () => {
    const { url, logger } = await setup({}, (server) =>
      server.addHandshakeMiddleware(() => ({ status: 401, message: 'Invalid key' })),
    );
    await expectRefusedUpgrade(`${url}/socket?key=s3cr3t-value`);
    await sleep(50);
    const written = JSON.stringify([logger.lines, logger.exceptions.map((e) => e.context)]);
    expect(written).not.toContain('s3cr3t-value');
  });

  it('puts a new client in namespace / and in no room', async () => {
    const { server, url } = await setup();
    const { client } = await connectV0(url);
    server.broadcast('in.room', {}, '/', 'lobby');
    server.broadcast('in.namespace', {}, '/');
    expect((await next(client)).event).toBe('in.namespace');
    expect(await leftover(client)).toEqual([]);
  });
});

describe('§ Messages', () => {
  it('dispatches a {event, data} text frame to the handler for event', async () => {
    const { url } = await setup();
    const { client } = await connectV0(url);
    client.send('echo', { text: 'hi' });
    expect(await next(client, 'echoed')).toEqual({ event: 'echoed', data: { text: 'hi' } });
  });

  it('accepts an array as data', async () => {
    const { url } = await setup();
    const { client } = await connectV0(url);
    client.send('echo', [1, 'two']);
    expect((await next(client, 'echoed')).data).toEqual([1, 'two']);
  });

  it('sends server-to-client messages with the same {event, data} shape', async () => {
    const { url, server } = await setup();
    const { client, clientId } = await connectV0(url);
    server.send(clientId, 'direct', { n: 1 });
    server.broadcast('wide', [1]);
    expect(await next(client, 'direct')).toEqual({ event: 'direct', data: { n: 1 } });
    expect(await next(client, 'wide')).toEqual({ event: 'wide', data: [1] });
  });

  it('answers an event missing, not a string, or not matching the pattern with invalid_event', async () => {
    const { url } = await setup({ ws_error_reply_interval: 0 });
    const { client } = await connectV0(url);
    for (const envelope of [
      { data: {} },
      { event: 42, data: {} },
      { event: '', data: {} },
      { event: 'a b', data: {} },
      { event: 'caf\u00e9', data: {} },
      { event: 'a/b', data: {} },
    ]) {
      sendJson(client, envelope);
      await expectError(client, 'invalid_event');
    }
    client.send('echo', { still: 'open' });
    expect((await next(client, 'echoed')).data).toEqual({ still: 'open' });
  });

  it('answers data missing or not an object or array with invalid_data', async () => {
    const { url } = await setup({ ws_error_reply_interval: 0 });
    const { client } = await connectV0(url);
    for (const text of [
      '{"event":"echo"}',
      '{"event":"echo","data":"text"}',
      '{"event":"echo","data":1}',
      '{"event":"echo","data":null}',
      '{"event":"echo","data":true}',
    ]) {
      client.sendRaw(text);
      await expectError(client, 'invalid_data');
    }
  });

  it('answers a text that is not JSON with invalid_json', async () => {
    const { url } = await setup();
    const { client } = await connectV0(url);
    client.sendRaw('{"event": "echo", "data": {');
    await expectError(client, 'invalid_json');
    expect(client.ws.readyState).toBe(WebSocket.OPEN);
  });

  it('answers JSON that is not an object with invalid_envelope', async () => {
    const { url } = await setup({ ws_error_reply_interval: 0 });
    const { client } = await connectV0(url);
    for (const text of ['[]', '[{"event":"echo","data":{}}]', '1', '"echo"', 'null']) {
      client.sendRaw(text);
      await expectError(client, 'invalid_envelope');
    }
  });

  it('refuses a __proto__ or constructor.prototype key with invalid_json and stays open', async () => {
    const { url, app } = await setup({ ws_error_reply_interval: 0 });
    const { client } = await connectV0(url);
    client.sendRaw('{"event":"echo","data":{"__proto__":{"admin":true}}}');
    await expectError(client, 'invalid_json');
    client.sendRaw('{"event":"echo","data":{"constructor":{"prototype":{"admin":true}}}}');
    await expectError(client, 'invalid_json');
    expect(app.handled('echo')).toBe(0);
    client.send('echo', { ok: 1 });
    expect((await next(client, 'echoed')).data).toEqual({ ok: 1 });
  });

  it("drops those keys and handles the message when prototype keys are set to 'remove'", async () => {
    // One server setting for HTTP bodies and WebSocket messages: `json_prototype_keys`.
    const { url } = await setup({ json_prototype_keys: 'remove' });
    const { client } = await hello(url);
    client.sendRaw('{"event":"keys","id":1,"data":{"a":1,"__proto__":{"admin":true}}}');
    expect(await next(client, 'keys')).toEqual({ event: 'keys', id: 1, data: ['a'] });
  });
});

describe('§ Errors the server reports', () => {
  it('keeps the connection open after a problem with one message', async () => {
    const { url } = await setup();
    const { client } = await connectV0(url);
    client.send('fail', {});
    await expectError(client, 'internal_error');
    client.send('echo', { after: true });
    expect((await next(client, 'echoed')).data).toEqual({ after: true });
  });

  it('answers the same code at most once per ws_error_reply_interval', async () => {
    const { url } = await setup({ ws_error_reply_interval: 400 });
    const { client } = await connectV0(url);
    for (let i = 0; i < 3; i += 1) client.sendRaw('not json');
    await expectError(client, 'invalid_json');
    client.send('echo', { mark: 1 });
    await next(client, 'echoed');
    expect(client.pending()).toEqual([]);
    await sleep(450);
    client.sendRaw('not json');
    await expectError(client, 'invalid_json');
  });

  it('spaces validation_failed like every other code (one reply per interval)', async () => {
    const { url } = await setup({ ws_error_reply_interval: 60_000 });
    const { client } = await connectV0(url);
    client.send('typed', { n: 'x' });
    client.send('typed', { n: 'y' });
    await expectError(client, 'validation_failed', { data: { event: 'typed' } });
    client.send('echo', { mark: 1 });
    await next(client, 'echoed');
    expect(client.pending()).toEqual([]);
  });

  it('answers every refusal of a message with an id, within the interval too', async () => {
    const { url } = await setup();
    const { client } = await hello(url);
    for (const id of [1, 2, 3]) request(client, 'no.such.event', {}, id);
    for (const id of [1, 2, 3]) {
      await expectError(client, 'unknown_event', { id, data: { event: 'no.such.event' } });
    }
  });

  it('answers every request refused for the inbound budget with its id', async () => {
    const { url } = await setup({ ws_max_messages_per_second: 1, ws_max_protocol_errors: 0 });
    const { client } = await ready(url);
    for (let id = 1; id <= 6; id += 1) request(client, 'nothing', {}, id);
    const answers = new Map<unknown, unknown>();
    while (answers.size < 6) {
      const m = await next(client);
      answers.set(m.id, m.event === 'error' ? m.data['code'] : 'answered');
    }
    exercised.errorCodes.add('too_many_messages');
    expect([...answers.values()].filter((v) => v === 'too_many_messages').length).toBeGreaterThan(
      0,
    );
    expect([...answers.keys()].sort()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('unknown_event: no handler for event, with event', async () => {
    const { url } = await setup();
    const { client } = await connectV0(url);
    client.send('no.such.event', {});
    await expectError(client, 'unknown_event', { data: { event: 'no.such.event' } });
  });

  it("unknown_event: with unknown_event 'ignore' a message without id is not answered", async () => {
    const { url } = await setup({ unknown_event: 'ignore' });
    const { client } = await connectV0(url);
    client.send('no.such.event', {});
    expect(await leftover(client, 200)).toEqual([]);
  });

  it('rate_limited: over a RateLimit of the event, with event and retryAfter', async () => {
    const { url } = await setup();
    const { client } = await connectV0(url);
    client.send('once', {});
    client.send('once', {});
    const error = await expectError(client, 'rate_limited', { data: { event: 'once' } });
    expect(typeof error.data['retryAfter']).toBe('number');
  });

  it('internal_error: the handler threw, without details outside debug mode', async () => {
    const { url } = await setup();
    const { client } = await connectV0(url);
    client.send('fail', {});
    const error = await expectError(client, 'internal_error');
    expect(JSON.stringify(error)).not.toContain('secret detail');
  });

  it('internal_error: a middleware threw', async () => {
    const { url } = await setup({}, (server) =>
      server.addWebSocketMiddleware(() => {
        throw new Error('middleware secret');
      }),
    );
    const { client } = await connectV0(url);
    client.send('echo', {});
    const error = await expectError(client, 'internal_error');
    expect(JSON.stringify(error)).not.toContain('middleware secret');
  });

  it('forbidden: join_room refused by the RoomsController policy, with room and namespace', async () => {
    const { url } = await setup({}, undefined, { canJoin: (_c, room) => room !== 'vault' });
    const { client } = await connectV0(url);
    client.send('join_room', { room: 'vault' });
    await expectError(client, 'forbidden', { data: { room: 'vault', namespace: '/' } });
  });

  it('invalid_payload: join_room without a usable room', async () => {
    const { url } = await setup();
    const { client } = await connectV0(url);
    client.send('join_room', { room: 42 });
    await expectError(client, 'invalid_payload');
  });

  it('validation_failed: data failed the schema, with event and at most 20 {path, message} issues', async () => {
    const { url } = await setup();
    const { client } = await connectV0(url);
    const bad: Record<string, string> = { n: 'x' };
    for (let i = 0; i < 30; i += 1) bad[`f${i}`] = 'not a number';
    client.send('typed', bad);
    const error = await expectError(client, 'validation_failed', { data: { event: 'typed' } });
    const issues = error.data['issues'] as Array<Record<string, unknown>>;
    expect(issues.length).toBeGreaterThan(0);
    expect(issues.length).toBeLessThanOrEqual(20);
    for (const issue of issues) {
      expect(issue).toEqual({ path: expect.anything(), message: expect.any(String) });
    }
  });

  it('too_many_messages: the connection is over its inbound budget', async () => {
    const { url } = await setup({ ws_max_messages_per_second: 1 });
    const { client } = await connectV0(url);
    for (let i = 0; i < 6; i += 1) client.send('nothing', {});
    await expectError(client, 'too_many_messages');
  });

  it('shutting_down: a message that arrives once the server stopped accepting is not handled', async () => {
    // close() sends the close frame in the same turn as it stops accepting, so over the
    // wire this is only seen when the WebSocket handler stops accepting on its own.
    const { url, server, app } = await setup();
    const { client } = await hello(url);
    server.getWebSocketHandler().stopAccepting();
    request(client, 'echo', {}, 1);
    await expectError(client, 'shutting_down', { id: 1 });
    expect(app.handled('echo')).toBe(0);
  });

  it('handler_timeout: the handler ran past ws_handler_timeout; its later result is never sent', async () => {
    const { url, app } = await setup({ ws_handler_timeout: 100 });
    const { client } = await ready(url);
    request(client, 'slow', {}, 1);
    await expectError(client, 'handler_timeout', { id: 1 });
    app.slow.resolve({ late: true });
    expect(await leftover(client)).toEqual([]);
  });

  it('busy: ws_max_pending handlers of this client are unfinished, with event', async () => {
    const { url } = await setup({ ws_max_pending: 1 });
    const { client } = await hello(url);
    request(client, 'hang', {}, 1);
    request(client, 'hang', {}, 2);
    await expectError(client, 'busy', { id: 2, data: { event: 'hang' } });
  });
});

describe('§ Inbound limits', () => {
  it('ws_max_bytes_per_second: past the byte budget a message is refused too_many_messages', async () => {
    const { url } = await setup({ ws_max_bytes_per_second: 1000, max_message_size: 1000 });
    const { client } = await connectV0(url);
    for (let i = 0; i < 6; i += 1) client.send('nothing', { pad: 'x'.repeat(900) });
    await expectError(client, 'too_many_messages');
  });

  it('ws_max_protocol_errors: refused messages past the limit close the connection with 1008', async () => {
    const { url } = await setup({ ws_max_protocol_errors: 3 });
    const { client } = await connectV0(url);
    for (let i = 0; i < 10; i += 1) client.sendRaw('not json');
    await expectClose(client, 1008);
  });

  it('ws_max_protocol_errors: messages over budget count as protocol errors', async () => {
    const { url } = await setup({ ws_max_protocol_errors: 3, ws_max_messages_per_second: 1 });
    const { client } = await connectV0(url);
    for (let i = 0; i < 20; i += 1) client.send('nothing', {});
    await expectClose(client, 1008);
  });

  it('rate_limited, handler_timeout and busy do not count as protocol errors', async () => {
    const { url, app } = await setup({
      ws_max_protocol_errors: 1,
      ws_max_pending: 1,
      ws_handler_timeout: 100,
    });
    const { client } = await ready(url);
    request(client, 'once', {}, 1);
    await next(client, 'once');
    for (const id of [2, 3, 4]) {
      request(client, 'once', {}, id);
      await expectError(client, 'rate_limited', { id, data: { event: 'once' } });
    }
    request(client, 'slow', {}, 5);
    for (const id of [6, 7, 8]) {
      request(client, 'value', { value: id }, id);
      await expectError(client, 'busy', { id });
    }
    await expectError(client, 'handler_timeout', { id: 5 });
    app.slow.resolve('late');
    await sleep(20);
    request(client, 'value', { value: 'alive' }, 9);
    expect((await next(client, 'value')).data).toBe('alive');
  });

  it('ws_max_messages_per_turn: more messages than one turn allows are all handled, none refused', async () => {
    const { url, app } = await setup({ ws_max_messages_per_turn: 1 });
    const { client } = await connectV0(url);
    for (let i = 0; i < 30; i += 1) client.send('echo', { i });
    for (let i = 0; i < 30; i += 1) expect((await next(client, 'echoed')).data).toEqual({ i });
    expect(app.handled('echo')).toBe(30);
    expect(client.pending()).toEqual([]);
  });

  it('connect_timeout: OnConnect past it closes 1011 "OnConnect timeout"; messages meanwhile are dropped', async () => {
    const { url, app } = await setup({ connect_timeout: 100 });
    app.connectGate = new Promise(() => undefined);
    const client = await TestClient.connect(url);
    client.send('echo', { early: true });
    const closed = await expectClose(client, 1011);
    expect(closed.reason).toBe('OnConnect timeout');
    expect(app.handled('echo')).toBe(0);
  });

  it('max_connections_per_ip: the upgrade is answered 503 with Retry-After: 5', async () => {
    const { url } = await setup({ max_connections_per_ip: 1 });
    await connectV0(url);
    const refused = await expectRefusedUpgrade(url);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
  });

  it('max_connections: 503 with Retry-After: 5 to the upgrade and to a request', async () => {
    const { url, base } = await setup({ max_connections: 1, connection_reserve: 0 });
    await connectV0(url);
    const refused = await expectRefusedUpgrade(url);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    const res = await fetch(`${base}/anything`);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
  });

  it('allowed_hosts: an upgrade with another Host is refused 403, a missing Host 400', async () => {
    const { url, port } = await setup({ allowed_hosts: ['localhost'] });
    const refused = await expectRefusedUpgrade(url, { headers: { Host: 'evil.test' } });
    expect(refused.status).toBe(403);
    const conn = await RawConnection.open(port);
    conn.write('GET /x HTTP/1.0\r\n\r\n');
    expect(
      await within(
        conn.waitFor((d) => d.includes('\r\n\r\n')),
        'an answer',
      ),
    ).toMatch(/^HTTP\/1\.[01] 400/);
    await connectV0(`ws://localhost:${port}`);
  });

  it('closes a message of more than 16384 fragments with 1008', async () => {
    const { url } = await setup();
    const { client } = await connectV0(url);
    for (let i = 0; i < 16385; i += 1) client.ws.send('a', { fin: false });
    client.ws.send('a', { fin: true });
    await expectClose(client, 1008, 15_000);
  });

  it('handles messages during shutdown_delay, then closes with 1012', async () => {
    const { url, server } = await setup({ shutdown_delay: 300 });
    const { client } = await connectV0(url);
    const closing = server.close();
    client.send('echo', { during: 'delay' });
    expect((await next(client, 'echoed')).data).toEqual({ during: 'delay' });
    await expectClose(client, 1012);
    await closing;
  });
});

describe('§ Built-in room events (opt-in)', () => {
  it('join_room {room} is answered room_joined {room, namespace: "/"} and room broadcasts reach the client', async () => {
    const { url, server } = await setup();
    const { client } = await connectV0(url);
    client.send('join_room', { room: 'lobby' });
    expect(await next(client, 'room_joined')).toEqual({
      event: 'room_joined',
      data: { room: 'lobby', namespace: '/' },
    });
    server.broadcast('news', { n: 1 }, '/', 'lobby');
    expect((await next(client, 'news')).data).toEqual({ n: 1 });
  });

  it('join_room with a namespace answers that namespace', async () => {
    const { url } = await setup();
    const { client } = await connectV0(url);
    client.send('join_room', { room: 'r', namespace: '/chat' });
    expect((await next(client, 'room_joined')).data).toEqual({ room: 'r', namespace: '/chat' });
  });

  it('leave_room is answered room_left {room, namespace} and room broadcasts stop', async () => {
    const { url, server } = await setup();
    const { client } = await connectV0(url);
    client.send('join_room', { room: 'lobby' });
    await next(client, 'room_joined');
    client.send('leave_room', { room: 'lobby' });
    expect((await next(client, 'room_left')).data).toEqual({ room: 'lobby', namespace: '/' });
    server.broadcast('news', {}, '/', 'lobby');
    expect(await leftover(client)).toEqual([]);
  });
});

describe('§ Liveness', () => {
  it('pings every heartbeat_interval and terminates a client that does not answer, without a close frame (1006)', async () => {
    const { url } = await setup({ heartbeat_interval: 200, heartbeat_timeout: 200 });
    const client = await TestClient.connect(url, { autoPong: false });
    let pings = 0;
    client.ws.on('ping', () => (pings += 1));
    const closed = await within(client.closed, 'the terminated connection');
    expect(closed.code).toBe(1006);
    expect(pings).toBeGreaterThan(0);
  });

  it('keeps a client that answers the pings', async () => {
    const { url } = await setup({ heartbeat_interval: 100, heartbeat_timeout: 100 });
    const { client } = await connectV0(url);
    let pings = 0;
    client.ws.on('ping', () => (pings += 1));
    await sleep(600);
    expect(pings).toBeGreaterThanOrEqual(2);
    expect(client.ws.readyState).toBe(WebSocket.OPEN);
  });

  it('answers a ping from the client with a pong carrying the same data', async () => {
    const { url } = await setup();
    const { client } = await connectV0(url);
    const pong = new Promise<string>((resolve) =>
      client.ws.once('pong', (data) => resolve(data.toString())),
    );
    client.ws.ping('are-you-there');
    expect(await within(pong, 'a pong')).toBe('are-you-there');
  });
});

describe('§ Close codes', () => {
  it('1000: disconnectClient', async () => {
    const { url, server } = await setup();
    const { client, clientId } = await connectV0(url);
    server.disconnectClient(clientId);
    await expectClose(client, 1000);
  });

  it('1001: the server is shutting down (close() with restart_spread 0)', async () => {
    const { url, server } = await setup({ restart_spread: 0 });
    const { client } = await connectV0(url);
    void server.close();
    expect((await expectClose(client, 1001)).reason).toBe('Server shutting down');
  });

  it('1012: a restart (close()): each client gets its own delay hint within restart_spread', async () => {
    const { url, server } = await setup({ restart_spread: 2000 });
    const clients = await Promise.all(
      Array.from({ length: 8 }, async () => (await connectV0(url)).client),
    );
    void server.close();
    const closes = await Promise.all(clients.map((client) => expectClose(client, 1012)));
    const delays = closes.map(({ reason }) => {
      const match = /^restart; retry after (\d+) ms$/.exec(reason);
      expect(match).not.toBeNull();
      return Number(match![1]);
    });
    for (const delay of delays) {
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThanOrEqual(2000);
    }
    // Spread evenly: one hint in each eighth of the window, never all the same.
    const slices = new Set(delays.map((d) => Math.min(7, Math.floor(d / 250))));
    expect(slices.size).toBe(8);
  });

  it('1002: the client broke RFC 6455 (a close frame with a reserved code)', async () => {
    const { url } = await setup();
    const { client } = await connectV0(url);
    rawSocket(client).write(maskedFrame(8, Buffer.from([0x03, 0xec])));
    exercised.closeCodes.add(1002);
    const closed = await within(client.closed, 'the close');
    expect([1002, 1006]).toContain(closed.code);
  });

  it('1002: the client broke RFC 6455 (an unmasked frame)', async () => {
    const { url } = await setup();
    const { client } = await connectV0(url);
    rawSocket(client).write(Buffer.from([0x81, 0x01, 0x61]));
    exercised.closeCodes.add(1002);
    // The server closes with 1002; the client may see its close frame or only the end.
    const closed = await within(client.closed, 'the close');
    expect([1002, 1006]).toContain(closed.code);
  });

  it('1007: a text frame that is not valid UTF-8', async () => {
    const { url } = await setup();
    const { client } = await connectV0(url);
    client.ws.send(Buffer.from([0x7b, 0xc3, 0x28, 0x7d]), { binary: false });
    await expectClose(client, 1007);
  });

  it('1009: a message larger than max_message_size', async () => {
    const { url } = await setup({ max_message_size: 1024 });
    const { client } = await connectV0(url);
    client.send('echo', { pad: 'x'.repeat(2000) });
    await expectClose(client, 1009);
  });

  it('1013: a client that reads too slowly (unsent data past max_buffered_amount)', async () => {
    const { url, server } = await setup({ max_buffered_amount: 64 * 1024 });
    const { client, clientId } = await connectV0(url);
    rawSocket(client).pause();
    const chunk = { pad: 'x'.repeat(256 * 1024) };
    let sent = 0;
    while (sent < 400 && server.send(clientId, 'flood', chunk)) {
      sent += 1;
      await sleep(1);
    }
    expect(sent).toBeLessThan(400);
    rawSocket(client).resume();
    await expectClose(client, 1013, 15_000);
  });

  it('by default answers a binary frame binary_not_supported and keeps the connection open', async () => {
    const { url } = await setup();
    const { client } = await connectV0(url);
    client.ws.send(Buffer.from([1, 2, 3]));
    await expectError(client, 'binary_not_supported');
    client.send('echo', { open: true });
    expect((await next(client, 'echoed')).data).toEqual({ open: true });
  });

  it("closes with 1003 on a binary frame when ws_binary_messages is 'close'", async () => {
    const { url, app } = await setup({ ws_binary_messages: 'close' });
    const { client } = await connectV0(url);
    client.ws.send(Buffer.from([1, 2, 3]));
    await expectClose(client, 1003);
    expect(client.received.some((m) => m.event === 'error')).toBe(false);
    await until(() => app.disconnects().length === 1, 'OnDisconnect');
  });
});

// ============================================================================ version 1

describe('§ Protocol version 1 (compatibility with version 0)', () => {
  it('never sends id, rid, seq or a control event to a version 0 client that does not ask', async () => {
    const { url, server } = await setup();
    const { client, clientId } = await connectV0(url);
    client.send('echo', { n: 1 });
    expect(await next(client, 'echoed')).toEqual({ event: 'echoed', data: { n: 1 } });
    server.broadcast('news', { n: 2 });
    expect(await next(client, 'news')).toEqual({ event: 'news', data: { n: 2 } });
    await expect(server.emitWithAck(clientId, 'q', {})).rejects.toMatchObject({
      code: 'PKG_ERR_CORE_PROTOCOL_UNSUPPORTED',
    });
    expect(await leftover(client)).toEqual([]);
  });

  it('runs OnConnect of a version 0 client (token in ?key=) as soon as it is connected', async () => {
    const { url, app } = await setup({ hello_wait: 60_000 }, (server) => {
      server.addHandshakeMiddleware((ctx) => {
        if (ctx.query.get('key') !== 'k') return { status: 401, message: 'Invalid key' };
        ctx.data['user'] = 'ada';
        return undefined;
      });
      server.addAuthHandler(tokens);
    });
    const { clientId } = await connectV0(`${url}/?key=k`);
    expect(app.connects()).toEqual([clientId]);
  });

  it('refuses to register a handler for a control event name ($...)', async () => {
    const { server } = await setup();
    expect(() => server.on('$hello', () => undefined)).toThrow(TypeError);
    expect(() => server.on('$custom', () => undefined)).toThrow(/\$custom/);
    expect(() => server.on('app.event', () => undefined)).not.toThrow();
  });
});

describe('§ Envelope members', () => {
  it('id: a string of 1-64 characters or an integer 0 to 2^53-1 is echoed in the answer', async () => {
    const { url } = await setup();
    const { client } = await ready(url);
    for (const id of ['a', 'x'.repeat(64), 0, 2 ** 53 - 1, 'é✓']) {
      request(client, 'value', { value: 1 }, id);
      expect(await next(client, 'value')).toEqual({ event: 'value', id, data: 1 });
    }
  });

  it('rid: a request of the server carries a string of 1-64 characters', async () => {
    const { url, server } = await setup();
    const { client, welcome } = await ready(url);
    void server.emitWithAck(welcome['clientId'] as string, 'confirm', {}).catch(() => undefined);
    const asked = await next(client, 'confirm');
    expect(typeof asked.rid).toBe('string');
    expect((asked.rid as string).length).toBeGreaterThanOrEqual(1);
    expect((asked.rid as string).length).toBeLessThanOrEqual(64);
  });

  it('seq: an integer from 1 to 2^53-1 on event messages to a client with a session', async () => {
    const { url, server } = await setup();
    const { client, welcome } = await ready(url);
    server.send(welcome['clientId'] as string, 'direct', {});
    const seq = (await next(client, 'direct')).seq;
    expect(Number.isSafeInteger(seq)).toBe(true);
    expect(seq as number).toBeGreaterThanOrEqual(1);
  });

  it('ignores members that are not listed', async () => {
    const { url } = await setup();
    const { client } = await ready(url);
    sendJson(client, { event: 'value', data: { value: 2 }, id: 1, extra: true, meta: { a: 1 } });
    expect(await next(client, 'value')).toEqual({ event: 'value', id: 1, data: 2 });
  });
});

describe('§ Requests from the client (id)', () => {
  it('answers once with the request event and id, data the awaited result, null for nothing', async () => {
    const { url, app } = await setup();
    const { client } = await ready(url);
    request(client, 'slow', {}, 7);
    app.slow.resolve({ delivered: true });
    expect(await next(client, 'slow')).toEqual({ event: 'slow', id: 7, data: { delivered: true } });
    request(client, 'nothing', {}, 8);
    expect(await next(client, 'nothing')).toEqual({ event: 'nothing', id: 8, data: null });
    expect(await leftover(client)).toEqual([]);
  });

  it('answers any JSON value the handler returns', async () => {
    const { url } = await setup();
    const { client } = await ready(url);
    for (const [id, value] of [
      [1, 'text'],
      [2, 0],
      [3, [1, 2]],
      [4, false],
    ] as const) {
      request(client, 'value', { value }, id);
      expect(await next(client, 'value')).toEqual({ event: 'value', id, data: value });
    }
  });

  it('answers a middleware that stops the chain with forbidden carrying id and event', async () => {
    const { url } = await setup();
    const { client } = await ready(url);
    request(client, 'guarded', {}, 3);
    await expectError(client, 'forbidden', { id: 3, data: { event: 'guarded' } });
    request(client, 'guarded', { pass: true }, 4);
    expect(await next(client, 'guarded')).toEqual({ event: 'guarded', id: 4, data: 'passed' });
  });

  it("answers a missing handler with unknown_event and the id, also with unknown_event 'ignore'", async () => {
    const { url } = await setup({ unknown_event: 'ignore' });
    const { client } = await ready(url);
    request(client, 'no.such.event', {}, 'q');
    await expectError(client, 'unknown_event', { id: 'q', data: { event: 'no.such.event' } });
  });

  it('answers a result that cannot be serialised, and a handler that throws, with internal_error and the id', async () => {
    const { url } = await setup();
    const { client } = await ready(url);
    request(client, 'bigint', {}, 1);
    await expectError(client, 'internal_error', { id: 1 });
    request(client, 'fail', {}, 2);
    await expectError(client, 'internal_error', { id: 2 });
  });

  it('answers a rate limit and a failed validation with the id', async () => {
    const { url } = await setup();
    const { client } = await ready(url);
    request(client, 'once', {}, 1);
    await next(client, 'once');
    request(client, 'once', {}, 2);
    await expectError(client, 'rate_limited', { id: 2, data: { event: 'once' } });
    request(client, 'typed', { n: 'x' }, 3);
    await expectError(client, 'validation_failed', { id: 3, data: { event: 'typed' } });
  });

  it('answers a message that fails to decode but has a valid id with its error and that id', async () => {
    const { url } = await setup({ ws_error_reply_interval: 60_000 });
    const { client } = await ready(url);
    request(client, 'echo', 'not an object', 'd');
    await expectError(client, 'invalid_data', { id: 'd' });
    request(client, 'echo', 'again', 'e');
    await expectError(client, 'invalid_data', { id: 'e' });
    sendJson(client, { event: 'bad event', data: {}, id: 'f' });
    await expectError(client, 'invalid_event', { id: 'f' });
  });

  it('does not check that ids are unique: two requests with one id get two answers', async () => {
    const { url } = await setup();
    const { client } = await ready(url);
    request(client, 'value', { value: 'a' }, 5);
    request(client, 'value', { value: 'b' }, 5);
    const answers = [await next(client, 'value'), await next(client, 'value')];
    expect(answers.map((a) => [a.id, a.data]).sort()).toEqual([
      [5, 'a'],
      [5, 'b'],
    ]);
  });

  it('invalid_id: a malformed id is refused without id and the message is not dispatched', async () => {
    const { url, app } = await setup({ ws_error_reply_interval: 0 });
    const { client } = await ready(url);
    for (const id of ['', 'x'.repeat(65), -1, 1.5, 2 ** 53, true, null, { n: 1 }, [1]]) {
      request(client, 'echo', { id: String(id) }, id);
      await expectError(client, 'invalid_id');
    }
    expect(app.handled('echo')).toBe(0);
  });

  it('too_many_pending: past max_pending_requests the request is refused with its id, not dispatched', async () => {
    const { url, app } = await setup({ max_pending_requests: 2 });
    const { client } = await ready(url);
    for (const id of [1, 2, 3]) request(client, 'slow', {}, id);
    await expectError(client, 'too_many_pending', { id: 3 });
    expect(app.handled('slow')).toBe(2);
    app.slow.resolve('done');
    const ids = [(await next(client, 'slow')).id, (await next(client, 'slow')).id];
    expect(ids.sort()).toEqual([1, 2]);
  });
});

describe('§ Requests from the server (rid)', () => {
  async function asked(
    event = 'confirm',
    config: ServerConfigOptions = {},
  ): Promise<{ s: Setup; client: TestClient; id: string; answer: Promise<unknown>; rid: unknown }> {
    const s = await setup(config);
    const { client, welcome } = await ready(s.url);
    const id = welcome['clientId'] as string;
    const answer = s.server.emitWithAck(id, event, { file: 'a.txt' });
    answer.catch(() => undefined);
    const req = await next(client, event);
    expect(req).toEqual({ event, data: { file: 'a.txt' }, rid: req.rid });
    return { s, client, id, answer, rid: req.rid };
  }

  it('$ack with the same rid answers the request; its data is any JSON value', async () => {
    for (const value of [{ ok: true }, null, 0, 'yes', [1]]) {
      const { client, answer, rid } = await asked();
      sendJson(client, { event: '$ack', rid, data: value });
      await expect(answer).resolves.toEqual(value);
      await cleanup();
    }
  });

  it('$nack rejects the request with the client code (handler_error, unknown_event)', async () => {
    for (const code of ['handler_error', 'unknown_event']) {
      const { client, answer, rid } = await asked();
      sendJson(client, { event: '$nack', rid, data: { code, message: 'no' } });
      await expect(answer).rejects.toMatchObject({
        code: 'PKG_ERR_CORE_ACK_REFUSED',
        remoteCode: code,
      });
      await cleanup();
    }
  });

  it('ignores silently an $ack whose rid is well formed but unknown', async () => {
    const { client, answer, rid } = await asked();
    sendJson(client, { event: '$ack', rid: 'never-issued', data: 1 });
    expect(await leftover(client)).toEqual([]);
    sendJson(client, { event: '$ack', rid, data: 2 });
    await expect(answer).resolves.toBe(2);
  });

  it('answers an $ack or $nack with a malformed rid with invalid_id', async () => {
    const { client } = await asked('confirm', { ws_error_reply_interval: 0 });
    for (const rid of ['', 'x'.repeat(65), true, { r: 1 }]) {
      sendJson(client, { event: '$ack', rid, data: 1 });
      await expectError(client, 'invalid_id');
    }
    sendJson(client, { event: '$nack', rid: '', data: { code: 'handler_error', message: 'x' } });
    await expectError(client, 'invalid_id');
  });

  it('rejects after ack_timeout naming the event and the client, and ignores the late answer', async () => {
    const s = await setup({ ack_timeout: 50 });
    const { client, welcome } = await ready(s.url);
    const id = welcome['clientId'] as string;
    const answer = s.server.emitWithAck(id, 'slow.q', {});
    const req = await next(client, 'slow.q');
    const err = (await answer.catch((e: unknown) => e)) as Error & { code: string };
    expect(err.code).toBe('PKG_ERR_CORE_ACK_TIMEOUT');
    expect(err.message).toContain('slow.q');
    expect(err.message).toContain(id);
    sendJson(client, { event: '$ack', rid: req.rid, data: 'late' });
    expect(await leftover(client)).toEqual([]);
  });

  it('refuses one request over max_pending_server_requests with a RangeError and sends nothing', async () => {
    const s = await setup({ max_pending_server_requests: 1 });
    const { client, welcome } = await ready(s.url);
    const id = welcome['clientId'] as string;
    s.server.emitWithAck(id, 'q', { n: 1 }).catch(() => undefined);
    const over = await s.server.emitWithAck(id, 'q', { n: 2 }).catch((e: unknown) => e);
    expect(over).toBeInstanceOf(RangeError);
    expect(over).toMatchObject({ code: 'PKG_ERR_CORE_TOO_MANY_PENDING' });
    expect((await next(client, 'q')).data).toEqual({ n: 1 });
    expect(await leftover(client)).toEqual([]);
  });

  it('rejects every pending request when the connection closes', async () => {
    const { client, answer } = await asked();
    client.ws.close(1000);
    await expect(answer).rejects.toMatchObject({ code: 'PKG_ERR_CORE_CLIENT_GONE' });
  });
});

describe('§ Hello and welcome', () => {
  it('selects pkg.v1 wherever it is in the offered list', async () => {
    const { url } = await setup();
    const client = await connectV1(url, ['chat.v2', 'other.v1']);
    expect(client.ws.protocol).toBe('pkg.v1');
  });

  it('selects the first offered subprotocol when pkg.v1 is not offered, and serves version 0 at once', async () => {
    const { url, app } = await setup({ hello_wait: 60_000 });
    const client = await TestClient.connect(url, {}, ['chat.v2', 'chat.v1']);
    expect(client.ws.protocol).toBe('chat.v2');
    const greeting = await next(client, 'app.hello');
    expect(app.connects()).toEqual([greeting.data['clientId']]);
  });

  it('answers $hello with $welcome before any other message, then runs OnConnect', async () => {
    const { url, app } = await setup({ hello_wait: 60_000 });
    const client = await connectV1(url);
    await sleep(50);
    expect(app.connects()).toEqual([]);
    expect(client.pending()).toEqual([]);
    sendJson(client, { event: '$hello', data: { v: 1 } });
    const welcome = await next(client);
    expect(welcome.event).toBe('$welcome');
    expect(await next(client)).toMatchObject({
      event: 'app.hello',
      data: { clientId: welcome.data['clientId'] },
    });
  });

  it('$welcome has v, clientId, heartbeat null when none was asked, session, recovery and resumed false', async () => {
    const { url } = await setup({ recovery_window: 60_000 });
    const { welcome } = await hello(url);
    expect(welcome).toEqual({
      v: 1,
      clientId: expect.any(String),
      heartbeat: null,
      session: expect.any(String),
      recovery: { window: 60_000 },
      resumed: false,
    });
    expect((welcome['session'] as string).length).toBeLessThanOrEqual(128);
  });

  it('answers with a version at most the client one', async () => {
    const { url } = await setup();
    const { welcome } = await hello(url, { v: 7 });
    expect(welcome['v']).toBe(1);
  });

  it('answers a malformed $hello with invalid_payload and closes with 1008', async () => {
    const { url } = await setup();
    const malformed: unknown[] = [
      [1],
      {},
      { v: 0 },
      { v: 1.5 },
      { v: '1' },
      { v: 1, auth: 5 },
      { v: 1, heartbeat: 'fast' },
      { v: 1, resume: 'token' },
      { v: 1, resume: { session: 'x'.repeat(129), seq: 0 } },
      { v: 1, resume: { session: 's', seq: -1 } },
      { v: 1, resume: { session: 's', seq: 1.5 } },
      { v: 1, resume: { session: 7, seq: 1 } },
    ];
    for (const data of malformed) {
      const client = await connectV1(url);
      sendJson(client, { event: '$hello', data });
      await expectError(client, 'invalid_payload');
      await expectClose(client, 1008);
    }
  });

  it('answers a $hello whose data is a string (not an object) with invalid_payload and closes with 1008', async () => {
    const { url } = await setup();
    const client = await connectV1(url);
    sendJson(client, { event: '$hello', data: 'text' });
    await expectError(client, 'invalid_payload');
    await expectClose(client, 1008);
  });

  it('serves a pkg.v1 connection whose first message is not $hello as version 0, OnConnect before that message', async () => {
    const { url, app } = await setup({ hello_wait: 60_000 });
    const client = await connectV1(url);
    client.send('echo', { first: true });
    expect((await next(client)).event).toBe('app.hello');
    expect(await next(client)).toEqual({ event: 'echoed', data: { first: true } });
    expect(app.log.slice(0, 2)).toEqual([expect.stringMatching(/^connect /), 'handled echo']);
  });

  it('serves a pkg.v1 connection that sends nothing within hello_wait as version 0', async () => {
    const { url, app } = await setup({ hello_wait: 50 });
    const client = await connectV1(url);
    const greeting = await next(client, 'app.hello');
    expect(greeting).toEqual({ event: 'app.hello', data: { clientId: app.connects()[0] } });
  });

  it('still welcomes a $hello from a version 0 connection, after what OnConnect sent, with every feature of version 1', async () => {
    const { url, server } = await setup({ hello_wait: 60_000 });
    const { client, clientId } = await connectV0(url);
    sendJson(client, { event: '$hello', data: { v: 1, heartbeat: {} } });
    const welcome = await next(client);
    expect(welcome).toMatchObject({
      event: '$welcome',
      data: { v: 1, clientId, resumed: false, heartbeat: { interval: 25000, timeout: 20000 } },
    });
    const answer = server.emitWithAck(clientId, 'confirm', {});
    const req = await next(client, 'confirm');
    sendJson(client, { event: '$ack', rid: req.rid, data: 'ok' });
    await expect(answer).resolves.toBe('ok');
    server.send(clientId, 'direct', {});
    expect(typeof (await next(client, 'direct')).seq).toBe('number');
  });

  it('serves a pkg.v1 connection as version 0 at once with hello_wait 0, and still welcomes its later $hello', async () => {
    const { url } = await setup({ hello_wait: 0 });
    const client = await connectV1(url);
    expect(client.ws.protocol).toBe('pkg.v1');
    const greeting = await next(client);
    expect(greeting.event).toBe('app.hello');
    sendJson(client, { event: '$hello', data: { v: 1 } });
    expect(await next(client)).toMatchObject({
      event: '$welcome',
      data: { clientId: greeting.data['clientId'], resumed: false },
    });
  });

  it('refuses the resume of a late $hello (after OnConnect) with reason "unknown"', async () => {
    const { url } = await setup({ hello_wait: 60_000 });
    const first = await hello(url);
    first.client.ws.terminate();
    await first.client.closed;
    await sleep(50);
    const { client } = await connectV0(url);
    const resume = { session: first.welcome['session'], seq: 0 };
    sendJson(client, { event: '$hello', data: { v: 1, resume } });
    expect((await next(client, '$welcome')).data).toMatchObject({
      resumed: false,
      reason: 'unknown',
    });
  });

  it('refuses a second $hello with invalid_envelope and ignores it', async () => {
    const { url } = await setup();
    const { client, welcome } = await ready(url);
    sendJson(client, { event: '$hello', data: { v: 1 } });
    await expectError(client, 'invalid_envelope');
    request(client, 'whoami', {}, 1);
    expect((await next(client, 'whoami')).data).toMatchObject({ clientId: welcome['clientId'] });
    expect(client.pending()).toEqual([]);
  });
});

describe('§ Heartbeat', () => {
  it('answers $ping at once with $pong {}', async () => {
    const { url } = await setup();
    const { client } = await ready(url, { v: 1, heartbeat: { interval: 25000, timeout: 20000 } });
    sendJson(client, { event: '$ping', data: {} });
    expect(await next(client, '$pong')).toEqual({ event: '$pong', data: {} });
  });

  it('clamps interval and timeout to [1000, 300000] and grants them in $welcome', async () => {
    const { url } = await setup();
    const low = await hello(url, { v: 1, heartbeat: { interval: 5, timeout: 10 } });
    expect(low.welcome['heartbeat']).toEqual({ interval: 1000, timeout: 1000 });
    const high = await hello(url, { v: 1, heartbeat: { interval: 1e9, timeout: 1e9 } });
    expect(high.welcome['heartbeat']).toEqual({ interval: 300000, timeout: 300000 });
  });

  it('grants 25000 / 20000 for missing values', async () => {
    const { url } = await setup();
    const { welcome } = await hello(url, { v: 1, heartbeat: {} });
    expect(welcome['heartbeat']).toEqual({ interval: 25000, timeout: 20000 });
  });

  it('never closes a client for not sending $ping: one that answers ping frames stays open past interval + timeout', async () => {
    const { url } = await setup({ heartbeat_interval: 200, heartbeat_timeout: 200 });
    const { client } = await ready(url, { v: 1, heartbeat: { interval: 1000, timeout: 1000 } });
    let pings = 0;
    client.ws.on('ping', () => (pings += 1));
    await sleep(2600);
    expect(pings).toBeGreaterThanOrEqual(5);
    expect(client.ws.readyState).toBe(WebSocket.OPEN);
    expect(await leftover(client, 0)).toEqual([]);
  });

  it('terminates a version 1 client that answers no ping frame, even while it sends $ping (1006, no 4408)', async () => {
    const { url } = await setup({ heartbeat_interval: 200, heartbeat_timeout: 200 });
    const client = await TestClient.connect(url, { autoPong: false }, ['pkg.v1']);
    sendJson(client, { event: '$hello', data: { v: 1, heartbeat: { interval: 1000 } } });
    expect((await next(client)).event).toBe('$welcome');
    const pinger = setInterval(() => sendJson(client, { event: '$ping', data: {} }), 100);
    try {
      const closed = await expectClose(client, 1006);
      expect(client.received.some((m) => m.event === '$pong')).toBe(true);
      expect(closed.code).not.toBe(4408);
    } finally {
      clearInterval(pinger);
    }
  });

  it("keeps the server's own ping frames going for a version 1 client", async () => {
    const { url } = await setup({ heartbeat_interval: 100, heartbeat_timeout: 1000 });
    const { client } = await ready(url, { v: 1, heartbeat: { interval: 25000, timeout: 20000 } });
    const ping = new Promise<void>((resolve) => client.ws.once('ping', () => resolve()));
    await within(ping, 'a ping frame');
  });
});

describe('§ Authentication', () => {
  it('gives the auth handler {clientId, auth, data, ip} and runs OnConnect after it accepts', async () => {
    const seen: Array<Record<string, unknown>> = [];
    const { url, app } = await setup({}, (server) => {
      server.addHandshakeMiddleware((ctx) => {
        ctx.data['from'] = 'handshake';
        return undefined;
      });
      server.addAuthHandler((ctx) => {
        seen.push({ ...ctx, data: { ...ctx.data } });
        return ctx.auth === 'good';
      });
    });
    const { client, welcome } = await hello(url, { v: 1, auth: 'good' });
    await next(client, 'app.hello');
    expect(seen).toEqual([
      {
        clientId: welcome['clientId'],
        auth: 'good',
        data: expect.objectContaining({ from: 'handshake' }),
        ip: expect.stringMatching(/127\.0\.0\.1$/),
        refresh: false,
      },
    ]);
    expect(app.connects()).toEqual([welcome['clientId']]);
  });

  it('accepts on true or nothing', async () => {
    for (const result of [true, undefined]) {
      const { url } = await setup({}, (server) => server.addAuthHandler(() => result));
      const { client } = await hello(url, { v: 1, auth: 'any' });
      await next(client, 'app.hello');
      await cleanup();
    }
  });

  it('refuses false with unauthorized status 401 and close 4401', async () => {
    const { url, app } = await setup({}, (server) => server.addAuthHandler(() => false));
    const client = await connectV1(url);
    sendJson(client, { event: '$hello', data: { v: 1, auth: 'nope' } });
    await expectError(client, 'unauthorized', { data: { status: 401 } });
    await expectClose(client, 4401);
    expect(app.connects()).toEqual([]);
  });

  it('refuses {status: 401, message} with that error, then close 4401 whose reason is the message', async () => {
    const { url } = await setup({}, (server) => server.addAuthHandler(tokens));
    const client = await connectV1(url);
    sendJson(client, { event: '$hello', data: { v: 1, auth: 'nope' } });
    expect(await next(client)).toEqual({
      event: 'error',
      data: { code: 'unauthorized', message: 'Invalid token', status: 401 },
    });
    expect(await expectClose(client, 4401)).toEqual({ code: 4401, reason: 'Invalid token' });
  });

  it('refuses {status: 403} with forbidden status 403, then close 4403', async () => {
    const { url } = await setup({}, (server) => server.addAuthHandler(tokens));
    const client = await connectV1(url);
    sendJson(client, { event: '$hello', data: { v: 1, auth: 'banned' } });
    await expectError(client, 'forbidden', { data: { message: 'Banned', status: 403 } });
    expect((await expectClose(client, 4403)).reason).toBe('Banned');
  });

  it('cuts the close reason to at most 123 bytes of UTF-8', async () => {
    const message = 'é'.repeat(100);
    const { url } = await setup({}, (server) =>
      server.addAuthHandler(() => ({ status: 401, message })),
    );
    const client = await connectV1(url);
    sendJson(client, { event: '$hello', data: { v: 1, auth: 'x' } });
    await expectError(client, 'unauthorized', { data: { message } });
    const { reason } = await expectClose(client, 4401);
    expect(Buffer.byteLength(reason)).toBeLessThanOrEqual(123);
    expect(message.startsWith(reason)).toBe(true);
    expect(reason.length).toBeGreaterThan(0);
  });

  it('accepts every $hello when there is no auth handler', async () => {
    const { url } = await setup();
    const { client } = await hello(url, { v: 1, auth: 'anything at all' });
    await next(client, 'app.hello');
  });

  it('refuses auth longer than 8192 characters with unauthorized and 4401; 8192 is accepted', async () => {
    const { url } = await setup({}, (server) => server.addAuthHandler(() => true));
    await ready(url, { v: 1, auth: 'x'.repeat(8192) });
    const client = await connectV1(url);
    sendJson(client, { event: '$hello', data: { v: 1, auth: 'x'.repeat(8193) } });
    await expectError(client, 'unauthorized');
    await expectClose(client, 4401);
  });

  it('runs the handlers with auth undefined for a connection without pkg.v1 and accepts a handshake-authenticated one', async () => {
    const auths: unknown[] = [];
    const { url } = await setup({}, (server) => {
      server.addHandshakeMiddleware((ctx) => {
        if (ctx.query.get('key') === 'k') ctx.data['user'] = 'ada';
        return undefined;
      });
      server.addAuthHandler((ctx) => {
        auths.push(ctx.auth);
        return tokens(ctx);
      });
    });
    const { client } = await connectV0(`${url}/?key=k`);
    expect(auths).toEqual([undefined]);
    request(client, 'whoami', {}, 1);
    expect((await next(client, 'whoami')).data).toMatchObject({ data: { user: 'ada' } });
  });

  it('runs the handlers with auth undefined when hello_wait passes without $hello', async () => {
    const auths: unknown[] = [];
    const { url } = await setup({ hello_wait: 50 }, (server) =>
      server.addAuthHandler((ctx) => {
        auths.push(ctx.auth);
        return true;
      }),
    );
    const client = await connectV1(url);
    await next(client, 'app.hello');
    expect(auths).toEqual([undefined]);
  });

  it('keeps waiting for $hello after a refusal of the connection without credentials', async () => {
    const { url, app } = await setup({ hello_wait: 0 }, (server) => server.addAuthHandler(tokens));
    const client = await TestClient.connect(url);
    await sleep(100);
    expect(app.connects()).toEqual([]);
    sendJson(client, { event: '$hello', data: { v: 1, auth: 'good' } });
    const welcome = await next(client, '$welcome');
    expect(await next(client, 'app.hello')).toEqual({
      event: 'app.hello',
      data: { clientId: welcome.data['clientId'] },
      seq: expect.any(Number),
    });
  });

  it('answers a version 0 message of a client not accepted yet with the refusal (with its id) and closes', async () => {
    const { url, app } = await setup({ hello_wait: 0 }, (server) => server.addAuthHandler(tokens));
    const client = await TestClient.connect(url);
    request(client, 'echo', {}, 11);
    // "A refusal is an `error` event, then one `error` with the `id` of each held request".
    await expectError(client, 'unauthorized', { data: { status: 401 } });
    await expectError(client, 'unauthorized', { id: 11, data: { status: 401 } });
    await expectClose(client, 4401);
    expect(app.handled('echo')).toBe(0);
  });

  it('does not need auth in $hello for a connection authenticated in the handshake', async () => {
    const { url } = await setup({}, (server) => {
      server.addHandshakeMiddleware((ctx) => {
        if (ctx.headers['authorization'] !== 'Bearer k') return { status: 401, message: 'No' };
        ctx.data['user'] = 'ada';
        return undefined;
      });
      server.addAuthHandler(tokens);
    });
    const client = await TestClient.connect(url, { headers: { Authorization: 'Bearer k' } }, [
      'pkg.v1',
    ]);
    sendJson(client, { event: '$hello', data: { v: 1 } });
    expect((await next(client)).event).toBe('$welcome');
    expect((await expectRefusedUpgrade(url)).status).toBe(401);
  });

  it('checks the credentials of the $hello of a resumed connection too', async () => {
    const { url } = await setup({}, (server) => server.addAuthHandler(tokens));
    const first = await ready(url, { v: 1, auth: 'good' });
    first.client.ws.terminate();
    await first.client.closed;
    await sleep(50);
    const client = await connectV1(url);
    const resume = { session: first.welcome['session'], seq: 0 };
    sendJson(client, { event: '$hello', data: { v: 1, auth: 'nope', resume } });
    await expectError(client, 'unauthorized');
    await expectClose(client, 4401);
  });
});

describe('§ Connection state recovery', () => {
  /** Drops the connection without a close frame and waits until the server saw it. */
  async function drop(server: Server, client: TestClient): Promise<void> {
    const before = server.getClientCount();
    client.ws.terminate();
    await client.closed;
    await until(() => server.getClientCount() < before, 'the server to see the drop');
  }

  it('numbers event messages with seq; answers, requests of the server, control events and errors carry none', async () => {
    const { url, server } = await setup();
    const { client, welcome } = await hello(url, { v: 1, heartbeat: {} });
    const id = welcome['clientId'] as string;
    expect(welcome).not.toHaveProperty('seq');
    expect(typeof (await next(client, 'app.hello')).seq).toBe('number');
    request(client, 'value', { value: 1 }, 1);
    expect(await next(client, 'value')).not.toHaveProperty('seq');
    request(client, 'fail', {}, 2);
    expect(await next(client, 'error')).not.toHaveProperty('seq');
    client.sendRaw('not json');
    expect(await next(client, 'error')).not.toHaveProperty('seq');
    sendJson(client, { event: '$ping', data: {} });
    expect(await next(client, '$pong')).not.toHaveProperty('seq');
    server.emitWithAck(id, 'confirm', {}).catch(() => undefined);
    expect(await next(client, 'confirm')).not.toHaveProperty('seq');
  });

  it('gives increasing seq numbers to the messages of one client', async () => {
    const { url, server } = await setup();
    const { client, welcome } = await ready(url);
    const id = welcome['clientId'] as string;
    const seqs: number[] = [];
    for (let n = 0; n < 5; n += 1) {
      if (n % 2 === 0) server.broadcast('news', { n });
      else server.send(id, 'direct', { n });
      seqs.push((await next(client)).seq as number);
    }
    for (let i = 1; i < seqs.length; i += 1) expect(seqs[i]).toBeGreaterThan(seqs[i - 1]!);
  });

  it('resumes inside the window: same id, rooms and data, missed messages in order with their seq, then live; no OnConnect again', async () => {
    const { url, server, app } = await setup();
    const first = await ready(url);
    const id = first.welcome['clientId'] as string;
    request(first.client, 'join_room', { room: 'lobby' }, 1);
    await next(first.client, 'room_joined');
    request(first.client, 'remember', { note: 'kept' }, 2);
    await next(first.client, 'remember');
    server.broadcast('news', { n: 0 }, '/', 'lobby');
    const seen = (await next(first.client, 'news')).seq as number;
    await drop(server, first.client);

    server.broadcast('news', { n: 1 }, '/', 'lobby');
    server.send(id, 'direct', { n: 2 });
    server.broadcast('news', { n: 3 });
    const back = await hello(url, {
      v: 1,
      resume: { session: first.welcome['session'], seq: seen },
    });
    expect(back.welcome).toMatchObject({ clientId: id, resumed: true });
    const replay = [await next(back.client), await next(back.client), await next(back.client)];
    expect(replay.map((m) => [m.event, m.data])).toEqual([
      ['news', { n: 1 }],
      ['direct', { n: 2 }],
      ['news', { n: 3 }],
    ]);
    const seqs = replay.map((m) => m.seq as number);
    expect(seqs[0]).toBeGreaterThan(seen);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    server.broadcast('news', { n: 4 }, '/', 'lobby');
    expect((await next(back.client, 'news')).data).toEqual({ n: 4 });
    request(back.client, 'whoami', {}, 3);
    expect((await next(back.client, 'whoami')).data).toEqual({
      clientId: id,
      data: { note: 'kept' },
    });
    expect(app.connects()).toEqual([id]);
    expect(app.disconnects()).toEqual([]);
  });

  it('keeps an away session visible: isConnected, getClientType and send answer, getClientCount does not count it', async () => {
    const { url, server } = await setup();
    const { client, welcome } = await ready(url);
    const id = welcome['clientId'] as string;
    await drop(server, client);
    expect(server.isConnected(id)).toBe(true);
    expect(server.getClientType(id)).toBeDefined();
    expect(server.send(id, 'kept', {})).toBe(true);
    expect(server.getClientCount()).toBe(0);
  });

  it('ends the session when the window passes (OnDisconnect runs); a resume then gets "expired"', async () => {
    const { url, server, app } = await setup({ recovery_window: 100 });
    const first = await ready(url);
    const id = first.welcome['clientId'] as string;
    await drop(server, first.client);
    await until(() => app.disconnects().includes(id), 'OnDisconnect at the end of the window');
    const back = await hello(url, { v: 1, resume: { session: first.welcome['session'], seq: 0 } });
    expect(back.welcome).toMatchObject({ resumed: false, reason: 'expired' });
    expect(back.welcome['clientId']).not.toBe(id);
  });

  it('answers a session the server does not know with "unknown", and starts fresh', async () => {
    const { url } = await setup();
    const { welcome } = await hello(url, { v: 1, resume: { session: 'never-issued', seq: 3 } });
    expect(welcome).toMatchObject({ resumed: false, reason: 'unknown' });
    expect(typeof welcome['clientId']).toBe('string');
  });

  it('answers "overflow" when messages after seq were dropped from the buffer (recovery_buffer)', async () => {
    const { url, server } = await setup({ recovery_buffer: 2 });
    const first = await ready(url);
    const id = first.welcome['clientId'] as string;
    await drop(server, first.client);
    for (let n = 0; n < 4; n += 1) server.send(id, 'direct', { n });
    const back = await hello(url, { v: 1, resume: { session: first.welcome['session'], seq: 0 } });
    expect(back.welcome).toMatchObject({ resumed: false, reason: 'overflow' });
  });

  it('ends the session at once on a client close 1000 (OnDisconnect runs, no resume)', async () => {
    const { url, app } = await setup();
    const first = await ready(url);
    first.client.ws.close(1000);
    await until(() => app.disconnects().length === 1, 'OnDisconnect');
    const back = await hello(url, { v: 1, resume: { session: first.welcome['session'], seq: 0 } });
    expect(back.welcome['resumed']).toBe(false);
  });

  it('ends the session at once on disconnectClient, also for a session that is away', async () => {
    const { url, server, app } = await setup();
    const a = await ready(url);
    server.disconnectClient(a.welcome['clientId'] as string);
    await expectClose(a.client, 1000);
    await until(() => app.disconnects().length === 1, 'OnDisconnect of the open one');
    const b = await ready(url);
    const idB = b.welcome['clientId'] as string;
    await drop(server, b.client);
    server.disconnectClient(idB);
    await until(() => app.disconnects().includes(idB), 'OnDisconnect of the away one');
    const back = await hello(url, { v: 1, resume: { session: b.welcome['session'], seq: 0 } });
    expect(back.welcome['resumed']).toBe(false);
  });

  it('ends the session at once on a close 1008 (protocol errors)', async () => {
    const { url, app } = await setup({ ws_max_protocol_errors: 1 });
    const first = await ready(url);
    for (let i = 0; i < 5; i += 1) first.client.sendRaw('not json');
    await expectClose(first.client, 1008);
    await until(() => app.disconnects().length === 1, 'OnDisconnect');
  });

  it('keeps the session after a client close 4000 (it gave up on the connection)', async () => {
    const { url, server, app } = await setup();
    const first = await ready(url);
    first.client.ws.close(4000, 'heartbeat missed');
    exercised.closeCodes.add(4000);
    await first.client.closed;
    await until(() => server.getClientCount() === 0, 'the close');
    expect(app.disconnects()).toEqual([]);
    const back = await hello(url, { v: 1, resume: { session: first.welcome['session'], seq: 0 } });
    expect(back.welcome).toMatchObject({ resumed: true, clientId: first.welcome['clientId'] });
  });

  it('keeps the session after a heartbeat termination (no pong frame, 1006)', async () => {
    const { url, app } = await setup({ heartbeat_interval: 200, heartbeat_timeout: 200 });
    const client = await TestClient.connect(url, { autoPong: false }, ['pkg.v1']);
    sendJson(client, { event: '$hello', data: { v: 1 } });
    const welcome = await next(client, '$welcome');
    const first = { client, welcome: welcome.data };
    await expectClose(first.client, 1006);
    await sleep(50);
    expect(app.disconnects()).toEqual([]);
    const back = await hello(url, { v: 1, resume: { session: first.welcome['session'], seq: 0 } });
    expect(back.welcome).toMatchObject({ resumed: true, clientId: first.welcome['clientId'] });
  });

  it('keeps the session after a slow-consumer close 1013', async () => {
    const { url, server, app } = await setup({ max_buffered_amount: 64 * 1024 });
    const first = await ready(url);
    const id = first.welcome['clientId'] as string;
    rawSocket(first.client).pause();
    const chunk = { pad: 'x'.repeat(256 * 1024) };
    for (let n = 0; n < 40; n += 1) {
      server.send(id, 'flood', chunk);
      await sleep(1);
    }
    rawSocket(first.client).resume();
    await expectClose(first.client, 1013, 15_000);
    const seen = first.client.received
      .map((m) => (m as Message).seq)
      .filter((seq): seq is number => typeof seq === 'number');
    expect(seen.length).toBeGreaterThan(0);
    expect(app.disconnects()).toEqual([]);
    const resume = { session: first.welcome['session'], seq: Math.max(0, ...seen) };
    const back = await hello(url, { v: 1, resume });
    expect(back.welcome).toMatchObject({ resumed: true, clientId: id });
  });

  it('ends every session on close() (1012, as 1001 did), away ones too, running their OnDisconnect', async () => {
    const { url, server, app } = await setup();
    const away = await ready(url);
    await drop(server, away.client);
    const open = await ready(url);
    await server.close();
    await expectClose(open.client, 1012);
    expect(app.disconnects().sort()).toEqual(
      [away.welcome['clientId'], open.welcome['clientId']].sort(),
    );
  });

  it('has no session and no seq with recovery_window 0', async () => {
    const { url, server } = await setup({ recovery_window: 0 });
    const { client, welcome } = await ready(url);
    expect(welcome).not.toHaveProperty('session');
    expect(welcome).not.toHaveProperty('recovery');
    server.broadcast('news', { n: 1 });
    expect(await next(client, 'news')).toEqual({ event: 'news', data: { n: 1 } });
  });
});

describe('§ Limits of version 1 (defaults)', () => {
  it('hello_wait defaults to 1000 ms', async () => {
    const { url } = await setup();
    const started = Date.now();
    const client = await connectV1(url);
    await next(client, 'app.hello');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('recovery_window defaults to 120000 ms', async () => {
    const { url } = await setup();
    const { welcome } = await hello(url);
    expect(welcome['recovery']).toEqual({ window: 120000 });
  });

  it('max_pending_requests defaults to 128', async () => {
    const { url, app } = await setup();
    const { client } = await ready(url);
    for (let id = 1; id <= 129; id += 1) request(client, 'slow', {}, id);
    await expectError(client, 'too_many_pending', { id: 129 });
    expect(app.handled('slow')).toBe(128);
  });
});

// ===================================================================== clarified rules
// Where docs/protocol.md is silent, ambiguous or contradicts itself, the rules below are the
// ones the project decided; the section names say which passage each one settles.

describe('clarified rules', () => {
  /** An auth handler that accepts any token and names it as the identity. */
  const identities =
    (seen: unknown[] = []): AuthHandler =>
    (ctx) => {
      seen.push((ctx as { resume?: unknown }).resume);
      return { identity: ctx.auth } as unknown as boolean;
    };

  it('§ Connection state recovery: seq is scoped to a session, a new session starts at 1', async () => {
    const { url, server } = await setup();
    const a = await hello(url);
    const b = await hello(url);
    expect((await next(a.client, 'app.hello')).seq).toBe(1);
    expect((await next(b.client, 'app.hello')).seq).toBe(1);
    server.broadcast('news', {});
    expect((await next(a.client, 'news')).seq).toBe(2);
    expect((await next(b.client, 'news')).seq).toBe(2);
    const fresh = await hello(url, { v: 1, resume: { session: 'never-issued', seq: 40 } });
    expect(fresh.welcome).toMatchObject({ resumed: false });
    expect((await next(fresh.client, 'app.hello')).seq).toBe(1);
  });

  it('§ Connection state recovery: a resume takes over a session whose connection is still open, closing it with 4409', async () => {
    const { url, app } = await setup();
    const first = await ready(url);
    const back = await hello(url, { v: 1, resume: { session: first.welcome['session'], seq: 0 } });
    expect(back.welcome).toMatchObject({ resumed: true, clientId: first.welcome['clientId'] });
    await expectClose(first.client, 4409);
    expect(app.disconnects()).toEqual([]);
    request(back.client, 'value', { value: 'mine' }, 1);
    expect((await next(back.client, 'value')).data).toBe('mine');
  });

  it('§ Connection state recovery: the session token is rotated on every resume', async () => {
    const { url, server } = await setup();
    const first = await ready(url);
    const token = first.welcome['session'] as string;
    first.client.ws.terminate();
    await until(() => server.getClientCount() === 0, 'the drop');
    const back = await hello(url, { v: 1, resume: { session: token, seq: 0 } });
    expect(back.welcome['resumed']).toBe(true);
    expect(typeof back.welcome['session']).toBe('string');
    expect(back.welcome['session']).not.toBe(token);
    back.client.ws.terminate();
    await until(() => server.getClientCount() === 0, 'the second drop');
    const stale = await hello(url, { v: 1, resume: { session: token, seq: 0 } });
    expect(stale.welcome['resumed']).toBe(false);
  });

  it('§ Authentication: a resume under another identity is refused with reason "identity"; the handler sees the resume', async () => {
    const seen: unknown[] = [];
    const { url, server } = await setup({}, (s) => s.addAuthHandler(identities(seen)));
    const alice = await ready(url, { v: 1, auth: 'alice' });
    const aliceId = alice.welcome['clientId'];
    alice.client.ws.terminate();
    await until(() => server.getClientCount() === 0, 'the drop');
    const resume = { session: alice.welcome['session'], seq: 0 };
    const bob = await hello(url, { v: 1, auth: 'bob', resume });
    expect(bob.welcome).toMatchObject({ resumed: false, reason: 'identity' });
    expect(bob.welcome['clientId']).not.toBe(aliceId);
    expect(seen[seen.length - 1]).toEqual({ clientId: aliceId, identity: 'alice' });
  });

  it('§ Hello and welcome: a connection that closes while waiting for $hello runs neither OnConnect nor OnDisconnect', async () => {
    // Only open connections get handlers, so a connection that never opened gets neither.
    const { url, app, server } = await setup({ hello_wait: 60_000 });
    const client = await connectV1(url);
    await client.close();
    await until(() => server.getLoad().webSocketClients === 0, 'the close');
    await sleep(100);
    expect(app.log).toEqual([]);
  });

  it('§ Inbound limits: validation_failed counts as a protocol error (repeated, the connection is closed 1008)', async () => {
    const { url } = await setup({ ws_max_protocol_errors: 3 });
    const { client } = await connectV0(url);
    for (let i = 0; i < 10; i += 1) client.send('typed', { n: 'x' });
    await expectClose(client, 1008);
  });

  it('§ Inbound limits: a handler answered handler_timeout keeps its ws_max_pending slot until it settles', async () => {
    const { url, app } = await setup({ ws_max_pending: 1, ws_handler_timeout: 100 });
    const { client } = await ready(url);
    request(client, 'slow', {}, 1);
    await expectError(client, 'handler_timeout', { id: 1 });
    request(client, 'value', { value: 'x' }, 2);
    await expectError(client, 'busy', { id: 2, data: { event: 'value' } });
    app.slow.resolve('late');
    await sleep(20);
    request(client, 'value', { value: 'y' }, 3);
    expect(await next(client, 'value')).toEqual({ event: 'value', id: 3, data: 'y' });
  });

  it('§ Requests from the server: an $ack without data answers null', async () => {
    const { url, server } = await setup();
    const { client, welcome } = await ready(url);
    const answer = server.emitWithAck(welcome['clientId'] as string, 'confirm', {});
    const req = await next(client, 'confirm');
    sendJson(client, { event: '$ack', rid: req.rid });
    await expect(within(answer, 'the answer')).resolves.toBeNull();
  });

  it('§ Requests from the client: a version 0 client that sends an id gets answers with it', async () => {
    const { url } = await setup();
    const { client } = await connectV0(url);
    request(client, 'value', { value: 3 }, 1);
    expect(await next(client, 'value')).toEqual({ event: 'value', id: 1, data: 3 });
  });

  it('§ Authentication: $hello.auth with no auth handler is answered $welcome auth "unused"', async () => {
    const { url } = await setup();
    const { welcome } = await hello(url, { v: 1, auth: 'token' });
    expect(welcome['auth']).toBe('unused');
  });

  it('§ Built-in room events: a refused join_room with an id is answered by an error with that id and the room, never a success', async () => {
    const { url } = await setup({}, undefined, { canJoin: () => false });
    const { client } = await ready(url);
    request(client, 'join_room', { room: 'vault' }, 5);
    await expectError(client, 'forbidden', { id: 5, data: { room: 'vault', namespace: '/' } });
    expect(await leftover(client)).toEqual([]);
  });

  it('§ Built-in room events: invalid_payload answers the id and carries the room when it is known', async () => {
    const { url } = await setup();
    const { client } = await ready(url);
    request(client, 'join_room', { room: 'r', namespace: 'no-slash' }, 6);
    await expectError(client, 'invalid_payload', { id: 6, data: { room: 'r' } });
    request(client, 'leave_room', { room: 7 }, 7);
    await expectError(client, 'invalid_payload', { id: 7 });
    expect(await leftover(client)).toEqual([]);
  });

  it('§ Built-in room events: a room or namespace name with a lone surrogate is invalid_payload and changes nothing', async () => {
    const { url, server } = await setup();
    const { client } = await ready(url);
    request(client, 'join_room', { room: 'x\ud800' }, 1);
    await expectError(client, 'invalid_payload', { id: 1 });
    request(client, 'join_room', { room: 'r', namespace: '/x\udc00' }, 2);
    await expectError(client, 'invalid_payload', { id: 2 });
    expect(await server.countClients({ room: 'x\ud800' })).toBe(0);
    expect(await server.countClients({ namespace: '/x\udc00' })).toBe(0);
  });

  it('§ Built-in room events: a room name over 128 characters is invalid_payload', async () => {
    const { url } = await setup();
    const { client } = await ready(url);
    request(client, 'join_room', { room: 'r'.repeat(129) }, 1);
    await expectError(client, 'invalid_payload', { id: 1 });
  });

  it('§ Built-in room events: past max_rooms_per_client (default 128) a join is refused too_many_rooms', async () => {
    const { url, server } = await setup();
    const { client, welcome } = await ready(url);
    for (let n = 1; n <= 129; n += 1) request(client, 'join_room', { room: `room-${n}` }, n);
    for (let n = 1; n <= 128; n += 1) expect((await next(client, 'join_room')).id).toBe(n);
    await expectError(client, 'too_many_rooms', { id: 129, data: { room: 'room-129' } });
    expect(await server.countClients({ room: 'room-129' })).toBe(0);
    expect(server.isConnected(welcome['clientId'] as string)).toBe(true);
  });

  it('§ Authentication: a refused version 0 client waiting for $hello gets no broadcast and is not counted', async () => {
    const { url, server } = await setup({ hello_wait: 0 }, (s) => s.addAuthHandler(tokens));
    const client = await TestClient.connect(url);
    await sleep(50);
    server.broadcast('news', {});
    expect(await server.countClients()).toBe(0);
    expect(server.getClientCount()).toBe(0);
    expect(await leftover(client)).toEqual([]);
  });

  it('§ Authentication: a pkg.v1 client whose $hello is being checked gets no broadcast and is not counted', async () => {
    const gate = deferred<boolean>();
    const { url, server } = await setup({}, (s) => s.addAuthHandler(() => gate.promise));
    const client = await connectV1(url);
    sendJson(client, { event: '$hello', data: { v: 1, auth: 'x' } });
    await sleep(50);
    server.broadcast('news', {});
    expect(await server.countClients()).toBe(0);
    expect(server.getClientCount()).toBe(0);
    gate.resolve(true);
    expect((await next(client)).event).toBe('$welcome');
    expect((await next(client)).event).toBe('app.hello');
    expect(await leftover(client)).toEqual([]);
  });

  it('§ Authentication: no $hello within auth_timeout is answered auth_timeout, then close 4401 with a reason', async () => {
    // The expiry of auth_timeout closes with 4401 (4408 is no longer sent at all).
    const { url, app } = await setup({ auth_timeout: 150, hello_wait: 20 }, (s) =>
      s.addAuthHandler(tokens),
    );
    const client = await TestClient.connect(url);
    await expectError(client, 'auth_timeout');
    const closed = await expectClose(client, 4401);
    expect(closed.reason.length).toBeGreaterThan(0);
    expect(app.connects()).toEqual([]);
  });

  it('§ Authentication: auth_timeout bounds an auth handler that never settles: close 4401 with a reason, a held request answered once', async () => {
    const { url, app } = await setup({ auth_timeout: 200 }, (s) =>
      s.addAuthHandler(() => new Promise<boolean>(() => undefined)),
    );
    const client = await connectV1(url);
    sendJson(client, { event: '$hello', data: { v: 1, auth: 'x' } });
    request(client, 'echo', {}, 1);
    const closed = await expectClose(client, 4401);
    expect(closed.reason.length).toBeGreaterThan(0);
    exercised.errorCodes.add('auth_timeout');
    const answers = client.received.filter((m) => (m as Message).id === 1);
    expect(answers).toEqual([
      { event: 'error', id: 1, data: expect.objectContaining({ code: 'auth_timeout' }) },
    ]);
    expect(client.received.some((m) => m.event === '$welcome' || m.event === 'app.hello')).toBe(
      false,
    );
    expect(app.handled('echo')).toBe(0);
  });

  it('§ Authentication: after a refusal nothing held is dispatched or replayed, each held request is answered once', async () => {
    let calls = 0;
    const { url, base, app } = await setup(
      { hello_wait: 60_000, health_check_path: '/health' },
      (s) =>
        s.addAuthHandler(() => {
          calls += 1;
          return { status: 401, message: 'Invalid token' };
        }),
    );
    const client = await connectV1(url);
    request(client, 'echo', {}, 1);
    client.send('echo', {});
    request(client, 'echo', {}, 2);
    await expectClose(client, 4401);
    expect(calls).toBeLessThanOrEqual(2);
    expect(app.handled('echo')).toBe(0);
    for (const id of [1, 2]) {
      const answers = client.received.filter((m) => (m as Message).id === id);
      expect(answers).toHaveLength(1);
      expect(answers[0]).toMatchObject({ event: 'error', data: { code: 'unauthorized' } });
    }
    const health = await within(fetch(`${base}/health`), '/health', 1000);
    expect(health.status).toBe(200);
  });

  it('§ Authentication: a request in the same packet as the upgrade is refused once, not replayed', async () => {
    let calls = 0;
    const { port, app } = await setup({}, (s) =>
      s.addAuthHandler(() => {
        calls += 1;
        return { status: 401, message: 'Invalid token' };
      }),
    );
    const socket = netConnect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    const head =
      UPGRADE_HEAD +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n' +
      'Sec-WebSocket-Protocol: pkg.v1\r\n\r\n';
    const frame = maskedFrame(1, Buffer.from(JSON.stringify({ event: 'echo', data: {}, id: 1 })));
    socket.write(Buffer.concat([Buffer.from(head), frame]));
    const framesSoFar = (): ReturnType<typeof parseFrames> => {
      const bytes = Buffer.concat(chunks);
      const split = bytes.indexOf('\r\n\r\n');
      return split < 0 ? [] : parseFrames(bytes.subarray(split + 4));
    };
    let gone = false;
    void ended.then(() => (gone = true));
    await until(() => gone || framesSoFar().some((f) => f.opcode === 8), 'a close frame');
    socket.destroy();
    expect(Buffer.concat(chunks).toString('latin1')).toMatch(/^HTTP\/1\.1 101/);
    const frames = framesSoFar();
    const texts = frames.filter((f) => f.opcode === 1).map((f) => JSON.parse(String(f.payload)));
    expect(texts.filter((m: Message) => m.id === 1)).toEqual([
      { event: 'error', id: 1, data: expect.objectContaining({ code: 'unauthorized' }) },
    ]);
    const close = frames.find((f) => f.opcode === 8);
    expect(close?.payload.readUInt16BE(0)).toBe(4401);
    expect(calls).toBeLessThanOrEqual(2);
    expect(app.handled('echo')).toBe(0);
  });

  it('§ Authentication: held requests past max_pending_requests are answered busy with their id', async () => {
    const { url } = await setup({ max_pending_requests: 2 }, (s) =>
      s.addAuthHandler(() => new Promise<boolean>(() => undefined)),
    );
    const client = await connectV1(url);
    sendJson(client, { event: '$hello', data: { v: 1, auth: 'x' } });
    for (const id of [1, 2, 3, 4]) request(client, 'echo', {}, id);
    await expectError(client, 'busy', { id: 3 });
    await expectError(client, 'busy', { id: 4 });
  });

  it('§ Liveness: only the pong frame counts; messages and ping frames of the client do not keep it alive', async () => {
    const { url } = await setup({ heartbeat_interval: 200, heartbeat_timeout: 200 });
    const client = await TestClient.connect(url, { autoPong: false }, ['pkg.v1']);
    sendJson(client, { event: '$hello', data: { v: 1 } });
    expect((await next(client)).event).toBe('$welcome');
    const talker = setInterval(() => {
      client.send('nothing', {});
      client.ws.ping();
    }, 50);
    try {
      await expectClose(client, 1006);
    } finally {
      clearInterval(talker);
    }
  });

  it('§ Heartbeat: any message counts as something sent, not only $ping', async () => {
    const { url } = await setup();
    const { client } = await ready(url, { v: 1, heartbeat: { interval: 1000, timeout: 1000 } });
    const talker = setInterval(() => client.send('nothing', {}), 300);
    try {
      await sleep(3000);
      expect(client.ws.readyState).toBe(WebSocket.OPEN);
    } finally {
      clearInterval(talker);
    }
  });
});

// ====================================================== every listed code has a test

describe('§ Credentials that expire', () => {
  /** Accepts `<identity>:<ttl ms>` until then; `bad` is refused. */
  const expiring: AuthHandler = (ctx) => {
    if (ctx.auth === undefined || ctx.auth === 'bad') return false;
    const [identity, ttl] = ctx.auth.split(':');
    return { identity: identity!, ttl: Number(ttl) };
  };

  it('$welcome.expiresAt, $refresh answered with the next expiry; without one: token_expired, then 4419', async () => {
    const { url } = await setup({ auth_refresh_grace: 100 }, (s) => s.addAuthHandler(expiring));
    const { client, welcome } = await hello(url, { v: 1, auth: 'ann:300' });
    const expiresAt = welcome['expiresAt'] as number;
    expect(expiresAt).toBeGreaterThan(Date.now());
    request(client, '$refresh', { auth: 'ann:400' }, 'r1');
    const answer = await next(client, '$refresh');
    expect(answer.id).toBe('r1');
    const next1 = answer.data['expiresAt'] as number;
    expect(next1).toBeGreaterThan(expiresAt);
    await expectError(client, 'token_expired', { data: { expiresAt: next1 } });
    const closed = await expectClose(client, 4419);
    expect(closed.reason).toBe('credentials expired');
    expect(Date.now()).toBeGreaterThanOrEqual(next1 + 100);
  });

  it('server.revoke(identity): revoked, then 4403', async () => {
    const { url, server } = await setup({}, (s) => s.addAuthHandler(expiring));
    const { client } = await hello(url, { v: 1, auth: 'ann:60000' });
    expect(await server.revoke('ann')).toBe(1);
    await expectError(client, 'revoked');
    await expectClose(client, 4403);
  });
});

describe('§ Binary frames', () => {
  /** A binary frame of `@pkg/wire`'s layout, or one with a byte changed. */
  function frame(patch?: (bytes: Uint8Array) => void): Buffer {
    const bytes = encodeBinaryFrame({ event: 'echo', data: new Uint8Array([1, 2, 3]), id: 7 });
    patch?.(bytes);
    return Buffer.from(bytes);
  }

  it('a frame that is not one is invalid_binary_frame (with its id when read); another format version is unsupported_binary_version', async () => {
    const { url } = await setup({ ws_max_protocol_errors: 0, ws_error_reply_interval: 0 });
    const { client } = await ready(url);
    client.ws.send(frame((b) => (b[0] = 0x7b)));
    await expectError(client, 'invalid_binary_frame');
    client.ws.send(frame((b) => (b[1] = 2)));
    await expectError(client, 'unsupported_binary_version');
  });

  it('a version 0 connection gets binary_not_supported for any binary frame', async () => {
    const { url } = await setup();
    const { client } = await connectV0(url);
    client.ws.send(frame());
    await expectError(client, 'binary_not_supported');
  });
});

describe("§ Errors and close codes: the document's tables", () => {
  it('reads the code tables of a document (and ignores tables in code blocks)', () => {
    const sample = [
      '| `data.code` | when |',
      '| ----------- | ---- |',
      '| `a_code`    | x    |',
      '',
      '```md',
      '| `data.code` | when |',
      '| --- | --- |',
      '| `in_fence` | x |',
      '```',
      '| code        | meaning |',
      '| ----------- | ------- |',
      '| `4001`      | x       |',
      '| `4000-4999` | a range |',
      '',
      '| limit       | default |',
      '| ----------- | ------- |',
      '| `a_limit`   | 1       |',
    ].join('\n');
    const tables = documentTables(sample);
    expect(documentedErrorCodes(tables)).toEqual(['a_code']);
    expect(documentedCloseCodes(tables)).toEqual([4001]);
  });

  it('exercises every data.code listed in docs/protocol.md', () => {
    const listed = documentedErrorCodes();
    expect(listed.length).toBeGreaterThanOrEqual(15);
    if (exercised.errorCodes.size === 0) {
      throw new Error('No test ran before this check: run the whole file (without -t).');
    }
    expect(listed.filter((code) => !exercised.errorCodes.has(code))).toEqual([]);
  });

  it('exercises every close code listed in docs/protocol.md', () => {
    const listed = documentedCloseCodes();
    expect(listed.length).toBeGreaterThanOrEqual(8);
    if (exercised.closeCodes.size === 0) {
      throw new Error('No test ran before this check: run the whole file (without -t).');
    }
    expect(listed.filter((code) => !exercised.closeCodes.has(code))).toEqual([]);
  });
});
