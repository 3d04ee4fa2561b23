// Protocol version 1 on the real Server over real sockets: answers to client requests,
// requests from the server, $hello / $welcome, the message heartbeat, authentication in
// $hello, and connection state recovery. The clients here are plain `ws` sockets that send
// exactly the frames docs/protocol.md describes.
import { afterEach, describe, expect, it } from '@jest/globals';
import type { WsContext } from '@pkg/decorators';
import {
  OnConnect,
  OnDisconnect,
  RateLimit,
  RoomsController,
  SocketController,
  SocketOn,
  type Server,
  type ServerConfigOptions,
} from '../src/index';
import { TestClient, cleanup, deferred, startServer, type Envelope } from './helpers';

afterEach(cleanup);

interface Message extends Envelope {
  id?: unknown;
  rid?: string;
  seq?: number;
}

class AppController extends SocketController {
  readonly connects: string[] = [];
  readonly disconnects: string[] = [];
  readonly goneWaiters: Array<(id: string) => void> = [];
  slow = deferred<unknown>();

  @OnConnect()
  hello(clientId: string): void {
    this.connects.push(clientId);
    this.emit(clientId, 'app.hello', { clientId });
  }

  @OnDisconnect()
  bye(clientId: string): void {
    this.disconnects.push(clientId);
    for (const fn of this.goneWaiters.splice(0)) fn(clientId);
  }

  @SocketOn('add')
  add(_clientId: string, data: unknown): number {
    const { a, b } = data as { a: number; b: number };
    return a + b;
  }

  @SocketOn('later')
  async later(): Promise<{ ok: boolean }> {
    await Promise.resolve();
    return { ok: true };
  }

  @SocketOn('nothing')
  nothing(): void {}

  @SocketOn('fail')
  fail(): never {
    throw new Error('no way');
  }

