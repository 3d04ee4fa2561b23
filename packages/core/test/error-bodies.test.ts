// Every HTTP error answer the server gives on its own, over real sockets: whichever package
// refused (core's admission and connection caps, routing, timeouts, validation, metrics;
// @pkg/http's parsing, limits and rate limits; ws-protocol's handshake checks), the body is
// the one JSON shape of docs/errors.md, `{"error": <reason phrase>, "code", "message"}` plus
// the details a code documents, and the status and headers are those documented.
import { afterEach, describe, expect, it } from '@jest/globals';
import { STATUS_CODES } from 'node:http';
import { z } from 'zod';
import type { Server } from '../src/index';
import { RawConnection, TestClient, cleanup, startServer } from './helpers';

afterEach(cleanup);

interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** Sends `text` on a new connection and reads the answer until the server closes it. */
async function exchange(port: number, text: string): Promise<Answer> {
  const conn = await RawConnection.open(port);
  conn.write(text);
  await conn.ended;
  return parse(conn.data);
}

function parse(raw: string): Answer {
  const end = raw.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = raw.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine!.split(' ')[1]), headers, body: raw.slice(end + 4) };
}

const request = (method: string, path: string, extra = '', body = ''): string =>
  `${method} ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${extra}` +
  (body === '' ? '' : `Content-Length: ${Buffer.byteLength(body)}\r\n`) +
  `\r\n${body}`;

const upgrade = (
  extra = 'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n',
  path = '/',
): string =>
  // prettier-ignore
  `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n${extra}\r\n`;

/** Members an error body may have besides `error`, `code` and `message`, by code. */
const DETAILS: Readonly<Record<string, readonly string[]>> = {
  validation_failed: ['issues'],
  PKG_ERR_HTTP_RATE_LIMITED: ['retryAfter'],
};

/** Checks the one shape, and returns the body for the checks of each case. */
function expectErrorShape(
  what: string,
  answer: Answer,
  status: number,
  code: string | undefined,
): Record<string, unknown> {
  expect([what, answer.status]).toEqual([what, status]);
  expect([what, answer.headers['content-type']]).toEqual([what, 'application/json; charset=utf-8']); // prettier-ignore
  const body = JSON.parse(answer.body) as Record<string, unknown>;
  expect([what, body['error']]).toEqual([what, STATUS_CODES[status]]);
  expect([what, body['code']]).toEqual([what, code]);
  if (body['message'] !== undefined) expect([what, typeof body['message']]).toEqual([what, 'string']); // prettier-ignore
  const allowed = new Set(['error', 'code', 'message', ...(DETAILS[code ?? ''] ?? [])]);
  expect([what, Object.keys(body).filter((k) => !allowed.has(k))]).toEqual([what, []]);
  return body;
}

function routes(server: Server): void {
  server.route('GET', '/users/{id}', () => ({ ok: true }));
  server.route('POST', '/items', (request) => ({ got: request.getBody() }), {
    body: z.object({ n: z.number() }),
  });
  server.route('GET', '/limited', () => ({ ok: true }), {
    rateLimit: { maxCount: 1, timeWindow: 60 },
  });
  server.route('GET', '/boom', () => {
    throw new Error('secret detail');
  });
  server.route('GET', '/slow', () => new Promise(() => undefined));
  server.addHandshakeMiddleware((ctx) => {
    if (ctx.query.get('key') === 'throw') throw new Error('secret detail');
    if (ctx.query.get('key') === 'bad') return { status: 401, message: 'Invalid key.', headers: { 'WWW-Authenticate': 'Key' } }; // prettier-ignore
    return undefined;
  });
}

