/**
 * The chat page's script, bundled with @pkg/client for the browser at build time (see
 * `../page-bundle.ts`). It talks to the server only through `Client`, typed by the same
 * event maps as `ChatController`: the client reconnects with backoff after a lost
 * connection (a server restart, say), and the page then enters its room again on its own.
 * The token goes in `$hello.auth` (the client's `auth` option), never in the URL. When the
 * server sends the page away (`reconnect_stopped`: disconnected by the server, another tab
 * took the session over, the token no longer accepted), the client does not come back on
 * its own: the page says so and offers a Reconnect button.
 */
import { Client, ClientError, type StopCause } from '@pkg/client';
import type { ClientEvents, ServerEvents } from '../events';
import { createPresenceList } from './presence-list';

type ChatClient = Client<ClientEvents, ServerEvents>;
type Join = { room: string; name?: string };

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
    if (data.room !== myRoom) add('system', `You joined room ${data.room}.`);
    else if (rejoining) add('system', `Back in room ${data.room}.`);
    rejoining = false;
    myRoom = data.room;
    presence.show(c, data.room, [myUserId ?? data.clientId]);
    setState(`In room ${data.room} as ${data.name}`);
    sendButton.disabled = false;
    messageInput.focus();
  });
  // The server sends these to the room's members only; the checks keep a line that was on
  // its way while the page moved to another room out of the new one.
  c.on('user.joined', (data) => {
    if (data.room !== myRoom) return;
    add('system', `${who(data)} joined the room.`);
    showCount(data.clients);
  });
  c.on('user.left', (data) => {
    if (data.room !== myRoom) return;
    add('system', `${who(data)} left the room.`);
    showCount(data.clients);
  });
  c.on('chat.message', (data) => {
    if (data.room !== myRoom) return;
    const item = add(
      data.clientId === myId ? 'chat mine' : 'chat',
      `${who(data)}: ${data.message}`,
    );
    item.dataset['text'] = data.message;
  });
  c.on('api.message', (data) => {
    if (data.room !== null && data.room !== myRoom) return;
    add('broadcast', `[broadcast] ${data.message}`);
  });
  c.on('error', (data) => {
    // The message is a sentence meant for people; the code stays in the tooltip.
    add('error', data.message || 'Something went wrong.').title = `code: ${data.code}`;
  });

  c.on('connect', (info) => {
    everConnected = true;
    setState('Connected');
    // A resumed session keeps its room; a fresh one (first connection, or the server
    // restarted) enters the wanted room again, without the user doing anything.
    if (!info.resumed && wanted) c.emit('room.join', wanted);
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
    myRoom = null;
    rejoining = false;
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
