import { afterEach, describe, expect, it } from '@jest/globals';
import { HttpHandler, Response, type CorsOptions } from '../src/index';
import { recordingLogger, startServer, type TestServer } from './helpers';

let current: TestServer | undefined;
let dispatched = 0;

async function serve(cors?: CorsOptions): Promise<TestServer> {
  dispatched = 0;
  const handler = new HttpHandler({
    cors,
    logger: recordingLogger(),
    dispatch: () => {
      dispatched++;
      return Response.json({ ok: true });
    },
  });
  current = await startServer(handler);
  return current;
}

afterEach(async () => {
  await current?.close();
  current = undefined;
});

const restricted: CorsOptions = {
  allowed_origins: ['https://app.example'],
  allowed_methods: ['GET', 'POST'],
  allowed_headers: ['Content-Type', 'X-Api-Key'],
  allow_credentials: true,
  max_age: 600,
};

describe('CORS on actual requests', () => {
  it('answers * by default', async () => {
    const { url } = await serve();
    const res = await fetch(url, { headers: { origin: 'https://any.example' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('echoes an allowed origin with Vary: Origin and credentials', async () => {
    const { url } = await serve(restricted);
    const res = await fetch(url, { headers: { origin: 'https://app.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
    expect(res.headers.get('vary')).toBe('Origin');
  });

  it('gives a refused origin no grant, while the request itself is still served', async () => {
    const { url } = await serve(restricted);
    const res = await fetch(url, { headers: { origin: 'https://evil.example' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    expect(res.headers.get('vary')).toBe('Origin');
  });

  it('adds CORS headers to the handler’s own error answers', async () => {
    const { url } = await serve(restricted);
    const res = await fetch(`${url}/x`, {
      method: 'POST',
      headers: { origin: 'https://app.example', 'content-type': 'application/json' },
      body: 'x'.repeat(2 * 1024 * 1024),
    });
    expect(res.status).toBe(413);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example');
  });
});

describe('CORS preflight', () => {
  function preflight(
    url: string,
    origin: string,
    method: string,
    headers?: string,
  ): Promise<globalThis.Response> {
    const init: Record<string, string> = { origin, 'access-control-request-method': method };
    if (headers !== undefined) init['access-control-request-headers'] = headers;
    return fetch(`${url}/api/items`, { method: 'OPTIONS', headers: init });
  }

  it('grants an allowed preflight with 204 and never dispatches it', async () => {
    const { url } = await serve(restricted);
    const res = await preflight(url, 'https://app.example', 'POST', 'content-type, x-api-key');
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, POST');
    expect(res.headers.get('access-control-allow-headers')).toBe('Content-Type, X-Api-Key');
    expect(res.headers.get('access-control-max-age')).toBe('600');
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
    expect(await res.text()).toBe('');
    expect(dispatched).toBe(0);
  });

  it.each([
    ['origin', 'https://evil.example', 'POST', undefined],
    ['method', 'https://app.example', 'DELETE', undefined],
    ['header', 'https://app.example', 'POST', 'x-secret'],
  ])(
    'answers a preflight with a refused %s without a grant',
    async (_what, origin, method, headers) => {
      const { url } = await serve(restricted);
      const res = await preflight(url, origin, method, headers);
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(res.headers.get('access-control-allow-methods')).toBeNull();
      expect(res.headers.get('access-control-allow-headers')).toBeNull();
      expect(dispatched).toBe(0);
    },
  );

  it('dispatches an OPTIONS request that is not a preflight', async () => {
    const { url } = await serve(restricted);
    const res = await fetch(url, { method: 'OPTIONS' });
    expect(res.status).toBe(200);
    expect(dispatched).toBe(1);
  });
});
