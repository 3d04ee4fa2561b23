// What every request and upgrade passes before a handler runs, over real sockets and the
// in-process paths: allowed_hosts with a trusted proxy's forwarded host, one Host header per
// upgrade, per-address limits grouping IPv6 by ipv6_subnet, inject()/connect() admitted like
// the listener's connections, and run() connecting the adapter before it listens.
import { afterEach, describe, expect, it } from '@jest/globals';
import { LocalAdapter, NullLogger, Server, ServerConfig } from '../src/index';
import { cleanup, expectRefusedUpgrade, RawConnection, startServer, TestClient } from './helpers';

afterEach(cleanup);

async function rawRequest(port: number, text: string): Promise<string> {
  const conn = await RawConnection.open(port);
  conn.write(text);
  await conn.ended;
  return conn.data;
}

function get(path: string, headers: Record<string, string>): string {
  const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
  return `GET ${path} HTTP/1.1\r\n${lines.join('')}Connection: close\r\n\r\n`;
}

function hostRoute(server: Server): void {
  server.route('GET', '/host', (request) => ({ host: request.getHost() }));
}

async function until(check: () => boolean, ms = 2_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('allowed_hosts and a trusted proxy', () => {
  const config = { allowed_hosts: ['app.example.com'], trust_proxy: ['loopback'] };

  it('refuses with 403 a forwarded host (X-Forwarded-Host, Forwarded: host=) not in the list', async () => {
    const ts = await startServer([], config, hostRoute);
    const viaX = await rawRequest(
      ts.port,
      get('/host', { Host: 'app.example.com', 'X-Forwarded-Host': 'evil.test' }),
    );
    expect(viaX).toMatch(/^HTTP\/1\.1 403/);
    expect(viaX).toContain('PKG_ERR_CORE_HOST_NOT_ALLOWED');
    const viaForwarded = await rawRequest(
      ts.port,
      get('/host', { Host: 'app.example.com', Forwarded: 'for=192.0.2.1;host=evil.test' }),
    );
    expect(viaForwarded).toMatch(/^HTTP\/1\.1 403/);
    const upgrade = await expectRefusedUpgrade(ts.wsUrl, {
      headers: { Host: 'app.example.com', 'X-Forwarded-Host': 'evil.test' },
    });
    expect(upgrade.status).toBe(403);
  });

  it('serves a forwarded host in the list, which getHost() then reports', async () => {
    const ts = await startServer([], config, hostRoute);
    const proxyHost = await rawRequest(
      ts.port,
      get('/host', { Host: '127.0.0.1', 'X-Forwarded-Host': 'app.example.com:8443' }),
    );
    // The proxy's own Host is not in the list: the direct Host is checked first.
    expect(proxyHost).toMatch(/^HTTP\/1\.1 403/);
    const both = await rawRequest(
      ts.port,
      get('/host', { Host: 'app.example.com', 'X-Forwarded-Host': 'app.example.com:8443' }),
    );
    expect(both).toMatch(/^HTTP\/1\.1 200/);
    expect(both).toContain('{"host":"app.example.com"}');
  });

  it('ignores forwarded hosts from a peer that is not trusted (they are not reported either)', async () => {
    const ts = await startServer([], { allowed_hosts: ['app.example.com'] }, hostRoute);
    const answer = await rawRequest(
      ts.port,
      get('/host', { Host: 'app.example.com', 'X-Forwarded-Host': 'evil.test' }),
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(answer).toContain('{"host":"app.example.com"}');
  });
});

describe('Host header of an upgrade', () => {
  it('answers two Host headers with 400 as HTTP does, also when the first is allowed', async () => {
    for (const config of [{}, { allowed_hosts: ['127.0.0.1'] }]) {
      const ts = await startServer([], config);
      let connected = 0;
      ts.server.onConnect(() => {
        connected += 1;
      });
      const upgrade =
        'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.test\r\nUpgrade: websocket\r\n' +
        'Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n' +
        'Sec-WebSocket-Version: 13\r\n\r\n';
      const conn = await RawConnection.open(ts.port);
      conn.write(upgrade);
      const answer = await conn.waitFor((d) => d.includes('\r\n\r\n'));
      expect(answer).toMatch(/^HTTP\/1\.1 400/);
      expect(connected).toBe(0);
      const http = await rawRequest(
        ts.port,
        'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.test\r\nConnection: close\r\n\r\n',
      );
      expect(http).toMatch(/^HTTP\/1\.1 400/);
    }
  });
});

describe('per-address limits group IPv6 by ipv6_subnet', () => {
  const forwardedFrom = (address: string) => ({ headers: { 'X-Forwarded-For': address } });

  it('counts every address of one /64 as one client for max_connections_per_ip', async () => {
    const ts = await startServer([], { max_connections_per_ip: 1, trust_proxy: ['loopback'] });
    await TestClient.connect(ts.wsUrl, forwardedFrom('2001:db8:1:2::1'));
    const sameNet = await expectRefusedUpgrade(ts.wsUrl, forwardedFrom('2001:db8:1:2::beef'));
    expect(sameNet.status).toBe(503);
    expect(sameNet.body).toContain('PKG_ERR_CORE_TOO_MANY_CONNECTIONS_PER_IP');
    // Another /64, and IPv4 addresses one by one, still get their own slot.
    await TestClient.connect(ts.wsUrl, forwardedFrom('2001:db8:1:3::1'));
    await TestClient.connect(ts.wsUrl, forwardedFrom('198.51.100.1'));
    await TestClient.connect(ts.wsUrl, forwardedFrom('198.51.100.2'));
    expect(ts.server.getLoad().addresses).toBe(4);
  });

  it('groups by the configured prefix: 128 counts each address, 48 a whole /48', async () => {
    const single = await startServer([], {
      max_connections_per_ip: 1,
      trust_proxy: ['loopback'],
      ipv6_subnet: 128,
    });
    await TestClient.connect(single.wsUrl, forwardedFrom('2001:db8:1:2::1'));
    await TestClient.connect(single.wsUrl, forwardedFrom('2001:db8:1:2::2'));
    const wide = await startServer([], {
      max_connections_per_ip: 1,
      trust_proxy: ['loopback'],
      ipv6_subnet: 48,
    });
    await TestClient.connect(wide.wsUrl, forwardedFrom('2001:db8:1:2::1'));
    const refused = await expectRefusedUpgrade(wide.wsUrl, forwardedFrom('2001:db8:1:ff::1'));
    expect(refused.status).toBe(503);
  });

  it('shares one budget per /64 for the address rate-limit key and HTTP route limits', async () => {
    const ts = await startServer([], { trust_proxy: ['loopback'] }, (server) => {
      server.on(
        'ping',
        function (this: { emit(id: string, event: string, data: object): void }, clientId) {
          this.emit(clientId, 'pong', {});
        },
        { rateLimit: { maxCount: 1, timeWindow: 60 } },
      );
      server.route('GET', '/limited', () => ({ ok: true }), {
        rateLimit: { maxCount: 1, timeWindow: 60 },
      });
    });
    const a = await TestClient.connect(ts.wsUrl, forwardedFrom('2001:db8:9:9::1'));
    const b = await TestClient.connect(ts.wsUrl, forwardedFrom('2001:db8:9:9::2'));
    const c = await TestClient.connect(ts.wsUrl, forwardedFrom('2001:db8:9:a::1'));
    a.send('ping');
    await a.next('pong');
    b.send('ping');
    expect((await Promise.race([b.next('error'), b.next('pong')])).data['code']).toBe(
      'rate_limited',
    );
    c.send('ping');
    expect((await Promise.race([c.next('error'), c.next('pong')])).event).toBe('pong');
    const from = (address: string) =>
      rawRequest(ts.port, get('/limited', { Host: 'x', 'X-Forwarded-For': address }));
    expect(await from('2001:db8:9:9::3')).toMatch(/^HTTP\/1\.1 200/);
    expect(await from('2001:db8:9:9::4')).toMatch(/^HTTP\/1\.1 429/);
    expect(await from('2001:db8:9:a::1')).toMatch(/^HTTP\/1\.1 200/);
  });

  it('refuses an ipv6_subnet outside 1..128 with a TypeError naming the key', () => {
    for (const value of [0, 129, 64.5, '64']) {
      expect(() => new ServerConfig({ ipv6_subnet: value as number })).toThrow(/ipv6_subnet/);
    }
    expect(new ServerConfig({ ipv6_subnet: 56 }).get('ipv6_subnet')).toBe(56);
    expect(new ServerConfig({}).get('ipv6_subnet')).toBe(64);
  });
});

describe('server.connect() is admitted like a listener connection', () => {
  it('takes a per-address slot, so a cap of 1 refuses it next to a real client', async () => {
    const ts = await startServer([], { max_connections_per_ip: 1 });
    await TestClient.connect(ts.wsUrl);
    await expect(ts.server.connect()).rejects.toThrow(/refused with 503/);
    expect(ts.server.getClientCount()).toBe(1);
  });

  it('never gives back a slot it did not take: with skipAdmission, a second real client is still refused', async () => {
    const ts = await startServer([], { max_connections_per_ip: 1 });
    const first = await TestClient.connect(ts.wsUrl);
    const inMemory = await ts.server.connect({ skipAdmission: true });
    expect(ts.server.getClientCount()).toBe(2);
    inMemory.close();
    await until(() => ts.server.getClientCount() === 1);
    const second = await expectRefusedUpgrade(ts.wsUrl);
    expect(second.status).toBe(503);
    await first.close();
    await until(() => ts.server.getLoad().addresses === 0);
    await TestClient.connect(ts.wsUrl);
  });

  it('gives its slot back when it closes', async () => {
    const ts = await startServer([], { max_connections_per_ip: 1 });
    const inMemory = await ts.server.connect();
    expect((await expectRefusedUpgrade(ts.wsUrl)).status).toBe(503);
    inMemory.close();
    await until(() => ts.server.getLoad().addresses === 0);
    await TestClient.connect(ts.wsUrl);
  });

  it('checks allowed_hosts and max_connections; skipAdmission skips them', async () => {
    const ts = await startServer([], { allowed_hosts: ['app.example.com'] });
    await expect(ts.server.connect()).rejects.toThrow(/refused with 403/);
    const allowed = await ts.server.connect({ headers: { Host: 'app.example.com' } });
    allowed.close();
    const skipped = await ts.server.connect({ skipAdmission: true });
    skipped.close();

    const capped = await startServer([], { max_connections: 1, connection_reserve: 0 });
    const held = await RawConnection.open(capped.port);
    await until(() => capped.server.getLoad().connections === 1);
    await expect(capped.server.connect()).rejects.toThrow(/refused with 503/);
    held.close();
  });

  it('is refused with 503 while the server drains, as an upgrade is (refusals.ts answer)', async () => {
    const ts = await startServer();
    ts.server.drain();
    await expect(ts.server.connect()).rejects.toThrow(/refused with 503/);
    const upgrade = await expectRefusedUpgrade(ts.wsUrl);
    expect(upgrade.status).toBe(503);
    expect(upgrade.headers['retry-after']).toBe('5');
    expect(upgrade.body).toContain('PKG_ERR_CORE_DRAINING');
  });
});

describe('server.inject() is admitted like a listener request', () => {
  it('checks allowed_hosts and a trusted forwarded host; skipAdmission skips them', async () => {
    const ts = await startServer(
      [],
      { allowed_hosts: ['app.example.com'], trust_proxy: ['loopback'] },
      hostRoute,
    );
    expect((await ts.server.inject({ url: '/host' })).statusCode).toBe(403);
    const ok = await ts.server.inject({ url: '/host', headers: { host: 'app.example.com' } });
    expect(ok.statusCode).toBe(200);
    const forwarded = await ts.server.inject({
      url: '/host',
      headers: { host: 'app.example.com', 'x-forwarded-host': 'evil.test' },
    });
    expect(forwarded.statusCode).toBe(403);
    expect(forwarded.json()).toEqual({
      error: 'Forbidden',
      code: 'PKG_ERR_CORE_HOST_NOT_ALLOWED',
      message: 'This host name is not served here.',
    });
    const skipped = await ts.server.inject({ url: '/host', skipAdmission: true });
    expect(skipped.statusCode).toBe(200);
  });

  it('counts against max_connections while it is answered', async () => {
    const ts = await startServer([], { max_connections: 1, connection_reserve: 0 }, hostRoute);
    expect((await ts.server.inject({ url: '/host' })).statusCode).toBe(200);
    expect(ts.server.getLoad().connections).toBe(0);
    const held = await RawConnection.open(ts.port);
    await until(() => ts.server.getLoad().connections === 1);
    const refused = await ts.server.inject({ url: '/host' });
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    held.close();
    await until(() => ts.server.getLoad().connections === 0);
    expect((await ts.server.inject({ url: '/host' })).statusCode).toBe(200);
  });

  it('is answered 503 once the server stops accepting', async () => {
    const ts = await startServer([], {}, hostRoute);
    await ts.server.close();
    const after = await ts.server.inject({ url: '/host' });
    expect(after.statusCode).toBe(503);
    expect(after.json()).toEqual({ error: 'Service Unavailable', code: 'PKG_ERR_CORE_DRAINING' });
  });
});

describe('run() connects the adapter before it listens', () => {
  class SlowAdapter extends LocalAdapter {
    connected = false;
    async connect(): Promise<void> {
      await new Promise((resolve) => setTimeout(resolve, 150));
      this.connected = true;
    }
  }

  it('awaits connect(), then listens, and logs the outcome', async () => {
    const adapter = new SlowAdapter();
    const ts = await startServer([], {}, (server) => {
      server.setAdapter(adapter);
    });
    expect(adapter.connected).toBe(true);
    const line = ts.logger.lines.find((l) => l.message === 'The adapter is connected');
    expect(line?.level).toBe('info');
  });

  it('listens after backend_connect_timeout when connect() does not settle, with a warning', async () => {
    const adapter = new LocalAdapter() as LocalAdapter & { connect(): Promise<void> };
    adapter.connect = () => new Promise<void>(() => undefined);
    const started = Date.now();
    const ts = await startServer([], { backend_connect_timeout: 200 }, (server) => {
      server.setAdapter(adapter);
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(180);
    const warning = ts.logger.lines.find(
      (l) => l.context?.['code'] === 'PKG_ERR_CORE_BACKEND_UNAVAILABLE',
    );
    expect(warning?.level).toBe('warning');
    expect(warning?.context?.['backend']).toBe('adapter');
    expect(await rawRequest(ts.port, get('/nope', { Host: 'x' }))).toMatch(/^HTTP\/1\.1 404/);
  });

  it('close() called while run() waits for the adapter closes the server once it started', async () => {
    const adapter = new SlowAdapter();
    const server = new Server(
      new ServerConfig({ host: '127.0.0.1', port: 0, heartbeat_interval: 0 }),
      undefined,
      undefined,
      undefined,
      new NullLogger(),
    );
    server.setAdapter(adapter);
    const running = server.run();
    const closing = server.close();
    await running;
    await closing;
    expect(adapter.connected).toBe(true);
    expect(server.state).toBe('closed');
    expect(server.socket?.listening ?? false).toBe(false);
  });
});

describe('the health check path, one rule for admission and the check', () => {
  const request = (method: string, target: string): string =>
    `${method} ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`;
  /** The health check's own answer: no-store, and never the admission's Retry-After. */
  const isHealthAnswer = (raw: string, status: number): boolean =>
    raw.startsWith(`HTTP/1.1 ${status} `) &&
    /cache-control: no-store/i.test(raw) &&
    !/retry-after/i.test(raw);
  const healthChecks: ReadonlyArray<readonly [string, string]> = [
    ['GET', '/health'],
    ['HEAD', '/health'],
    ['GET', '/health/'],
    ['HEAD', '/health/'],
    ['GET', '/health?probe=1'],
    ['HEAD', '/health/?probe=1'],
    ['GET', 'http://localhost/health'],
  ];

  it('answers GET and HEAD, with or without a trailing slash or a query, while closing', async () => {
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const ts = await startServer([], { health_check_path: '/health' }, (server) => {
      server.route('GET', '/slow', async () => {
        await held;
        return { finished: true };
      });
    });
    const others: ReadonlyArray<readonly [string, string]> = [
      ['GET', '/healthz'],
      ['GET', '/health/x'],
      ['POST', '/health'],
    ];
    // The listener stops with close(): open every connection first, each with a request
    // line only, and a request in flight that keeps close() from finishing.
    const slow = await RawConnection.open(ts.port);
    slow.write(request('GET', '/slow'));
    const open = async ([method, target]: readonly [string, string]) => {
      const conn = await RawConnection.open(ts.port);
      conn.write(`${method} ${target} HTTP/1.1\r\n`);
      return { method, target, conn };
    };
    const checks = await Promise.all(healthChecks.map(open));
    const refused = await Promise.all(others.map(open));
    await until(() => ts.server.getLoad().connections === 1 + checks.length + refused.length);

    const closing = ts.server.close();
    for (const { conn } of [...checks, ...refused]) conn.write('Host: localhost\r\nConnection: close\r\n\r\n'); // prettier-ignore
    for (const { method, target, conn } of checks) {
      await conn.ended;
      expect([method, target, isHealthAnswer(conn.data, 503)]).toEqual([method, target, true]);
      if (method === 'GET') expect(conn.data).toContain('"status":"draining"');
    }
    // Anything else is refused by the shutdown: another path, another method.
    for (const { method, target, conn } of refused) {
      await conn.ended;
      expect([method, target, conn.data]).toEqual([method, target, expect.stringMatching(/^HTTP\/1\.1 503 /)]); // prettier-ignore
      expect(conn.data).toContain('PKG_ERR_CORE_DRAINING');
    }
    release();
    await closing;
  });

  it('lets the same requests into the connection reserve, and no upgrade', async () => {
    const ts = await startServer([], {
      health_check_path: '/health/',
      max_connections: 1,
      connection_reserve: 1,
    });
    await TestClient.connect(ts.wsUrl); // the cap
    for (const [method, target] of healthChecks) {
      const conn = await RawConnection.open(ts.port);
      await until(() => ts.server.getLoad().connections === 2);
      conn.write(request(method, target));
      await conn.ended;
      expect([method, target, isHealthAnswer(conn.data, 200)]).toEqual([method, target, true]);
      await until(() => ts.server.getLoad().connections === 1);
    }
    // A WebSocket upgrade on the health path is no health check: the reserve refuses it.
    const upgrade = await expectRefusedUpgrade(`${ts.wsUrl}/health`);
    expect(upgrade.status).toBe(503);
    expect(upgrade.headers['retry-after']).toBe('5');
  });
});