  @SocketOn('slow')
  wait(): Promise<unknown> {
    return this.slow.promise;
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

  @SocketOn('whoami')
  whoami(clientId: string): unknown {
    return { clientId, data: this.getServer().getClientData(clientId) };
  }

  @SocketOn('remember')
  remember(clientId: string, data: unknown): void {
    this.getServer().setClientData(clientId, 'note', (data as { note: string }).note);
  }

  gone(): Promise<string> {
    return new Promise((resolve) => this.goneWaiters.push(resolve));
  }
}

async function setup(
  config: ServerConfigOptions = {},
  prepare?: (server: Server) => void,
): Promise<{ server: Server; app: AppController; url: string }> {
  const app = new AppController();
  const { server, wsUrl } = await startServer(
    [app, new RoomsController()],
    { shutdown_timeout: 200, ...config },
    prepare,
  );
  return { server, app, url: wsUrl };
}

/** Connects offering the subprotocol pkg.v1, as a version 1 client does. */
const connectV1 = (url: string): Promise<TestClient> => TestClient.connect(url, {}, ['pkg.v1']);

/** Connects as a version 1 client and says $hello; resolves with the client and $welcome. */
async function hello(
  url: string,
  data: Record<string, unknown> = { v: 1 },
): Promise<{ client: TestClient; welcome: Record<string, unknown> }> {
  const client = await connectV1(url);
  client.sendRaw(JSON.stringify({ event: '$hello', data }));
  const first = await client.next();
  expect(first.event).toBe('$welcome');
  return { client, welcome: first.data };
}

const request = (client: TestClient, event: string, data: unknown, id: unknown): void =>
  client.sendRaw(JSON.stringify({ event, data, id }));

describe('requests from the client (id)', () => {
  it('answers with the awaited handler result and the same id, null when it returns nothing', async () => {
    const { url } = await setup();
    const { client } = await hello(url);
    request(client, 'add', { a: 2, b: 3 }, 7);
    expect(await client.next('add')).toEqual({ event: 'add', id: 7, data: 5 });
    request(client, 'later', {}, 'q-1');
    expect(await client.next('later')).toEqual({ event: 'later', id: 'q-1', data: { ok: true } });
    request(client, 'nothing', {}, 0);
    expect(await client.next('nothing')).toEqual({ event: 'nothing', id: 0, data: null });
  });

  it('answers a refusal or a failure with an error event that carries the id', async () => {
    const { url } = await setup();
    const { client } = await hello(url);
    const errorFor = async (event: string, data: unknown, id: unknown): Promise<Message> => {
      request(client, event, data, id);
      return (await client.next('error')) as Message;
    };
    expect(await errorFor('fail', {}, 1)).toMatchObject({
      id: 1,
      data: { code: 'internal_error' },
    });
    expect(await errorFor('missing', {}, 2)).toMatchObject({
      id: 2,
      data: { code: 'unknown_event', event: 'missing' },
    });
    expect(await errorFor('guarded', {}, 3)).toMatchObject({
      id: 3,
      data: { code: 'forbidden' },
    });
    request(client, 'guarded', { pass: true }, 4);
    expect(await client.next('guarded')).toEqual({ event: 'guarded', id: 4, data: 'passed' });
    request(client, 'once', {}, 5);
    expect(await client.next('once')).toMatchObject({ id: 5, data: 'first' });
    expect(await errorFor('once', {}, 6)).toMatchObject({
      id: 6,
      data: { code: 'rate_limited', event: 'once' },
    });
    // A decode error with a readable id answers that id.
    expect(await errorFor('add', 'not an object', 'd')).toMatchObject({
      id: 'd',
      data: { code: 'invalid_data' },
    });
  });

  it('refuses a malformed id with invalid_id, without id and without dispatching', async () => {
    // Replies without an id are spaced per code (ws_error_reply_interval); every one is checked here.
    const { url, app } = await setup({ ws_error_reply_interval: 0 });
    const { client } = await hello(url);
    for (const id of ['', 'x'.repeat(65), -1, 1.5, true, null]) {
      request(client, 'remember', { note: 'x' }, id);
      const error = (await client.next('error')) as Message;
      expect(error.data['code']).toBe('invalid_id');
      expect(error).not.toHaveProperty('id');
    }
    request(client, 'whoami', {}, 9);
    const answer = (await client.next('whoami')) as Message;
    expect(answer.data).toMatchObject({ data: {} });
    expect(app.connects).toHaveLength(1);
  });

  it('never answers a message without id (version 0 behaviour)', async () => {
    const { url } = await setup({ hello_wait: 0 });
    const client = await TestClient.connect(url);
    expect((await client.next()).event).toBe('app.hello');
    client.send('add', { a: 1, b: 1 });
    client.send('fail', {});
    expect(await client.next('error')).toEqual({
      event: 'error',
      data: { code: 'internal_error', message: 'Handling "fail" failed on the server.' },
    });
    expect(client.pending()).toEqual([]);
  });

  it('refuses requests past max_pending_requests with too_many_pending and the id', async () => {
    const { url, app } = await setup({ max_pending_requests: 2 });
    const { client } = await hello(url);
    request(client, 'slow', {}, 1);
    request(client, 'slow', {}, 2);
    request(client, 'slow', {}, 3);
    expect(await client.next('error')).toMatchObject({
      id: 3,
      data: { code: 'too_many_pending' },
    });
    app.slow.resolve('done');
    const answers = [await client.next('slow'), await client.next('slow')] as Message[];
    expect(answers.map((a) => a.id).sort()).toEqual([1, 2]);
    request(client, 'add', { a: 1, b: 2 }, 4);
    expect(await client.next('add')).toMatchObject({ id: 4, data: 3 });
  });
});

describe('requests from the server (emitWithAck)', () => {
  it('resolves with $ack, rejects on $nack, ignores unknown and late rids, and times out naming event and client', async () => {
    const { url, server } = await setup();
    const { client, welcome } = await hello(url);
    const id = welcome['clientId'] as string;
    await client.next('app.hello');

    const answered = server.emitWithAck(id, 'confirm', { file: 'a.txt' });
    const req = (await client.next('confirm')) as Message;
    expect(req).toEqual({ event: 'confirm', data: { file: 'a.txt' }, rid: req.rid });
    expect(typeof req.rid).toBe('string');
    client.sendRaw(JSON.stringify({ event: '$ack', rid: 'unknown', data: 1 }));
    client.sendRaw(JSON.stringify({ event: '$ack', rid: req.rid, data: { ok: true } }));
    await expect(answered).resolves.toEqual({ ok: true });

    const refused = server.emitWithAck(id, 'explode', {});
    const r2 = (await client.next('explode')) as Message;
    client.sendRaw(
      JSON.stringify({
        event: '$nack',
        rid: r2.rid,
        data: { code: 'handler_error', message: 'kaput' },
      }),
    );
    await expect(refused).rejects.toMatchObject({
      code: 'PKG_ERR_CORE_ACK_REFUSED',
      remoteCode: 'handler_error',
    });

    const late = server.emitWithAck(id, 'slow.q', {}, { timeout: 20 });
    const r3 = (await client.next('slow.q')) as Message;
    const err = (await late.catch((e: unknown) => e)) as Error & { code: string };
    expect(err.code).toBe('PKG_ERR_CORE_ACK_TIMEOUT');
    expect(err.message).toContain('"slow.q"');
    expect(err.message).toContain(id);
    client.sendRaw(JSON.stringify({ event: '$ack', rid: r3.rid, data: 'late' }));
    // A late answer changes nothing: the next request still works.
    const again = server.emitWithAck(id, 'confirm', {});
    const r4 = (await client.next('confirm')) as Message;
    client.sendRaw(JSON.stringify({ event: '$ack', rid: r4.rid, data: null }));
    await expect(again).resolves.toBeNull();
  });

  it('refuses one request past max_pending_server_requests with a RangeError, sending nothing', async () => {
    const { url, server } = await setup({ max_pending_server_requests: 2 });
    const { client, welcome } = await hello(url);
    const id = welcome['clientId'] as string;
    await client.next('app.hello');
    const first = server.emitWithAck(id, 'q', { n: 1 });
    const second = server.emitWithAck(id, 'q', { n: 2 });
    const third = await server.emitWithAck(id, 'q', { n: 3 }).catch((e: unknown) => e);
    expect(third).toBeInstanceOf(RangeError);
    expect(third).toMatchObject({ code: 'PKG_ERR_CORE_TOO_MANY_PENDING' });
    const sent = [(await client.next('q')) as Message, (await client.next('q')) as Message];
    expect(sent.map((m) => m.data)).toEqual([{ n: 1 }, { n: 2 }]);
    for (const m of sent) client.sendRaw(JSON.stringify({ event: '$ack', rid: m.rid, data: 1 }));
    await expect(Promise.all([first, second])).resolves.toEqual([1, 1]);
    expect(client.pending()).toEqual([]);
  });

  it('rejects pending requests when the client disconnects', async () => {
    const { url, server } = await setup();
    const { client, welcome } = await hello(url);
    const id = welcome['clientId'] as string;
    const pending = server.emitWithAck(id, 'q', {}, { timeout: 60_000 });
    await client.next('q');
    client.ws.close(1000);
    await expect(pending).rejects.toMatchObject({ code: 'PKG_ERR_CORE_CLIENT_GONE' });
  });

  it('never sends rid to a client that did not say $hello', async () => {
    const { url, server } = await setup({ hello_wait: 0 });
    const client = await TestClient.connect(url);
    await client.next('app.hello');
    const [id] = server.getAllClients();
    await expect(server.emitWithAck(id!, 'q', {})).rejects.toMatchObject({
      code: 'PKG_ERR_CORE_PROTOCOL_UNSUPPORTED',
    });
    await expect(server.emitWithAck('nobody', 'q', {})).rejects.toMatchObject({
      code: 'PKG_ERR_CORE_CLIENT_GONE',
    });
    client.send('add', { a: 1, b: 2 });
    client.send('fail', {});
    await client.next('error');
    expect(client.pending()).toEqual([]);
  });
});

describe('$hello and $welcome', () => {
  it('welcomes before anything OnConnect sends, with the id, the session and the window', async () => {
    const { url } = await setup();
    const { client, welcome } = await hello(url);
    expect(welcome).toEqual({
      v: 1,
      clientId: expect.any(String),
      heartbeat: null,
      session: expect.any(String),
      recovery: { window: 120000 },
      resumed: false,
    });
    expect(await client.next()).toEqual({
      event: 'app.hello',
      data: { clientId: welcome['clientId'] },
      seq: expect.any(Number),
    });
  });

  it('refuses a second $hello with invalid_envelope and a malformed one with invalid_payload and 1008', async () => {
    const { url } = await setup();
    const { client } = await hello(url);
    client.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1 } }));
    expect((await client.next('error')).data['code']).toBe('invalid_envelope');

