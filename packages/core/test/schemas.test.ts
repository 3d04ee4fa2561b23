// Standard Schema validation on both protocols, over real sockets, with zod and valibot:
// failures answered 400 / error event `validation_failed` with bounded issues; successes
// hand the schema's OUTPUT to the handler; validation runs after middleware and the rate
// limit. Also the return forms of HTTP handlers and the refused Express-style path.
import { afterEach, describe, expect, it } from '@jest/globals';
import * as v from 'valibot';
import { z } from 'zod';
import {
  HttpRoute,
  RateLimit,
  Response,
  SocketController,
  SocketOn,
  type HttpMiddlewareFn,
  type Request,
  type WsMiddlewareFn,
} from '../src/index';
import { MAX_ISSUES, MAX_ISSUE_MESSAGE } from '../src/routing/validation';
import { TestClient, cleanup, startServer } from './helpers';

afterEach(cleanup);

const seen: unknown[] = [];

const ChatMessage = z.object({ room: z.string().min(1).max(32), text: z.string().trim().max(10) });
const Rename = v.object({ name: v.pipe(v.string(), v.minLength(2), v.toUpperCase()) });

const requireToken: WsMiddlewareFn = (context, next) => {
  if ((context.data as { token?: unknown }).token === 'ok') return next();
  context.setAttribute('refused', true);
  return undefined;
};

class SchemaController extends SocketController {
  @SocketOn('chat.send', { schema: ChatMessage })
  chat(clientId: string, data: { room: string; text: string }): void {
    seen.push(data);
    this.emit(clientId, 'chat.ok', data);
  }

  @SocketOn('sum', { schema: z.array(z.number()) })
  sum(_clientId: string, data: number[]): number {
    return data.reduce((total, n) => total + n, 0);
  }

  @SocketOn('user.rename', { schema: Rename })
  rename(clientId: string, data: { name: string }): void {
    this.emit(clientId, 'user.renamed', data);
  }

  @SocketOn('guarded', {
    schema: z.object({ token: z.string(), n: z.number() }),
    middlewares: [requireToken],
  })
  guarded(clientId: string): void {
    this.emit(clientId, 'guarded.ok', {});
  }

  @RateLimit(2, 60)
  @SocketOn('limited', { schema: z.object({ n: z.number() }) })
  limited(clientId: string, data: { n: number }): void {
    this.emit(clientId, 'limited.ok', data);
  }

  @SocketOn('many', { schema: z.array(z.number()) })
  many(clientId: string): void {
    this.emit(clientId, 'many.ok', {});
  }

  @HttpRoute('POST', '/items/{id}', {
    params: z.object({ id: z.coerce.number().int().positive() }),
    query: v.object({ verbose: v.optional(v.picklist(['yes', 'no'])) }),
    body: z.object({ name: z.string().min(1), tags: z.array(z.string()).default([]) }),
  })
  create(
    _request: Request,
    input: {
      params: { id: number };
      query: { verbose?: 'yes' | 'no' };
      body: { name: string; tags: string[] };
    },
  ) {
    return { id: input.params.id, verbose: input.query.verbose ?? null, body: input.body };
  }

  @HttpRoute('GET', '/header', { headers: z.object({ 'x-api-key': z.string().length(4) }) })
  header(_request: Request, input: { headers: { 'x-api-key': string } }) {
    return { key: input.headers['x-api-key'] };
  }

  @RateLimit(1, 60)
  @HttpRoute('POST', '/limited', { body: z.object({ n: z.number() }) })
  limitedHttp() {
    return { ok: true };
  }

  @HttpRoute('POST', '/auth', {
    body: z.object({ n: z.number() }),
    middlewares: [
      ((request, next) =>
        request.getHeader('authorization') === 'yes'
          ? next()
          : Response.json({ error: 'Unauthorized' }, 401)) satisfies HttpMiddlewareFn,
    ],
  })
  auth() {
    return { ok: true };
  }
}

async function setup() {
  seen.length = 0;
  return startServer([new SchemaController()]);
}