describe('HTTP error bodies have one shape', () => {
  it('for HTTP requests refused by routing, parsing, limits, validation, rate limits and handlers', async () => {
    const { port } = await startServer([], {
      max_body_size: 64,
      http_handler_timeout: 50,
      metrics_path: '/metrics',
      metrics_allow: ['10.0.0.0/8'],
    }, routes); // prettier-ignore

    expectErrorShape('404', await exchange(port, request('GET', '/nope')), 404, undefined);
    const notAllowed = await exchange(port, request('DELETE', '/users/1'));
    expectErrorShape('405', notAllowed, 405, 'PKG_ERR_CORE_METHOD_NOT_ALLOWED');
    expect(notAllowed.headers['allow']).toMatch(/GET/);
    const json = 'Content-Type: application/json\r\n';
    const tooLarge = await exchange(port, request('POST', '/items', json, JSON.stringify({ n: 'x'.repeat(100) }))); // prettier-ignore
    expectErrorShape('413', tooLarge, 413, 'PKG_ERR_HTTP_BODY_TOO_LARGE');
    const malformed = await exchange(port, request('POST', '/items', json, '{"n":'));
    expectErrorShape('invalid JSON', malformed, 400, 'PKG_ERR_HTTP_INVALID_JSON');
    const invalid = await exchange(port, request('POST', '/items', json, '{"n":"one"}'));
    const issues = expectErrorShape('validation', invalid, 400, 'validation_failed')['issues'];
    expect(Array.isArray(issues)).toBe(true);
    await exchange(port, request('GET', '/limited'));
    const limited = await exchange(port, request('GET', '/limited'));
    expectErrorShape('429', limited, 429, 'PKG_ERR_HTTP_RATE_LIMITED');
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    const failed = await exchange(port, request('GET', '/boom'));
    expectErrorShape('500', failed, 500, undefined);
    expect(failed.body).not.toContain('secret detail');
    const slow = await exchange(port, request('GET', '/slow'));
    expectErrorShape('handler timeout', slow, 503, 'PKG_ERR_CORE_HANDLER_TIMEOUT');
    expect(slow.headers['retry-after']).toBe('5');
    const metrics = await exchange(port, request('GET', '/metrics'));
    expectErrorShape('metrics 403', metrics, 403, 'PKG_ERR_CORE_METRICS_FORBIDDEN');
    const metricsPost = await exchange(port, request('POST', '/metrics'));
    expectErrorShape('metrics 405', metricsPost, 405, 'PKG_ERR_CORE_METHOD_NOT_ALLOWED');
    expect(metricsPost.headers['allow']).toBe('GET, HEAD');
  });

  it('for requests and upgrades refused before any handler: Host, connection caps, draining', async () => {
    const ts = await startServer([], {
      allowed_hosts: ['localhost'],
      max_connections: 2,
      connection_reserve: 0,
      max_connections_per_ip: 1,
    }, routes); // prettier-ignore
    const evil = 'GET / HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n';
    const host = expectErrorShape('host', await exchange(ts.port, evil), 403, 'PKG_ERR_CORE_HOST_NOT_ALLOWED'); // prettier-ignore
    expect(host['message']).toBe('This host name is not served here.');
    const evilUpgrade = upgrade().replace('Host: localhost', 'Host: evil.example');
    expectErrorShape('host upgrade', await exchange(ts.port, evilUpgrade), 403, 'PKG_ERR_CORE_HOST_NOT_ALLOWED'); // prettier-ignore

    const first = await TestClient.connect(`${ts.wsUrl}/`, { headers: { Host: 'localhost' } });
    const perIp = await exchange(ts.port, upgrade());
    expectErrorShape('per address', perIp, 503, 'PKG_ERR_CORE_TOO_MANY_CONNECTIONS_PER_IP');
    expect(perIp.headers['retry-after']).toBe('5');
    // The second connection is the last under max_connections; a third is refused at once.
    const held = await RawConnection.open(ts.port);
    while (ts.server.getLoad().connections < 2) await new Promise((r) => setTimeout(r, 5));
    const over = await exchange(ts.port, '');
    expectErrorShape('over max_connections', over, 503, 'PKG_ERR_CORE_TOO_MANY_CONNECTIONS');
    expect(over.headers['retry-after']).toBe('5');
    held.close();
    await first.close();
    while (ts.server.getLoad().connections > 0) await new Promise((r) => setTimeout(r, 5));

    ts.server.drain();
    const draining = await exchange(ts.port, upgrade());
    expectErrorShape('draining upgrade', draining, 503, 'PKG_ERR_CORE_DRAINING');
    expect(draining.headers['retry-after']).toBe('5');
  });

  it('for upgrades refused by the handshake checks and handshake middleware', async () => {
    const { port } = await startServer([], { ws_allowed_origins: ['https://app.example'], allow_missing_origin: true }, routes); // prettier-ignore
    const key = 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';
    expectErrorShape('no key', await exchange(port, upgrade('Sec-WebSocket-Version: 13\r\n')), 400, 'PKG_ERR_WS_BAD_HANDSHAKE'); // prettier-ignore
    const version = await exchange(port, upgrade(`Sec-WebSocket-Version: 8\r\n${key}`));
    expectErrorShape('version', version, 426, 'PKG_ERR_WS_UNSUPPORTED_VERSION');
    expect(version.headers['sec-websocket-version']).toBe('13');
    const origin = await exchange(port, upgrade(`Sec-WebSocket-Version: 13\r\n${key}Origin: https://evil.example\r\n`)); // prettier-ignore
    expect(expectErrorShape('origin', origin, 403, 'PKG_ERR_WS_ORIGIN_NOT_ALLOWED')['message']).toBe('Origin not allowed.'); // prettier-ignore
    const refused = await exchange(port, upgrade(undefined, '/?key=bad'));
    expect(expectErrorShape('middleware', refused, 401, 'PKG_ERR_WS_HANDSHAKE_REFUSED')['message']).toBe('Invalid key.'); // prettier-ignore
    expect(refused.headers['www-authenticate']).toBe('Key');
    const thrown = await exchange(port, upgrade(undefined, '/?key=throw'));
    expectErrorShape('middleware throws', thrown, 500, undefined);
    expect(thrown.body).toBe('{"error":"Internal Server Error"}');
  });
});
