// Request ids and log correlation, as an operator reading the logs sees them: every HTTP
// request and WebSocket message handled has an id (made when something reads it), a trusted
// proxy's X-Request-Id is kept (and only a trusted proxy's, and only a sane one), the id
// comes back on the answer with request_id_response_header, and every line a handler logs
// while handling carries requestId and clientId.
import { afterEach, describe, expect, it } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import { Logger, Server, ServerConfig, type ServerConfigOptions } from '../src/index';
import { TestClient } from './helpers';

class Capture {
  readonly chunks: string[] = [];
  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return true;
  }
  /** Every line's JSON context (the part after the message), with its message. */
  lines(): Array<{ message: string; context: Record<string, unknown> }> {
    return this.chunks
      .join('')
      .split('\n')
      .filter((l) => l !== '')
      .map((line) => {
        const body = line.replace(/^\[[^\]]+\] \[[A-Z]+\] /, '');
        const at = body.indexOf(' {');
        return at === -1
          ? { message: body, context: {} }
          : { message: body.slice(0, at), context: JSON.parse(body.slice(at + 1)) };
      });
  }
}

const servers: Server[] = [];
const clients: TestClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  for (const s of servers.splice(0)) await s.close();
});

async function start(
  config: ServerConfigOptions = {},
): Promise<{ server: Server; out: Capture; base: string; wsUrl: string }> {
  const out = new Capture();
  const logger = new Logger({ minLogLevel: 'info', logToConsole: true, logToFile: false });
  logger.setConsoleStream(out);
  const server = new Server(
    new ServerConfig({
      host: '127.0.0.1',
      port: 0,
      heartbeat_interval: 0,
      log_context: true,
      ...config,
    }),
    undefined,
    undefined,
    undefined,
    logger,
  );
  server.route('GET', '/work/{n}', async (req) => {
    server.logger.info('handling {n}', { n: req.getParam('n') });
    await new Promise((resolve) => setTimeout(resolve, 5));
    server.logger.info('done');
    return { requestId: req.getAttribute('requestId') ?? null };
  });
  server.on('ask', async (clientId, data) => {
    server.logger.info('asked');
    await new Promise((resolve) => setTimeout(resolve, 5));
    server.logger.info('answering');
    server.send(clientId, 'answer', data);
  });
  await server.run();
  servers.push(server);
  const port = server.getPort();
  return { server, out, base: `http://127.0.0.1:${port}`, wsUrl: `ws://127.0.0.1:${port}` };
}

function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ id: string | undefined; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () =>
        resolve({
          id: res.headers['x-request-id'] as string | undefined,
          body: body === '' ? {} : JSON.parse(body),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('HTTP request ids', () => {
  it('generates an id, returns it, and puts it on every line the handler logs', async () => {
    const { out, base } = await start({ request_id_response_header: true });
    const [a, b] = await Promise.all([get(`${base}/work/1`), get(`${base}/work/2`)]);
    expect(a.id).toMatch(/^[0-9a-f]{12}-[0-9a-z]+$/);
    expect(b.id).not.toBe(a.id);
    expect(a.body['requestId']).toBe(a.id);
    const lines = out.lines();
    const of = (id: string | undefined) =>
      lines.filter((l) => l.context['requestId'] === id).map((l) => l.message);
    expect(of(a.id).sort()).toEqual(['done', 'handling 1']);
    expect(of(b.id).sort()).toEqual(['done', 'handling 2']);
    const handled = lines.filter((l) => 'requestId' in l.context);
    expect(handled).toHaveLength(4);
    expect(handled.every((l) => typeof l.context['clientId'] === 'string')).toBe(true);
  });

  it('ignores an X-Request-Id from a peer that is not a trusted proxy', async () => {
    const { base } = await start({ request_id_response_header: true });
    const res = await get(`${base}/work/1`, { 'x-request-id': 'from-the-client' });
    expect(res.id).not.toBe('from-the-client');
    expect(res.id).toMatch(/^[0-9a-f]{12}-/);
  });

  it("keeps a trusted proxy's id, unless it is too long or has odd characters", async () => {
    const { base, out } = await start({
      trust_proxy: ['loopback'],
      request_id_response_header: true,
    });
    const kept = await get(`${base}/work/1`, { 'x-request-id': 'edge-4f2a:17' });
    expect(kept.id).toBe('edge-4f2a:17');
    expect(out.lines().some((l) => l.context['requestId'] === 'edge-4f2a:17')).toBe(true);
    for (const odd of ['x'.repeat(129), 'a b', 'a"b', 'é', '{}', '']) {
      const res = await get(`${base}/work/2`, { 'x-request-id': odd });
      expect([odd, res.id]).not.toEqual([odd, odd]);
      expect(res.id).toMatch(/^[0-9a-f]{12}-/);
    }
    expect((await get(`${base}/work/3`, { 'x-request-id': 'y'.repeat(128) })).id).toBe(
      'y'.repeat(128),
    );
  });

  it('uses request_id_header, and sends no id when it is null', async () => {
    const custom = await start({
      request_id_header: 'x-correlation-id',
      trust_proxy: true,
      request_id_response_header: true,
    });
    const res = await fetch(`${custom.base}/work/1`, { headers: { 'x-correlation-id': 'c-1' } });
    expect(res.headers.get('x-correlation-id')).toBe('c-1');
    expect(res.headers.get('x-request-id')).toBeNull();
    const off = await start({ request_id_header: null, request_id_response_header: true });
    const plain = await get(`${off.base}/work/1`);
    expect(plain.id).toBeUndefined();
    expect(plain.body['requestId']).toBeNull();
    expect(off.out.lines().some((l) => 'requestId' in l.context)).toBe(false);
  });

  it('keeps log lines free of ids without log_context (the default), but still answers the id', async () => {
    const { out, base, wsUrl } = await start({
      log_context: false,
      request_id_response_header: true,
    });
    const res = await get(`${base}/work/1`);
    expect(res.id).toMatch(/^[0-9a-f]{12}-/);
    expect(res.body['requestId']).toBe(res.id);
    const client = await TestClient.connect(wsUrl);
    clients.push(client);
    client.send('ask', { n: 1 });
    await client.next('answer');
    const lines = out.lines().filter((l) => ['handling 1', 'done', 'asked'].includes(l.message));
    expect(lines).toHaveLength(3);
    expect(lines.some((l) => 'requestId' in l.context || 'clientId' in l.context)).toBe(false);
  });

  it('puts the id on every answer: synchronous, thrown, rejected and unmatched', async () => {
    for (const log_context of [false, true]) {
      const { server, base } = await start({ log_context, request_id_response_header: true });
      server.route('GET', '/sync', () => ({ ok: true }));
      server.route('GET', '/throws', () => {
        throw new Error('broken');
      });
      server.route('GET', '/rejects', async () => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        throw new Error('broken later');
      });
      for (const path of ['/sync', '/throws', '/rejects', '/nowhere']) {
        const res = await fetch(`${base}${path}`);
        expect([path, res.headers.get('x-request-id')]).toEqual([
          path,
          expect.stringMatching(/^[0-9a-f]{12}-[0-9a-z]+$/),
        ]);
        expect(res.status).toBe(path === '/sync' ? 200 : path === '/nowhere' ? 404 : 500);
      }
    }
  });

  it('gives an in-memory request (inject) an id too', async () => {
    const { server } = await start({ request_id_response_header: true });
    const res = await server.inject({ method: 'GET', url: '/work/9' });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f]{12}-/);
  });
});

