// Room boundaries over real sockets: malformed room names and the per-client room cap are
// refused before membership changes; a refused join_room/leave_room sent with an id gets
// one `error` answer with that id; an adapter that fails during a join rolls it back, and
// one that fails on disconnect cannot stop the cleanup (OnDisconnect once, data forgotten).
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  LocalAdapter,
  OnDisconnect,
  RoomsController,
  ServerConfig,
  SocketController,
  SocketOn,
  type Server,
  type ServerConfigOptions,
} from '../src/index';
import { TestClient, cleanup, startServer, type Envelope } from './helpers';

afterEach(cleanup);

interface Message extends Envelope {
  id?: unknown;
}

/** An application controller that joins rooms the client names, and records disconnects. */
class AppController extends SocketController {
  readonly disconnects: string[] = [];

  @SocketOn('whoami')
  whoami(clientId: string): string {
    this.getServer().setClientData(clientId, 'user', 'ann');
    return clientId;
  }

  @SocketOn('enter')
  enter(clientId: string, data: unknown): boolean {
    return this.joinRoom(clientId, (data as { room: string }).room);
  }

  @OnDisconnect()
  gone(clientId: string): void {
    this.disconnects.push(clientId);
  }
}

async function setup(
  config: ServerConfigOptions = {},
  rooms = new RoomsController(),
  prepare?: (server: Server) => void,
): Promise<{ server: Server; app: AppController; url: string }> {
  const app = new AppController();
  const { server, wsUrl } = await startServer([app, rooms], config, prepare);
  return { server, app, url: wsUrl };
}

/** A version 1 client after $hello, and its id. */
async function connect(url: string): Promise<{ client: TestClient; id: string }> {
  const client = await TestClient.connect(url, {}, ['pkg.v1']);
  client.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1 } }));
  expect((await client.next()).event).toBe('$welcome');
  client.sendRaw(JSON.stringify({ event: 'whoami', data: {}, id: 'who' }));
  const id = (await client.next('whoami')).data as unknown as string;
  return { client, id };
}

const request = (client: TestClient, event: string, data: unknown, id: unknown): void =>
  client.sendRaw(JSON.stringify({ event, data, id }));

/**
 * Every message received until each of `ids` has been answered, and then until the answer
 * to a marker request, in order: nothing beyond these (a second answer, an error without
 * id) can hide.
 */
async function drain(client: TestClient, ids: unknown[] = []): Promise<Message[]> {
  const seen: Message[] = [];
  const waiting = new Set(ids);
  while (waiting.size > 0) {
    const m = (await client.next()) as Message;
    seen.push(m);
    waiting.delete(m.id);
  }
  request(client, 'whoami', {}, 'marker');
  for (;;) {
    const m = (await client.next()) as Message;
    if (m.id === 'marker') return seen;
    seen.push(m);
  }
}

describe('room names are checked before any state changes', () => {
  it('answers join_room with a lone surrogate or an over-long name invalid_payload, with the id and the room', async () => {
    const { server, url } = await setup();
    const { client, id } = await connect(url);
    request(client, 'join_room', { room: 'x\ud800' }, 1);
    expect(await client.next('error')).toEqual({
      event: 'error',
      id: 1,
      data: expect.objectContaining({ code: 'invalid_payload', room: 'x\ud800' }),
    });
    const long = 'r'.repeat(129);
    request(client, 'join_room', { room: long }, 2);
    expect(await client.next('error')).toMatchObject({
      id: 2,
      data: { code: 'invalid_payload', room: long },
    });
    request(client, 'join_room', { room: 'ok', namespace: '/\udc00' }, 3);
    expect(await client.next('error')).toMatchObject({
      id: 3,
      data: { code: 'invalid_payload', room: 'ok', namespace: '/\udc00' },
    });
    expect(await drain(client)).toEqual([]);
    expect(server.getNamespaceManager().getMemberships(id)).toEqual([
      { namespace: '/', rooms: [] },
    ]);
  });

  it('accepts names with surrogate pairs (emoji) up to max_room_name_length', async () => {
    const { server, url } = await setup({ max_room_name_length: 4 });
    const { client, id } = await connect(url);
    request(client, 'join_room', { room: 'a\ud83d\ude00b' }, 1);
    expect(await client.next('join_room')).toEqual({
      event: 'join_room',
      id: 1,
      data: { room: 'a\ud83d\ude00b', namespace: '/' },
    });
    request(client, 'join_room', { room: 'abcde' }, 2);
    expect(await client.next('error')).toMatchObject({
      id: 2,
      data: { code: 'invalid_payload', room: 'abcde' },
    });
    expect(server.getNamespaceManager().getRoomsForClient(id)).toEqual(['a\ud83d\ude00b']);
  });

  it('refuses a malformed name on the server API without joining, and answers an application handler that passes one through invalid_payload', async () => {
    const { server, url } = await setup();
    const { client, id } = await connect(url);
    let thrown: unknown;
    try {
      server.joinRoom(id, 'x\ud800');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(TypeError);
    expect(thrown).toMatchObject({ code: 'PKG_ERR_CORE_INVALID_ROOM_NAME' });
    expect((thrown as Error).message).toMatch(/lone surrogate/);
    expect(() => server.joinNamespace(id, '/\ud800')).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_CORE_INVALID_ROOM_NAME' }),
    );
    expect(server.getNamespaceManager().getMemberships(id)).toEqual([
      { namespace: '/', rooms: [] },
    ]);
    // An application handler that lets the refusal through: the client's fault, not internal_error.
    request(client, 'enter', { room: '\udfff' }, 9);
    expect(await client.next('error')).toMatchObject({
      id: 9,
      data: { code: 'invalid_payload', room: '\udfff' },
    });
  });
});

