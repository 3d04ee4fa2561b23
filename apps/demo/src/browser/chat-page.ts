/**
 * The chat page's script, bundled with @pkg/client for the browser at build time (see
 * `../page-bundle.ts`). It talks to the server only through `Client`, typed by the same
 * event maps as `ChatController`: the client reconnects with backoff after a lost
 * connection (a server restart, say), and the page then enters its room again on its own.
 * The token goes in `$hello.auth` (the client's `auth` option), never in the URL. When the
 * server sends the page away (`reconnect_stopped`: disconnected by the server, another tab
 * took the session over, the token no longer accepted), the client does not come back on
 * its own: the page says so and offers a Reconnect button.
 *
 * The chat rooms keep history on the server: entering a room shows its last messages
 * (`client.history`), and after a reconnect the messages missed meanwhile arrive as usual
 * (replayed by the server, each once) and the page says how the room was recovered
 * (`recovered`). Every kept message carries its position, which keys its line, so a line is
 * never shown twice and a line from the history lands in order among the live ones.
 */
import { Client, ClientError, type RoomPosition, type StopCause } from '@pkg/client';
import type { ClientEvents, ServerEvents } from '../events';
import { createPresenceList } from './presence-list';

type ChatClient = Client<ClientEvents, ServerEvents>;
type Join = { room: string; name?: string };

/** How many of a room's last messages the page shows on entering it. */
const HISTORY_SHOWN = 20;

const byId = <T extends HTMLElement = HTMLElement>(id: string): T => {
  const element = document.getElementById(id);
  if (!element) throw new Error(`The page has no #${id}.`);
  return element as T;
};

const list = byId<HTMLUListElement>('messages');
const stateEl = byId('state');
const countEl = byId('client-count');
const sendButton = byId<HTMLButtonElement>('send');
const messageInput = byId<HTMLInputElement>('message');
const reconnectButton = byId<HTMLButtonElement>('reconnect');
const presence = createPresenceList(byId<HTMLUListElement>('presence'), byId('presence-count'));

let client: ChatClient | null = null;
let clientToken = '';
let myId: string | null = null;
/** The signed-in user's id (the presence key of all its tabs), null for a guest. */
let myUserId: string | null = null;
let myRoom: string | null = null;
/** The name the server gave this page in its room (`room.joined`). */
let myName = '';
/** The room (and name) this page wants to be in; sent again after every new connection. */
let wanted: Join | null = null;
/** True between a lost connection and the room being joined again. */
let rejoining = false;

function add(kind: string, text: string): HTMLLIElement {
  const item = document.createElement('li');
  item.className = kind;
  item.textContent = text;
  list.appendChild(item);
  list.scrollTop = list.scrollHeight;
  return item;
}

/** Lines already on the page, by room position (`room epoch offset`). */
const shown = new Set<string>();

/**
 * Adds a line that has a room position: null when that position is on the page already (a
 * message both in the history and live). It goes before the first line of the same room
 * and epoch with a higher offset, so a history line lands in order among the live ones.
 */
function addAt(kind: string, text: string, pos: RoomPosition | undefined): HTMLLIElement | null {
  if (pos === undefined) return add(kind, text);
  const key = `${pos.room} ${pos.epoch} ${pos.offset}`;
  if (shown.has(key)) return null;
  shown.add(key);
  const item = document.createElement('li');
  item.className = kind;
  item.textContent = text;
  item.dataset['room'] = pos.room;
  item.dataset['epoch'] = pos.epoch;
  item.dataset['offset'] = String(pos.offset);
  const later = Array.from(list.querySelectorAll<HTMLLIElement>('li[data-offset]')).find(
    (li) =>
      li.dataset['room'] === pos.room &&
      li.dataset['epoch'] === pos.epoch &&
      Number(li.dataset['offset']) > pos.offset,
  );
  list.insertBefore(item, later ?? null);
  if (!later) list.scrollTop = list.scrollHeight;
  return item;
}

function setState(text: string): void {
  stateEl.textContent = text;
}

/** How often the page reads the online count from `GET /api/status`, in ms. */
const COUNT_POLL_MS = 30_000;

function showCount(clients: number): void {
  countEl.textContent = String(clients);
}

/** Polled, never per event: `welcome` and the room's join/leave notices carry the count. */
function refreshCount(): void {
  fetch('/api/status', { cache: 'no-store' })
    .then((res) => (res.ok ? (res.json() as Promise<{ clients: number }>) : null))
    .then((status) => {
      if (status) showCount(status.clients);
    })
    .catch(() => undefined); // the next refresh tries again
}

const who = (data: { name: string }): string => data.name;

