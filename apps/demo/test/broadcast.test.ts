// POST /api/broadcast over real sockets: admins only, its budget, its schema, the optional
// room, and the flood of unauthenticated POSTs that used to reach every client.
import { describe, expect, it } from '@jest/globals';
import { useDemo } from './helpers/app';

const start = useDemo();

async function json(res: globalThis.Response): Promise<Record<string, unknown>> {
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return (await res.json()) as Record<string, unknown>;
}

function post(
  url: string,
  body: string,
  contentType?: string,
  extra: Record<string, string> = {},
): Promise<globalThis.Response> {
  const headers: Record<string, string> = { ...extra };
  if (contentType !== undefined) headers['content-type'] = contentType;
  return fetch(url, { method: 'POST', headers, body });
}

describe('POST /api/broadcast', () => {
  const ADMIN = { authorization: 'Bearer admin-token' };

  it('answers {success: true} to an admin and sends api.message to every WebSocket client', async () => {
    const { http, join } = await start();
    const [a] = await join();
    const [b] = await join();
    const [c] = await join();
    c.send('room.join', { room: 'elsewhere' });
    await c.waitFor('room.joined');

    const res = await post(
      `${http}/api/broadcast`,
      JSON.stringify({ message: 'hello all' }),
      'application/json',
      ADMIN,
    );
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ success: true });
    for (const client of [a, b, c]) {
      const event = await client.waitFor('api.message');
      expect(event.data).toEqual({
        message: 'hello all',
        room: null,
        timestamp: expect.any(Number),
      });
    }
  });

  it('sends to one room only when the body names it', async () => {
    const { http, join } = await start();
    const [inside] = await join();
    const [outside] = await join();
    inside.send('room.join', { room: 'lobby' });
    await inside.waitFor('room.joined');
    const res = await post(
      `${http}/api/broadcast`,
      JSON.stringify({ message: 'lobby only', room: 'lobby' }),
      'application/json',
      ADMIN,
    );
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect((await inside.waitFor('api.message')).data).toMatchObject({
      message: 'lobby only',
      room: 'lobby',
    });
    expect((await outside.drain()).filter((e) => e.event === 'api.message')).toEqual([]);
  });

  it.each([
    ['no token', {}, 401, /Authorization/],
    ['an unknown token', { authorization: 'Bearer nope' }, 401, /Invalid token/],
    ['a user token', { authorization: 'Bearer alice-token' }, 403, /admin role/],
  ])(
    'answers %s with %i and sends nothing',
    async (_case, headers: Record<string, string>, status, error) => {
      const { http, join } = await start();
      const [a] = await join();
      const body = JSON.stringify({ message: 'spam' });
      const res = await post(`${http}/api/broadcast`, body, 'application/json', headers);
      expect(res.status).toBe(status);
      expect(await json(res)).toEqual({ error: expect.stringMatching(error) });
      expect((await a.drain()).filter((e) => e.event === 'api.message')).toEqual([]);
    },
  );

  it('refuses 300 unauthenticated POSTs: none reaches a client', async () => {
    const { http, join } = await start();
    const [a] = await join();
    const body = JSON.stringify({ message: 'spam' });
    const statuses = await Promise.all(
      Array.from({ length: 300 }, () =>
        post(`${http}/api/broadcast`, body, 'application/json').then(async (res) => {
          await res.arrayBuffer();
          return res.status;
        }),
      ),
    );
    expect(statuses.filter((status) => status === 200)).toEqual([]);
    expect(new Set(statuses)).toEqual(new Set([401]));
    expect((await a.drain()).filter((e) => e.event === 'api.message')).toEqual([]);
  });

  it('lets an admin broadcast 10 times per 60 s, then answers 429 with Retry-After', async () => {
    const { http } = await start();
    const body = JSON.stringify({ message: 'again' });
    for (let i = 1; i <= 10; i += 1) {
      const res = await post(`${http}/api/broadcast`, body, 'application/json', ADMIN);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('10');
      await res.arrayBuffer();
    }
    const limited = await post(`${http}/api/broadcast`, body, 'application/json', ADMIN);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    await limited.arrayBuffer();
  });

  it.each([
    ['message is missing', {}],
    ['message is a number', { message: 42 }],
    ['message is empty', { message: '   ' }],
    ['message is too long', { message: 'x'.repeat(2001) }],
    ['the body is an array', [{ message: 'hi' }]],
    ['room is not a room name', { message: 'hi', room: 'no spaces!' }],
    ['a key is unknown', { message: 'hi', rooms: 'lobby' }],
  ])('answers 400 validation_failed when %s', async (_case, body) => {
    const { http } = await start();
    const res = await post(
      `${http}/api/broadcast`,
      JSON.stringify(body),
      'application/json',
      ADMIN,
    );
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ code: 'validation_failed', issues: expect.any(Array) });
  });

  it.each([
    ['text/plain', 'text/plain'],
    ['form data', 'application/x-www-form-urlencoded'],
    ['no content type', undefined],
  ])('answers 415 {error} for a body sent as %s', async (_case, type) => {
    const { http } = await start();
    const res = await post(`${http}/api/broadcast`, 'message=hi', type, ADMIN);
    expect(res.status).toBe(415);
    expect(await json(res)).toEqual({ error: expect.stringContaining('application/json') });
  });

  it('answers 405 with Allow: POST for another method', async () => {
    const { http } = await start();
    const res = await fetch(`${http}/api/broadcast`);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toMatch(/\bPOST\b/);
    expect(await json(res)).toMatchObject({ error: expect.any(String) });
  });

  it('answers 413 for a body over 1 MiB and sends nothing', async () => {
    const { http, join } = await start();
    const [a] = await join();
    const big = JSON.stringify({ message: 'x'.repeat(1024 * 1024) });
    const res = await post(`${http}/api/broadcast`, big, 'application/json', ADMIN);
    expect(res.status).toBe(413);
    await res.arrayBuffer();
    expect((await a.drain()).filter((e) => e.event === 'api.message')).toEqual([]);
  });

  it('answers 400 for malformed JSON sent as application/json', async () => {
    const { http } = await start();
    const res = await post(`${http}/api/broadcast`, '{"message": ', 'application/json', ADMIN);
    expect(res.status).toBe(400);
    expect(await json(res)).toMatchObject({ error: expect.any(String) });
  });
});
