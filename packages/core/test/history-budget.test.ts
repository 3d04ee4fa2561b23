// The $history budget over real sockets: a request of a few dozen bytes can be answered with
// up to history_max_replay_bytes, so one connection inside its inbound message budget must
// not be able to pull an answer per message; a client that reads the position of every room
// it may join, as @pkg/client does after each join, must never be refused.
import { afterEach, describe, expect, it } from '@jest/globals';
import { ServerConfig } from '../src/index';
import { cleanup } from './helpers';
import { join, request, setup, v1, type Message } from './history-kit';

afterEach(cleanup);

const BIG = { match: 'big:*', size: 300, ttl: 60_000 };

/** Reads envelopes until `n` answers (`$history` or `error` with an id) have come. */
async function answers(
  client: Awaited<ReturnType<typeof v1>>,
  n: number,
): Promise<{ served: Message[]; refused: Message[]; bytes: number }> {
  const served: Message[] = [];
  const refused: Message[] = [];
  let bytes = 0;
  while (served.length + refused.length < n) {
    const m = (await client.next()) as Message;
    if (m.id === undefined) continue;
    if (m.event === '$history') {
      served.push(m);
      bytes += JSON.stringify(m).length;
    } else if (m.event === 'error') refused.push(m);
  }
  return { served, refused, bytes };
}

describe('the $history budget', () => {
  it('bounds the answer bytes one connection can pull with a burst of requests', async () => {
    const { server, url } = await setup({ history: [BIG] });
    const c = await v1(url);
    await join(c, { room: 'big:r' });
    // 300 kept messages of about 1 KB: each full answer is about 300 KB.
    const text = 'x'.repeat(1000);
    for (let i = 0; i < 300; i++) server.broadcast('msg', { i, text }, { room: 'big:r' });
    while ((await server.history('big:r')).messages.length < 300) {
      await new Promise((r) => setTimeout(r, 5));
    }
    for (;;) {
      const pending = c.pending();
      if (pending.filter((m) => m.event === 'msg').length >= 300) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    const sent = 60;
    for (let i = 0; i < sent; i++) request(c, '$history', { room: 'big:r' }, `h${i}`);
    const { served, refused, bytes } = await answers(c, sent);

    // Every request is answered once: served, or refused with a time to wait.
    expect(served.length + refused.length).toBe(sent);
    const burst = Math.max(2 * 256 * 1024, 1024 * 1024);
    const oneAnswer = Math.max(...served.map((m) => JSON.stringify(m).length));
    expect(oneAnswer).toBeGreaterThan(250_000);
    // At most the byte burst plus the one answer that overdrew it (not 60 x 300 KB).
    expect(bytes).toBeLessThanOrEqual(burst + oneAnswer);
    expect(refused.length).toBeGreaterThan(sent / 2);
    for (const m of refused) {
      expect(m.data).toMatchObject({ code: 'rate_limited', event: '$history' });
      expect(m.data['retryAfter']).toBeGreaterThanOrEqual(1);
      expect(String(m.data['message'])).toContain('history_max_bytes_per_second');
    }
    // A refused request is not a protocol error: the connection stays open and usable.
    request(c, 'join_room', { room: 'big:other' }, 'after');
    for (;;) {
      const m = (await c.next()) as Message;
      if (m.id === 'after') {
        expect(m.event).toBe('join_room');
        break;
      }
    }
  });

  it('answers a position read for every room a client may join', async () => {
    const rooms = 40;
    const { url } = await setup({ history: [BIG], max_rooms_per_client: rooms });
    const c = await v1(url);
    for (let i = 0; i < rooms; i++) await join(c, { room: `big:${i}` }, `j${i}`);
    for (let i = 0; i < rooms; i++) request(c, '$history', { room: `big:${i}`, limit: 1 }, i);
    const { served, refused } = await answers(c, rooms);
    expect(refused).toEqual([]);
    expect(served.map((m) => m.id).sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: rooms }, (_, i) => i),
    );
  });

  it('refuses requests past the request rate, whatever their size', async () => {
    const { url } = await setup({
      history: [BIG],
      max_rooms_per_client: 4,
      history_max_requests_per_second: 1,
    });
    const c = await v1(url);
    await join(c, { room: 'big:q' });
    for (let i = 0; i < 10; i++) request(c, '$history', { room: 'big:q', limit: 1 }, i);
    const { served, refused } = await answers(c, 10);
    // A burst of max_rooms_per_client (4), then one per second.
    expect(served.length).toBeGreaterThanOrEqual(4);
    expect(served.length).toBeLessThanOrEqual(5);
    expect(refused.every((m) => m.data['code'] === 'rate_limited')).toBe(true);
  });

  it('is off with 0', async () => {
    const { url } = await setup({
      history: [BIG],
      max_rooms_per_client: 1,
      history_max_requests_per_second: 0,
      history_max_bytes_per_second: 0,
    });
    const c = await v1(url);
    await join(c, { room: 'big:z' });
    for (let i = 0; i < 30; i++) request(c, '$history', { room: 'big:z', limit: 1 }, i);
    const { refused } = await answers(c, 30);
    expect(refused).toEqual([]);
  });

  it('has documented defaults and refuses odd settings with the key named', () => {
    const config = new ServerConfig({});
    expect(config.get('history_max_requests_per_second')).toBe(8);
    expect(config.get('history_max_bytes_per_second')).toBe(256 * 1024);
    for (const bad of [-1, 1.5, '8', null]) {
      expect(() => new ServerConfig({ history_max_requests_per_second: bad as number })).toThrow(
        /history_max_requests_per_second/,
      );
      expect(() => new ServerConfig({ history_max_bytes_per_second: bad as number })).toThrow(
        /history_max_bytes_per_second/,
      );
    }
  });
});
