// Credentials that expire, over real sockets: $welcome.expiresAt, $refresh (accepted,
// refused, another identity, early, twice, malformed), the close past the grace, room grants
// that expire, and server.revoke of an identity from a room or from the server.
import { afterEach, describe, expect, it } from '@jest/globals';
import { RoomsController, type AuthHandler, type ClientCredentials } from '../src/index';
import { cleanup, startServer, TestClient, type Envelope } from './helpers';

afterEach(cleanup);

/**
 * Tokens `<identity>:<ttl ms>` (`ann:500`): accepted with that identity until now + ttl;
 * `bad` is refused; a token without `:` is accepted with no expiry.
 */
const tokens: AuthHandler = (ctx) => {
  if (ctx.auth === undefined || ctx.auth === 'bad') return false;
  const [identity, ttl] = ctx.auth.split(':');
  return ttl === undefined ? { identity: identity! } : { identity: identity!, ttl: Number(ttl) };
};

interface Env extends Envelope {
  id?: unknown;
}

async function hello(url: string, auth: string): Promise<{ client: TestClient; welcome: Env }> {
  const client = await TestClient.connect(url, {}, ['pkg.v1']);
  client.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1, auth } }));
  const welcome = (await client.next('$welcome')) as Env;
  return { client, welcome };
}

function refresh(client: TestClient, auth: unknown, id: unknown): void {
  client.sendRaw(JSON.stringify({ event: '$refresh', data: { auth }, id }));
}

/** The next envelope that answers request `id` ($refresh or error). */
async function answerOf(client: TestClient, id: unknown): Promise<Env> {
  for (;;) {
    const e = (await client.next()) as Env;
    if (e.id === id) return e;
  }
}

describe('credentials that expire', () => {
  it('$welcome says when they expire; $refresh moves it, answered with the new expiry', async () => {
    const { wsUrl } = await startServer([], { auth_refresh_grace: 0 }, (s) =>
      s.addAuthHandler(tokens),
    );
    const before = Date.now();
    // Each credential lasts 1 s and is refreshed every 400 ms: 600 ms of slack per refresh
    // for a loaded machine, and three refreshes still carry the connection past the first
    // expiry.
    const { client, welcome } = await hello(wsUrl, 'ann:1000');
    const expiresAt = welcome.data['expiresAt'] as number;
    expect(expiresAt).toBeGreaterThanOrEqual(before + 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 1000);
    for (let i = 1; i <= 3; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 400));
      refresh(client, 'ann:1000', `r${i}`);
      const answer = await answerOf(client, `r${i}`);
      expect(answer.event).toBe('$refresh');
      expect(answer.data['expiresAt']).toBeGreaterThan(expiresAt);
    }
    expect(Date.now()).toBeGreaterThan(expiresAt);
    expect(client.ws.readyState).toBe(client.ws.OPEN);
  });

  it('without a refresh: token_expired, then close 4419, within the grace and one second', async () => {
    const { wsUrl } = await startServer([], { auth_refresh_grace: 200 }, (s) =>
      s.addAuthHandler(tokens),
    );
    const { client, welcome } = await hello(wsUrl, 'ann:300');
    const expiresAt = welcome.data['expiresAt'] as number;
    const error = (await client.next('error')) as Env;
    expect(error.data).toMatchObject({ code: 'token_expired', expiresAt });
    const closed = await client.closed;
    expect(closed.code).toBe(4419);
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt + 200);
    expect(Date.now()).toBeLessThanOrEqual(expiresAt + 200 + 1000);
  });

  it('a refused $refresh keeps the old expiry; another identity is refused forbidden', async () => {
    const { wsUrl } = await startServer([], { auth_refresh_grace: 0 }, (s) =>
      s.addAuthHandler(tokens),
    );
    const { client, welcome } = await hello(wsUrl, 'ann:600');
    refresh(client, 'bad', 1);
    expect((await answerOf(client, 1)).data).toMatchObject({ code: 'unauthorized', status: 401 });
    refresh(client, 'bob:60000', 2);
    expect((await answerOf(client, 2)).data).toMatchObject({
      code: 'forbidden',
      reason: 'identity',
    });
    // The old expiry still holds: the connection ends then.
    expect((await client.closed).code).toBe(4419);
    expect(Date.now()).toBeGreaterThanOrEqual(welcome.data['expiresAt'] as number);
  });

  it('a refresh without expiry ends the expiry; malformed, without id, or twice at once is refused', async () => {
    let release: (() => void) | undefined;
    const slow: AuthHandler = (ctx) =>
      ctx.auth === 'slow'
        ? new Promise((resolve) => (release = () => resolve({ identity: 'ann' })))
        : tokens(ctx);
    const { wsUrl } = await startServer([], { auth_refresh_grace: 0 }, (s) =>
      s.addAuthHandler(slow),
    );
    const { client } = await hello(wsUrl, 'ann:700');
    client.sendRaw(JSON.stringify({ event: '$refresh', data: { auth: 'ann' } }));
    expect((await client.next('error')).data).toMatchObject({ code: 'invalid_payload' });
    refresh(client, '', 1);
    expect((await answerOf(client, 1)).data).toMatchObject({ code: 'invalid_payload' });
    refresh(client, 'slow', 2);
    refresh(client, 'ann', 3);
    expect((await answerOf(client, 3)).data).toMatchObject({ code: 'busy' });
    release!();
    expect(await answerOf(client, 2)).toMatchObject({
      event: '$refresh',
      data: { expiresAt: null },
    });
    // No expiry any more: still open well past the first one.
    await new Promise((resolve) => setTimeout(resolve, 900));
    expect(client.ws.readyState).toBe(client.ws.OPEN);
  });

  it('1,000 refreshes under a broadcast of 1,000 messages/s: nothing lost, nothing twice, no reconnect', async () => {
    const { wsUrl, server } = await startServer(
      [],
      { auth_refresh_grace: 0, ws_max_messages_per_second: 0 },
      (s) => s.addAuthHandler(tokens),
    );
    const { client } = await hello(wsUrl, 'ann:5000');
    const seen: number[] = [];
    client.ws.on('message', (raw) => {
      const e = JSON.parse(String(raw)) as Env;
      if (e.event === 'tick') seen.push(e.data['n'] as number);
    });
    let n = 0;
    // 10 messages every 10 ms: 1,000 per second.
    const ticker = setInterval(() => {
      for (let i = 0; i < 10; i += 1) server.broadcast('tick', { n: (n += 1) });
    }, 10);
    try {
      for (let i = 0; i < 1000; i += 1) {
        refresh(client, 'ann:5000', i);
        const answer = await answerOf(client, i);
        expect(answer.event).toBe('$refresh');
      }
    } finally {
      clearInterval(ticker);
    }
    const sent = n;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(sent).toBeGreaterThan(0);
    expect(seen).toEqual(Array.from({ length: sent }, (_, i) => i + 1));
    expect(client.ws.readyState).toBe(client.ws.OPEN);
  });
});

