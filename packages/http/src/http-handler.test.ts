import { Agent, createServer, get as httpGet, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { AbstractLogger } from '@pkg/logger';
import type { LoggerInterface } from '@pkg/logger';
import { CorsConfig } from './cors';
import { HttpError } from './errors';
import { HttpHandler } from './http-handler';
import { Request } from './request';
import { Response } from './response';

interface Line {
  level: string;
  message: string;
  context?: Record<string, unknown>;
}

function recordingLogger(lines: Line[]): LoggerInterface {
  class Recording extends AbstractLogger {
    log(level: string, message: string, context?: Record<string, unknown>): void {
      lines.push({ level, message, context });
    }
    override exception(error: unknown, context?: Record<string, unknown>): void {
      lines.push({ level: 'exception', message: (error as Error).message, context });
    }
  }
  return new Recording();
}

function get(path = '/', headers: Record<string, string> = {}): Request {
  return new Request({ method: 'GET', url: path, headers: { host: 'h.example', ...headers } });
}

describe('HttpHandler construction', () => {
  it('exposes its CORS config, trust predicate and body limit', () => {
    const handler = new HttpHandler({
      trustProxy: ['10.0.0.0/8'],
      maxBodySize: 10,
      cors: { max_age: 5 },
    });
    expect(handler.getCorsConfig()).toBeInstanceOf(CorsConfig);
    expect(handler.getCorsConfig().getMaxAge()).toBe(5);
    expect(handler.getTrustPredicate()('10.2.3.4')).toBe(true);
    expect(handler.getMaxBodySize()).toBe(10);
    expect(new HttpHandler().getMaxBodySize()).toBe(1048576);
  });

  it('refuses bad options and a dispatcher that is not a function', () => {
    expect(() => new HttpHandler({ maxBodySize: -5 })).toThrow(TypeError);
    expect(() => new HttpHandler().setDispatcher('x' as never)).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_HTTP_INVALID_OPTION' }),
    );
  });
});

describe('HttpHandler.parseHttpRequest', () => {
  it('builds a Request with the trust predicate and the body', () => {
    const handler = new HttpHandler({ trustProxy: ['127.0.0.1'] });
    const req = {
      method: 'POST',
      url: '/p',
      httpVersion: '1.1',
      headers: { host: 'h', 'x-forwarded-for': '198.51.100.2', 'content-type': 'application/json' },
      socket: { remoteAddress: '127.0.0.1' },
    } as unknown as IncomingMessage;
    const request = handler.parseHttpRequest(req, Buffer.from('{"a":1}'));
    expect(request.getIpAddress()).toBe('198.51.100.2');
    expect(request.getBody()).toEqual({ a: 1 });
  });
});

