import { createHash } from 'node:crypto';

// The chat page is kept as strings in this module (not a file read at run time), so it
// survives bundling and `pnpm deploy` unchanged and needs no build step of its own.
// The script and style are inline; the Content-Security-Policy allows exactly these two
// blocks by their SHA-256 hashes and nothing else.

const STYLE = `
  :root { color-scheme: light; font-family: system-ui, sans-serif; }
  body { margin: 0; background: #f3f4f6; color: #111827; }
  main { max-width: 760px; margin: 0 auto; padding: 24px 16px; }
  header { display: flex; align-items: baseline; justify-content: space-between; gap: 12px; }
  h1 { font-size: 1.5rem; margin: 0 0 4px; }
  .hint { color: #4b5563; margin: 0 0 16px; font-size: 0.9rem; }
  .count { background: #1d4ed8; color: #fff; border-radius: 999px; padding: 4px 12px; font-size: 0.9rem; white-space: nowrap; }
  form { display: flex; gap: 8px; flex-wrap: wrap; margin: 12px 0; }
  label { display: flex; flex-direction: column; font-size: 0.8rem; color: #374151; gap: 2px; }
  input { font: inherit; padding: 6px 8px; border: 1px solid #9ca3af; border-radius: 6px; min-width: 0; }
  #message { flex: 1; }
  button { font: inherit; padding: 6px 14px; border: 0; border-radius: 6px; background: #1d4ed8; color: #fff; cursor: pointer; align-self: flex-end; }
  button:disabled { background: #9ca3af; cursor: default; }
  #state { font-size: 0.9rem; color: #374151; margin: 4px 0; }
  #messages { list-style: none; margin: 0; padding: 8px; height: 45vh; min-height: 180px; max-height: 480px; overflow-y: auto; background: #fff; border: 1px solid #d1d5db; border-radius: 8px; }
  #messages li { padding: 3px 4px; border-radius: 4px; overflow-wrap: anywhere; }
  #messages li.system { color: #6b7280; font-style: italic; }
  #messages li.mine { background: #dbeafe; }
  #messages li.broadcast { color: #92400e; }
  #messages li.error { color: #b91c1c; }
`;

