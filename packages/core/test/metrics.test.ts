// Prometheus metrics as an operator sees them: the text a scraper reads (valid, checked by
// promtool when it can be had), every metric moving when the documented action happens,
// gauges back to zero once every kind of client has gone, bounded labels under random event
// names, and the guard of metrics_path.
import { afterEach, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { OnConnect, SocketController, SocketOn, type Server } from '../src/index';
import { cleanup, expectRefusedUpgrade, startServer, TestClient } from './helpers';
import { at, recover, seeOne, setup } from './history-kit';
import { parseMetrics, promtoolCheck, sumOf, valueOf, type Sample } from './metrics-text';

afterEach(cleanup);

class Chat extends SocketController {
  @SocketOn('echo')
  echo(clientId: string, data: Record<string, unknown>): void {
    this.emit(clientId, 'echo', data);
  }

  @SocketOn('slow')
  async slow(): Promise<{ ok: boolean }> {
    await new Promise((resolve) => setTimeout(resolve, 20));
    return { ok: true };
  }

  @SocketOn('shout')
  shout(_clientId: string, data: Record<string, unknown>): void {
    this.broadcast('news', data);
  }

  @SocketOn('join')
  join(clientId: string, data: Record<string, unknown>): void {
    this.joinRoom(clientId, String(data['room']));
  }

  @SocketOn('deny')
  deny(): void {
    // A handler's own refusal: an error with an eventCode, answered as that `error` code.
    throw Object.assign(new Error('not for you'), { eventCode: 'not_allowed' });
  }

  @OnConnect()
  connected(): void {}
}

async function scrape(server: Server): Promise<Sample[]> {
  return parseMetrics(await server.metrics());
}

/** Polls until `check` passes on a fresh scrape (the server sees a close a moment later). */
/** Scrapes until `check` holds, for at most 15 s (a loaded machine drains 10,000 messages slowly). */
async function until(server: Server, check: (s: Sample[]) => boolean): Promise<Sample[]> {
  let samples = await scrape(server);
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline && !check(samples)) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    samples = await scrape(server);
  }
  return samples;
}

const connections = (s: Sample[]): number => sumOf(s, 'pkg_ws_connections');

function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the metrics text', () => {
  it('is valid exposition format, with every documented metric under the prefix', async () => {
    const { server, wsUrl, base } = await startServer([new Chat()], { metrics_path: '/metrics' });
    const client = await TestClient.connect(wsUrl);
    client.send('echo', { a: 1 });
    await client.next('echo');
    await fetch(`${base}/nope`);
    const text = await server.metrics();
    const samples = parseMetrics(text);
    const names = new Set(samples.map((s) => s.name));
    for (const name of [
      'pkg_ws_connections',
      'pkg_ws_connects_total',
      'pkg_ws_messages_received_total',
      'pkg_ws_messages_sent_total',
      'pkg_ws_handler_duration_seconds_bucket',
      'pkg_http_request_duration_seconds_count',
      'pkg_open_sockets',
      'pkg_rooms',
      'pkg_sessions',
      'pkg_ws_pending_handlers',
      'pkg_ws_received_bytes_total',
      'pkg_ws_sent_bytes_total',
      'pkg_adapter_state',
      'pkg_nodejs_eventloop_lag_seconds',
      'pkg_process_cpu_seconds_total',
    ]) {
      expect([name, names.has(name)]).toEqual([name, true]);
    }
    const checked = promtoolCheck(text);
    if (checked !== null) {
      expect(checked.status).not.toBe(1);
      // Only prom-client's own process gauges named *_total are reported.
      expect(checked.problems.filter((p) => !/^pkg_nodejs_active_\w+_total /.test(p))).toEqual([]);
    }
    await client.close();
  });

  it('uses metrics_prefix, and an empty one', async () => {
    const { server } = await startServer([], { metrics_prefix: 'chat_' });
    expect(await server.metrics()).toMatch(/^chat_ws_connections/m);
    const bare = await startServer([], { metrics_prefix: '' });
    expect(await bare.server.metrics()).toMatch(/^ws_connections/m);
  });

  it('refuses a bad prefix, allow-list entry or token at construction, naming the key', async () => {
    await expect(startServer([], { metrics_prefix: '9x' })).rejects.toThrow(/metrics_prefix/);
    await expect(startServer([], { metrics_allow: ['10.0.0.0/99'] })).rejects.toThrow(
      /metrics_allow/,
    );
    await expect(startServer([], { metrics_token: 'short' })).rejects.toThrow(/metrics_token/);
    await expect(startServer([], { request_id_header: 'X Id' })).rejects.toThrow(
      /request_id_header/,
    );
  });
});

