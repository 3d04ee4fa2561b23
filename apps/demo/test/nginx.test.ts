// nginx (Debian's package) in front of two demo instances that share Redis, with the config
// of apps/demo/deploy/nginx.conf: sticky sessions, WebSocket upgrade headers, TRUST_PROXY set
// to nginx's address. Clients connect from 127.0.0.2 so that their address differs from
// nginx's (127.0.0.1).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import WebSocket from 'ws';
import { Client, type RecoveredInfo, type WebSocketConstructor } from '@pkg/client';
import { NullLogger } from '@pkg/core';
import { startDemo, type DemoApp } from '../src/app';
import { nginxSuiteAvailable, startNginx, waitUntil, type RunningNginx } from './helpers/nginx';
import type { ClientEvents, ServerEvents } from '../src/events';

const CLIENT_ADDRESS = '127.0.0.2';

const { nginx, ok } = nginxSuiteAvailable('nginx end-to-end test');
const describeE2e = ok ? describe : describe.skip;

/** An HTTP request from CLIENT_ADDRESS. */
function httpFrom(
  url: string,
  method = 'GET',
  body?: unknown,
  extra: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      url,
      {
        method,
        localAddress: CLIENT_ADDRESS,
        headers: payload
          ? {
              ...extra,
              'content-type': 'application/json',
              'content-length': String(Buffer.byteLength(payload)),
            }
          : extra,
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            json: JSON.parse(text) as Record<string, unknown>,
          }),
        );
      },
    );
    req.once('error', reject);
    req.end(payload);
  });
}

/** The `ws` WebSocket, connecting from CLIENT_ADDRESS, for @pkg/client. */
class FromClientAddress extends WebSocket {
  constructor(url: string, protocols?: string | string[]) {
    super(url, protocols, { localAddress: CLIENT_ADDRESS });
  }
}

/** One demo instance of the pair (port 0: a free one; a restart passes its old port). */
function startInstance(port = 0): Promise<DemoApp> {
  return startDemo(
    {
      host: '127.0.0.1',
      port,
      trustProxy: ['127.0.0.1'],
      redisUrl: 'redis://127.0.0.1:6379',
      rateLimitScale: 100, // the restart test posts more than 10 broadcasts a minute
    },
    { logger: new NullLogger() },
  );
}