const SCRIPT = `
(function () {
  'use strict';
  var byId = function (id) { return document.getElementById(id); };
  var list = byId('messages');
  var stateEl = byId('state');
  var countEl = byId('client-count');
  var sendButton = byId('send');
  var socket = null;
  var socketToken = '';
  var myId = null;
  var myRoom = null;
  var pendingJoin = null;

  function add(kind, text) {
    var item = document.createElement('li');
    item.className = kind;
    item.textContent = text;
    list.appendChild(item);
    list.scrollTop = list.scrollHeight;
    return item;
  }

  function setState(text) { stateEl.textContent = text; }

  function refreshCount() {
    fetch('/api/status', { cache: 'no-store' })
      .then(function (res) { return res.ok ? res.json() : null; })
      .then(function (status) { if (status) countEl.textContent = String(status.clients); })
      .catch(function () { /* the next refresh tries again */ });
  }

  function send(event, data) { socket.send(JSON.stringify({ event: event, data: data })); }

  function who(data) { return data.name || data.clientId; }

  function handle(event, data) {
    switch (event) {
      case 'welcome':
        myId = data.clientId;
        add('system', 'Connected as ' + (data.name || 'guest') + (data.user ? ', signed in as ' + data.user.name : '') + ' (' + data.clientId + ').');
        refreshCount();
        break;
      case 'room.joined':
        if (data.room !== myRoom) add('system', 'You joined room ' + data.room + '.');
        myRoom = data.room;
        setState('In room ' + data.room + ' as ' + (data.name || data.clientId));
        sendButton.disabled = false;
        byId('message').focus();
        break;
      case 'user.joined':
        // room null: someone connected (only the count changes); a room: someone entered it.
        if (data.room && data.room === myRoom) add('system', who(data) + ' joined the room.');
        refreshCount();
        break;
      case 'user.left':
        if (data.room && data.room === myRoom) add('system', who(data) + ' left the room.');
        refreshCount();
        break;
      case 'chat.message':
        add(data.clientId === myId ? 'chat mine' : 'chat', who(data) + ': ' + data.message);
        break;
      case 'api.message':
        add('broadcast', '[broadcast] ' + data.message);
        break;
      case 'error':
        // The message is a sentence meant for people; the code stays in the tooltip.
        add('error', data.message || 'Something went wrong.').title = 'code: ' + data.code;
        break;
      default:
        break;
    }
  }

  function connect(token, name) {
    var url = new URL('/', window.location.href);
    url.protocol = window.location.protocol === 'https:' ? 'wss:' : 'ws:';
    if (token) url.searchParams.set('key', token);
    if (name) url.searchParams.set('name', name);
    var ws = new WebSocket(url.toString());
    socket = ws;
    socketToken = token;
    setState('Connecting...');
    ws.addEventListener('open', function () {
      setState('Connected');
      if (pendingJoin) { send('room.join', pendingJoin); pendingJoin = null; }
    });
    ws.addEventListener('message', function (msg) {
      var envelope;
      try { envelope = JSON.parse(msg.data); } catch (e) { return; }
      if (envelope && typeof envelope.event === 'string') handle(envelope.event, envelope.data || {});
    });
    ws.addEventListener('close', function () {
      if (socket !== ws) return;
      var refused = myId === null;
      socket = null;
      myId = null;
      myRoom = null;
      sendButton.disabled = true;
      var why = !refused
        ? 'Disconnected from the server. Press Join to connect again.'
        : token
          ? 'Could not connect: the server refused the token. Use a demo token (alice-token, bob-token, admin-token) or leave the field empty.'
          : 'Could not connect to the server. Is it running?';
      setState(refused ? 'Not connected' : 'Disconnected');
      add('error', why);
      refreshCount();
    });
  }

  byId('join-form').addEventListener('submit', function (e) {
    e.preventDefault();
    var name = byId('name').value.trim();
    var join = { room: byId('room').value.trim() };
    if (name) join.name = name;
    var token = byId('token').value.trim();
    if (socket && socketToken !== token) { var old = socket; socket = null; old.close(); }
    if (!socket) { pendingJoin = join; connect(token, name); }
    else if (socket.readyState === WebSocket.OPEN) send('room.join', join);
    else pendingJoin = join;
  });

  byId('send-form').addEventListener('submit', function (e) {
    e.preventDefault();
    var input = byId('message');
    if (!input.value.trim() || !socket || socket.readyState !== WebSocket.OPEN) return;
    send('chat.message', { message: input.value });
    input.value = '';
    input.focus();
  });

  refreshCount();
  setInterval(refreshCount, 5000);
})();
`;

const sha256 = (text: string): string =>
  `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** The page's Content-Security-Policy: its own inline script and style, same-origin fetch/WebSocket. */
export const CHAT_PAGE_CSP = [
  "default-src 'none'",
  `script-src ${sha256(SCRIPT)}`,
  `style-src ${sha256(STYLE)}`,
  "connect-src 'self'",
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers sent with the page. */
export const CHAT_PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Security-Policy': CHAT_PAGE_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
});

/** The chat page served at `/`. */
export const CHAT_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Chat demo</title>
<link rel="icon" href="data:,">
<style>${STYLE}</style>
</head>
<body>
<main>
  <header>
    <div>
      <h1>Chat demo</h1>
      <p class="hint">WebSocket and HTTP on one port. Pick a name and a room, then chat with everyone in that room.</p>
    </div>
    <span class="count">Clients online: <strong id="client-count">-</strong></span>
  </header>
  <form id="join-form" autocomplete="off">
    <label>Name <input id="name" maxlength="32" placeholder="Ada" required></label>
    <label>Room <input id="room" maxlength="32" pattern="[A-Za-z0-9_.\\-]{1,32}" value="lobby" required></label>
    <label>Token (optional) <input id="token" placeholder="alice-token"></label>
    <button id="join" type="submit">Join</button>
  </form>
  <p id="state" role="status">Not connected</p>
  <ul id="messages" aria-live="polite"></ul>
  <form id="send-form" autocomplete="off">
    <input id="message" maxlength="2000" placeholder="Write a message" aria-label="Message">
    <button id="send" type="submit" disabled>Send</button>
  </form>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