describe('every metric moves with what it counts', () => {
  it('connects, messages in and out by event, handler time, refusals, disconnects, bytes', async () => {
    const { server, wsUrl } = await startServer([new Chat()], {
      metrics_path: '/metrics',
      ws_error_reply_interval: 0,
    });
    const a = await TestClient.connect(wsUrl);
    const b = await TestClient.connect(wsUrl, {}, ['pkg.v1']);
    b.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1 } }));
    await b.next('$welcome');
    let s = await scrape(server);
    expect(valueOf(s, 'pkg_ws_connects_total', { protocol: '0' })).toBe(1);
    expect(valueOf(s, 'pkg_ws_connects_total', { protocol: '1' })).toBe(1);
    expect(valueOf(s, 'pkg_ws_connections', { state: 'open', protocol: '0' })).toBe(1);
    expect(valueOf(s, 'pkg_ws_connections', { state: 'open', protocol: '1' })).toBe(1);

    a.send('echo', { n: 1 });
    await a.next('echo');
    a.sendRaw(JSON.stringify({ event: 'slow', data: {}, id: 7 }));
    await a.next('slow');
    a.send('join', { room: 'r1' });
    a.send('nothing-here', {});
    await a.next('error');
    a.send('deny', {});
    await a.next('error');
    a.send('shout', { hi: 1 });
    await a.next('news');
    await b.next('news');
    s = await scrape(server);
    expect(valueOf(s, 'pkg_ws_messages_received_total', { event: 'echo' })).toBe(1);
    expect(valueOf(s, 'pkg_ws_messages_received_total', { event: '$hello' })).toBe(1);
    expect(valueOf(s, 'pkg_ws_messages_received_total', { event: 'other' })).toBe(1);
    expect(valueOf(s, 'pkg_ws_messages_sent_total', { event: 'echo' })).toBe(1);
    expect(valueOf(s, 'pkg_ws_messages_sent_total', { event: 'slow' })).toBe(1);
    expect(valueOf(s, 'pkg_ws_messages_sent_total', { event: 'news' })).toBe(2);
    expect(valueOf(s, 'pkg_ws_handler_duration_seconds_count', { event: 'echo' })).toBe(1);
    const slowSum = valueOf(s, 'pkg_ws_handler_duration_seconds_sum', { event: 'slow' })!;
    expect(slowSum).toBeGreaterThan(0.015);
    expect(valueOf(s, 'pkg_refusals_total', { code: 'unknown_event' })).toBe(1);
    expect(valueOf(s, 'pkg_refusals_total', { code: 'not_allowed' })).toBe(1);
    expect(valueOf(s, 'pkg_rooms')).toBe(1);
    expect(valueOf(s, 'pkg_ws_received_bytes_total')).toBeGreaterThan(100);
    expect(valueOf(s, 'pkg_ws_sent_bytes_total')).toBeGreaterThan(100);
    const bytesBefore = valueOf(s, 'pkg_ws_received_bytes_total')!;

    a.ws.close(4321);
    await a.closed;
    s = await until(server, (x) => valueOf(x, 'pkg_ws_disconnects_total', { code: 'other' }) === 1);
    expect(valueOf(s, 'pkg_ws_disconnects_total', { code: 'other' })).toBe(1);
    expect(valueOf(s, 'pkg_rooms')).toBe(0);
    // The bytes of a closed connection stay counted.
    expect(valueOf(s, 'pkg_ws_received_bytes_total')).toBeGreaterThanOrEqual(bytesBefore);
    b.ws.close(1000);
    s = await until(server, (x) => connections(x) === 0);
    expect(valueOf(s, 'pkg_ws_disconnects_total', { code: '1000' })).toBe(1);
  });

  it('counts HTTP requests by method, route pattern and status code, never the raw path', async () => {
    const { server, base } = await startServer([], { health_check_path: '/health' }, (srv) =>
      srv.route('GET', '/api/users/{id}', (req) => ({ id: req.getParam('id') })),
    );
    await server.metrics();
    for (const id of ['1', '2', '3']) await fetch(`${base}/api/users/${id}`);
    await fetch(`${base}/api/users/1`, { method: 'DELETE' });
    await fetch(`${base}/random/${randomBytes(4).toString('hex')}`);
    await fetch(`${base}/health`);
    const s = await scrape(server);
    const count = 'pkg_http_request_duration_seconds_count';
    expect(valueOf(s, count, { method: 'GET', route: '/api/users/{id}', status_code: '200' })).toBe(3); // prettier-ignore
    expect(valueOf(s, count, { method: 'DELETE', route: 'unmatched', status_code: '405' })).toBe(1); // prettier-ignore
    expect(valueOf(s, count, { method: 'GET', route: 'unmatched', status_code: '404' })).toBe(1);
    expect(valueOf(s, count, { method: 'GET', route: '/health', status_code: '200' })).toBe(1);
    const routes = new Set(s.filter((x) => x.name === count).map((x) => x.labels['route']));
    expect([...routes].some((r) => r?.startsWith('/random') || r?.startsWith('/api/users/1'))).toBe(false); // prettier-ignore
  });

  it('counts a slow consumer drop (close 1013) and the budget refusal of a flood', async () => {
    const { server, wsUrl } = await startServer([new Chat()], {
      max_buffered_amount: 64 * 1024,
      ws_close_timeout: 300,
      ws_max_messages_per_second: 5,
      ws_max_protocol_errors: 0,
    });
    await server.metrics();
    const flood = await TestClient.connect(wsUrl);
    for (let i = 0; i < 30; i += 1) flood.send('echo', { i });
    await flood.next('error');
    let s = await scrape(server);
    expect(valueOf(s, 'pkg_refusals_total', { code: 'too_many_messages' })).toBeGreaterThan(0);

    const slow = await TestClient.connect(wsUrl);
    // Stop reading: the server's send buffer fills past the limit.
    const socket = (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    socket.pause();
    try {
      const big = 'x'.repeat(16 * 1024);
      const id = server.getAllClients().at(-1)!;
      for (let i = 0; i < 400 && server.isConnected(id); i += 1) server.send(id, 'fill', { big });
      s = await until(server, (x) => (valueOf(x, 'pkg_ws_slow_consumer_drops_total') ?? 0) > 0);
      expect(valueOf(s, 'pkg_ws_slow_consumer_drops_total')).toBe(1);
    } finally {
      socket.resume();
      slow.ws.terminate();
    }
  });
});