describe('event names', () => {
  it('are ASCII by their pattern, so one with a lone surrogate is refused invalid_event', async () => {
    // A guard, not a change: the envelope pattern already refused it.
    const { url } = await setup();
    const { client } = await connect(url);
    request(client, 'x\ud800', {}, 1);
    expect(await client.next('error')).toMatchObject({ id: 1, data: { code: 'invalid_event' } });
  });
});

describe('max_rooms_per_client', () => {
  it('refuses the join past the cap with too_many_rooms (id and room), counts rooms of every namespace, and re-joins are free', async () => {
    const { server, url } = await setup({ max_rooms_per_client: 3 });
    const { client, id } = await connect(url);
    const join = (room: string, namespace: string, rid: number): void =>
      request(client, 'join_room', { room, namespace }, rid);
    join('a', '/', 1);
    join('b', '/', 2);
    join('c', '/team', 3);
    join('a', '/', 4); // already in: no new room
    for (const rid of [1, 2, 3, 4])
      expect(await client.next('join_room')).toMatchObject({ id: rid });
    join('d', '/other', 5);
    expect(await client.next('error')).toEqual({
      event: 'error',
      id: 5,
      data: {
        code: 'too_many_rooms',
        message: expect.stringMatching(/already in 3 rooms \(max_rooms_per_client\)/),
        room: 'd',
        namespace: '/other',
      },
    });
    const nm = server.getNamespaceManager();
    expect(nm.roomCount(id)).toBe(3);
    expect(nm.isInNamespace(id, '/other')).toBe(false);
    expect(() => server.joinRoom(id, 'e')).toThrow(RangeError);
    request(client, 'leave_room', { room: 'b' }, 6);
    expect(await client.next('leave_room')).toEqual({
      event: 'leave_room',
      id: 6,
      data: { room: 'b', namespace: '/' },
    });
    join('d', '/other', 7);
    expect(await client.next('join_room')).toMatchObject({ id: 7 });
    // Without an id the refusal is one error event, still with the room.
    client.send('join_room', { room: 'z' });
    expect((await client.next('error')).data).toMatchObject({ code: 'too_many_rooms', room: 'z' });
  });

  it('defaults to 128 rooms', async () => {
    const { server, url } = await setup();
    const { client, id } = await connect(url);
    for (let i = 0; i < 129; i += 1) request(client, 'join_room', { room: `r${i}` }, i);
    for (let i = 0; i < 128; i += 1)
      expect(await client.next('join_room')).toMatchObject({ id: i });
    expect(await client.next('error')).toMatchObject({
      id: 128,
      data: { code: 'too_many_rooms', room: 'r128' },
    });
    expect(server.getNamespaceManager().roomCount(id)).toBe(128);
  });

  it('is validated and named in the configuration error', () => {
    expect(() => new ServerConfig({ max_rooms_per_client: -1 })).toThrow(/max_rooms_per_client/);
    expect(() => new ServerConfig({ max_room_name_length: 0 })).toThrow(/max_room_name_length/);
    expect(new ServerConfig({}).get('max_rooms_per_client')).toBe(128);
    expect(new ServerConfig({}).get('max_room_name_length')).toBe(128);
  });
});

