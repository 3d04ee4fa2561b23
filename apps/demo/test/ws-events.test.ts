import { describe, expect, it } from '@jest/globals';
import { useDemo, type RunningDemo } from './helpers/app';
import { HandshakeRefused, TestClient, type Envelope } from './helpers/ws-client';

const start = useDemo();

async function joinRoom(client: TestClient, room: string, name?: string) {
  client.send('room.join', name === undefined ? { room } : { room, name });
  return client.waitFor('room.joined');
}

const notices = (envelopes: Envelope[]): Envelope[] =>
  envelopes.filter((e) => e.event === 'user.joined' || e.event === 'user.left');

async function expectError(client: TestClient, code: string) {
  const error = await client.next();
  expect(error.event).toBe('error');
  expect(error.data).toMatchObject({ code, message: expect.any(String) });
  return error;
}

/** The `pos` of a message to a chat room: the demo's rooms keep history (CHAT_HISTORY). */
const kept = (room: string) => ({
  room,
  namespace: '/',
  epoch: expect.any(String),
  offset: expect.any(Number),
});

describe('connect and disconnect', () => {
  it('welcomes a client with its id, a marked guest name and the client count', async () => {
    const { join } = await start();
    const [, welcome] = await join();
    expect(welcome.data).toEqual({
      clientId: expect.any(String),
      name: expect.stringMatching(/^guest-[0-9a-f]{6}$/),
      user: null,
      clients: 1,
    });
  });

  it('takes the chosen name from ?name= on the WebSocket URL, marked as a guest', async () => {
    const { join } = await start();
    await join();
    const [, welcome] = await join('/?name=Zoe');
    expect(welcome.data).toMatchObject({ name: 'guest-Zoe', user: null, clients: 2 });
  });

  it('refuses a ?name= longer than 32 characters with 400', async () => {
    const { connect } = await start();
    const refused = await connect(`/?name=${'n'.repeat(33)}`).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect((refused as HandshakeRefused).status).toBe(400);
  });

  it('tells nobody when a client outside any room connects or leaves', async () => {
    const { join } = await start();
    const [a] = await join();
    const [b] = await join();
    await joinRoom(b, 'lobby', 'Bea');
    const [c] = await join('/?name=Cy');
    await c.close();
    expect(await a.drain()).toEqual([]);
    expect(notices(await b.drain())).toEqual([]);
  });

  it("tells only the room's members when a member leaves, with the online count", async () => {
    const { join } = await start();
    const [a] = await join();
    const [outside] = await join();
    const [other] = await join();
    const [b, welcome] = await join();
    await joinRoom(a, 'lobby', 'Ann');
    await joinRoom(other, 'other', 'Oz');
    await joinRoom(b, 'lobby', 'Bea');
    await a.waitFor('user.joined');
    await b.close();
    expect(await a.next()).toEqual({
      event: 'user.left',
      data: {
        clientId: welcome.data.clientId,
        name: 'guest-Bea',
        room: 'lobby',
        clients: 3,
        timestamp: expect.any(Number),
      },
      pos: kept('lobby'),
    });
    expect(notices(await outside.drain())).toEqual([]);
    expect(notices(await other.drain())).toEqual([]);
  });

  it('never names a private room to anyone outside it', async () => {
    const { join } = await start();
    const [anon] = await join();
    const [alice] = await join('/', { authorization: 'Bearer alice-token' });
    await joinRoom(alice, 'private-team');
    await alice.close();
    const seen = await anon.drain();
    expect(JSON.stringify(seen)).not.toContain('private-team');
    expect(notices(seen)).toEqual([]);
  });
});