/** Marks the newest own line with this text as delivered (the server's answer arrived). */
function markDelivered(text: string): void {
  const mine = list.querySelectorAll<HTMLLIElement>('li.mine:not(.delivered)');
  for (let i = mine.length - 1; i >= 0; i -= 1) {
    const item = mine[i]!;
    if (item.dataset['text'] !== text) continue;
    item.classList.add('delivered');
    const mark = document.createElement('span');
    mark.className = 'delivery';
    mark.textContent = ' \u2713 delivered';
    item.appendChild(mark);
    return;
  }
}

type Data<E extends keyof ServerEvents> = Parameters<ServerEvents[E]>[0];

function showChat(data: Data<'chat.message'>, pos?: RoomPosition): void {
  const item = addAt(
    data.clientId === myId ? 'chat mine' : 'chat',
    `${who(data)}: ${data.message}`,
    pos,
  );
  if (item) item.dataset['text'] = data.message;
}

function showBroadcast(data: Data<'api.message'>, pos?: RoomPosition): void {
  addAt('broadcast', `[broadcast] ${data.message}`, pos);
}

function showJoined(data: Data<'user.joined'>, pos?: RoomPosition): boolean {
  return addAt('system', `${who(data)} joined the room.`, pos) !== null;
}

function showLeft(data: Data<'user.left'>, pos?: RoomPosition): boolean {
  return addAt('system', `${who(data)} left the room.`, pos) !== null;
}

/**
 * Shows the room's last kept messages, each in its place among the lines already there.
 * A server that keeps no history for the room refuses or answers nothing: then the page
 * simply shows no earlier messages.
 */
function loadHistory(c: ChatClient, room: string): void {
  c.history(room, { limit: HISTORY_SHOWN })
    .then(({ messages }) => {
      if (room !== myRoom || client !== c) return;
      for (const m of messages) {
        if (m.event === 'chat.message') showChat(m.data, m.pos);
        else if (m.event === 'api.message') showBroadcast(m.data, m.pos);
        else if (m.event === 'user.joined') showJoined(m.data, m.pos);
        else if (m.event === 'user.left') showLeft(m.data, m.pos);
      }
    })
    .catch(() => undefined);
}

/** Why the server sent the page away, in words. */
const STOPPED: Readonly<Record<StopCause, string>> = {
  server_disconnect: 'The server closed this connection',
  policy_violation: 'The server closed this connection for breaking its rules',
  unauthorized: 'The server no longer accepts the token',
  forbidden: 'The server refused this user',
  session_taken_over: 'This chat was opened again in another tab or window, which took it over',
};

