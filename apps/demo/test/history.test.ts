// The demo's chat rooms keep history (CHAT_HISTORY in src/app.ts), over real sockets with
// the page's own client: a page entering a room reads the last messages (`history()`),
// including a broadcast an admin posted to that room over HTTP; a broadcast without a room,
// or with a room the schema refuses, is kept in no room; and a page that comes back on a
// fresh session is handed what it missed, once, by the room's recovery.
import { afterEach, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { Client, type RecoveredInfo } from '@pkg/client';
import type { ClientEvents, ServerEvents } from '../src/events';
import { useDemo } from './helpers/app';

const start = useDemo();

type ChatClient = Client<ClientEvents, ServerEvents>;
const clients: ChatClient[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.disconnect();
});

function once<T>(client: ChatClient, event: string): Promise<T> {
  return new Promise((resolve) => client.once(event as 'connect', resolve as never));
}

/** A page's client in a room (as the page enters one: room.join, then room.joined). */
async function enter(ws: string, room: string, name = 'Page') {
  const client = new Client<ClientEvents, ServerEvents>(ws, {
    WebSocket,
    network: null,
    reconnectionDelay: 10,
    reconnectionDelayMax: 50,
  });
  clients.push(client);
  await client.connect();
  const joined = once(client, 'room.joined');
  client.emit('room.join', { room, name });
  await joined;
  return client;
}

function post(http: string, body: unknown): Promise<globalThis.Response> {
  return fetch(`${http}/api/broadcast`, {
    method: 'POST',
    headers: { authorization: 'Bearer admin-token', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** The kept messages in words: a line's text, or who joined or left. */
const texts = (answer: Awaited<ReturnType<ChatClient['history']>>): string[] =>
  answer.messages.map((m) => {
    if (m.event === 'api.message' || m.event === 'chat.message') return m.data.message;
    if (m.event === 'user.joined' || m.event === 'user.left') return `${m.event} ${m.data.name}`;
    return m.event;
  });

describe('chat room history', () => {
  it('shows a page entering a room the room’s last messages, a broadcast posted to it included', async () => {
    const { ws, http } = await start();
    const ann = await enter(ws, 'lobby', 'Ann');
    await ann.emitWithAck('chat.message', { message: 'first' });
    expect((await post(http, { message: 'to the lobby', room: 'lobby' })).status).toBe(200);
    await ann.emitWithAck('chat.message', { message: 'second' });

    const bea = await enter(ws, 'lobby', 'Bea');
    const answer = await bea.history('lobby', { limit: 20 });
    // Bea's own `user.joined` (offset 5) was broadcast without her, and stays so in history.
    expect(texts(answer)).toEqual(['user.joined guest-Ann', 'first', 'to the lobby', 'second']);
    expect(answer.messages[2]).toMatchObject({
      event: 'api.message',
      data: { message: 'to the lobby', room: 'lobby' },
      pos: { room: 'lobby', namespace: '/', offset: 3 },
    });
    expect(answer.messages.map((m) => m.pos.offset)).toEqual([1, 2, 3, 4]);
    const ann2 = await ann.history('lobby', { limit: 20 });
    expect(texts(ann2)).toEqual(['first', 'to the lobby', 'second', 'user.joined guest-Bea']);
  });

  it.each([
    ['without a room (to everyone)', { message: 'to all' }, 200],
    ['with a room the schema refuses', { message: 'bad', room: 'no spaces!' }, 400],
    ['with a misspelt room key', { message: 'bad', rooms: 'lobby' }, 400],
  ])('keeps a broadcast posted %s in no room', async (_case, body, status) => {
    const { ws, http } = await start();
    const ann = await enter(ws, 'lobby');
    expect((await post(http, body)).status).toBe(status);
    await ann.emitWithAck('chat.message', { message: 'after' });
    // The page's own `user.joined` was broadcast without it: not in its history either.
    expect(texts(await ann.history('lobby'))).toEqual(['after']);
  });

  it('refuses the history of a room the page is not in', async () => {
    const { ws } = await start();
    const ann = await enter(ws, 'lobby');
    await expect(ann.history('other')).rejects.toMatchObject({ remoteCode: 'forbidden' });
  });

  it('hands a page that comes back on a fresh session what it missed, once, and says so', async () => {
    const { ws, http, app } = await start();
    const ann = await enter(ws, 'lobby');
    const seen: string[] = [];
    ann.on('api.message', (data) => void seen.push(data.message));
    expect((await post(http, { message: 'one', room: 'lobby' })).status).toBe(200);
    await ann.history('lobby'); // a round trip: "one" has arrived
    // The server sends the page away, which ends its session: what it misses now can only
    // come back through the room's position (as after a move to another instance).
    const stopped = once(ann, 'reconnect_stopped');
    app.server.disconnectClient(ann.id!);
    await stopped;
    expect((await post(http, { message: 'two', room: 'lobby' })).status).toBe(200);
    expect((await post(http, { message: 'three', room: 'lobby' })).status).toBe(200);
    const fresh = once<{ resumed: boolean }>(ann, 'connect');
    const recovered = once<RecoveredInfo>(ann, 'recovered');
    await ann.connect(); // the page's Reconnect button
    expect((await fresh).resumed).toBe(false);
    ann.emit('room.join', { room: 'lobby' }); // as the page does on a fresh session
    // Replayed: the notice of the page's own departure, then the two lines it missed.
    expect(await recovered).toEqual({
      room: 'lobby',
      namespace: '/',
      recovered: true,
      replayed: 3,
    });
    await ann.history('lobby');
    expect(seen).toEqual(['one', 'two', 'three']);
  });
});
