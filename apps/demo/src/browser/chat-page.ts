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
 * (`client.history`) with their times above an "Earlier messages" divider, old joins and
 * leaves folded into one line per run and one's own arrival left out (the page says "You
 * joined room ..." once). After a reconnect the messages missed meanwhile arrive as usual
 * (replayed by the server, each once) and the page says how the room was recovered
 * (`recovered`). Every kept message carries its position, which keys its line, so a line is
 * never shown twice.
 *
 * The page says which name it chats under and why, remembers the name and room (and, for
 * this tab only, the token) and joins again after a reload (`remembered.ts`). The badge
 * counts the WebSocket clients connected to the server and says whether that includes
 * this page.
 */
import { Client, ClientError, type RoomPosition, type StopCause } from '@pkg/client';
import type { ClientEvents, ServerEvents, WelcomeUser } from '../events';
import { createMessageList, type HistoryBlock } from './message-list';
import { createPresenceList } from './presence-list';
import { recall, remember } from './remembered';
import { explainName, summarizeComings, type Coming } from './words';

type ChatClient = Client<ClientEvents, ServerEvents>;
type Join = { room: string; name?: string };

/** How many of a room's last messages the page shows on entering it. */
const HISTORY_SHOWN = 20;

const byId = <T extends HTMLElement = HTMLElement>(id: string): T => {
  const element = document.getElementById(id);
  if (!element) throw new Error(`The page has no #${id}.`);
  return element as T;
};

const lines = createMessageList(byId<HTMLUListElement>('messages'));
const stateEl = byId('state');
const identityEl = byId('identity');
const countEl = byId('client-count');
const countNoteEl = byId('count-note');
const nameInput = byId<HTMLInputElement>('name');
const roomInput = byId<HTMLInputElement>('room');
const tokenInput = byId<HTMLInputElement>('token');
const sendButton = byId<HTMLButtonElement>('send');
const messageInput = byId<HTMLInputElement>('message');
const reconnectButton = byId<HTMLButtonElement>('reconnect');
const presence = createPresenceList(byId<HTMLUListElement>('presence'), byId('presence-count'));

let client: ChatClient | null = null;
let clientToken = '';
let myId: string | null = null;
/** The signed-in user (its id is the presence key of all its tabs), null for a guest. */
let myUser: WelcomeUser | null = null;
let myRoom: string | null = null;
/** The name the server gave this page in its room (`room.joined`). */
let myName = '';
/** The room (and name) this page wants to be in; sent again after every new connection. */
let wanted: Join | null = null;
/** True between a lost connection and the room being joined again. */
let rejoining = false;

const add = lines.add;

/** A server timestamp (Unix seconds) in milliseconds. */
const ms = (seconds: number): number => seconds * 1000;

function setState(text: string): void {
  stateEl.textContent = text;
}

function showIdentity(shown: string): void {
  identityEl.textContent = explainName(shown, wanted?.name ?? '', myUser);
  identityEl.hidden = false;
}

// ------------------------------------------------------------------ the online count

/** How often the page reads the online count from `GET /api/status`, in ms. */
const COUNT_POLL_MS = 30_000;
/** Bumped by every count shown: an HTTP answer older than a count from an event is dropped. */
let countVersion = 0;

/** Whether the server counts this page now: it has a connection with a client id. */
const counted = (): boolean => client !== null && client.connected && myId !== null;

function showCountNote(): void {
  countNoteEl.textContent = counted() ? '(with you)' : '(without you)';
}

function showCount(clients: number | null): void {
  countVersion += 1;
  countEl.textContent = clients === null ? '-' : String(clients);
  showCountNote();
}

/**
 * Polled, never per event: `welcome` and the room's join/leave notices carry the count.
 * Also read after a reconnect, once the missed notices (with their old counts) are replayed.
 */
function refreshCount(): void {
  const version = countVersion;
  fetch('/api/status', { cache: 'no-store' })
    .then((res) => (res.ok ? (res.json() as Promise<{ clients: number }>) : null))
    .then((status) => {
      if (status && version === countVersion) showCount(status.clients);
    })
    .catch(() => {
      // The server is away: the last count says nothing any more (the next refresh retries).
      if (version === countVersion && !counted()) showCount(null);
    });
}

// ------------------------------------------------------------------ lines

type Data<E extends keyof ServerEvents> = Parameters<ServerEvents[E]>[0];