describe('room recovery outcomes', () => {
  it('counts each recovery by outcome: recovered, or the reason it failed', async () => {
    const { server, url } = await setup({ metrics_path: '/metrics' });
    await server.metrics();
    const pos = await seeOne(server, url, 'chat:a');
    server.broadcast('msg', { n: 1 }, { room: 'chat:a' });
    const ok = await recover(url, 'chat:a', at(pos));
    expect(ok.recovered.data).toMatchObject({ recovered: true, replayed: 1 });
    const stale = await recover(url, 'chat:a', { offset: 1, epoch: 'elsewhere' });
    expect(stale.recovered.data).toMatchObject({ recovered: false, reason: 'epoch_changed' });
    const unkept = await recover(url, 'lobby', { offset: 1, epoch: pos.epoch });
    expect(unkept.recovered.data).toMatchObject({ recovered: false, reason: 'not_kept' });
    const s = await scrape(server);
    const outcome = (o: string) => valueOf(s, 'pkg_history_recoveries_total', { outcome: o });
    expect([outcome('recovered'), outcome('epoch_changed'), outcome('not_kept')]).toEqual([
      1, 1, 1,
    ]);
    for (const c of [ok, stale, unkept]) await c.client.close();
  });
});

describe('refusals before any handler', () => {
  it('counts an upgrade over max_connections_per_ip and a Host not allowed', async () => {
    const { server, wsUrl, base } = await startServer([new Chat()], {
      max_connections_per_ip: 1,
      allowed_hosts: ['127.0.0.1'],
    });
    await server.metrics();
    const first = await TestClient.connect(wsUrl);
    expect((await expectRefusedUpgrade(wsUrl)).status).toBe(503);
    const other = await get(`${base}/`, { host: 'evil.example' });
    expect(other.status).toBe(403);
    const s = await scrape(server);
    expect(valueOf(s, 'pkg_refusals_total', { code: 'too_many_connections_per_ip' })).toBe(1);
    expect(valueOf(s, 'pkg_refusals_total', { code: 'host_not_allowed' })).toBe(1);
    await first.close();
  });
});

