// The client against the real @pkg/core Server: routing to SocketOn handlers, OnConnect
// messages, the built-in rooms events, `?key=` authentication in the handshake, and
// reconnection across a server restart with the rooms joined again. test/conformance.test.ts
// covers the features of protocol version 1 one by one.
import { afterEach, describe, expect, it } from '@jest/globals';
import { OnConnect, RoomsController, SocketController, SocketOn } from '@pkg/core';
import { ClientError, type ConnectInfo, type DisconnectInfo } from '../src/index';
import { Recorder, cleanup, makeClient, next, startCoreServer } from './helpers';

afterEach(cleanup);

class ChatController extends SocketController {
  @OnConnect()
  greet(clientId: string): void {
    this.emit(clientId, 'hello.app', { clientId });
  }

  @SocketOn('echo')
  echo(clientId: string, data: unknown): void {
    this.emit(clientId, 'echo.reply', data as Record<string, unknown>);
  }

  @SocketOn('chat.say')
  say(clientId: string, data: unknown): void {
    const { room, text } = data as { room: string; text: string };
    this.broadcast('chat.said', { from: clientId, text }, '/', room);
  }
}

const controllers = (): SocketController[] => [
  new ChatController(),
  new RoomsController({ canJoin: (_id, room) => room !== 'secret' }),
];

interface Said {
  from: string;
  text: string;
}

