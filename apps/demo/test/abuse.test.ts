// What an attacker or a careless load test does to the demo over real sockets: sign in
// through $hello.auth, pass as someone else, flood room.join and chat.message, open more
// sockets than one address may. Each case failed on the demo before these limits.
import { describe, expect, it } from '@jest/globals';
import { Client, ClientError } from '@pkg/client';
import WebSocket from 'ws';
import type { ClientEvents, ServerEvents } from '../src/events';
import { useDemo } from './helpers/app';
import { HandshakeRefused, type Envelope, type TestClient } from './helpers/ws-client';

const start = useDemo();

async function joinRoom(client: TestClient, room: string, name?: string): Promise<Envelope> {
  client.send('room.join', name === undefined ? { room } : { room, name });
  return client.waitFor('room.joined');
}

/**
 * Collects envelopes until `event` has come `expected` times, lets the server finish what
 * it still has in flight (rate-limit checks answer asynchronously, so a drain marker can
 * overtake them), then drains: returns all that arrived.
 */
async function collect(client: TestClient, event: string, expected: number): Promise<Envelope[]> {
  const seen: Envelope[] = [];
  while (count(seen, event) < expected) seen.push(await client.next());
  await new Promise((resolve) => setTimeout(resolve, 200));
  return [...seen, ...(await client.drain())];
}

const count = (envelopes: Envelope[], event: string, code?: string): number =>
  envelopes.filter((e) => e.event === event && (code === undefined || e.data.code === code)).length;

describe('signing in with $hello.auth (the page)', () => {
  type ChatClient = Client<ClientEvents, ServerEvents>;
  const clients: ChatClient[] = [];
  const open = (ws: string, auth?: string): ChatClient => {
    const client = new Client<ClientEvents, ServerEvents>(ws, {
      WebSocket,
      reconnection: false,
      ...(auth === undefined ? {} : { auth }),
    });
    clients.push(client);
    return client;
  };
  const welcomeOf = (client: ChatClient) =>
    new Promise<Parameters<ServerEvents['welcome']>[0]>((resolve) => client.on('welcome', resolve));

  it('attaches the user of the token sent in $hello, with nothing in the URL', async () => {
    const { ws } = await start();
    try {
      const alice = open(ws, 'alice-token');
      const welcome = welcomeOf(alice);
      await alice.connect();
      expect(alice.protocol).toBe(1);
      expect(await welcome).toMatchObject({
        name: 'Alice',
        user: { id: 'alice', name: 'Alice', role: 'user' },
      });
      const guest = open(ws);
      const guestWelcome = welcomeOf(guest);
      await guest.connect();
      expect(await guestWelcome).toMatchObject({
        user: null,
        name: expect.stringMatching(/^guest-/),
      });
    } finally {
      for (const client of clients.splice(0)) client.disconnect();
    }
  });

  it('refuses an unknown token in $hello with 401 (close 4401), for good', async () => {
    const { ws, http } = await start();
    try {
      const refused = await open(ws, 'not-a-token')
        .connect()
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(refused).toBeInstanceOf(ClientError);
      expect(refused).toMatchObject({ code: 'PKG_ERR_CLIENT_UNAUTHORIZED', status: 401 });
      const status = (await (await fetch(`${http}/api/status`)).json()) as { clients: number };
      expect(status.clients).toBe(0);
    } finally {
      for (const client of clients.splice(0)) client.disconnect();
    }
  });
});

/** A raw protocol version 1 connection: `$hello` with `hello`, then the `$welcome` data. */
async function helloV1(
  ws: string,
  hello: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ socket: WebSocket; welcome: Record<string, unknown> }> {
  const socket = new WebSocket(`${ws}/`, 'pkg.v1', { headers });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const welcome = new Promise<Record<string, unknown>>((resolve, reject) => {
    socket.on('message', (raw) => {
      const envelope = JSON.parse(String(raw)) as { event: string; data: Record<string, unknown> };
      if (envelope.event === '$welcome') resolve(envelope.data);
    });
    socket.once('close', (code) => reject(new Error(`closed with ${code} before $welcome`)));
  });
  socket.send(JSON.stringify({ event: '$hello', data: { v: 1, ...hello } }));
  return { socket, welcome: await welcome };
}

/** Drops the TCP connection without a close frame: the server keeps the session away. */
async function dropTcp(socket: WebSocket): Promise<void> {
  const closed = new Promise((resolve) => socket.once('close', resolve));
  socket.terminate();
  await closed;
}

describe("resuming someone else's session", () => {
  it("refuses a resume of Alice's session with Bob's token (reason identity), and lets Alice resume", async () => {
    const { ws } = await start();
    const sockets: WebSocket[] = [];
    try {
      const first = await helloV1(ws, { auth: 'alice-token' });
      sockets.push(first.socket);
      const { session, clientId } = first.welcome;
      expect(typeof session).toBe('string');
      await dropTcp(first.socket);

      // Bob holds Alice's session token: the server starts him fresh and says why.
      const bob = await helloV1(ws, { auth: 'bob-token', resume: { session, seq: 0 } });
      sockets.push(bob.socket);
      expect(bob.welcome).toMatchObject({ resumed: false, reason: 'identity' });
      expect(bob.welcome['clientId']).not.toBe(clientId);

      // The same through the handshake's Authorization header, without $hello.auth.
      const viaHeader = await helloV1(
        ws,
        { resume: { session, seq: 0 } },
        { authorization: 'Bearer bob-token' },
      );
      sockets.push(viaHeader.socket);
      expect(viaHeader.welcome).toMatchObject({ resumed: false, reason: 'identity' });

      // A guest (no credentials at all) is not Alice either.
      const guest = await helloV1(ws, { resume: { session, seq: 0 } });
      sockets.push(guest.socket);
      expect(guest.welcome).toMatchObject({ resumed: false, reason: 'identity' });

      // The session stayed Alice's: she resumes it, with a new token.
      const alice = await helloV1(ws, { auth: 'alice-token', resume: { session, seq: 0 } });
      sockets.push(alice.socket);
      expect(alice.welcome).toMatchObject({ resumed: true, clientId });
      expect(alice.welcome['session']).not.toBe(session);
    } finally {
      for (const socket of sockets) socket.terminate();
    }
  });
});

