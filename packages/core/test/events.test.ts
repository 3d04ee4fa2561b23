// The spec's Events rules 1-3 over real sockets (broadcast to all / a namespace / a room,
// the default namespace, broadcast from an HTTP handler), exclusion of the sender, the
// adapter seeing one serialised envelope per broadcast, the error events the server sends
// on its own, and the built-in RoomsController.
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  HttpRoute,
  LocalAdapter,
  OnConnect,
  Response,
  RoomsController,
  SocketController,
  SocketOn,
  type AdapterHost,
  type BroadcastTarget,
  type Request,
} from '../src/index';
import { TestClient, cleanup, startServer, type TestServer } from './helpers';

afterEach(cleanup);

class Broadcaster extends SocketController {
  @OnConnect()
  hello(clientId: string): void {
    this.emit(clientId, 'hello', { clientId });
  }

  @SocketOn('join')
  join(clientId: string, data: { room?: string; namespace?: string }): void {
    if (data.room) this.joinRoom(clientId, data.room, data.namespace ?? '/');
    else if (data.namespace) this.getServer().joinNamespace(clientId, data.namespace);
    this.emit(clientId, 'joined', {});
  }

  @SocketOn('leave.namespace')
  leaveNamespace(clientId: string, data: { namespace?: string }): void {
    this.getServer().leaveNamespace(clientId, data.namespace ?? '/');
    this.emit(clientId, 'left', {});
  }

  @SocketOn('shout')
  shout(
    clientId: string,
    data: {
      namespace?: string | null;
      room?: string | null;
      exceptMe?: boolean;
      objectForm?: boolean;
      n: number;
    },
  ): void {
    if (data.objectForm) {
      this.broadcast(
        'shout',
        { n: data.n },
        {
          ...(data.namespace !== undefined ? { namespace: data.namespace } : {}),
          ...(data.room !== undefined ? { room: data.room } : {}),
          ...(data.exceptMe ? { except: clientId } : {}),
        },
      );
      return;
    }
    this.broadcast(
      'shout',
      { n: data.n },
      data.namespace ?? null,
      data.room ?? null,
      data.exceptMe ? { except: clientId } : {},
    );
  }

  @SocketOn('room.say')
  roomSay(clientId: string, data: { room: string; n: number }): void {
    this.broadcastToRoomClients('shout', { n: data.n }, data.room, '/', clientId);
  }

  /** Sent to one client after a broadcast: everything before it on that socket has arrived. */
  @SocketOn('marker')
  marker(clientId: string): void {
    this.emit(clientId, 'marker', {});
  }

  @HttpRoute('POST', '/announce')
  announce(request: Request): Response {
    this.broadcast('announcement', { text: String(request.getData('text')) });
    return Response.json({ clients: this.getClientCount(), ids: this.getAllClients() });
  }
}

async function join(ts: TestServer, ...specs: Array<{ room?: string; namespace?: string }>) {
  const client = await TestClient.connect(ts.wsUrl);
  const id = (await client.next('hello')).data['clientId'] as string;
  for (const spec of specs) {
    client.send('join', spec);
    await client.next('joined');
  }
  return { client, id };
}

/** The `shout` values a client received before its marker. */
async function shouts(client: TestClient): Promise<unknown[]> {
  client.send('marker');
  await client.next('marker');
  const values = client.received.filter((e) => e.event === 'shout').map((e) => e.data['n']);
  return values;
}

