// A client that speaks exactly what the original library's browser client sends and
// expects, written here from docs/protocol.md (version 0): the token in `?key=`, messages
// `{event, data}` without `id`, `join_room` / `leave_room` with `{room, namespace}` answered
// by `room_joined` / `room_left`. It must keep working against the server, next to
// @pkg/client users in the same rooms.
import { afterEach, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { RoomsController, SocketController, SocketOn } from '@pkg/core';
import { cleanup, makeClient, next, startCoreServer } from './helpers';

afterEach(cleanup);

interface Message {
  event: string;
  data: Record<string, unknown>;
}

/** The legacy client: only `?key=`, `{event, data}` and the room events. */
class LegacyClient {
  readonly raw: Message[] = [];
  readonly #socket: WebSocket;
  readonly #queue: Message[] = [];
  readonly #waiters: Array<{ event: string; resolve: (m: Message) => void }> = [];

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.on('message', (text) => {
      const message = JSON.parse(String(text)) as Message;
      this.raw.push(message);
      const i = this.#waiters.findIndex((w) => w.event === message.event);
      if (i >= 0) this.#waiters.splice(i, 1)[0]!.resolve(message);
      else this.#queue.push(message);
    });
  }

  static open(url: string, key: string): Promise<LegacyClient> {
    const socket = new WebSocket(`${url}/?key=${encodeURIComponent(key)}`);
    const client = new LegacyClient(socket);
    opened.push(client);
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(client));
      socket.once('unexpected-response', (_req, res) => {
        reject(new Error(`refused with ${res.statusCode}`));
        socket.terminate();
      });
      socket.once('error', reject);
    });
  }

  send(event: string, data: Record<string, unknown>): void {
    this.#socket.send(JSON.stringify({ event, data }));
  }

  joinRoom(room: string, namespace = '/'): void {
    this.send('join_room', { room, namespace });
  }

  leaveRoom(room: string, namespace = '/'): void {
    this.send('leave_room', { room, namespace });
  }

  next(event: string): Promise<Message> {
    const i = this.#queue.findIndex((m) => m.event === event);
    if (i >= 0) return Promise.resolve(this.#queue.splice(i, 1)[0]!);
    return new Promise((resolve) => this.#waiters.push({ event, resolve }));
  }

  close(): void {
    this.#socket.terminate();
  }
}

const opened: LegacyClient[] = [];
afterEach(() => {
  for (const c of opened.splice(0)) c.close();
});

class ChatController extends SocketController {
  @SocketOn('chat.say')
  say(clientId: string, data: unknown): void {
    const { room, text } = data as { room: string; text: string };
    this.broadcast('chat.said', { from: clientId, text }, '/', room);
  }
}

async function server() {
  return startCoreServer(
    () => [new ChatController(), new RoomsController()],
    (ctx) =>
      ctx.query.get('key') === 'secret-key' ? undefined : { status: 401, message: 'Invalid token' },
  );
}

describe('a client speaking only protocol version 0', () => {
  it('authenticates with ?key=, joins and leaves rooms, and chats with @pkg/client users', async () => {
    const { url } = await server();
    const legacy = await LegacyClient.open(url, 'secret-key');
    legacy.joinRoom('general');
    expect((await legacy.next('room_joined')).data).toEqual({ room: 'general', namespace: '/' });

    const modern = makeClient(url, { query: { key: 'secret-key' } });
    await modern.connect();
    await modern.joinRoom('general');

    const heard = next<{ text: string }>(modern, 'chat.said');
    legacy.send('chat.say', { room: 'general', text: 'from legacy' });
    expect((await heard).text).toBe('from legacy');
    // The room broadcast reaches the sender too.
    expect((await legacy.next('chat.said')).data['text']).toBe('from legacy');

    modern.emit('chat.say', { room: 'general', text: 'from modern' });
    const said = await legacy.next('chat.said');
    expect(said.data['text']).toBe('from modern');

    legacy.leaveRoom('general');
    expect((await legacy.next('room_left')).data).toEqual({ room: 'general', namespace: '/' });

    // Nothing of version 1 reaches a client that never said $hello.
    for (const message of legacy.raw) {
      expect(Object.keys(message).sort()).toEqual(['data', 'event']);
      expect(message.event.startsWith('$')).toBe(false);
    }
  });

  it('is refused with 401 in the handshake when the key is wrong', async () => {
    const { url } = await server();
    await expect(LegacyClient.open(url, 'wrong')).rejects.toThrow('refused with 401');
  });
});