    const bad = await connectV1(url);
    bad.sendRaw(JSON.stringify({ event: '$hello', data: { v: 'one' } }));
    expect((await bad.next('error')).data['code']).toBe('invalid_payload');
    expect((await bad.closed).code).toBe(1008);
  });
});

describe('the handshake decides who waits for $hello', () => {
  // Longer than the test timeout (20 s): a server that made a client without pkg.v1 wait
  // for $hello would fail these tests instead of passing them late.
  const LONG_WAIT = 60_000;

  it('runs OnConnect at once for a connection without pkg.v1, however long hello_wait is', async () => {
    const { url, app } = await setup({ hello_wait: LONG_WAIT });
    const client = await TestClient.connect(url);
    expect(client.ws.protocol).toBe('');
    expect(await client.next()).toEqual({
      event: 'app.hello',
      data: { clientId: app.connects[0] },
    });
    client.send('add', { a: 1, b: 1 });
    expect(app.connects).toHaveLength(1);
  });

  it('selects pkg.v1 and welcomes such a client before OnConnect output, also with a long hello_wait', async () => {
    const { url, app } = await setup({ hello_wait: LONG_WAIT });
    const client = await connectV1(url);
    expect(client.ws.protocol).toBe('pkg.v1');
    expect(app.connects).toEqual([]);
    client.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1 } }));
    const welcome = await client.next();
    expect(welcome.event).toBe('$welcome');
    expect(await client.next()).toMatchObject({
      event: 'app.hello',
      data: { clientId: welcome.data['clientId'] },
    });
  });

  it('serves a pkg.v1 connection that never says $hello as version 0 after hello_wait', async () => {
    const { url, app } = await setup({ hello_wait: 30 });
    const client = await connectV1(url);
    expect(await client.next()).toEqual({
      event: 'app.hello',
      data: { clientId: app.connects[0] },
    });
  });

  it("negotiates an application's own subprotocol as before, and serves it as version 0", async () => {
    const { url, app } = await setup({ hello_wait: LONG_WAIT });
    const client = await TestClient.connect(url, {}, ['chat.v2']);
    expect(client.ws.protocol).toBe('chat.v2');
    expect((await client.next()).event).toBe('app.hello');
    const both = await TestClient.connect(url, {}, ['chat.v2', 'pkg.v1']);
    expect(both.ws.protocol).toBe('pkg.v1');
    expect(app.connects).toHaveLength(1);
  });

  it('still welcomes a $hello from a connection without pkg.v1, after what OnConnect sent', async () => {
    const { url, server } = await setup({ hello_wait: LONG_WAIT });
    const client = await TestClient.connect(url);
    const first = await client.next();
    expect(first.event).toBe('app.hello');
    client.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1 } }));
    const welcome = await client.next();
    expect(welcome).toMatchObject({
      event: '$welcome',
      data: { v: 1, clientId: first.data['clientId'], resumed: false },
    });
    // It said $hello, so it may now answer requests of the server.
    const answered = server.emitWithAck(first.data['clientId'] as string, 'confirm', {});
    const asked = (await client.next('confirm')) as Message;
    client.sendRaw(JSON.stringify({ event: '$ack', rid: asked.rid, data: 'yes' }));
    expect(await answered).toBe('yes');
  });
});