describe('Events rules', () => {
  it('rule 2: a new client is in namespace / and in no room', async () => {
    const ts = await startServer([new Broadcaster()]);
    const { id } = await join(ts);
    const nm = ts.server.getNamespaceManager();
    expect(nm.getNamespacesForClient(id)).toEqual(['/']);
    expect(nm.getRoomsForClient(id)).toEqual([]);
    expect(nm.getClientsInNamespace('/')).toEqual([id]);
  });

  it('sends every event as a text frame, one client or a broadcast', async () => {
    const ts = await startServer([new Broadcaster()]);
    const frames: Array<{ binary: boolean; event: string }> = [];
    const client = await TestClient.connect(ts.wsUrl);
    await client.next('hello'); // sent on connect; the frames below come after it
    client.ws.on('message', (raw, isBinary) =>
      frames.push({
        binary: isBinary,
        event: (JSON.parse(String(raw)) as { event: string }).event,
      }),
    );
    client.send('join', {}); // answered to this client alone: `joined`
    await client.next('joined');
    client.send('shout', { n: 1 }); // a broadcast: `shout`
    await client.next('shout');
    expect(frames).toEqual([
      { binary: false, event: 'joined' },
      { binary: false, event: 'shout' },
    ]);
  });

  it('rule 1: broadcast reaches all, a namespace, or a room', async () => {
    const ts = await startServer([new Broadcaster()]);
    const plain = await join(ts);
    const lobby = await join(ts, { room: 'lobby' });
    const chat = await join(ts, { namespace: '/chat' });
    const chatLobby = await join(ts, { room: 'lobby', namespace: '/chat' });

    plain.client.send('shout', { n: 1 }); // everyone
    plain.client.send('shout', { n: 2, namespace: '/chat' }); // namespace /chat
    plain.client.send('shout', { n: 3, room: 'lobby' }); // room lobby of /
    plain.client.send('shout', { n: 4, namespace: '/chat', room: 'lobby' }); // room lobby of /chat
    plain.client.send('shout', { n: 5, namespace: '/' }); // namespace /

    expect(await shouts(plain.client)).toEqual([1, 5]);
    expect(await shouts(lobby.client)).toEqual([1, 3, 5]);
    expect(await shouts(chat.client)).toEqual([1, 2, 5]);
    expect(await shouts(chatLobby.client)).toEqual([1, 2, 4, 5]);
  });

  it('the options-object form { namespace, room, except } selects the same clients', async () => {
    const ts = await startServer([new Broadcaster()]);
    const plain = await join(ts);
    const lobby = await join(ts, { room: 'lobby' });
    const chatLobby = await join(ts, { room: 'lobby', namespace: '/chat' });
    const o = { objectForm: true };
    plain.client.send('shout', { ...o, n: 1 });
    plain.client.send('shout', { ...o, n: 2, namespace: '/chat' });
    plain.client.send('shout', { ...o, n: 3, room: 'lobby' });
    plain.client.send('shout', { ...o, n: 4, namespace: '/chat', room: 'lobby' });
    lobby.client.send('shout', { ...o, n: 5, room: 'lobby', exceptMe: true });
    expect(await shouts(plain.client)).toEqual([1]);
    expect(await shouts(lobby.client)).toEqual([1, 3]);
    expect(await shouts(chatLobby.client)).toEqual([1, 2, 4]);
    expect(() => ts.server.broadcast('x', {}, { room: 'lobby' }, 'other')).toThrow(
      /pass nothing after it/,
    );
  });

  it('a client that left namespace / no longer gets its broadcasts, but still gets broadcasts to all', async () => {
    const ts = await startServer([new Broadcaster()]);
    const a = await join(ts);
    a.client.send('leave.namespace', { namespace: '/' });
    await a.client.next('left');
    const b = await join(ts);
    b.client.send('shout', { n: 1, namespace: '/' });
    b.client.send('shout', { n: 2 });
    expect(await shouts(a.client)).toEqual([2]);
  });

  it('leaves the sender out when asked (broadcast except, broadcastToRoomClients)', async () => {
    const ts = await startServer([new Broadcaster()]);
    const a = await join(ts, { room: 'r' });
    const b = await join(ts, { room: 'r' });
    a.client.send('shout', { n: 1, exceptMe: true });
    a.client.send('room.say', { room: 'r', n: 2 });
    expect(await shouts(a.client)).toEqual([]);
    expect(await shouts(b.client)).toEqual([1, 2]);
  });

  it('rule 3: a broadcast from an HTTP handler reaches WebSocket clients', async () => {
    const ts = await startServer([new Broadcaster()]);
    const a = await join(ts);
    const b = await join(ts, { room: 'x' });
    const res = await fetch(`${ts.base}/announce`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'hi all' }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { clients: number; ids: string[] };
    expect(body.clients).toBe(2);
    expect(body.ids.sort()).toEqual([a.id, b.id].sort());
    expect((await a.client.next('announcement')).data).toEqual({ text: 'hi all' });
    expect((await b.client.next('announcement')).data).toEqual({ text: 'hi all' });
  });

  it('hands the adapter one serialised envelope per broadcast, delivered as is', async () => {
    const seen: Array<{ text: string | Uint8Array; target: BroadcastTarget }> = [];
    const delivered: Array<{ ids: string[]; text: string | Uint8Array }> = [];
    class SpyAdapter extends LocalAdapter {
      override attach(host: AdapterHost): void {
        super.attach({
          ...host,
          namespaces: host.namespaces,
          deliver: (ids, text) => {
            const list = [...ids];
            delivered.push({ ids: list, text });
            return host.deliver(list, text);
          },
        });
      }
      override broadcast(text: string | Uint8Array, target: BroadcastTarget): number {
        seen.push({ text, target });
        return super.broadcast(text, target);
      }
    }
    const ts = await startServer([new Broadcaster()], {}, (server) =>
      server.setAdapter(new SpyAdapter()),
    );
    const a = await join(ts);
    const b = await join(ts);
    a.client.send('shout', { n: 7 });
    const got = [await a.client.next('shout'), await b.client.next('shout')];
    expect(got.map((e) => e.data)).toEqual([{ n: 7 }, { n: 7 }]);
    const text = JSON.stringify({ event: 'shout', data: { n: 7 } });
    expect(seen).toEqual([{ text, target: { namespace: null, room: null } }]);
    expect(delivered).toEqual([{ ids: [a.id, b.id], text }]);
  });
});

