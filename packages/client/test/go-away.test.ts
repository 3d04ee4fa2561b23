// The reconnect rule over real sockets: a client sent away by the server (disconnectClient's
// close 1000, or 1008 / 4409 from a server) stays away and says why, and a server that closes
// every connection at once sees the delays grow instead of a client back every few ms.
import { afterEach, describe, expect, it } from '@jest/globals';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import type { DisconnectInfo, StopInfo } from '../src/index';
import { cleanup, makeClient, next, startCoreServer } from './helpers';

const servers: WebSocketServer[] = [];
afterEach(async () => {
  await cleanup();
  for (const wss of servers.splice(0)) {
    for (const c of wss.clients) c.terminate();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  }
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A bare `ws` server on 127.0.0.1 that closes every connection at once with `code`. */
async function closingServer(code: number): Promise<{ url: string; connections: () => number }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  let connections = 0;
  wss.on('connection', (socket) => {
    connections += 1;
    socket.close(code, 'closed at once');
  });
  servers.push(wss);
  const { port } = wss.address() as AddressInfo;
  return { url: `ws://127.0.0.1:${port}`, connections: () => connections };
}

describe('a client the server sends away', () => {
  it('kicked by disconnectClient (close 1000) does not come back, and says why', async () => {
    let upgrades = 0;
    const { url, server } = await startCoreServer(
      () => [],
      () => {
        upgrades += 1;
      },
    );
    const client = makeClient(url);
    await client.connect();
    const dropped = next<DisconnectInfo>(client, 'disconnect');
    const stopped = next<StopInfo>(client, 'reconnect_stopped');
    server.disconnectClient(client.id!);
    expect(await dropped).toEqual({
      code: 1000,
      reason: expect.any(String),
      willReconnect: false,
      cause: 'server_disconnect',
    });
    expect(await stopped).toMatchObject({ code: 1000, cause: 'server_disconnect' });
    // Before, the client was back within its first backoff step (here at most 50 ms), again
    // and again; now nothing comes for many times that.
    await sleep(800);
    expect(upgrades).toBe(1);
    expect(client.status).toBe('idle');
    expect(server.getClientCount()).toBe(0);
  });

  it.each([
    [1008, 'policy_violation'],
    [4409, 'session_taken_over'],
  ])('closed with %i at once: one connection, connect() rejects, cause %s', async (code, cause) => {
    const server = await closingServer(code);
    const client = makeClient(server.url, { protocol: 'basic' });
    const stopped = next<StopInfo>(client, 'reconnect_stopped');
    const outcome = await client.connect().then(
      () => 'connected',
      (err: unknown) => err,
    );
    // The close may land before or after the client counted the connection as established.
    if (outcome !== 'connected') expect(outcome).toMatchObject({ closeCode: code });
    expect(await stopped).toMatchObject({ code, cause });
    await sleep(500);
    expect(server.connections()).toBe(1);
    expect(client.status).toBe('idle');
  });
});

describe('a server that closes every connection at once (1013)', () => {
  it('sees each reconnect wait longer than the last, not a tight loop', async () => {
    const server = await closingServer(1013);
    const client = makeClient(server.url, {
      protocol: 'basic',
      reconnectionDelay: 50,
      reconnectionDelayMax: 10_000,
      random: () => 0.999,
    });
    const delays: number[] = [];
    client.on('reconnecting', ({ delay }) => delays.push(delay));
    void client.connect().catch(() => undefined);
    await sleep(1500);
    // 49, 99, 199, 399, 799 ms: about five connections in 1.5 s. Before, the backoff went
    // back to its first step on every connection: a new connection every ~50 ms, 25+ of them.
    expect(server.connections()).toBeGreaterThanOrEqual(3);
    expect(server.connections()).toBeLessThanOrEqual(7);
    expect(delays.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < delays.length; i++) expect(delays[i]!).toBeGreaterThan(delays[i - 1]!);
  });
});

describe('a server that never answers $hello', () => {
  it('is closed by the client with 4000 "no welcome" after helloTimeout, and tried again', async () => {
    const wss = new WebSocketServer({
      host: '127.0.0.1',
      port: 0,
      handleProtocols: (offered) => (offered.has('pkg.v1') ? 'pkg.v1' : false),
    });
    servers.push(wss);
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    const closes: Array<{ code: number; reason: string }> = [];
    const hellos: string[] = [];
    let closed: () => void = () => undefined;
    const firstClose = new Promise<void>((resolve) => (closed = resolve));
    wss.on('connection', (socket) => {
      socket.on('message', (raw) => hellos.push(String(raw)));
      socket.on('close', (code, reason) => {
        closes.push({ code, reason: reason.toString() });
        closed();
      });
    });
    const { port } = wss.address() as AddressInfo;
    const client = makeClient(`ws://127.0.0.1:${port}`, { helloTimeout: 50 });
    const retry = next(client, 'reconnecting');
    void client.connect().catch(() => undefined);
    await firstClose;
    await retry;
    expect(closes[0]).toEqual({ code: 4000, reason: 'no welcome' });
    expect(JSON.parse(hellos[0]!)).toMatchObject({ event: '$hello', data: { v: 1 } });
    client.disconnect();
  });
});