describe('heartbeat', () => {
  it('answers $ping with $pong and clamps the asked values to [1000, 300000]', async () => {
    const { url } = await setup();
    const { client, welcome } = await hello(url, {
      v: 1,
      heartbeat: { interval: 5, timeout: 10_000_000 },
    });
    expect(welcome['heartbeat']).toEqual({ interval: 1000, timeout: 300000 });
    client.sendRaw(JSON.stringify({ event: '$ping', data: {} }));
    expect(await client.next('$pong')).toEqual({ event: '$pong', data: {} });
  });
});

describe('authentication in $hello', () => {
  const tokens = (server: Server): void => {
    server.addAuthHandler((ctx) => {
      if (ctx.data['user'] !== undefined) return true;
      if (ctx.auth === 'good') return true;
      if (ctx.auth === 'banned') return { status: 403, message: 'Banned' };
      return { status: 401, message: 'Invalid token' };
    });
  };

  it('runs OnConnect after a valid token, and refuses others with error then 4401 / 4403', async () => {
    const { url, app } = await setup({}, tokens);
    const { client } = await hello(url, { v: 1, auth: 'good' });
    expect((await client.next()).event).toBe('app.hello');
    expect(app.connects).toHaveLength(1);

    const bad = await connectV1(url);
    bad.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1, auth: 'nope' } }));
    expect(await bad.next()).toEqual({
      event: 'error',
      data: { code: 'unauthorized', message: 'Invalid token', status: 401 },
    });
    expect(await bad.closed).toEqual({ code: 4401, reason: 'Invalid token' });

    const banned = await connectV1(url);
    banned.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1, auth: 'banned' } }));
    expect((await banned.next()).data).toEqual({
      code: 'forbidden',
      message: 'Banned',
      status: 403,
    });
    expect((await banned.closed).code).toBe(4403);

    const long = await connectV1(url);
    long.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1, auth: 'x'.repeat(8193) } }));
    expect((await long.closed).code).toBe(4401);
    expect(app.connects).toHaveLength(1);
  });

  it('closes with auth_timeout and 4401 when no $hello comes in time', async () => {
    const { url, app } = await setup({ auth_timeout: 100, hello_wait: 20 }, tokens);
    const client = await TestClient.connect(url);
    expect((await client.next()).data['code']).toBe('auth_timeout');
    expect(await client.closed).toEqual({ code: 4401, reason: 'auth timeout' });
    expect(app.connects).toEqual([]);
  });

  it('keeps ?key= handshake middleware working for a client that never says $hello', async () => {
    const { url } = await setup({ hello_wait: 0 }, (server) => {
      server.addHandshakeMiddleware((ctx) => {
        if (ctx.query.get('key') !== 'k') return { status: 401, message: 'Invalid token' };
        ctx.data['user'] = 'ada';
        return undefined;
      });
      tokens(server);
    });
    const client = await TestClient.connect(`${url}/?key=k`);
    expect((await client.next()).event).toBe('app.hello');
    client.send('add', { a: 1, b: 1 });
    client.sendRaw(JSON.stringify({ event: 'whoami', data: {}, id: 1 }));
    expect((await client.next('whoami')).data).toMatchObject({ data: { user: 'ada' } });
  });
});