describeE2e('nginx in front of two instances sharing Redis', () => {
  let dir: string;
  let running: RunningNginx | undefined;
  let proxyPort: number;
  const apps: DemoApp[] = [];
  const sockets: WebSocket[] = [];
  const clients: Array<Client<ClientEvents, ServerEvents>> = [];

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) apps.push(await startInstance());
    running = await startNginx(nginx!, [apps[0]!.server.getPort(), apps[1]!.server.getPort()]);
    proxyPort = running.port;
    dir = running.dir;
  });

  afterAll(async () => {
    for (const c of clients) c.disconnect();
    for (const s of sockets) s.terminate();
    await running?.stop();
    for (const app of apps) await app.close();
  });

  it('keeps a client on one instance, delivers a broadcast posted to the other, and sees the client address', async () => {
    const received: string[] = [];
    for (let i = 0; i < 3; i++) {
      const ws = new WebSocket(`ws://127.0.0.1:${proxyPort}/`, { localAddress: CLIENT_ADDRESS });
      sockets.push(ws);
      ws.on('message', (raw) => {
        const envelope = JSON.parse(String(raw)) as { event: string; data: { message?: string } };
        if (envelope.event === 'api.message') received.push(`${i}:${envelope.data.message}`);
      });
      await new Promise((resolve, reject) => {
        ws.once('open', resolve);
        ws.once('error', reject);
      });
    }
    // Sticky: every connection from one address is on the same instance.
    await waitUntil(
      () => apps.some((app) => app.server.getClientCount() === 3),
      'all three clients on one instance',
    );
    const holder = apps.findIndex((app) => app.server.getClientCount() === 3);
    const other = apps[1 - holder]!;
    expect(other.server.getClientCount()).toBe(0);
    await Promise.all(
      apps.map((app) => (app.server.getAdapter() as { synced?: () => Promise<void> }).synced?.()),
    );

    const posted = await httpFrom(
      `${other.url()}/api/broadcast`,
      'POST',
      { message: 'via the other instance' },
      { authorization: 'Bearer admin-token' },
    );
    expect(posted.status).toBe(200);
    await waitUntil(() => received.length === 3, 'the broadcast through nginx');
    expect(received.sort()).toEqual([
      '0:via the other instance',
      '1:via the other instance',
      '2:via the other instance',
    ]);

    const whoami = await httpFrom(`http://127.0.0.1:${proxyPort}/api/whoami`);
    expect(whoami.status).toBe(200);
    expect(whoami.json['ip']).toBe(CLIENT_ADDRESS);
    // A forged X-Forwarded-For counts for nothing: through nginx the address nginx saw
    // wins, and straight to an instance the peer (not a trusted proxy) is the client.
    const forged = { 'x-forwarded-for': '203.0.113.9' };
    const viaProxy = await httpFrom(
      `http://127.0.0.1:${proxyPort}/api/whoami`,
      'GET',
      undefined,
      forged,
    );
    expect(viaProxy.json['ip']).toBe(CLIENT_ADDRESS);
    const direct = await httpFrom(`${other.url()}/api/whoami`, 'GET', undefined, forged);
    expect(direct.json['ip']).toBe(CLIENT_ADDRESS);
    const health = await httpFrom(`http://127.0.0.1:${proxyPort}/health`);
    expect(health.json).toMatchObject({ status: 'healthy', adapter: 'connected' });
  });

  it('writes no query string, so no ?key= token, to its access log', async () => {
    const me = await httpFrom(`http://127.0.0.1:${proxyPort}/api/me?key=bob-token`);
    expect(me.status).toBe(200);
    let log = '';
    await waitUntil(() => {
      log = readFileSync(path.join(dir, 'access.log'), 'utf8');
      return log.includes('/api/me');
    }, 'the access log line');
    expect(log).toMatch(/"GET \/api\/me HTTP\/1\.1" 200/);
    expect(log).not.toContain('bob-token');
    expect(log).not.toContain('key=');
  });

  it('restarts the instance that holds the clients: every client comes back in its room with nothing missed', async () => {
    // A room of this run only: the Redis stream of a room outlives a test run.
    const room = `restart-${Date.now().toString(36)}`;
    const count = 4;
    for (const s of sockets.splice(0)) s.terminate(); // the first test's clients
    await waitUntil(
      () => apps.every((app) => app.server.getClientCount() === 0),
      'the earlier clients to be gone',
    );
    const received: string[][] = [];
    const recoveries: RecoveredInfo[][] = [];
    for (let i = 0; i < count; i++) {
      const client = new Client<ClientEvents, ServerEvents>(`ws://127.0.0.1:${proxyPort}/`, {
        WebSocket: FromClientAddress as unknown as WebSocketConstructor,
        network: null,
        // The first retry waits 300 ms, so the broadcasts right after the restart are missed.
        reconnectionDelay: 300,
        reconnectionDelayMax: 300,
        random: () => 0.999,
      });
      clients.push(client);
      received.push([]);
      recoveries.push([]);
      client.on('api.message', (data) => void received[i]!.push(data.message));
      client.on('recovered', (info) => void recoveries[i]!.push(info));
      // As the page does: a fresh session enters the room again.
      client.on('connect', (info) => {
        if (!info.resumed) client.emit('room.join', { room });
      });
      const joined = new Promise((resolve) => client.once('room.joined', resolve));
      await client.connect();
      await joined;
    }
    await waitUntil(
      () => apps.some((app) => app.server.getClientCount() === count),
      'every client on one instance',
    );
    const holder = apps.findIndex((app) => app.server.getClientCount() === count);
    const other = apps[1 - holder]!;
    await Promise.all(
      apps.map((app) => (app.server.getAdapter() as { synced?: () => Promise<void> }).synced?.()),
    );
    const post = async (message: string): Promise<void> => {
      const res = await httpFrom(
        `${other.url()}/api/broadcast`,
        'POST',
        { message, room },
        { authorization: 'Bearer admin-token' },
      );
      expect(res.status).toBe(200);
    };
    const sent: string[] = [];
    const send = async (from: number, to: number): Promise<void> => {
      for (let n = from; n <= to; n++) {
        sent.push(`m${n}`);
        await post(`m${n}`);
      }
    };
    await send(1, 3);
    await waitUntil(() => received.every((r) => r.length === 3), 'the first broadcasts');

    // Restart the holder: stop it (its clients are cut), broadcast meanwhile through the
    // other instance, start it again on the same port.
    const port = apps[holder]!.server.getPort();
    const lost = clients.map((c) => new Promise((resolve) => c.once('disconnect', resolve)));
    await apps[holder]!.close();
    await Promise.all(lost);
    await send(4, 6);
    apps[holder] = await startInstance(port);
    await waitUntil(
      () => recoveries.every((r) => r.length > 0),
      'every client to recover its room',
    );
    await send(7, 9);
    await waitUntil(
      () => received.every((r) => r.length >= sent.length),
      'every broadcast on every client',
    );
    for (let i = 0; i < count; i++) {
      expect(received[i]).toEqual(sent);
      expect(recoveries[i]).toEqual([
        { room, namespace: '/', recovered: true, replayed: expect.any(Number) },
      ]);
    }
    // The broadcasts sent while the clients were away were replayed from Redis.
    const replayed = recoveries.map((r) => r[0]!.replayed);
    expect(replayed.every((n) => n >= 3)).toBe(true);
    expect(apps[0]!.server.getClientCount() + apps[1]!.server.getClientCount()).toBe(count);
  }, 60_000);
});