describe('rooms and revocation', () => {
  it('canJoin sees who the client is and until when; a grant with a ttl ends with $revoked', async () => {
    const seen: ClientCredentials[] = [];
    const rooms = new RoomsController({
      canJoin: (_id, room, _ns, credentials) => {
        seen.push(credentials);
        return room === 'short' ? { ttl: 300 } : true;
      },
    });
    const { wsUrl, server } = await startServer([rooms], {}, (s) => s.addAuthHandler(tokens));
    const { client, welcome } = await hello(wsUrl, 'ann:60000');
    client.sendRaw(JSON.stringify({ event: 'join_room', data: { room: 'short' }, id: 1 }));
    await answerOf(client, 1);
    expect(seen[0]).toEqual({ identity: 'ann', expiresAt: welcome.data['expiresAt'] });
    const clientId = welcome.data['clientId'] as string;
    expect(server.getClientCount()).toBe(1);
    const revoked = await client.next('$revoked');
    expect(revoked.data).toEqual({ room: 'short', namespace: '/', reason: 'expired' });
    expect(server.getNamespaceManager().getClientsInRoom('short')).toEqual([]);
    expect(server.getCredentials(clientId)).toEqual({
      identity: 'ann',
      expiresAt: welcome.data['expiresAt'],
    });
  });

  it('joining again renews a grant; leaving ends it without a $revoked', async () => {
    const rooms = new RoomsController({ canJoin: () => ({ ttl: 400 }) });
    const { wsUrl } = await startServer([rooms], {}, (s) => s.addAuthHandler(tokens));
    const { client } = await hello(wsUrl, 'ann');
    client.sendRaw(JSON.stringify({ event: 'join_room', data: { room: 'a' }, id: 1 }));
    await answerOf(client, 1);
    client.sendRaw(JSON.stringify({ event: 'leave_room', data: { room: 'a' }, id: 2 }));
    await answerOf(client, 2);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(client.pending().filter((e) => e.event === '$revoked')).toEqual([]);
  });

  it('server.revoke(identity, room) takes each of its connections out of the room, and only them', async () => {
    const { wsUrl, server } = await startServer([new RoomsController()], {}, (s) =>
      s.addAuthHandler(tokens),
    );
    const ann1 = await hello(wsUrl, 'ann');
    const ann2 = await hello(wsUrl, 'ann');
    const bob = await hello(wsUrl, 'bob');
    for (const [c, id] of [
      [ann1.client, 1],
      [ann2.client, 2],
      [bob.client, 3],
    ] as const) {
      c.sendRaw(JSON.stringify({ event: 'join_room', data: { room: 'r' }, id }));
      await answerOf(c, id);
    }
    expect(await server.revoke('ann', 'r')).toBe(2);
    for (const c of [ann1.client, ann2.client]) {
      expect((await c.next('$revoked')).data).toEqual({
        room: 'r',
        namespace: '/',
        reason: 'revoked',
      });
    }
    expect(server.getNamespaceManager().getClientsInRoom('r')).toEqual([
      bob.welcome.data['clientId'],
    ]);
    expect(bob.client.pending().some((e) => e.event === '$revoked')).toBe(false);
  });

  it('server.revoke(identity) sends each of its connections away with revoked and 4403', async () => {
    const { wsUrl, server } = await startServer([], {}, (s) => s.addAuthHandler(tokens));
    const ann = await hello(wsUrl, 'ann');
    const bob = await hello(wsUrl, 'bob');
    expect(await server.revoke('ann')).toBe(1);
    expect((await ann.client.next('error')).data).toMatchObject({ code: 'revoked' });
    expect((await ann.client.closed).code).toBe(4403);
    expect(bob.client.ws.readyState).toBe(bob.client.ws.OPEN);
    expect(await server.revoke('nobody')).toBe(0);
    expect(() => server.revoke('')).toThrow(/identity must be the non-empty string/);
  });
});