describe('chat.message', () => {
  it('answers a client in no room with error not_in_room and reaches nobody', async () => {
    const { join } = await start();
    const [a] = await join();
    const [b] = await join();
    await joinRoom(b, 'lobby');
    a.send('chat.message', { message: 'hi everyone' });
    const error = await expectError(a, 'not_in_room');
    expect(error.data.message).toMatch(/room\.join/);
    expect((await b.drain()).filter((e) => e.event === 'chat.message')).toEqual([]);
    expect(await a.drain()).toEqual([]);
  });

  it('refuses a request (protocol version 1) in no room with not_in_room under its id, and nothing else', async () => {
    const { ws, app } = await start();
    const a = await TestClient.connect(`${ws}/`, {}, 'pkg.v1');
    try {
      a.send('$hello', { v: 1 });
      await a.waitFor('$welcome');
      await a.waitFor('welcome');
      a.send('chat.message', { message: 'hi everyone' }, 7);
      const refusal = await a.next();
      expect(refusal).toEqual({
        event: 'error',
        id: 7,
        data: {
          code: 'not_in_room',
          message: expect.stringMatching(/room\.join/),
          event: 'chat.message',
        },
      });
      // One answer per request: no {delivered} beside the refusal, no error without the id.
      expect(await a.drain()).toEqual([]);

      // A join the room policy refuses, sent with an id, is refused under that id too.
      a.send('room.join', { room: 'private-team' }, 'join-1');
      expect(await a.next()).toEqual({
        event: 'error',
        id: 'join-1',
        data: { code: 'forbidden', message: expect.any(String), room: 'private-team' },
      });
      expect(await a.drain()).toEqual([]);

      // In a room, the same request is answered {delivered: true} under its id.
      a.send('room.join', { room: 'lobby' }, 8);
      expect((await a.waitFor('room.joined')).data).toMatchObject({ room: 'lobby' });
      a.send('chat.message', { message: 'now in lobby' }, 9);
      // The line reaches the room (the sender included), then the answer comes.
      expect((await a.waitFor('chat.message')).data).toMatchObject({ message: 'now in lobby' });
      expect(await a.waitFor('chat.message')).toEqual({
        event: 'chat.message',
        id: 9,
        data: { delivered: true },
      });
      expect(app.server.getClientCount()).toBe(1);
    } finally {
      await a.close();
    }
  });

  it("goes only to the sender's room", async () => {
    const { join } = await start();
    const [a] = await join();
    const [b] = await join();
    const [c] = await join();
    await joinRoom(a, 'lobby', 'Ann');
    await joinRoom(b, 'lobby', 'Ben');
    await joinRoom(c, 'other', 'Cid');
    a.send('chat.message', { message: 'lobby only' });
    const received = await b.waitFor('chat.message');
    expect(received.data).toMatchObject({
      name: 'guest-Ann',
      message: 'lobby only',
      room: 'lobby',
    });
    expect((await a.waitFor('chat.message')).data.message).toBe('lobby only');
    const seenByC = await c.drain();
    expect(seenByC.filter((e) => e.event === 'chat.message')).toEqual([]);
  });

  it.each([
    ['message is missing', {}],
    ['message is not a string', { message: 7 }],
    ['message is blank', { message: ' ' }],
    ['message is too long', { message: 'x'.repeat(2001) }],
    ['data is an array', ['hi']],
  ])('answers error validation_failed when %s, and keeps the connection', async (_case, data) => {
    const { join } = await start();
    const [a] = await join();
    await joinRoom(a, 'lobby');
    a.send('chat.message', data);
    await expectError(a, 'validation_failed');
    expect(await a.drain()).toEqual([]);
  });
});