describe('error events the server sends on its own', () => {
  it('answers an unknown event, including inherited object member names, with unknown_event', async () => {
    // Every refusal answered (by default one error reply per code per second).
    const ts = await startServer([new Broadcaster()], { ws_error_reply_interval: 0 });
    const { client } = await join(ts);
    for (const event of ['no.such', 'constructor', '__proto__', 'toString']) {
      client.send(event);
      const error = await client.next('error');
      expect(error.data).toEqual({
        event,
        code: 'unknown_event',
        message: `No handler for event "${event}".`,
      });
    }
    client.send('marker');
    await client.next('marker');
  });

  it('only logs unknown events with unknown_event: ignore', async () => {
    const ts = await startServer([new Broadcaster()], { unknown_event: 'ignore' });
    const { client } = await join(ts);
    client.send('no.such');
    client.send('marker');
    await client.next('marker');
    expect(client.pending()).toEqual([]);
    expect(client.received.some((e) => e.event === 'error')).toBe(false);
  });

  it('answers text that is not an envelope with an error event and keeps the connection', async () => {
    const ts = await startServer([new Broadcaster()]);
    const { client } = await join(ts);
    client.sendRaw('not json');
    expect((await client.next('error')).data['code']).toBe('invalid_json');
    client.sendRaw(JSON.stringify({ event: 'marker' }));
    expect((await client.next('error')).data['code']).toBe('invalid_data');
    client.send('marker');
    await client.next('marker');
  });
});

describe('RoomsController (opt-in join_room / leave_room)', () => {
  it('is off unless registered', async () => {
    const ts = await startServer([new Broadcaster()]);
    const { client } = await join(ts);
    client.send('join_room', { room: 'r' });
    expect((await client.next('error')).data['code']).toBe('unknown_event');
  });

  it('joins and leaves rooms, answering room_joined / room_left', async () => {
    const ts = await startServer([new Broadcaster(), new RoomsController()]);
    const { client, id } = await join(ts);
    client.send('join_room', { room: 'lobby' });
    expect((await client.next('room_joined')).data).toEqual({ room: 'lobby', namespace: '/' });
    client.send('join_room', { room: 'dev', namespace: '/team' });
    expect((await client.next('room_joined')).data).toEqual({ room: 'dev', namespace: '/team' });
    const nm = ts.server.getNamespaceManager();
    expect(nm.getRoomsForClient(id)).toEqual(['lobby']);
    expect(nm.getRoomsForClient(id, '/team')).toEqual(['dev']);
    client.send('leave_room', { room: 'lobby' });
    expect((await client.next('room_left')).data).toEqual({ room: 'lobby', namespace: '/' });
    expect(nm.getRoomsForClient(id)).toEqual([]);
  });

  it('asks the canJoin policy and answers forbidden when it refuses', async () => {
    const asked: unknown[] = [];
    const rooms = new RoomsController({
      canJoin: async (clientId, room, namespace) => {
        asked.push([clientId, room, namespace]);
        return room.startsWith('public-');
      },
    });
    const ts = await startServer([new Broadcaster(), rooms]);
    const { client, id } = await join(ts);
    client.send('join_room', { room: 'secret', namespace: '/admin' });
    expect((await client.next('error')).data).toEqual({
      code: 'forbidden',
      message: 'You may not join room "secret" in namespace "/admin".',
      room: 'secret',
      namespace: '/admin',
    });
    client.send('join_room', { room: 'public-1' });
    await client.next('room_joined');
    expect(asked).toEqual([
      [id, 'secret', '/admin'],
      [id, 'public-1', '/'],
    ]);
    expect(ts.server.getNamespaceManager().getRoomsForClient(id, '/admin')).toEqual([]);
  });

  it('answers invalid_payload for a missing room or a bad namespace', async () => {
    const ts = await startServer([new Broadcaster(), new RoomsController()]);
    const { client } = await join(ts);
    client.send('join_room', {});
    expect((await client.next('error')).data['code']).toBe('invalid_payload');
    client.send('join_room', { room: 'r', namespace: 'no-slash' });
    expect((await client.next('error')).data['code']).toBe('invalid_payload');
    client.send('leave_room', ['r']);
    expect((await client.next('error')).data['code']).toBe('invalid_payload');
  });

  it('answers internal_error when the policy throws, and keeps serving', async () => {
    const rooms = new RoomsController({
      canJoin: () => {
        throw new Error('policy down');
      },
    });
    const ts = await startServer([new Broadcaster(), rooms]);
    const { client } = await join(ts);
    client.send('join_room', { room: 'r' });
    expect((await client.next('error')).data['code']).toBe('internal_error');
    client.send('marker');
    await client.next('marker');
  });

  it('checks its options', () => {
    expect(() => new RoomsController({ canJoin: 'yes' as unknown as () => boolean })).toThrow(
      /canJoin must be a function/,
    );
  });
});
