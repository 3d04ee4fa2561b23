import { afterEach, describe, expect, it } from '@jest/globals';
import { HttpHandler, Response, type Request } from '../src/index';
import { rawExchange, recordingLogger, startServer, type TestServer } from './helpers';

let current: TestServer | undefined;
let seen: string[] = [];

async function serve(maxBodySize = 1024, lenientParser = false): Promise<TestServer> {
  seen = [];
  const handler = new HttpHandler({
    maxBodySize,
    logger: recordingLogger(),
    dispatch: (request: Request) => {
      seen.push(`${request.getMethod()} ${request.getPath()}`);
      return Response.json({ path: request.getPath(), bytes: request.getRawBody().length });
    },
  });
  current = await startServer(handler, { insecureHTTPParser: lenientParser });
  return current;
}

afterEach(async () => {
  await current?.close();
  current = undefined;
});

describe('body limit', () => {
  it('accepts a body of exactly maxBodySize', async () => {
    const { url } = await serve(1024);
    const res = await fetch(`${url}/up`, { method: 'POST', body: 'x'.repeat(1024) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ path: '/up', bytes: 1024 });
  });

  it('answers 413 to a larger body sent with fetch', async () => {
    const { url } = await serve(1024);
    const res = await fetch(`${url}/up`, { method: 'POST', body: 'x'.repeat(200_000) });
    expect(res.status).toBe(413);
    expect(res.headers.get('connection')).toBe('close');
    expect(await res.json()).toMatchObject({
      error: 'Payload Too Large',
      code: 'PKG_ERR_HTTP_BODY_TOO_LARGE',
    });
    expect(seen).toEqual([]);
  });

  it('answers 413 from the declared length alone, without waiting for the body, and closes', async () => {
    const { port } = await serve(1024);
    // Only a small part of the announced 10 MB is ever sent: the answer must not wait for it.
    const res = await rawExchange(
      port,
      `POST /up HTTP/1.1\r\nHost: h\r\nContent-Length: ${10 * 1024 * 1024}\r\n\r\n${'x'.repeat(100)}`,
    );
    expect(res.status).toBe(413);
    expect(res.headers.connection).toBe('close');
    expect(res.closed).toBe(true);
    expect(seen).toEqual([]);
  });

  it('answers 413 to a chunked body once it passes the limit, and closes', async () => {
    const { port } = await serve(1024);
    const chunk = `400\r\n${'x'.repeat(1024)}\r\n`;
    // The final chunk is never sent: the answer comes as soon as the limit is passed.
    const res = await rawExchange(
      port,
      `POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n${chunk}${chunk}`,
    );
    expect(res.status).toBe(413);
    expect(res.closed).toBe(true);
    expect(seen).toEqual([]);
  });
});

describe('ambiguous requests', () => {
  it('refuses two Host headers with 400, closes, and never dispatches a request pipelined behind', async () => {
    const { port } = await serve();
    const res = await rawExchange(
      port,
      'GET /first HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n' +
        'GET /second HTTP/1.1\r\nHost: a.example\r\n\r\n',
    );
    expect(res.status).toBe(400);
    expect(res.headers.connection).toBe('close');
    expect(JSON.parse(res.body)).toMatchObject({ code: 'PKG_ERR_HTTP_AMBIGUOUS_REQUEST' });
    expect(res.closed).toBe(true);
    expect(res.text.match(/HTTP\/1\.1 /g)).toHaveLength(1);
    expect(seen).toEqual([]);
  });

  it.each([
    ['gzip', 'POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n'],
    [
      'gzip, chunked',
      'POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n',
    ],
  ])('refuses Transfer-Encoding %j with 400 and closes', async (_te, payload) => {
    const { port } = await serve();
    const res = await rawExchange(port, payload);
    expect(res.status).toBe(400);
    expect(res.closed).toBe(true);
    expect(seen).toEqual([]);
  });

  it('refuses Content-Length together with Transfer-Encoding with 400, closes, and does not smuggle', async () => {
    const { port } = await serve();
    const res = await rawExchange(
      port,
      'POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n' +
        '0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n',
    );
    expect(res.status).toBe(400);
    expect(res.closed).toBe(true);
    expect(seen).toEqual([]);
  });

  it('refuses Content-Length with Transfer-Encoding even behind a lenient parser, without smuggling', async () => {
    // With insecureHTTPParser, Node hands such a request over; the handler is then the guard.
    const { port } = await serve(1024, true);
    const res = await rawExchange(
      port,
      'POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n' +
        '0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n',
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({
      code: 'PKG_ERR_HTTP_AMBIGUOUS_REQUEST',
      message: expect.stringContaining('both Content-Length and Transfer-Encoding'),
    });
    expect(res.closed).toBe(true);
    expect(seen).toEqual([]);
  });

  it('refuses Transfer-Encoding: chunked, gzip behind a lenient parser', async () => {
    const { port } = await serve(1024, true);
    const res = await rawExchange(
      port,
      'POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n',
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'PKG_ERR_HTTP_AMBIGUOUS_REQUEST' });
    expect(res.closed).toBe(true);
    expect(seen).toEqual([]);
  });

  it('refuses an invalid Host header with 400', async () => {
    const { port } = await serve();
    const res = await rawExchange(port, 'GET / HTTP/1.1\r\nHost: evil.example/path@x\r\n\r\n', {
      keepAlive: true,
    });
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'PKG_ERR_HTTP_INVALID_HOST' });
    expect(seen).toEqual([]);
  });
});

describe('request targets', () => {
  it.each(['/a%zz', '/a%', '/%C3%28', '/ok?x=%E0%A4%A', '/ok?%'])(
    'answers 400 for the malformed escape in %s and keeps serving',
    async (target) => {
      const { port, url } = await serve();
      const res = await rawExchange(port, `GET ${target} HTTP/1.1\r\nHost: h\r\n\r\n`, {
        keepAlive: true,
      });
      expect(res.status).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({
        error: 'Bad Request',
        code: 'PKG_ERR_HTTP_MALFORMED_URL',
      });
      expect(seen).toEqual([]);
      expect((await fetch(`${url}/fine`)).status).toBe(200);
    },
  );

  it('passes backslashes and dot segments through without rewriting them', async () => {
    const { port } = await serve();
    const res = await rawExchange(port, 'GET /files\\..\\secret/./x HTTP/1.1\r\nHost: h\r\n\r\n', {
      keepAlive: true,
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ path: '/files\\..\\secret/./x', bytes: 0 });
  });
});
