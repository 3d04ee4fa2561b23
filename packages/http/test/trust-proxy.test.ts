import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from '@jest/globals';
import { HttpHandler, Response, type HttpHandlerOptions } from '../src/index';
import { recordingLogger, startServer, type TestServer } from './helpers';

let current: TestServer | undefined;

interface Seen {
  ip: string;
  remote: string;
  scheme: string;
  host: string;
  port: number;
  url: string;
}

async function serve(trustProxy: HttpHandlerOptions['trustProxy']): Promise<TestServer> {
  const handler = new HttpHandler({
    trustProxy,
    logger: recordingLogger(),
    dispatch: (request) =>
      Response.json({
        ip: request.getIpAddress(),
        remote: request.getRemoteAddress(),
        scheme: request.getScheme(),
        host: request.getHost(),
        port: request.getPort(),
        url: request.getUrl(true),
      }),
  });
  current = await startServer(handler);
  return current;
}

/** node:http rather than fetch, so that the Host header can be set as a proxy would. */
function ask(port: number, headers: Record<string, string>): Promise<Seen> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/shop?item=7',
        headers: { connection: 'close', ...headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve(JSON.parse(body) as Seen));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const proxied = {
  host: 'backend.internal:8080',
  'x-forwarded-for': '203.0.113.50, 127.0.0.1',
  'x-forwarded-proto': 'https',
  'x-forwarded-host': 'shop.example',
};

afterEach(async () => {
  await current?.close();
  current = undefined;
});

describe('trust proxy over a real socket (the peer is 127.0.0.1)', () => {
  it('true: believes the forwarded headers', async () => {
    const { port } = await serve(true);
    expect(await ask(port, proxied)).toEqual({
      ip: '203.0.113.50',
      remote: '127.0.0.1',
      scheme: 'https',
      host: 'shop.example',
      port: 443,
      url: 'https://shop.example/shop?item=7',
    });
  });

  it('an IP list naming the peer: believes them, skipping the trusted hop', async () => {
    const { port } = await serve(['127.0.0.1']);
    const seen = await ask(port, proxied);
    expect(seen.ip).toBe('203.0.113.50');
    expect(seen.url).toBe('https://shop.example/shop?item=7');
  });

  it('a CIDR list containing the peer: believes them', async () => {
    const { port } = await serve(['127.0.0.0/8', '10.0.0.0/8']);
    const seen = await ask(port, { ...proxied, 'x-forwarded-for': '203.0.113.50, 10.1.2.3' });
    expect(seen.ip).toBe('203.0.113.50');
    expect(seen.scheme).toBe('https');
  });

  it('an untrusted peer with forged headers: every forwarded header is ignored', async () => {
    const { port } = await serve(['10.0.0.0/8']);
    const seen = await ask(port, {
      ...proxied,
      forwarded: 'for=198.51.100.1;proto=https;host=evil.example',
    });
    expect(seen).toEqual({
      ip: '127.0.0.1',
      remote: '127.0.0.1',
      scheme: 'http',
      host: 'backend.internal',
      port: 8080,
      url: 'http://backend.internal:8080/shop?item=7',
    });
  });

  it('the default trusts no one', async () => {
    const { port } = await serve(undefined);
    expect((await ask(port, proxied)).ip).toBe('127.0.0.1');
  });

  it('RFC 7239 Forwarded: several elements, quoted IPv6 with port, proto and host', async () => {
    const { port } = await serve(['127.0.0.1']);
    const seen = await ask(port, {
      host: 'backend.internal',
      forwarded:
        'for="[2001:db8:cafe::17]:4711";proto=https;host="shop.example:8443", for=127.0.0.1',
    });
    expect(seen).toEqual({
      ip: '2001:db8:cafe::17',
      remote: '127.0.0.1',
      scheme: 'https',
      host: 'shop.example',
      port: 8443,
      url: 'https://shop.example:8443/shop?item=7',
    });
  });

  it('RFC 7239 Forwarded: an obfuscated client leaves the trusted proxy as the client', async () => {
    const { port } = await serve(['127.0.0.1']);
    const seen = await ask(port, { host: 'h', forwarded: 'for=_hidden;proto=https' });
    expect(seen.ip).toBe('127.0.0.1');
    expect(seen.scheme).toBe('https');
  });

  it('never takes a lenient spelling of a trusted address for a trusted hop', async () => {
    // Read leniently, each of these is 127.0.0.1, inside the trusted range: the walk would
    // skip it and hand out the forged address on its left.
    const { port } = await serve(['127.0.0.0/8']);
    for (const forged of ['127.1', '0x7f.1', '0177.0.0.1', '2130706433']) {
      const viaX = await ask(port, { 'x-forwarded-for': `203.0.113.9, ${forged}` });
      expect(viaX.ip).toBe('127.0.0.1');
      const viaForwarded = await ask(port, {
        forwarded: `for=203.0.113.9, for="${forged}"`,
      });
      expect(viaForwarded.ip).toBe('127.0.0.1');
    }
    // The canonical spelling is skipped as a trusted hop, as it should be.
    expect((await ask(port, { 'x-forwarded-for': '203.0.113.9, 127.0.0.2' })).ip).toBe(
      '203.0.113.9',
    );
  });

  it('never takes a non-canonical address from a forwarded header', async () => {
    const { port } = await serve(true);
    for (const forged of ['127.1', '0x7f.1', '0177.0.0.1', '2130706433']) {
      expect((await ask(port, { 'x-forwarded-for': forged })).ip).toBe('127.0.0.1');
      expect((await ask(port, { forwarded: `for=${forged}` })).ip).toBe('127.0.0.1');
    }
  });
});
