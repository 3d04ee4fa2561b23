// Credentials that expire, with the real @pkg/core server: the client refreshes before each
// expiry with what its `auth` function returns and stays connected; a failed refresh is
// retried and reported; past the grace the server closes 4419 and the client reconnects
// with a new token; `$revoked` takes a room away for good.
import { afterEach, describe, expect, it } from '@jest/globals';
import { NullLogger, RoomsController, Server, ServerConfig } from '@pkg/core';
import { cleanup, makeClient, next, Recorder } from './helpers';

const servers: Server[] = [];

afterEach(async () => {
  await cleanup();
  for (const server of servers.splice(0)) await server.close();
});

/** Tokens `<identity>:<ttl ms>`; `bad` is refused. */
async function start(grace: number): Promise<{ server: Server; url: string }> {
  const server = new Server(
    new ServerConfig({
      host: '127.0.0.1',
      port: 0,
      heartbeat_interval: 0,
      auth_refresh_grace: grace,
    }),
    undefined,
    undefined,
    undefined,
    new NullLogger(),
  );
  server.registerController(new RoomsController());
  server.addAuthHandler((ctx) => {
    if (ctx.auth === undefined || ctx.auth === 'bad') return false;
    const [identity, ttl] = ctx.auth.split(':');
    return { identity: identity!, ttl: Number(ttl) };
  });
  await server.run();
  servers.push(server);
  return { server, url: `ws://127.0.0.1:${server.getPort()}` };
}

describe('credentials that expire', () => {
  it('refreshes before each expiry with a new token and stays connected', async () => {
    const { url, server } = await start(0);
    let calls = 0;
    const client = makeClient(url, {
      auth: () => {
        calls += 1;
        return 'ann:600';
      },
      random: () => 0,
    });
    const refreshed = new Recorder<{ expiresAt: number | null }>();
    client.on('refreshed', refreshed.push);
    const disconnects = new Recorder<unknown>();
    client.on('disconnect', disconnects.push);
    await client.connect();
    await refreshed.waitFor(3);
    expect(calls).toBeGreaterThanOrEqual(4);
    const times = refreshed.items.map((r) => r.expiresAt!);
    expect(times[1]!).toBeGreaterThan(times[0]!);
    expect(disconnects.items).toEqual([]);
    expect(server.getClientCount()).toBe(1);
  });

  it('a failed refresh is reported and tried again; a token that keeps failing ends in 4419 and a reconnect with a new one', async () => {
    const { url } = await start(300);
    let n = 0;
    const client = makeClient(url, {
      auth: () => {
        n += 1;
        // First connection: ann:800; its refreshes are refused; the reconnect gets ann:60000.
        if (n === 1) return 'ann:800';
        if (n <= 3) return 'bad';
        return 'ann:60000';
      },
      random: () => 0,
    });
    const failures = new Recorder<{ retryIn: number | null }>();
    client.on('refresh_error', failures.push);
    await client.connect();
    const lost = await next<{ code: number; willReconnect: boolean }>(client, 'disconnect');
    expect(lost).toMatchObject({ code: 4419, willReconnect: true });
    expect(failures.items.length).toBeGreaterThanOrEqual(1);
    await next(client, 'connect');
    expect(n).toBeGreaterThanOrEqual(4);
  });

  it('$revoked takes the room away: reported, and the room forgotten (so never rejoined)', async () => {
    const { url, server } = await start(0);
    const client = makeClient(url, { auth: () => 'ann:60000' });
    await client.connect();
    await client.joinRoom('r');
    const revoked = next<{ room: string; reason: string }>(client, 'revoked');
    expect(await server.revoke('ann', 'r')).toBe(1);
    expect(await revoked).toEqual({ room: 'r', namespace: '/', reason: 'revoked' });
    expect(client.rooms()).toEqual([]);
  });
});