describe('room.join', () => {
  it('answers room.joined and moves the client out of its previous room', async () => {
    const { join } = await start();
    const [a, welcome] = await join();
    const [b] = await join();
    expect((await joinRoom(a, 'r1', 'Ann')).data).toEqual({
      room: 'r1',
      clientId: welcome.data.clientId,
      name: 'guest-Ann',
    });
    await joinRoom(a, 'r2');
    await joinRoom(b, 'r1');
    b.send('chat.message', { message: 'to r1' });
    await b.waitFor('chat.message');
    const seenByA = await a.drain();
    expect(seenByA.filter((e) => e.event === 'chat.message')).toEqual([]);
  });

  it("announces entering and leaving a room to that room's members only", async () => {
    const { join } = await start();
    const [a] = await join();
    const [c] = await join();
    const [b, bWelcome] = await join();
    const bId = bWelcome.data.clientId;
    await joinRoom(a, 'lobby', 'Ann');
    await joinRoom(c, 'other', 'Cid');
    await a.drain();
    await c.drain();

    await joinRoom(b, 'lobby', 'Bea');
    expect(await a.next()).toEqual({
      event: 'user.joined',
      data: {
        clientId: bId,
        name: 'guest-Bea',
        room: 'lobby',
        clients: 3,
        timestamp: expect.any(Number),
      },
      pos: kept('lobby'),
    });
    expect(notices(await c.drain())).toEqual([]);

    await joinRoom(b, 'other');
    expect(await a.next()).toEqual({
      event: 'user.left',
      data: {
        clientId: bId,
        name: 'guest-Bea',
        room: 'lobby',
        clients: 3,
        timestamp: expect.any(Number),
      },
      pos: kept('lobby'),
    });
    expect(await c.next()).toEqual({
      event: 'user.joined',
      data: {
        clientId: bId,
        name: 'guest-Bea',
        room: 'other',
        clients: 3,
        timestamp: expect.any(Number),
      },
      pos: kept('other'),
    });
    expect(notices(await b.drain())).toEqual([]);

    // Joining the room one is in (here to change one's name) announces nothing.
    await joinRoom(b, 'other', 'Bee');
    expect(notices(await c.drain())).toEqual([]);

    await b.close();
    expect((await c.waitFor('user.left')).data).toEqual({
      clientId: bId,
      name: 'guest-Bee',
      room: 'other',
      clients: 2,
      timestamp: expect.any(Number),
    });
    expect(notices(await a.drain())).toEqual([]);
  });

  it.each([
    ['room is missing', {}],
    ['room is not a string', { room: 5 }],
    ['room has bad characters', { room: 'no spaces!' }],
    ['room is too long', { room: 'r'.repeat(33) }],
    ['name is too long', { room: 'lobby', name: 'n'.repeat(33) }],
    ['name is not a string', { room: 'lobby', name: 1 }],
  ])('answers error validation_failed when %s', async (_case, data) => {
    const { join } = await start();
    const [a] = await join();
    a.send('room.join', data);
    await expectError(a, 'validation_failed');
  });

  it('refuses private-* rooms to anonymous clients with error forbidden', async () => {
    const { join } = await start();
    const [anon] = await join();
    anon.send('room.join', { room: 'private-team' });
    expect((await expectError(anon, 'forbidden')).data.room).toBe('private-team');
    const [alice] = await join('/', { authorization: 'Bearer alice-token' });
    expect((await joinRoom(alice, 'private-team')).data).toMatchObject({
      room: 'private-team',
      name: 'Alice',
    });
  });
});

describe('protocol errors', () => {
  it('answers error for text that is not a JSON envelope, and stays open', async () => {
    const { join } = await start();
    const [a] = await join();
    a.socket.send('not json');
    const error = await a.next();
    expect(error.event).toBe('error');
    expect(error.data).toEqual({ code: expect.any(String), message: expect.any(String) });
    expect(await a.drain()).toEqual([]);
  });

  it('answers error unknown_event for an event no controller handles', async () => {
    const { join } = await start();
    const [a] = await join();
    a.send('no.such.event', {});
    await expectError(a, 'unknown_event');
  });
});