describe('HttpHandler.processRequest', () => {
  it("runs the request's onResponse hooks on every outcome, a 500 included", async () => {
    const seen: number[] = [];
    const handler = new HttpHandler({
      logger: recordingLogger([]),
      dispatch: (request) => {
        request.onResponse((response) => {
          seen.push(response.getStatusCode());
          response.setHeader('X-Hook', 'first');
        });
        request.onResponse((response) => response.setHeader('X-Second', 'yes'));
        if (request.getPath() === '/boom') throw new Error('handler failed');
        return Response.json({ ok: true }, 201);
      },
    });
    const ok = await handler.processRequest(get('/ok'));
    expect(ok.getStatusCode()).toBe(201);
    expect(ok.getHeader('x-hook')).toBe('first');
    expect(ok.getHeader('x-second')).toBe('yes');
    const failed = await handler.processRequest(get('/boom'));
    expect(failed.getStatusCode()).toBe(500);
    expect(failed.getHeader('x-hook')).toBe('first');
    expect(seen).toEqual([201, 500]);
  });

  it('answers 500 when an onResponse hook throws', async () => {
    const lines: Line[] = [];
    const handler = new HttpHandler({
      logger: recordingLogger(lines),
      dispatch: (request) => {
        request.onResponse(() => {
          throw new Error('hook failed');
        });
        return Response.json({ ok: true });
      },
    });
    const response = await handler.processRequest(get('/x'));
    expect(response.getStatusCode()).toBe(500);
    expect(lines.map((l) => l.message)).toEqual(['hook failed']);
  });

  it('answers 404 JSON without a dispatcher', async () => {
    const response = await new HttpHandler().processRequest(get());
    expect(response.getStatusCode()).toBe(404);
    expect(response.getBodyString()).toBe('{"error":"Not Found"}');
  });

  it('calls the dispatcher, sync or async, and adds CORS headers', async () => {
    const handler = new HttpHandler({ cors: { allowed_origins: ['https://a.example'] } });
    handler.setDispatcher((request) => Response.json({ path: request.getPath() }));
    const response = await handler.processRequest(get('/x', { origin: 'https://a.example' }));
    expect(response.getBodyString()).toBe('{"path":"/x"}');
    expect(response.getHeader('Access-Control-Allow-Origin')).toBe('https://a.example');
    expect(response.getHeader('Vary')).toBe('Origin');
    handler.setDispatcher(async () => Response.text('later', 202));
    expect((await handler.processRequest(get())).getStatusCode()).toBe(202);
  });

  it('answers preflights without calling the dispatcher', async () => {
    let calls = 0;
    const handler = new HttpHandler({
      dispatch: () => {
        calls++;
        return new Response();
      },
    });
    const preflight = new Request({
      method: 'OPTIONS',
      url: '/x',
      headers: { origin: 'https://a.example', 'access-control-request-method': 'PUT' },
    });
    const response = await handler.processRequest(preflight);
    expect(response.getStatusCode()).toBe(204);
    expect(response.getHeader('Access-Control-Allow-Methods')).toContain('PUT');
    expect(calls).toBe(0);
    expect(handler.handlePreflightRequest(preflight).getStatusCode()).toBe(204);
  });

  it('turns a thrown error into a logged 500 without details', async () => {
    const lines: Line[] = [];
    const handler = new HttpHandler({
      logger: recordingLogger(lines),
      dispatch: () => {
        throw new Error('database is down');
      },
    });
    const response = await handler.processRequest(get('/boom'));
    expect(response.getStatusCode()).toBe(500);
    expect(response.getBodyString()).toBe('{"error":"Internal Server Error"}');
    expect(lines).toEqual([
      {
        level: 'exception',
        message: 'database is down',
        context: { code: 'PKG_ERR_HTTP_HANDLER_FAILED', method: 'GET', path: '/boom', ip: '' },
      },
    ]);
  });

  it('puts the message and stack in 500 bodies in debug mode', async () => {
    const handler = new HttpHandler({
      debug: true,
      logger: recordingLogger([]),
      dispatch: async () => Promise.reject(new Error('details here')),
    });
    const body = JSON.parse((await handler.processRequest(get())).getBodyString()) as Record<
      string,
      string
    >;
    expect(body.error).toBe('Internal Server Error');
    expect(body.message).toBe('details here');
    expect(body.stack).toContain('details here');
  });

  it('answers an HttpError with its own status, e.g. malformed JSON read by the handler', async () => {
    const handler = new HttpHandler({ dispatch: (request) => Response.json(request.getBody()) });
    const request = new Request({
      method: 'POST',
      url: '/',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from('{oops'),
    });
    const response = await handler.processRequest(request);
    expect(response.getStatusCode()).toBe(400);
    expect(JSON.parse(response.getBodyString())).toMatchObject({
      error: 'Bad Request',
      code: 'PKG_ERR_HTTP_INVALID_JSON',
    });
    const notFound = new HttpHandler({
      dispatch: () => {
        throw new HttpError('PKG_ERR_HTTP_NOT_FOUND', 'nothing here');
      },
    });
    expect((await notFound.processRequest(get())).getBodyString()).toBe('{"error":"Not Found"}');
  });

  it('answers 500 when the dispatcher returns something that is not a Response', async () => {
    const lines: Line[] = [];
    const handler = new HttpHandler({
      logger: recordingLogger(lines),
      dispatch: () => ({ status: 200 }) as unknown as Response,
    });
    const response = await handler.processRequest(get());
    expect(response.getStatusCode()).toBe(500);
    expect(lines[0]?.level).toBe('error');
    expect(lines[0]?.message).toContain('returned an object instead of a Response');
    expect(lines[0]?.context?.code).toBe('PKG_ERR_HTTP_INVALID_RESPONSE');
  });

  it('still answers when the logger itself throws', async () => {
    const broken = recordingLogger([]);
    broken.exception = () => {
      throw new Error('disk full');
    };
    const handler = new HttpHandler({
      logger: broken,
      dispatch: () => {
        throw new Error('x');
      },
    });
    expect((await handler.processRequest(get())).getStatusCode()).toBe(500);
  });
});

describe('HttpHandler on a node:http server', () => {
  /** Answers every request with what it knows of the connection. */
  async function serve(): Promise<{ server: Server; port: number; connections: () => number }> {
    const handler = new HttpHandler({
      dispatch: (request) =>
        Response.json({
          path: request.getPath(),
          ip: request.getIpAddress(),
          scheme: request.getScheme(),
          port: request.getPort(),
        }),
    });
    let connections = 0;
    const server = createServer((req, res) => void handler.handle(req, res));
    server.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { server, port: (server.address() as AddressInfo).port, connections: () => connections };
  }

  it("gives every request on a keep-alive connection that connection's addresses", async () => {
    const { server, port, connections } = await serve();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (const path of ['/a', '/b', '/c']) {
        const answer = await new Promise<string>((resolve, reject) => {
          // HTTP/1.1 with a Host header: the port comes from it.
          httpGet({ host: '127.0.0.1', port, path, agent }, (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.on('end', () => resolve(text));
          }).on('error', reject);
        });
        expect(JSON.parse(answer)).toEqual({ path, ip: '127.0.0.1', scheme: 'http', port });
      }
      expect(connections()).toBe(1);
    } finally {
      agent.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('gives pipelined HTTP/1.0 requests without Host the port the connection arrived on', async () => {
    const { server, port } = await serve();
    const socket = connect(port, '127.0.0.1');
    try {
      const text = await new Promise<string>((resolve, reject) => {
        let received = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => (received += chunk));
        socket.on('end', () => resolve(received));
        socket.on('error', reject);
        socket.write(
          'GET /one HTTP/1.0\r\nConnection: keep-alive\r\n\r\n' +
            'GET /two HTTP/1.0\r\nConnection: keep-alive\r\n\r\n' +
            'GET /three HTTP/1.0\r\n\r\n',
        );
      });
      const bodies = text
        .split('HTTP/1.1 200 OK')
        .slice(1)
        .map((answer) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as unknown);
      expect(bodies).toEqual(
        ['/one', '/two', '/three'].map((path) => ({ path, ip: '127.0.0.1', scheme: 'http', port })),
      );
    } finally {
      socket.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
