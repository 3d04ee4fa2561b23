// Protocol conformance of the client and the real @pkg/core Server for protocol version 1:
// request ids and answers, requests from the server, the message heartbeat, authentication
// in `$hello`, connection state recovery. The partner is the real Server behind a TCP relay
// (test/v1-server.ts) that can go silent, for tests of a peer that does not answer.
import { afterEach, describe, expect, it } from '@jest/globals';
import { ClientError, type ConnectInfo, type DisconnectInfo } from '../src/index';
import { Recorder, cleanup, makeClient, next } from './helpers';
import { V1Server, type V1ServerOptions } from './v1-server';

const servers: V1Server[] = [];
afterEach(async () => {
  await cleanup();
  for (const s of servers.splice(0)) await s.close();
});

async function start(options: V1ServerOptions = {}): Promise<V1Server> {
  const server = await V1Server.start(options);
  servers.push(server);
  return server;
}

describe('hello and welcome', () => {
  it('says $hello with version, heartbeat and no credentials in the URL, and takes the id from $welcome', async () => {
    const server = await start({ tokens: ['t0k3n'] });
    const client = makeClient(server.url, { auth: 't0k3n' });
    const info = next<ConnectInfo>(client, 'connect');
    await client.connect();
    const id = server.server.getAllClients()[0];
    expect(typeof id).toBe('string');
    expect(await info).toEqual({ protocol: 1, clientId: id, resumed: false });
    expect(client.id).toBe(id);
    expect(server.hellos).toEqual([
      { v: 1, auth: 't0k3n', heartbeat: { interval: 25000, timeout: 20000 } },
    ]);
    expect(server.urls).toEqual(['/']);
  });

  it('sends nothing but {event, data} with protocol "basic"', async () => {
    const server = await start({ handlers: { note: () => undefined } });
    const client = makeClient(server.url, { protocol: 'basic' });
    await client.connect();
    expect(client.protocol).toBe(0);
    client.emit('note', { a: 1 });
    await new Promise<void>((resolve) => {
      const poll = (): void => (server.received.length ? resolve() : void setImmediate(poll));
      poll();
    });
    expect(server.received).toEqual([{ event: 'note', data: { a: 1 } }]);
  });
});

describe('no welcome', () => {
  it('gives up on a connection that answers $hello with nothing, reports it and tries again', async () => {
    const server = await start();
    server.silent = true;
    const client = makeClient(server.url, { helloTimeout: 30 });
    const failed = next<ClientError>(client, 'connect_error');
    const retry = next(client, 'reconnecting');
    void client.connect().catch(() => undefined);
    expect(await failed).toMatchObject({ code: 'PKG_ERR_CLIENT_HELLO_TIMEOUT' });
    await retry;
    server.silent = false;
    await client.connect();
    expect(client.protocol).toBe(1);
  });
});