describe('HTTP request ids by default (no response header)', () => {
  it('sends no X-Request-Id, yet the handler and the log lines have the id', async () => {
    const { out, base } = await start();
    const res = await get(`${base}/work/1`);
    expect(res.id).toBeUndefined();
    expect(res.body['requestId']).toEqual(expect.stringMatching(/^[0-9a-f]{12}-[0-9a-z]+$/));
    const lines = out.lines().filter((l) => l.context['requestId'] === res.body['requestId']);
    expect(lines.map((l) => l.message).sort()).toEqual(['done', 'handling 1']);
  });

  it("keeps a trusted proxy's id for the handler without echoing it", async () => {
    const { base } = await start({ trust_proxy: ['loopback'] });
    const res = await get(`${base}/work/1`, { 'x-request-id': 'edge-77' });
    expect(res.id).toBeUndefined();
    expect(res.body['requestId']).toBe('edge-77');
  });

  it('makes an id only for a request whose id something reads', async () => {
    const { server, base } = await start({ log_context: false });
    server.route('GET', '/quiet', () => ({ ok: true }));
    server.route('GET', '/all', (req) => req.getAttributes());
    const first = String((await get(`${base}/work/1`)).body['requestId']);
    for (let i = 0; i < 3; i++) expect((await get(`${base}/quiet`)).body).toEqual({ ok: true });
    const second = String((await get(`${base}/work/2`)).body['requestId']);
    const [prefix, counter] = first.split('-');
    // The three quiet requests took no number from the generator.
    expect(second).toBe(`${prefix}-${(parseInt(counter!, 36) + 1).toString(36)}`);
    const all = (await get(`${base}/all`)).body;
    expect(all['requestId']).toBe(`${prefix}-${(parseInt(counter!, 36) + 2).toString(36)}`);
  });

  it('rejects a request_id_response_header that is not a boolean', () => {
    expect(
      () => new ServerConfig({ request_id_response_header: 'yes' as unknown as boolean }),
    ).toThrow(/request_id_response_header/);
  });
});

describe('WebSocket message ids', () => {
  it('gives each message its own id on every line its handler logs, with the client id', async () => {
    const { out, wsUrl, server } = await start();
    const client = await TestClient.connect(wsUrl);
    clients.push(client);
    client.send('ask', { n: 1 });
    client.send('ask', { n: 2 });
    await client.next('answer');
    await client.next('answer');
    const [clientId] = server.getAllClients();
    const lines = out.lines().filter((l) => l.message === 'asked' || l.message === 'answering');
    expect(lines).toHaveLength(4);
    expect(lines.every((l) => l.context['clientId'] === clientId)).toBe(true);
    const ids = new Set(lines.map((l) => l.context['requestId']));
    expect(ids.size).toBe(2);
    for (const id of ids) {
      expect(lines.filter((l) => l.context['requestId'] === id).map((l) => l.message).sort()).toEqual(['answering', 'asked']); // prettier-ignore
    }
  });
});