describe('join_room / leave_room sent with an id', () => {
  it('answers a refusal with one error carrying the id, the room and the code, never a success answer', async () => {
    const rooms = new RoomsController({ canJoin: (_id, room) => room !== 'secret' });
    const { url } = await setup({}, rooms);
    const { client } = await connect(url);
    request(client, 'join_room', { room: 'secret', namespace: '/admin' }, 'j1');
    request(client, 'join_room', { namespace: '/' }, 'j2');
    request(client, 'leave_room', { room: 'r', namespace: 'no-slash' }, 'l1');
    const seen = await drain(client, ['j1', 'j2', 'l1']);
    // Answers come in any order relative to each other.
    seen.sort((a, b) => String(a.id).localeCompare(String(b.id)));
    expect(seen).toEqual([
      {
        event: 'error',
        id: 'j1',
        data: {
          code: 'forbidden',
          message: 'You may not join room "secret" in namespace "/admin".',
          room: 'secret',
          namespace: '/admin',
        },
      },
      {
        event: 'error',
        id: 'j2',
        data: expect.objectContaining({ code: 'invalid_payload', namespace: '/' }),
      },
      {
        event: 'error',
        id: 'l1',
        data: expect.objectContaining({ code: 'invalid_payload', room: 'r' }),
      },
    ]);
  });

  it('answers an accepted join with {room, namespace} beside the room_joined event', async () => {
    const { url } = await setup();
    const { client } = await connect(url);
    request(client, 'join_room', { room: 'lobby' }, 5);
    const seen = await drain(client, [5]);
    expect(seen).toEqual([
      { event: 'room_joined', data: { room: 'lobby', namespace: '/' }, seq: 1 },
      { event: 'join_room', id: 5, data: { room: 'lobby', namespace: '/' } },
    ]);
  });
});

/** The in-memory adapter, made to fail at one step, as a broken cluster adapter would. */
class FailingAdapter extends LocalAdapter {
  failJoin = false;
  rejectJoin = false;
  failRemove = false;

  /** Joins locally, then fails: by throwing, or (an asynchronous adapter) by rejecting. */
  override joinRoom(clientId: string, room: string, namespace: string): void | Promise<void> {
    super.joinRoom(clientId, room, namespace);
    if (this.failJoin) throw new Error('adapter lost the join');
    if (this.rejectJoin) return Promise.reject(new Error('adapter lost the join later'));
  }

  override removeClient(clientId: string): void {
    if (this.failRemove) throw new Error('adapter lost the disconnect');
    super.removeClient(clientId);
  }
}

describe('a failing adapter', () => {
  it('rolls a join back: the client is in no room or namespace it was not in before', async () => {
    const adapter = new FailingAdapter();
    const { server, url } = await setup({}, new RoomsController(), (s) => s.setAdapter(adapter));
    const { client, id } = await connect(url);
    adapter.failJoin = true;
    request(client, 'join_room', { room: 'dev', namespace: '/team' }, 1);
    expect(await client.next('error')).toMatchObject({ id: 1, data: { code: 'internal_error' } });
    expect(await drain(client)).toEqual([]);
    const nm = server.getNamespaceManager();
    expect(nm.isInRoom(id, 'dev', '/team')).toBe(false);
    expect(nm.isInNamespace(id, '/team')).toBe(false);
    expect(nm.getStats()).toEqual({ namespaces: 1, rooms: 0, clients: 1 });
    adapter.failJoin = false;
    request(client, 'join_room', { room: 'dev', namespace: '/team' }, 2);
    expect(await client.next('join_room')).toMatchObject({ id: 2 });
  });

  it('rolls a join back when the adapter rejects', async () => {
    const adapter = new FailingAdapter();
    adapter.rejectJoin = true;
    const { server, url } = await setup({}, new RoomsController(), (s) => s.setAdapter(adapter));
    const { id } = await connect(url);
    expect(server.joinRoom(id, 'dev', '/team')).toBe(true);
    const nm = server.getNamespaceManager();
    expect(nm.isInRoom(id, 'dev', '/team')).toBe(true); // at once, as adapters do
    await new Promise((r) => setTimeout(r, 20));
    expect(nm.isInRoom(id, 'dev', '/team')).toBe(false);
    expect(nm.isInNamespace(id, '/team')).toBe(false);
  });

  it('cannot stop the disconnect cleanup: OnDisconnect runs once, data and membership are gone', async () => {
    const adapter = new FailingAdapter();
    const { server, app, url } = await setup({}, new RoomsController(), (s) =>
      s.setAdapter(adapter),
    );
    const { client, id } = await connect(url);
    request(client, 'join_room', { room: 'lobby' }, 1);
    await client.next('join_room');
    expect(server.getClientData(id, 'user')).toBe('ann');
    adapter.failRemove = true;
    client.ws.close(1000); // a final close: the session ends with the connection
    await client.closed;
    const deadline = Date.now() + 2000;
    while (app.disconnects.length === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(app.disconnects).toEqual([id]);
    expect(server.clientData.has(id)).toBe(false);
    expect(server.getNamespaceManager().getStats()).toEqual({
      namespaces: 0,
      rooms: 0,
      clients: 0,
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(app.disconnects).toEqual([id]);
  });
});