function listen(c: ChatClient): void {
  let everConnected = false;

  c.on('welcome', (data) => {
    myId = data.clientId;
    myUserId = data.user?.id ?? null;
    const signedIn = data.user ? `, signed in as ${data.user.name}` : '';
    add('system', `Connected as ${data.name}${signedIn} (${data.clientId}).`);
    showCount(data.clients);
  });
  c.on('room.joined', (data) => {
    const entered = data.room !== myRoom;
    if (entered) add('system', `You joined room ${data.room}.`);
    else if (rejoining) add('system', `Back in room ${data.room}.`);
    rejoining = false;
    myRoom = data.room;
    myName = data.name;
    presence.show(c, data.room, [myUserId ?? data.clientId]);
    setState(`In room ${data.room} as ${data.name}`);
    sendButton.disabled = false;
    messageInput.focus();
    if (entered) loadHistory(c, data.room);
  });
  // The server sends these to the room's members only; the checks keep a line that was on
  // its way while the page moved to another room out of the new one.
  c.on('user.joined', (data, { position }) => {
    if (data.room !== myRoom) return;
    if (showJoined(data, position)) showCount(data.clients);
  });
  c.on('user.left', (data, { position }) => {
    if (data.room !== myRoom) return;
    if (showLeft(data, position)) showCount(data.clients);
  });
  c.on('chat.message', (data, { position }) => {
    if (data.room !== myRoom) return;
    showChat(data, position);
  });
  c.on('api.message', (data, { position }) => {
    if (data.room !== null && data.room !== myRoom) return;
    showBroadcast(data, position);
  });
  c.on('recovered', (info) => {
    if (info.room !== myRoom) return;
    if (info.recovered) {
      if (info.replayed > 0) {
        add('system', `Caught up: ${info.replayed} missed message(s) in room ${info.room}.`);
      }
      return;
    }
    add(
      'system',
      `Some messages in room ${info.room} could not be recovered (${info.reason ?? 'unknown'}); showing its latest messages.`,
    );
    loadHistory(c, info.room);
  });
  c.on('error', (data) => {
    // The message is a sentence meant for people; the code stays in the tooltip.
    add('error', data.message || 'Something went wrong.').title = `code: ${data.code}`;
  });

  c.on('connect', (info) => {
    everConnected = true;
    setState('Connected');
    if (info.clientId !== undefined) myId = info.clientId;
    // A resumed session keeps its room (and the server replays what was missed); a fresh
    // one (first connection, or the server restarted) enters the wanted room again, without
    // the user doing anything.
    if (info.resumed && myRoom !== null) {
      if (rejoining) add('system', `Back in room ${myRoom}.`);
      rejoining = false;
      setState(`In room ${myRoom} as ${myName}`);
      sendButton.disabled = false;
      return;
    }
    if (wanted) c.emit('room.join', wanted);
  });
  c.on('disconnect', (info) => {
    myId = null;
    sendButton.disabled = true;
    if (!info.willReconnect) return;
    rejoining = myRoom !== null;
    setState('Reconnecting...');
    add('system', 'Connection lost; reconnecting...');
  });
  c.on('reconnect_stopped', (info) => {
    // A refusal of the first connection was already explained (connect_error, stop()).
    if (client !== c) return;
    // The page keeps showing its room: Reconnect enters it again, and the room's history
    // hands over what was said meanwhile.
    rejoining = myRoom !== null;
    const said = info.reason ? `: "${info.reason}"` : '';
    add(
      'error',
      `${STOPPED[info.cause]} (close ${info.code}${said}); the page does not reconnect on its own. Press Reconnect to come back.`,
    ).title = `cause: ${info.cause}`;
    setState('Sent away by the server');
    reconnectButton.hidden = false;
  });
  c.on('reconnecting', (info) => setState(`Reconnecting (attempt ${info.attempt})...`));
  c.on('reconnect', () => add('system', 'Reconnected.'));
  c.on('connect_error', (error) => {
    if (everConnected) return; // a failed reconnection attempt: the backoff retries
    const refused =
      error instanceof ClientError &&
      (error.code === 'PKG_ERR_CLIENT_UNAUTHORIZED' || error.code === 'PKG_ERR_CLIENT_FORBIDDEN');
    // The token travels in $hello, so a refusal is a close 4401 the browser does show
    // (unlike the status of a refused upgrade).
    if (refused) {
      add(
        'error',
        'Could not connect: the server refused the token. Use a demo token (alice-token, bob-token, admin-token) or leave the field empty.',
      );
    } else {
      add('error', 'Could not connect to the server. Is it running?');
    }
    setState('Not connected');
    stop();
  });
}

function stop(): void {
  reconnectButton.hidden = true;
  const old = client;
  client = null;
  myId = null;
  myRoom = null;
  presence.clear();
  sendButton.disabled = true;
  old?.disconnect();
}

function start(token: string, name: string): void {
  // The display name may travel in the URL; the token goes in $hello.auth only.
  const c: ChatClient = new Client<ClientEvents, ServerEvents>('/', {
    ...(token ? { auth: token } : {}),
    ...(name ? { query: { name } } : {}),
  });
  client = c;
  clientToken = token;
  listen(c);
  setState('Connecting...');
  c.connect().catch(() => undefined); // failures are reported through connect_error
}

byId<HTMLFormElement>('join-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const name = byId<HTMLInputElement>('name').value.trim();
  const join: Join = { room: byId<HTMLInputElement>('room').value.trim() };
  if (name) join.name = name;
  const token = byId<HTMLInputElement>('token').value.trim();
  wanted = join;
  if (client && clientToken !== token) stop();
  if (!client) start(token, name);
  else if (client.connected) client.emit('room.join', join);
  // else: the join goes out on `connect`
});

reconnectButton.addEventListener('click', () => {
  reconnectButton.hidden = true;
  const c = client;
  if (!c) return;
  setState('Connecting...');
  // A new session: the page enters the wanted room again on `connect`.
  c.connect().catch(() => undefined);
});

byId<HTMLFormElement>('send-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const text = messageInput.value;
  const c = client;
  if (!text.trim() || !c || !c.connected) return;
  if (c.protocol === 1) {
    // The server answers requests: show the delivery on the line once it is confirmed.
    c.emitWithAck('chat.message', { message: text })
      .then((answer) => {
        if (answer.delivered) markDelivered(text);
      })
      .catch(() => undefined); // the server's error event already explains a refusal
  } else {
    c.emit('chat.message', { message: text });
  }
  messageInput.value = '';
  messageInput.focus();
});

refreshCount();
setInterval(refreshCount, COUNT_POLL_MS);