describe('gauges go back to zero', () => {
  it('exports every connection state and protocol at 0 when nobody is connected', async () => {
    const { server, wsUrl, base } = await startServer([new Chat()], { metrics_path: '/metrics' });
    const pairs = [
      ['handshaken', '0'],
      ['awaiting_hello', '1'],
      ['authenticating', '0'],
      ['authenticating', '1'],
      ['open', '0'],
      ['open', '1'],
      ['closing', '0'],
      ['closing', '1'],
      ['away', '1'],
    ] as const;
    const expectAllZero = (text: string): void => {
      const samples = parseMetrics(text);
      for (const [state, protocol] of pairs) {
        const value = valueOf(samples, 'pkg_ws_connections', { state, protocol });
        expect([state, protocol, value]).toEqual([state, protocol, 0]);
      }
      const checked = promtoolCheck(text);
      if (checked !== null) expect(checked.status).not.toBe(1);
    };
    // Before anyone connected, as a scraper reads it over HTTP.
    expectAllZero((await get(`${base}/metrics`)).body);
    // After a client came and went, every pair is still there, at 0.
    const client = await TestClient.connect(wsUrl);
    await until(server, (x) => valueOf(x, 'pkg_ws_connections', { state: 'open', protocol: '0' }) === 1); // prettier-ignore
    await client.close();
    await until(server, (x) => connections(x) === 0);
    expectAllZero((await get(`${base}/metrics`)).body);
  });

  it('after v0, v1, resumed and in-memory clients have all gone', async () => {
    const { server, wsUrl } = await startServer([new Chat()], { recovery_window: 300 });
    await server.metrics();
    const v0 = await TestClient.connect(wsUrl);
    const v1 = await TestClient.connect(wsUrl, {}, ['pkg.v1']);
    v1.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1 } }));
    const welcome = await v1.next('$welcome');
    const memory = await server.connect();
    expect(memory.readyState).toBe(memory.OPEN);
    v0.send('join', { room: 'lobby' });
    v1.send('join', { room: 'lobby' });
    let s = await until(server, (x) => valueOf(x, 'pkg_ws_connections', { state: 'open', protocol: '0' }) === 2); // prettier-ignore
    expect(valueOf(s, 'pkg_ws_connections', { state: 'open', protocol: '1' })).toBe(1);

    // v1 drops without a close frame: its session waits (away), then it resumes.
    v1.ws.terminate();
    s = await until(server, (x) => valueOf(x, 'pkg_ws_connections', { state: 'away' }) === 1);
    expect(valueOf(s, 'pkg_ws_connections', { state: 'away' })).toBe(1);
    const back = await TestClient.connect(wsUrl, {}, ['pkg.v1']);
    back.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1, resume: { session: welcome.data['session'], seq: 0 } } })); // prettier-ignore
    expect((await back.next('$welcome')).data['resumed']).toBe(true);
    s = await until(server, (x) => valueOf(x, 'pkg_ws_connections', { state: 'open', protocol: '1' }) === 1); // prettier-ignore
    expect(valueOf(s, 'pkg_ws_connections', { state: 'away' })).toBe(0);

    // A client that never says $hello on a pkg.v1 connection is counted while it waits.
    const silent = await TestClient.connect(wsUrl, {}, ['pkg.v1']);
    await v0.close();
    await back.close();
    memory.close();
    await silent.close();
    s = await until(server, (x) => connections(x) === 0 && valueOf(x, 'pkg_rooms') === 0);
    expect(connections(s)).toBe(0);
    expect(valueOf(s, 'pkg_rooms')).toBe(0);
    expect(valueOf(s, 'pkg_ws_pending_handlers')).toBe(0);
    expect(sumOf(s, 'pkg_ws_connects_total')).toBe(sumOf(s, 'pkg_ws_disconnects_total'));
    s = await until(server, (x) => valueOf(x, 'pkg_sessions') === 0);
    expect(valueOf(s, 'pkg_sessions')).toBe(0);
  });
});