describe('requests from the client (id)', () => {
  it('resolves emitWithAck with the handler result, and rejects with the error event that carries the id', async () => {
    const server = await start({
      handlers: {
        add: (data) => ({ sum: (data as { a: number; b: number }).a + (data as { b: number }).b }),
        fail: () => {
          throw new Error('no way');
        },
        nothing: () => undefined,
      },
    });
    const client = makeClient(server.url);
    await client.connect();
    await expect(client.emitWithAck('add', { a: 2, b: 3 })).resolves.toEqual({ sum: 5 });
    await expect(client.emitWithAck('nothing', {})).resolves.toBeNull();
    const err = await client.emitWithAck('fail', {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClientError);
    expect(err).toMatchObject({
      code: 'PKG_ERR_CLIENT_REMOTE',
      remoteCode: 'internal_error',
      event: 'fail',
    });
    await expect(client.emitWithAck('missing', {})).rejects.toMatchObject({
      remoteCode: 'unknown_event',
    });
    const ids = server.received.filter((m) => m.id !== undefined).map((m) => m.id);
    expect(ids).toEqual([1, 2, 3, 4]);
  });

  it('rejects with ACK_TIMEOUT when no answer comes, and with TOO_MANY_PENDING past maxPendingAcks', async () => {
    const server = await start({ handlers: { slow: () => new Promise(() => undefined) } });
    const client = makeClient(server.url, { maxPendingAcks: 1 });
    await client.connect();
    const first = client.emitWithAck('slow', {}, { timeout: 30 });
    const second = await client.emitWithAck('slow', {}).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(RangeError);
    expect(second).toMatchObject({ code: 'PKG_ERR_CLIENT_TOO_MANY_PENDING' });
    await expect(first).rejects.toMatchObject({
      code: 'PKG_ERR_CLIENT_ACK_TIMEOUT',
      event: 'slow',
    });
  });

  it('waits for the connection with emitWithAck while disconnected, then sends it', async () => {
    const server = await start({ handlers: { add: (d) => (d as { a: number }).a + 1 } });
    const client = makeClient(server.url);
    const answer = client.emitWithAck('add', { a: 41 });
    await client.connect();
    await expect(answer).resolves.toBe(42);
  });

  it('rejects requests in flight with DISCONNECTED when the connection drops', async () => {
    const server = await start({ handlers: { slow: () => new Promise(() => undefined) } });
    const client = makeClient(server.url);
    await client.connect();
    const pending = client.emitWithAck('slow', {});
    server.dropTcp(client.id!);
    await expect(pending).rejects.toMatchObject({ code: 'PKG_ERR_CLIENT_DISCONNECTED' });
  });
});

describe('requests from the server (rid)', () => {
  it('answers with the first listener result in $ack, and $nack for a throw or a missing handler', async () => {
    const server = await start();
    const client = makeClient(server.url);
    client.on('confirm', async (data) => ({ ok: (data as { file: string }).file === 'a.txt' }));
    client.on('explode', () => {
      throw new Error('kaput');
    });
    await client.connect();
    const server_ = server.server;
    await expect(server_.emitWithAck(client.id!, 'confirm', { file: 'a.txt' })).resolves.toEqual({
      ok: true,
    });
    const refused = await server_.emitWithAck(client.id!, 'explode', {}).catch((e: unknown) => e);
    expect(refused).toMatchObject({
      code: 'PKG_ERR_CORE_ACK_REFUSED',
      remoteCode: 'handler_error',
    });
    expect((refused as Error).message).toContain('kaput');
    await expect(server_.emitWithAck(client.id!, 'nobody', {})).rejects.toMatchObject({
      code: 'PKG_ERR_CORE_ACK_REFUSED',
      remoteCode: 'unknown_event',
    });
  });
});

describe('heartbeat', () => {
  it('pings at the granted interval and stays connected while the server answers', async () => {
    const server = await start();
    // The server clamps both values to at least 1000 ms and the client uses what it granted.
    const client = makeClient(server.url, { heartbeat: { interval: 20, timeout: 1000 } });
    const drops = new Recorder<DisconnectInfo>();
    client.on('disconnect', drops.push);
    await client.connect();
    await new Promise<void>((resolve) => {
      const poll = (): void =>
        server.received.filter((m) => m.event === '$ping').length >= 3
          ? resolve()
          : void setTimeout(poll, 5);
      poll();
    });
    expect(drops.items).toEqual([]);
    expect(client.connected).toBe(true);
  });

  it('closes a silent connection with 4000 and reconnects', async () => {
    const server = await start();
    const client = makeClient(server.url, { heartbeat: { interval: 20, timeout: 20 } });
    await client.connect();
    const dropped = next<DisconnectInfo>(client, 'disconnect');
    const back = next(client, 'reconnect');
    server.silent = true;
    expect(await dropped).toEqual({ code: 4000, reason: 'heartbeat timeout', willReconnect: true });
    server.silent = false;
    await back;
    expect(client.connected).toBe(true);
  });
});

describe('authentication in $hello', () => {
  it('reports 4401 with the reason, stops, and sends a fresh token on the next connection', async () => {
    const server = await start({ tokens: ['good-2'] });
    let n = 0;
    const client = makeClient(server.url, { auth: async () => `good-${++n}` });
    const retries = new Recorder<unknown>();
    client.on('reconnecting', retries.push);
    const err = await client.connect().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClientError);
    expect(err).toMatchObject({
      code: 'PKG_ERR_CLIENT_UNAUTHORIZED',
      status: 401,
      closeCode: 4401,
      reason: 'Invalid token',
      remoteCode: 'unauthorized',
    });
    expect(retries.items).toEqual([]);
    expect(server.connections).toBe(1);

    await client.connect();
    expect(server.hellos.map((h) => h['auth'])).toEqual(['good-1', 'good-2']);
  });
});