const chatKind = (data: Data<'chat.message'>): string =>
  data.clientId === myId ? 'chat mine' : 'chat';
const chatText = (data: Data<'chat.message'>): string => `${data.name}: ${data.message}`;
const broadcastText = (data: Data<'api.message'>): string => `[broadcast] ${data.message}`;

/**
 * Shows the room's last kept messages above the block's divider, oldest first, each with
 * its time. Runs of joins and leaves become one line each; one's own arrival is left out.
 * A server that keeps no history for the room refuses or answers nothing: then the page
 * simply shows no earlier messages.
 */
function loadHistory(c: ChatClient, room: string, block: HistoryBlock): void {
  c.history(room, { limit: HISTORY_SHOWN })
    .then(({ messages }) => {
      if (room !== myRoom || client !== c) return;
      let run: Coming[] = [];
      let runAt = 0;
      const flush = (): void => {
        if (run.length > 0) block.insert('system', summarizeComings(run), runAt);
        run = [];
      };
      for (const m of messages) {
        if (block.has(m.pos)) continue;
        if (m.event === 'user.joined' || m.event === 'user.left') {
          block.skip(m.pos);
          if (m.data.clientId === myId) continue;
          run.push({ kind: m.event === 'user.joined' ? 'joined' : 'left', name: m.data.name });
          runAt = ms(m.data.timestamp);
          continue;
        }
        flush();
        if (m.event === 'chat.message') {
          const item = block.insert(
            chatKind(m.data),
            chatText(m.data),
            ms(m.data.timestamp),
            m.pos,
          );
          if (item) item.dataset['text'] = m.data.message;
        } else if (m.event === 'api.message') {
          block.insert('broadcast', broadcastText(m.data), ms(m.data.timestamp), m.pos);
        }
      }
      flush();
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

  c.on('revoked', ({ room, reason }) => {
    const why = reason === 'expired' ? 'your access to it expired' : 'an admin removed you';
    add('system', `You are no longer in room ${room}: ${why}.`);
    if (room === myRoom) {
      myRoom = null;
      sendButton.disabled = true;
      setState('In no room');
    }
  });
  c.on('welcome', (data) => {
    myId = data.clientId;
    myUser = data.user;
    const signedIn = data.user ? `, signed in as ${data.user.name}` : '';
    add('system', `Connected as ${data.name}${signedIn} (${data.clientId}).`);
    showCount(data.clients);
    showIdentity(data.name);
  });
  c.on('room.joined', (data) => {
    const entered = data.room !== myRoom;
    const block = entered ? lines.openHistory(data.room) : null;
    if (entered) add('system', `You joined room ${data.room}.`);
    else if (rejoining) add('system', `Back in room ${data.room}.`);
    rejoining = false;
    myRoom = data.room;
    myName = data.name;
    presence.show(c, data.room, [myUser?.id ?? data.clientId]);
    setState(`In room ${data.room} as ${data.name}`);
    showIdentity(data.name);
    remember(wanted?.name ?? '', data.room, clientToken);
    sendButton.disabled = false;
    messageInput.focus();
    if (block) loadHistory(c, data.room, block);
  });
  // The server sends these to the room's members only; the checks keep a line that was on
  // its way while the page moved to another room out of the new one. One's own arrival
  // (which a recovery may replay) is already said by "You joined room ...".
  const notice = (data: Data<'user.joined'>, text: string, position?: RoomPosition): void => {
    if (data.room !== myRoom || data.clientId === myId) return;
    if (lines.addKept('system', text, ms(data.timestamp), position)) showCount(data.clients);
  };
  c.on('user.joined', (data, { position }) =>
    notice(data, `${data.name} joined the room.`, position),
  );
  c.on('user.left', (data, { position }) => notice(data, `${data.name} left the room.`, position));
  c.on('chat.message', (data, { position }) => {
    if (data.room !== myRoom) return;
    const item = lines.addKept(chatKind(data), chatText(data), ms(data.timestamp), position);
    if (item) item.dataset['text'] = data.message;
  });
  c.on('api.message', (data, { position }) => {
    if (data.room !== null && data.room !== myRoom) return;
    lines.addKept('broadcast', broadcastText(data), ms(data.timestamp), position);
  });
  c.on('recovered', (info) => {
    if (info.room !== myRoom) return;
    // The replayed notices carried the counts of their time: read the count of now.
    refreshCount();
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
    loadHistory(c, info.room, lines.openHistory(info.room));
  });
  c.on('error', (data) => {
    // The message is a sentence meant for people; the code stays in the tooltip.
    add('error', data.message || 'Something went wrong.').title = `code: ${data.code}`;
  });

  c.on('connect', (info) => {
    everConnected = true;
    setState('Connected');
    if (info.clientId !== undefined) myId = info.clientId;
    showCountNote();
    // A resumed session keeps its room (and the server replays what was missed); a fresh
    // one (first connection, or the server restarted) enters the wanted room again, without
    // the user doing anything.
    if (info.resumed && myRoom !== null) {
      if (rejoining) add('system', `Back in room ${myRoom}.`);
      rejoining = false;
      setState(`In room ${myRoom} as ${myName}`);
      sendButton.disabled = false;
      // The held notices come right after the resume, with the counts of their time.
      setTimeout(refreshCount, 1000);
      return;
    }
    if (wanted) c.emit('room.join', wanted);
  });
  c.on('disconnect', (info) => {
    myId = null;
    sendButton.disabled = true;
    refreshCount();
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
  identityEl.hidden = true;
  sendButton.disabled = true;
  showCountNote();
  old?.disconnect();
}

/** A session token for the typed demo token (`POST /api/token`); the demo token if that fails. */
async function sessionToken(token: string): Promise<string> {
  const response = await fetch('/api/token', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
  });
  if (!response.ok) return token;
  const body = (await response.json()) as { token?: unknown };
  return typeof body.token === 'string' ? body.token : token;
}

function start(token: string, name: string): void {
  // The display name may travel in the URL; the token goes in $hello.auth only.
  const c: ChatClient = new Client<ClientEvents, ServerEvents>('/', {
    // A typed token is traded for a short-lived session token on every connection and
    // before each expiry (the client sends it in $refresh); it never appears in a URL.
    ...(token ? { auth: () => sessionToken(token) } : {}),
    ...(name ? { query: { name } } : {}),
  });
  client = c;
  clientToken = token;
  listen(c);
  setState('Connecting...');
  c.connect().catch(() => undefined); // failures are reported through connect_error
}

/** Joins the room of the form, under its name and token. */
function join(): void {
  const name = nameInput.value.trim();
  const next: Join = { room: roomInput.value.trim() };
  if (name) next.name = name;
  const token = tokenInput.value.trim();
  wanted = next;
  if (client && clientToken !== token) stop();
  if (!client) start(token, name);
  else if (client.connected) client.emit('room.join', next);
  // else: the join goes out on `connect`
}

byId<HTMLFormElement>('join-form').addEventListener('submit', (e) => {
  e.preventDefault();
  join();
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
    // The server answers requests: show the delivery on the line once it is confirmed, or
    // the server's refusal (a rate limit, say), which answers the request and is not an
    // `error` event.
    c.emitWithAck('chat.message', { message: text })
      .then((answer) => {
        if (answer.delivered) lines.markDelivered(text);
      })
      .catch((error: unknown) => {
        if (!(error instanceof ClientError) || error.code !== 'PKG_ERR_CLIENT_REMOTE') return;
        const said = (error.data as { message?: unknown } | undefined)?.message;
        add('error', typeof said === 'string' && said ? said : error.message).title =
          `code: ${error.remoteCode ?? 'unknown'}`;
      });
  } else {
    c.emit('chat.message', { message: text });
  }
  messageInput.value = '';
  messageInput.focus();
});

showCountNote();
refreshCount();
setInterval(refreshCount, COUNT_POLL_MS);

// A page that was in a room before a reload goes back to it under the same name (and token).
const saved = recall();
if (saved) {
  nameInput.value = saved.name;
  roomInput.value = saved.room;
  tokenInput.value = saved.token;
  const as = saved.name ? ` as "${saved.name}"` : '';
  if (saved.signedIn && saved.token === '') {
    // Joining as a guest instead would put a guest under a signed-in user's last name.
    add(
      'system',
      `This browser remembers you in room ${saved.room}${as}, signed in with a token, which only the tab that used it keeps: enter the token and press Join.`,
    );
  } else {
    add(
      'system',
      `Welcome back: this browser remembers you in room ${saved.room}${as}; joining it again.`,
    );
    join();
  }
}
