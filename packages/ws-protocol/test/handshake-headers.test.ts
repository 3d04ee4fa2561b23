// Headers of a refused handshake and the Host header of an upgrade, over real sockets: a
// refusal writes only headers Node itself would write, and an upgrade with two Host headers
// is refused like an HTTP request with two.
import { afterEach, describe, expect, it } from '@jest/globals';
import { cleanup, rawExchange, refusedClient, startServer, upgradeRequest } from './helpers';

afterEach(cleanup);

/** The header lines of a raw HTTP answer, lower-case names. */
function headLines(raw: string): string[] {
  const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
  return head.split('\r\n').slice(1);
}

describe('handshake refusal headers', () => {
  it('drop a value that would write a raw CR LF (U+010D U+010A), and log it', async () => {
    const ts = await startServer();
    ts.handler.addHandshakeHook((ctx) => ({
      status: 401,
      message: 'Unauthorized',
      // The request's own text echoed into a header, as an application might.
      headers: {
        'X-Reason': `bad token ${ctx.query.get('t') ?? ''}`,
        'WWW-Authenticate': 'Bearer',
      },
    }));
    const injected = encodeURIComponent('x\u010d\u010aSet-Cookie: session=evil');
    const raw = await rawExchange(ts.port, upgradeRequest({}, `GET /?t=${injected} HTTP/1.1`));

    expect(raw.startsWith('HTTP/1.1 401 Unauthorized\r\n')).toBe(true);
    const lines = headLines(raw);
    expect(lines.some((l) => l.toLowerCase().startsWith('set-cookie'))).toBe(false);
    expect(lines.some((l) => l.toLowerCase().startsWith('x-reason'))).toBe(false);
    // The valid header of the same refusal is still written.
    expect(lines).toContain('WWW-Authenticate: Bearer');
    const logged = ts.logger.withCode('PKG_ERR_WS_INVALID_HEADER');
    expect(logged).toHaveLength(1);
    expect(logged[0]?.context?.['header']).toBe('X-Reason');
    expect(logged[0]?.level).toBe('warning');
  });

  it('refuse the same values as Node: NUL and LF dropped, obs-text (latin1) kept', async () => {
    const ts = await startServer();
    ts.handler.addHandshakeHook(() => ({
      status: 403,
      message: 'no',
      headers: { 'X-Nul': 'a\0b', 'X-Lf': 'a\nb', 'X-Latin': 'caf\u00e9', 'Bad Name': 'x' },
    }));
    const answer = await refusedClient(ts.url);
    expect(answer.status).toBe(403);
    expect(answer.headers['x-nul']).toBeUndefined();
    expect(answer.headers['x-lf']).toBeUndefined();
    expect(answer.headers['bad name']).toBeUndefined();
    expect(Buffer.from(String(answer.headers['x-latin']), 'latin1').toString('latin1')).toBe(
      'caf\u00e9',
    );
    expect(ts.logger.withCode('PKG_ERR_WS_INVALID_HEADER')).toHaveLength(3);
  });
});

describe('Host header of an upgrade', () => {
  it('refuses two Host headers with 400, as HTTP does, without upgrading', async () => {
    const ts = await startServer();
    let connected = 0;
    ts.handler.onConnect(() => {
      connected += 1;
    });
    const request = upgradeRequest({ Host: '127.0.0.1' }).replace(
      '\r\n\r\n',
      '\r\nHost: evil.test\r\n\r\n',
    );
    const raw = await rawExchange(ts.port, request);
    expect(raw.startsWith('HTTP/1.1 400 Bad Request\r\n')).toBe(true);
    expect(raw).toContain('more than one Host header');
    expect(await ts.handshakes[0]).toBe(false);
    expect(connected).toBe(0);
    expect(ts.handler.size).toBe(0);
  });

  it('still upgrades with exactly one Host header', async () => {
    const ts = await startServer();
    const raw = await new Promise<string>((resolve, reject) => {
      rawExchange(ts.port, upgradeRequest()).then(resolve, reject);
      // The handler keeps the connection; close it from the server side once upgraded.
      setTimeout(() => void ts.handler.closeAll(1000, '', 100), 100);
    });
    expect(raw.startsWith('HTTP/1.1 101 ')).toBe(true);
  });
});