describe('WebSocket schemas', () => {
  it('hands the schema output to the handler (zod trims)', async () => {
    const { wsUrl } = await setup();
    const client = await TestClient.connect(wsUrl);
    client.send('chat.send', { room: 'lobby', text: '  hi  ', extra: 1 });
    expect((await client.next('chat.ok')).data).toEqual({ room: 'lobby', text: 'hi' });
    expect(seen).toEqual([{ room: 'lobby', text: 'hi' }]);
  });

  it('answers validation_failed with the issues and does not call the handler (zod)', async () => {
    const { wsUrl, logger } = await setup();
    const client = await TestClient.connect(wsUrl);
    client.send('chat.send', { room: '', text: 'x'.repeat(50) });
    const error = await client.next('error');
    expect(error.data).toMatchObject({
      code: 'validation_failed',
      event: 'chat.send',
      issues: [
        { path: ['room'], message: expect.any(String) },
        { path: ['text'], message: expect.any(String) },
      ],
    });
    expect(seen).toEqual([]);
    expect(logger.lines.some((e) => e.context?.['code'] === 'PKG_ERR_CORE_VALIDATION_FAILED')).toBe(
      true,
    );
    // The connection stays open.
    client.send('chat.send', { room: 'a', text: 'b' });
    expect((await client.next('chat.ok')).data).toEqual({ room: 'a', text: 'b' });
  });

  it('answers a request (id) that fails its schema with validation_failed carrying the id', async () => {
    const { wsUrl } = await setup();
    const client = await TestClient.connect(wsUrl);
    client.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1 } }));
    expect((await client.next()).event).toBe('$welcome');
    client.sendRaw(JSON.stringify({ event: 'sum', data: [1, 'x'], id: 'bad' }));
    expect(await client.next('error')).toMatchObject({
      id: 'bad',
      data: { code: 'validation_failed', event: 'sum', issues: [{ path: [1] }] },
    });
    // A valid request is answered with the handler's result, once.
    client.sendRaw(JSON.stringify({ event: 'sum', data: [1, 2], id: 7 }));
    expect(await client.next('sum')).toEqual({ event: 'sum', id: 7, data: 3 });
  });

  it('validates with valibot and passes its transformed output', async () => {
    const { wsUrl } = await setup();
    const client = await TestClient.connect(wsUrl);
    client.send('user.rename', { name: 'ada' });
    expect((await client.next('user.renamed')).data).toEqual({ name: 'ADA' });
    client.send('user.rename', { name: 1 });
    const error = await client.next('error');
    expect(error.data).toMatchObject({ code: 'validation_failed', issues: [{ path: ['name'] }] });
  });

  it('runs middleware before the schema', async () => {
    const { wsUrl } = await setup();
    const client = await TestClient.connect(wsUrl);
    // Refused by the middleware: invalid data, yet no validation error.
    client.send('guarded', { token: 'no' });
    client.send('guarded', { token: 'ok' });
    const error = await client.next('error');
    expect(error.data).toMatchObject({ code: 'validation_failed', issues: [{ path: ['n'] }] });
    expect(client.pending()).toEqual([]);
  });

  it('counts invalid messages against the rate limit', async () => {
    const { wsUrl } = await setup();
    const client = await TestClient.connect(wsUrl);
    client.send('limited', { n: 'x' });
    client.send('limited', { n: 'y' });
    client.send('limited', { n: 3 });
    // validation_failed is a protocol error: its second reply falls within
    // ws_error_reply_interval and is not sent; the third message is over the limit.
    expect((await client.next('error')).data).toMatchObject({ code: 'validation_failed' });
    expect((await client.next('error')).data).toMatchObject({ code: 'rate_limited' });
  });

  it('bounds the number and size of issues', async () => {
    const { wsUrl } = await setup();
    const client = await TestClient.connect(wsUrl);
    client.send(
      'many',
      Array.from({ length: 500 }, () => 'x'.repeat(1000)),
    );
    const error = await client.next('error');
    const issues = (error.data as { issues: Array<{ message: string }> }).issues;
    expect(issues).toHaveLength(MAX_ISSUES);
    for (const issue of issues) expect(issue.message.length).toBeLessThanOrEqual(MAX_ISSUE_MESSAGE);
    expect(JSON.stringify(error.data).length).toBeLessThan(MAX_ISSUES * (MAX_ISSUE_MESSAGE + 200));
  });
});