describe('the client with the real server', () => {
  it('speaks version 1, gets $welcome before what OnConnect sends, and reaches SocketOn handlers', async () => {
    const { url } = await startCoreServer(controllers);
    const client = makeClient(url);
    const greeted = next<{ clientId: string }>(client, 'hello.app');
    const connected = next<ConnectInfo>(client, 'connect');
    await client.connect();
    const info = await connected;
    expect(info).toMatchObject({ protocol: 1, resumed: false });
    expect(client.protocol).toBe(1);
    expect(client.connected).toBe(true);
    // OnConnect ran after $welcome, for the id the welcome gave.
    expect((await greeted).clientId).toBe(info.clientId);

    const reply = next(client, 'echo.reply');
    client.emit('echo', { n: 1 });
    expect(await reply).toEqual({ n: 1 });
  });

  it('calls a once listener once and stops calling a listener after off', async () => {
    const { url } = await startCoreServer(controllers);
    const client = makeClient(url);
    await client.connect();
    const always = new Recorder<unknown>();
    const onlyOnce = new Recorder<unknown>();
    const removed = new Recorder<unknown>();
    client.on('echo.reply', always.push);
    client.once('echo.reply', onlyOnce.push);
    client.on('echo.reply', removed.push);
    client.off('echo.reply', removed.push);
    client.emit('echo', { n: 1 });
    client.emit('echo', { n: 2 });
    expect(await always.waitFor(2)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(onlyOnce.items).toEqual([{ n: 1 }]);
    expect(removed.items).toEqual([]);
  });

  it('answers emitWithAck with the handler result (null for a handler that returns nothing)', async () => {
    const { url } = await startCoreServer(controllers);
    const client = makeClient(url);
    await client.connect();
    const reply = next(client, 'echo.reply');
    await expect(client.emitWithAck('echo', { n: 1 })).resolves.toBeNull();
    expect(await reply).toEqual({ n: 1 });
  });

  it('sends a request made while connecting once welcomed, and gets its answer', async () => {
    const { url } = await startCoreServer(controllers);
    const client = makeClient(url);
    const waiting = client.emitWithAck('echo', {});
    await client.connect();
    await expect(waiting).resolves.toBeNull();
  });

  it('rejects joinRoom at once when the server has no RoomsController', async () => {
    const { url } = await startCoreServer(() => [new ChatController()]);
    const client = makeClient(url);
    await client.connect();
    await expect(client.joinRoom('lobby')).rejects.toMatchObject({
      code: 'PKG_ERR_CLIENT_REMOTE',
      remoteCode: 'unknown_event',
    });
    expect(client.rooms()).toEqual([]);
  });

  it('joins and leaves rooms through join_room / leave_room and reports a refused room', async () => {
    const { url } = await startCoreServer(controllers);
    const alice = makeClient(url);
    const bob = makeClient(url);
    await Promise.all([alice.connect(), bob.connect()]);
    await Promise.all([alice.joinRoom('lobby'), bob.joinRoom('lobby')]);
    expect(alice.rooms()).toEqual([{ room: 'lobby', namespace: '/' }]);

    const said = next<Said>(bob, 'chat.said');
    alice.emit('chat.say', { room: 'lobby', text: 'hi' });
    expect((await said).text).toBe('hi');

    await alice.leaveRoom('lobby');
    expect(alice.rooms()).toEqual([]);

    const refused = await alice.joinRoom('secret').catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ClientError);
    expect(refused).toMatchObject({ code: 'PKG_ERR_CLIENT_REMOTE', remoteCode: 'forbidden' });
    expect(alice.rooms()).toEqual([]);
  });

  it('reconnects after a server restart, is back in its rooms without user action and keeps chatting', async () => {
    const srv = await startCoreServer(controllers);
    const alice = makeClient(srv.url);
    const bob = makeClient(srv.url);
    await Promise.all([alice.connect(), bob.connect()]);
    await Promise.all([alice.joinRoom('lobby'), bob.joinRoom('lobby')]);

    const dropped = [
      next<DisconnectInfo>(alice, 'disconnect'),
      next<DisconnectInfo>(bob, 'disconnect'),
    ];
    const reconnected = [next(alice, 'reconnect'), next(bob, 'reconnect')];
    const rejoined = [next(alice, 'room_joined'), next(bob, 'room_joined')];
    await srv.restart();
    for (const info of await Promise.all(dropped)) {
      expect(info).toMatchObject({ code: 1001, willReconnect: true });
    }
    await Promise.all(reconnected);
    expect(await Promise.all(rejoined)).toEqual([
      { room: 'lobby', namespace: '/' },
      { room: 'lobby', namespace: '/' },
    ]);
    expect(bob.rooms()).toEqual([{ room: 'lobby', namespace: '/' }]);
    expect(srv.server.getNamespaceManager().getClientsInRoom('lobby')).toHaveLength(2);

    const said = next<Said>(bob, 'chat.said');
    alice.emit('chat.say', { room: 'lobby', text: 'still here' });
    expect((await said).text).toBe('still here');
  });

  it('buffers emit while disconnected and sends the buffer in order after reconnecting', async () => {
    const srv = await startCoreServer(controllers);
    const client = makeClient(srv.url);
    await client.connect();
    const replies = new Recorder<unknown>();
    client.on('echo.reply', replies.push);
    const dropped = next(client, 'disconnect');
    await srv.restart();
    await dropped;
    expect(client.connected).toBe(false);
    client.emit('echo', { n: 1 });
    client.emit('echo', { n: 2 });
    expect(await replies.waitFor(2)).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('sends ?key= from the query option on every connection', async () => {
    const keys: string[] = [];
    const srv = await startCoreServer(controllers, (ctx) => {
      const key = ctx.query.get('key') ?? '';
      keys.push(key);
      return key.startsWith('good') ? undefined : { status: 401, message: 'Invalid token' };
    });
    let n = 0;
    const client = makeClient(srv.url, { query: () => ({ key: `good-${++n}` }) });
    await client.connect();
    const reconnected = next(client, 'reconnect');
    await srv.restart();
    await reconnected;
    expect(keys.slice(0, 1)).toEqual(['good-1']);
    expect(keys[keys.length - 1]).toBe(`good-${n}`);
    expect(n).toBeGreaterThanOrEqual(2);
  });

  it('reports a refused ?key= token with the status and reason, and does not retry', async () => {
    let handshakes = 0;
    const { url } = await startCoreServer(controllers, () => {
      handshakes += 1;
      return { status: 401, message: 'Invalid token' };
    });
    const client = makeClient(url, { query: { key: 'bad' } });
    const retries = new Recorder<unknown>();
    const errors = new Recorder<ClientError>();
    client.on('reconnecting', retries.push);
    client.on('connect_error', errors.push);
    const err = await client.connect().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClientError);
    expect(err).toMatchObject({
      code: 'PKG_ERR_CLIENT_UNAUTHORIZED',
      status: 401,
      reason: 'Invalid token',
    });
    expect(errors.items).toEqual([err]);
    expect(retries.items).toEqual([]);
    expect(client.status).toBe('idle');
    expect(handshakes).toBe(1);
  });

  it('waits the Retry-After of a refused upgrade (503 at a connection cap) before it reconnects', async () => {
    const { url } = await startCoreServer(controllers, undefined, { max_connections_per_ip: 1 });
    const first = makeClient(url, { protocol: 'basic' });
    await first.connect();
    // reconnectionDelay 10 (makeClient): the backoff would wait at most 10 ms.
    const client = makeClient(url, { random: () => 0.5 });
    const errors = new Recorder<ClientError>();
    const stops = new Recorder<unknown>();
    client.on('connect_error', errors.push);
    client.on('reconnect_stopped', stops.push);
    const retry = next<{ attempt: number; delay: number }>(client, 'reconnecting');
    void client.connect().catch(() => undefined);
    // Retry-After: 5 from the server, plus a jitter of half of reconnectionDelay.
    expect(await retry).toEqual({ attempt: 1, delay: 5005 });
    expect(errors.items[0]).toMatchObject({
      code: 'PKG_ERR_CLIENT_HANDSHAKE_REFUSED',
      status: 503,
    });
    expect(stops.items).toEqual([]);
    client.disconnect();
  });

  it('gives up with reconnect_failed after reconnectionAttempts', async () => {
    const srv = await startCoreServer(controllers);
    await srv.stop();
    const client = makeClient(srv.url, { reconnectionAttempts: 2 });
    const retries = new Recorder<{ attempt: number; delay: number }>();
    const errors = new Recorder<ClientError>();
    client.on('reconnecting', retries.push);
    client.on('connect_error', errors.push);
    const failed = next<{ attempts: number }>(client, 'reconnect_failed');
    const err = await client.connect().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'PKG_ERR_CLIENT_CONNECTION_FAILED' });
    expect(await failed).toEqual({ attempts: 2 });
    expect(retries.items.map((r) => r.attempt)).toEqual([1, 2]);
    for (const r of retries.items) expect(r.delay).toBeLessThanOrEqual(50);
    expect(errors.items.map((e) => e.code)).toEqual([
      'PKG_ERR_CLIENT_CONNECTION_FAILED',
      'PKG_ERR_CLIENT_CONNECTION_FAILED',
      'PKG_ERR_CLIENT_CONNECTION_FAILED',
    ]);
    expect(client.status).toBe('idle');
  });
});

describe('emit while disconnected', () => {
  it('throws NOT_CONNECTED with whenDisconnected "reject", and a RangeError past maxBuffered', () => {
    const rejecting = makeClient('ws://127.0.0.1:9', { whenDisconnected: 'reject' });
    expect(() => rejecting.emit('chat.say', {})).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_CLIENT_NOT_CONNECTED' }),
    );
    const buffering = makeClient('ws://127.0.0.1:9', { maxBuffered: 1 });
    buffering.emit('chat.say', {});
    let caught: unknown;
    try {
      buffering.emit('chat.say', {});
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(RangeError);
    expect(caught).toMatchObject({ code: 'PKG_ERR_CLIENT_BUFFER_FULL' });
  });

  it('rejects emitWithAck with ackWhenDisconnected "reject"', async () => {
    const client = makeClient('ws://127.0.0.1:9', { ackWhenDisconnected: 'reject' });
    await expect(client.emitWithAck('x', {})).rejects.toMatchObject({
      code: 'PKG_ERR_CLIENT_NOT_CONNECTED',
    });
  });
});