describe('connection state recovery', () => {
  it('resumes a dropped client: same id, rooms and data, missed messages in order, no OnConnect again', async () => {
    const { url, server, app } = await setup();
    const first = await hello(url);
    const id = first.welcome['clientId'] as string;
    const token = first.welcome['session'] as string;
    await first.client.next('app.hello');
    request(first.client, 'join_room', { room: 'lobby' }, 1);
    const joined = (await first.client.next('room_joined')) as Message;
    request(first.client, 'remember', { note: 'kept' }, 2);
    await first.client.next('remember');

    const plain = await TestClient.connect(url);
    plain.send('join_room', { room: 'lobby' });
    await plain.next('room_joined');

    server.broadcast('news', { n: 1 }, '/', 'lobby');
    const live = (await first.client.next('news')) as Message;
    expect(live.seq).toBeGreaterThan(joined.seq ?? 0);
    // Serialised once: the version 0 client gets the broadcast without seq.
    expect(await plain.next('news')).toEqual({ event: 'news', data: { n: 1 } });

    first.client.ws.terminate();
    await first.client.closed;
    await new Promise<void>((resolve) => {
      const poll = (): void =>
        server.getClientCount() === 1 ? resolve() : void setTimeout(poll, 5);
      poll();
    });
    server.broadcast('news', { n: 2 }, '/', 'lobby');
    server.send(id, 'direct', { n: 3 });
    server.broadcast('news', { n: 4 }, '/', 'lobby');

    const back = await hello(url, { v: 1, resume: { session: token, seq: live.seq } });
    expect(back.welcome).toMatchObject({ clientId: id, resumed: true });
    // The token is rotated on every resume.
    expect(back.welcome['session']).not.toBe(token);
    const replay = [await back.client.next(), await back.client.next(), await back.client.next()];
    expect(replay.map((m) => [m.event, m.data])).toEqual([
      ['news', { n: 2 }],
      ['direct', { n: 3 }],
      ['news', { n: 4 }],
    ]);
    const seqs = (replay as Message[]).map((m) => m.seq!);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    request(back.client, 'whoami', {}, 3);
    expect((await back.client.next('whoami')).data).toEqual({
      clientId: id,
      data: { note: 'kept' },
    });
    expect(server.getNamespaceManager().getClientsInRoom('lobby').sort()).toEqual(
      [id, server.getAllClients().find((c) => c !== id)!].sort(),
    );
    expect(app.connects).toHaveLength(2);
    expect(app.disconnects).toEqual([]);
  });

  it('runs OnDisconnect when the window ends, and then answers a resume with "expired"', async () => {
    const { url, app } = await setup({ recovery_window: 30 });
    const first = await hello(url);
    const gone = app.gone();
    first.client.ws.terminate();
    expect(await gone).toBe(first.welcome['clientId']);
    const back = await hello(url, {
      v: 1,
      resume: { session: first.welcome['session'], seq: 0 },
    });
    expect(back.welcome).toMatchObject({ resumed: false, reason: 'expired' });
    expect(back.welcome['clientId']).not.toBe(first.welcome['clientId']);
  });

  it('ends the session at once on a client close 1000 or disconnectClient; unknown tokens get "unknown"', async () => {
    const { url, app, server } = await setup();
    const a = await hello(url);
    const goneA = app.gone();
    a.client.ws.close(1000);
    expect(await goneA).toBe(a.welcome['clientId']);

    const b = await hello(url);
    await b.client.next('app.hello');
    const goneB = app.gone();
    server.disconnectClient(b.welcome['clientId'] as string);
    expect(await goneB).toBe(b.welcome['clientId']);

    const c = await hello(url, { v: 1, resume: { session: 'never-issued', seq: 3 } });
    expect(c.welcome).toMatchObject({ resumed: false, reason: 'unknown' });
  });

  it('turns off with recovery_window 0: no session, no seq', async () => {
    const { url, server } = await setup({ recovery_window: 0 });
    const { client, welcome } = await hello(url);
    expect(welcome).not.toHaveProperty('session');
    await client.next('app.hello');
    server.broadcast('news', { n: 1 });
    expect(await client.next('news')).toEqual({ event: 'news', data: { n: 1 } });
  });
});