describe('connection state recovery', () => {
  it('resumes after a dropped TCP connection: same id and rooms, both missed broadcasts in order', async () => {
    const server = await start();
    const client = makeClient(server.url);
    const heard = new Recorder<unknown>();
    client.on('news', heard.push);
    await client.connect();
    await client.joinRoom('lobby');
    const id = client.id!;
    server.broadcast('lobby', 'news', { n: 1 });
    await heard.waitFor(1);

    const resumed = next<ConnectInfo>(client, 'connect');
    server.dropTcp(id);
    server.broadcast('lobby', 'news', { n: 2 });
    server.broadcast('lobby', 'news', { n: 3 });
    expect(await resumed).toEqual({ protocol: 1, clientId: id, resumed: true });
    expect(await heard.waitFor(3)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(client.rooms()).toEqual([{ room: 'lobby', namespace: '/' }]);
    expect(server.hellos[1]!['resume']).toMatchObject({ seq: 2 });
    expect(server.received.filter((m) => m.event === 'join_room')).toHaveLength(1);
  });

  it('starts fresh past the window, says so, and joins its rooms again', async () => {
    const server = await start({ config: { recovery_window: 50 } });
    const network = new EventTarget();
    const client = makeClient(server.url, { network });
    await client.connect();
    await client.joinRoom('lobby');
    const first = client.id!;
    const dropped = next<DisconnectInfo>(client, 'disconnect');
    const expired = server.nextGone();
    network.dispatchEvent(new Event('offline'));
    await dropped;
    // The window passes while the client is away: its session ends, OnDisconnect runs.
    expect(await expired).toBe(first);
    const fresh = next<ConnectInfo>(client, 'connect');
    const rejoined = next(client, 'room_joined');
    network.dispatchEvent(new Event('online'));
    const info = await fresh;
    expect(info).toMatchObject({ protocol: 1, resumed: false, freshReason: 'expired' });
    expect(info.clientId).not.toBe(first);
    await rejoined;
    expect(server.roomMembers('lobby')).toEqual([client.id]);
    expect(client.rooms()).toEqual([{ room: 'lobby', namespace: '/' }]);
  });

  it('starts fresh with reason "overflow" when the missed messages no longer fit the buffer', async () => {
    const server = await start({ config: { recovery_buffer: 2 } });
    const network = new EventTarget();
    const client = makeClient(server.url, { network });
    await client.connect();
    await client.joinRoom('lobby');
    const first = client.id!;
    const dropped = next<DisconnectInfo>(client, 'disconnect');
    network.dispatchEvent(new Event('offline'));
    await dropped;
    for (let n = 1; n <= 3; n++) server.broadcast('lobby', 'news', { n });
    const gone = server.nextGone();
    const fresh = next<ConnectInfo>(client, 'connect');
    const rejoined = next(client, 'room_joined');
    network.dispatchEvent(new Event('online'));
    expect(await fresh).toMatchObject({ resumed: false, freshReason: 'overflow' });
    // The refused session ends: OnDisconnect runs for the old id.
    expect(await gone).toBe(first);
    await rejoined;
    expect(client.rooms()).toEqual([{ room: 'lobby', namespace: '/' }]);
    expect(server.roomMembers('lobby')).toEqual([client.id]);
  });

  it('ends the session with disconnect(): the next connect does not resume', async () => {
    const server = await start();
    const client = makeClient(server.url);
    await client.connect();
    client.disconnect();
    await client.connect();
    expect(server.hellos[1]).not.toHaveProperty('resume');
  });
});

describe('online / offline', () => {
  it('drops the connection when offline, waits, and reconnects as soon as it is online', async () => {
    const server = await start();
    const network = new EventTarget();
    const client = makeClient(server.url, {
      network,
      reconnectionDelay: 60_000,
      reconnectionDelayMax: 60_000,
    });
    const retries = new Recorder<unknown>();
    client.on('reconnecting', retries.push);
    await client.connect();
    const dropped = next<DisconnectInfo>(client, 'disconnect');
    network.dispatchEvent(new Event('offline'));
    expect(await dropped).toMatchObject({ code: 4000, reason: 'network offline' });
    expect(client.status).toBe('waiting');
    expect(retries.items).toEqual([]);
    const back = next<ConnectInfo>(client, 'connect');
    network.dispatchEvent(new Event('online'));
    expect(await back).toMatchObject({ resumed: true });
    expect(retries.items).toEqual([]);
  });
});