describe('HTTP schemas', () => {
  it('hands the coerced and defaulted values to the handler', async () => {
    const { base } = await setup();
    const res = await fetch(`${base}/items/42?verbose=yes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'pen' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: 42, verbose: 'yes', body: { name: 'pen', tags: [] } });
  });

  it('answers 400 validation_failed listing the issues of every part', async () => {
    const { base } = await setup();
    const res = await fetch(`${base}/items/abc?verbose=maybe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: '' }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { issues: Array<{ path: unknown[] }> };
    expect(body).toMatchObject({ error: 'Bad Request', code: 'validation_failed' });
    expect(body.issues.map((i) => i.path)).toEqual([
      ['params', 'id'],
      ['query', 'verbose'],
      ['body', 'name'],
    ]);
  });

  it('validates headers (lower-case names)', async () => {
    const { base } = await setup();
    const ok = await fetch(`${base}/header`, { headers: { 'X-Api-Key': 'abcd' } });
    expect(await ok.json()).toEqual({ key: 'abcd' });
    const bad = await fetch(`${base}/header`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ issues: [{ path: ['headers', 'x-api-key'] }] });
  });

  it('runs middleware first and counts invalid requests against the rate limit', async () => {
    const { base } = await setup();
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    expect((await post('/auth', { n: 'x' })).status).toBe(401);
    expect((await post('/auth', { n: 'x' }, { authorization: 'yes' })).status).toBe(400);
    expect((await post('/limited', { n: 'x' })).status).toBe(400);
    expect((await post('/limited', { n: 1 })).status).toBe(429);
  });

  it('answers a malformed JSON body with 400 before the schema', async () => {
    const { base } = await setup();
    const res = await fetch(`${base}/items/1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"name":',
    });
    expect(res.status).toBe(400);
  });
});

class ReturnsController extends SocketController {
  @HttpRoute('GET', '/object')
  object() {
    return { a: 1 };
  }

  @HttpRoute('GET', '/array')
  async array() {
    return [1, 2];
  }

  @HttpRoute('POST', '/nothing')
  nothing(): void {}

  @HttpRoute('GET', '/web')
  web() {
    return new globalThis.Response('made with fetch', {
      status: 201,
      headers: { 'content-type': 'text/plain', 'x-extra': 'yes' },
    });
  }

  @HttpRoute('GET', '/web-json')
  async webJson() {
    return globalThis.Response.json({ web: true });
  }

  @RateLimit(5, 60)
  @HttpRoute('GET', '/limited-object')
  limitedObject() {
    return { limited: true };
  }

  @HttpRoute('GET', '/string')
  string(): Response {
    return 'text' as unknown as Response;
  }
}

describe('HTTP return forms', () => {
  it('sends objects and arrays as 200 JSON, nothing as 204, a WHATWG Response as it is', async () => {
    const { base } = await startServer([new ReturnsController()]);
    const object = await fetch(`${base}/object`);
    expect([object.status, object.headers.get('content-type'), await object.json()]).toEqual([
      200,
      'application/json; charset=utf-8',
      { a: 1 },
    ]);
    expect(await (await fetch(`${base}/array`)).json()).toEqual([1, 2]);
    const nothing = await fetch(`${base}/nothing`, { method: 'POST' });
    expect([nothing.status, await nothing.text()]).toEqual([204, '']);
    const web = await fetch(`${base}/web`);
    expect([web.status, web.headers.get('x-extra'), await web.text()]).toEqual([
      201,
      'yes',
      'made with fetch',
    ]);
    expect(await (await fetch(`${base}/web-json`)).json()).toEqual({ web: true });
    const limited = await fetch(`${base}/limited-object`);
    expect(limited.headers.get('x-ratelimit-limit')).toBe('5');
    expect(await limited.json()).toEqual({ limited: true });
  });

  it('answers 500 with a hint for a value that cannot be sent', async () => {
    const { base, logger } = await startServer([new ReturnsController()]);
    expect((await fetch(`${base}/string`)).status).toBe(500);
    const messages = logger.exceptions.map((e) => (e.error as Error).message);
    expect(messages).toEqual([expect.stringMatching(/plain object or array .* or nothing/)]);
  });
});

describe('Express-style paths', () => {
  it('are refused at declaration with the {name} form in the message', () => {
    let thrown: unknown;
    try {
      class Bad extends SocketController {
        @HttpRoute('GET', '/users/:id/posts/:postId')
        show() {
          return {};
        }
      }
      void Bad;
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toMatchObject({
      code: 'PKG_ERR_DEC_INVALID_PATH',
      message: expect.stringContaining('"/users/{id}/posts/{postId}"'),
    });
  });
});