describe('bounded labels', () => {
  it('keeps the event label bounded under 10,000 random event names', async () => {
    const { server } = await startServer([new Chat()], {
      ws_max_messages_per_second: 0,
      ws_max_bytes_per_second: 0,
      ws_max_protocol_errors: 0,
    });
    await server.metrics();
    const ws = await server.connect();
    expect(ws.readyState).toBe(ws.OPEN);
    let answered = 0;
    ws.on('message', () => (answered += 1));
    for (let i = 0; i < 10_000; i += 1) {
      ws.send(JSON.stringify({ event: `e${randomBytes(6).toString('hex')}`, data: {} }));
    }
    ws.send(JSON.stringify({ event: 'echo', data: {} }));
    const s = await until(server, (x) => valueOf(x, 'pkg_ws_messages_received_total', { event: 'echo' }) === 1); // prettier-ignore
    const events = new Set(
      s.filter((x) => x.name.startsWith('pkg_ws_')).map((x) => x.labels['event']),
    );
    events.delete(undefined);
    expect([...events].sort()).toEqual(['echo', 'other']);
    expect(valueOf(s, 'pkg_ws_messages_received_total', { event: 'other' })).toBe(10_000);
    const codes = s.filter((x) => x.name === 'pkg_refusals_total').map((x) => x.labels['code']);
    expect(codes).toEqual(['unknown_event']);
    expect(answered).toBeGreaterThan(0);
    ws.close();
  });
});

describe('metrics_path', () => {
  it('serves loopback by default, with the exposition content type', async () => {
    const { base } = await startServer([], { metrics_path: '/metrics' });
    const res = await get(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.body).toMatch(/^# HELP pkg_/m);
    expect((await get(`${base}/metrics?x=1`)).status).toBe(200);
  });

  it('refuses an address outside metrics_allow with 403, unless the bearer token matches', async () => {
    const token = 'a-long-enough-secret-token';
    const { base } = await startServer([], {
      metrics_path: '/metrics',
      metrics_allow: ['10.0.0.0/8'],
      metrics_token: token,
    });
    const refused = await get(`${base}/metrics`);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'PKG_ERR_CORE_METRICS_FORBIDDEN' });
    expect(refused.body).not.toContain('pkg_');
    expect((await get(`${base}/metrics`, { authorization: `Bearer ${token}x` })).status).toBe(403);
    expect((await get(`${base}/metrics`, { authorization: 'Bearer ' })).status).toBe(403);
    const ok = await get(`${base}/metrics`, { authorization: `Bearer ${token}` });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatch(/^pkg_ws_connections/m);
  });

  it('does not trust loopback for a request an untrusted proxy forwarded', async () => {
    const { base } = await startServer([], { metrics_path: '/metrics' });
    expect((await get(`${base}/metrics`, { 'x-forwarded-for': '203.0.113.9' })).status).toBe(403);
    expect((await get(`${base}/metrics`, { forwarded: 'for=203.0.113.9' })).status).toBe(403);
    // With trust_proxy the forwarded client address is what metrics_allow sees.
    const trusted = await startServer([], {
      metrics_path: '/metrics',
      trust_proxy: ['loopback'],
      metrics_allow: ['loopback', '198.51.100.0/24'],
    });
    const via = (ip: string) => get(`${trusted.base}/metrics`, { 'x-forwarded-for': ip });
    expect((await via('203.0.113.9')).status).toBe(403);
    expect((await via('198.51.100.7')).status).toBe(200);
  });

  it('is not served when metrics_path is null (the default)', async () => {
    const { base } = await startServer([]);
    expect((await get(`${base}/metrics`)).status).toBe(404);
  });

  it('answers 405 to a method other than GET and HEAD', async () => {
    const { base } = await startServer([], { metrics_path: '/metrics' });
    const res = await fetch(`${base}/metrics`, { method: 'POST' });
    expect(res.status).toBe(405);
  });
});