describe('handshake authentication', () => {
  it('accepts an anonymous client', async () => {
    const { join } = await start();
    const [, welcome] = await join();
    expect(welcome.data.user).toBeNull();
  });

  it('attaches the user of an Authorization: Bearer token', async () => {
    const { join } = await start();
    const [a, welcome] = await join('/', { authorization: 'Bearer alice-token' });
    expect(welcome.data.user).toEqual({ id: 'alice', name: 'Alice', role: 'user' });
    await joinRoom(a, 'lobby');
    a.send('chat.message', { message: 'signed' });
    expect((await a.waitFor('chat.message')).data.name).toBe('Alice');
  });

  it('still accepts a ?key= token from other clients and shows the account name', async () => {
    const { join } = await start();
    const [a] = await join();
    await joinRoom(a, 'lobby');
    const [b, welcome] = await join('/?key=bob-token&name=Alice');
    expect(welcome.data).toMatchObject({
      name: 'Bob',
      user: { id: 'bob', name: 'Bob', role: 'user' },
    });
    await joinRoom(b, 'lobby', 'Alice');
    expect((await a.waitFor('user.joined')).data.name).toBe('Bob');
  });

  it.each([
    ['an unknown ?key=', '/?key=nope', {}],
    ['an unknown bearer token', '/', { authorization: 'Bearer nope' }],
    ['a non-Bearer Authorization header', '/', { authorization: 'Basic YWxpY2U6eA==' }],
  ])(
    'refuses %s with 401 before the upgrade',
    async (_case, path, headers: Record<string, string>) => {
      const { connect, http } = await start();
      const refused = await connect(path, headers).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(HandshakeRefused);
      expect((refused as HandshakeRefused).status).toBe(401);
      const status = (await (await fetch(`${http}/api/status`)).json()) as { clients: number };
      expect(status.clients).toBe(0);
    },
  );
});

describe('RoomsController (join_room / leave_room)', () => {
  it('answers room_joined and room_left in the root namespace', async () => {
    const { join } = await start();
    const [a] = await join();
    a.send('join_room', { room: 'lobby', namespace: '/' });
    expect(await a.next()).toEqual({
      event: 'room_joined',
      data: { room: 'lobby', namespace: '/' },
    });
    a.send('leave_room', { room: 'lobby', namespace: '/' });
    expect(await a.next()).toEqual({ event: 'room_left', data: { room: 'lobby', namespace: '/' } });
  });

  it('lets only admins into the /admin namespace', async () => {
    const { join } = await start();
    const [anon] = await join();
    anon.send('join_room', { room: 'ops', namespace: '/admin' });
    await expectError(anon, 'forbidden');
    const [bob] = await join('/', { authorization: 'Bearer bob-token' });
    bob.send('join_room', { room: 'ops', namespace: '/admin' });
    await expectError(bob, 'forbidden');
    const [admin] = await join('/?key=admin-token');
    admin.send('join_room', { room: 'ops', namespace: '/admin' });
    expect((await admin.waitFor('room_joined')).data).toEqual({ room: 'ops', namespace: '/admin' });
  });

  it('answers error invalid_payload for a join_room without a room', async () => {
    const { join } = await start();
    const [a] = await join();
    a.send('join_room', { namespace: '/' });
    await expectError(a, 'invalid_payload');
  });

  it('refuses unknown namespaces and private rooms of anonymous clients', async () => {
    const { join } = await start();
    const [anon] = await join();
    anon.send('join_room', { room: 'lobby', namespace: '/elsewhere' });
    await expectError(anon, 'forbidden');
    anon.send('join_room', { room: 'private-x', namespace: '/' });
    await expectError(anon, 'forbidden');
  });
});

describe('WebSocket origin check', () => {
  async function status(demoNow: RunningDemo, origin?: string): Promise<number> {
    const headers: Record<string, string> = origin === undefined ? {} : { origin };
    return demoNow.connect('/', headers).then(
      () => 101,
      (error: unknown) => (error instanceof HandshakeRefused ? error.status : -1),
    );
  }

  it('accepts the listed origins, the page served by the demo itself and non-browser clients', async () => {
    const running = await start({ corsOrigins: ['http://allowed.test'] });
    expect(await status(running, 'http://allowed.test')).toBe(101);
    expect(await status(running, running.http)).toBe(101);
    expect(await status(running)).toBe(101);
  });

  it('refuses other origins with 403', async () => {
    const running = await start({ corsOrigins: ['http://allowed.test'] });
    expect(await status(running, 'http://evil.test')).toBe(403);
    expect(await status(running, 'null')).toBe(403);
  });

  it("refuses other sites by default and accepts the page's own origin", async () => {
    const running = await start();
    expect(await status(running, 'https://evil.example')).toBe(403);
    expect(await status(running, running.http)).toBe(101);
  });

  it('accepts any origin with CORS_ORIGINS=*', async () => {
    const running = await start({ corsOrigins: ['*'] });
    expect(await status(running, 'https://evil.example')).toBe(101);
  });
});