describe('names', () => {
  it("keeps an anonymous client refused from private-team out of Alice's chat", async () => {
    const { join } = await start();
    const [alice] = await join('/', { authorization: 'Bearer alice-token' });
    await joinRoom(alice, 'private-team');
    const [anon] = await join('/?name=Alice');
    anon.send('room.join', { room: 'private-team', name: 'Alice' });
    expect((await anon.next()).data).toMatchObject({ code: 'forbidden', room: 'private-team' });
    anon.send('chat.message', { message: 'I am Alice' });
    expect((await anon.next()).data).toMatchObject({ code: 'not_in_room' });
    expect(count(await alice.drain(), 'chat.message')).toBe(0);
  });

  it("does not let a guest or another user sign with a signed-in user's name", async () => {
    const { join } = await start();
    const [alice] = await join('/', { authorization: 'Bearer alice-token' });
    const [anon] = await join();
    const [bob] = await join('/?key=bob-token');
    await joinRoom(alice, 'lobby', 'Alice');
    await joinRoom(anon, 'lobby', 'Alice');
    await joinRoom(bob, 'lobby', 'Alice');
    for (const [client, text] of [
      [anon, 'from the guest'],
      [bob, 'from bob'],
      [alice, 'from alice'],
    ] as const) {
      client.send('chat.message', { message: text });
    }
    const lines: string[] = [];
    while (lines.length < 3) {
      const line = await alice.waitFor('chat.message');
      lines.push(`${String(line.data.name)}: ${String(line.data.message)}`);
    }
    expect(lines.sort()).toEqual([
      'Alice: from alice',
      'Bob: from bob',
      'guest-Alice: from the guest',
    ]);
  });
});

describe('rate limits', () => {
  it('cuts a flood of room.join from one connection at 20 per 10 s', async () => {
    const { join } = await start();
    const [a] = await join();
    for (let i = 0; i < 30; i += 1) a.send('room.join', { room: `flood-${i}` });
    // Refusals are spaced (at most one error event per interval), joins are not.
    const answers = await collect(a, 'room.joined', 20);
    expect(count(answers, 'room.joined')).toBe(20);
    expect(count(answers, 'error', 'rate_limited')).toBeGreaterThanOrEqual(1);
  });

  it('cuts a flood of join_room (RoomsController) at 20 per 10 s too', async () => {
    const { join } = await start();
    const [a] = await join();
    for (let i = 0; i < 30; i += 1) a.send('join_room', { room: `flood-${i}`, namespace: '/' });
    const answers = await collect(a, 'room_joined', 20);
    expect(count(answers, 'room_joined')).toBe(20);
    expect(count(answers, 'error', 'rate_limited')).toBeGreaterThanOrEqual(1);
  });

  it('cuts chat.message at 30 per 10 s', async () => {
    const { join } = await start();
    const [a] = await join();
    await joinRoom(a, 'lobby');
    for (let i = 0; i < 35; i += 1) a.send('chat.message', { message: `line ${i}` });
    const answers = await collect(a, 'chat.message', 30);
    expect(count(answers, 'chat.message')).toBe(30);
    expect(count(answers, 'error', 'rate_limited')).toBeGreaterThanOrEqual(1);
  });

  it('multiplies every budget by RATE_LIMIT_SCALE', async () => {
    const { join } = await start({ rateLimitScale: 2 });
    const [a] = await join();
    for (let i = 0; i < 41; i += 1) a.send('room.join', { room: `flood-${i}` });
    const answers = await collect(a, 'room.joined', 40);
    expect(count(answers, 'room.joined')).toBe(40);
    expect(count(answers, 'error', 'rate_limited')).toBe(1);
  });
});

describe('max_connections_per_ip', () => {
  async function openMany(
    connect: (path?: string) => Promise<TestClient>,
    n: number,
  ): Promise<Array<number>> {
    const results: number[] = [];
    for (let i = 0; i < n; i += 1) {
      results.push(
        await connect('/').then(
          () => 101,
          (error: unknown) => (error instanceof HandshakeRefused ? error.status : -1),
        ),
      );
    }
    return results;
  }

  it('refuses the 21st WebSocket of one address with 503 by default', async () => {
    const { connect } = await start();
    const results = await openMany(connect, 21);
    expect(results.slice(0, 20).every((status) => status === 101)).toBe(true);
    expect(results[20]).toBe(503);
  });

  it('has no limit with MAX_CONNECTIONS_PER_IP=0 (load tests)', async () => {
    const { connect } = await start({ maxConnectionsPerIp: 0 });
    const results = await openMany(connect, 25);
    expect(results.every((status) => status === 101)).toBe(true);
  });
});
