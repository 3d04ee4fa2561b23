import { createHash } from 'node:crypto';

// The chat page's HTML and style are kept as strings in this module. Its script is
// `browser/chat-page.ts` bundled with @pkg/client (`page-bundle.ts`), served from the same
// port at PAGE_SCRIPT_PATH. The Content-Security-Policy allows that same-origin script and
// the inline style by its SHA-256 hash, and nothing else.

/** Where the page loads its script from. */
export const PAGE_SCRIPT_PATH = '/chat.js';

const STYLE = `
  :root { color-scheme: light; font-family: system-ui, sans-serif; }
  body { margin: 0; background: #f3f4f6; color: #111827; }
  main { max-width: 760px; margin: 0 auto; padding: 24px 16px; }
  header { display: flex; align-items: baseline; justify-content: space-between; gap: 12px; }
  h1 { font-size: 1.5rem; margin: 0 0 4px; }
  .hint { color: #4b5563; margin: 0 0 16px; font-size: 0.9rem; }
  .nowrap { white-space: nowrap; }
  .count { background: #1d4ed8; color: #fff; border-radius: 999px; padding: 4px 12px; font-size: 0.9rem; white-space: nowrap; }
  form { display: flex; gap: 8px; flex-wrap: wrap; margin: 12px 0; }
  label { display: flex; flex-direction: column; font-size: 0.8rem; color: #374151; gap: 2px; }
  input { font: inherit; padding: 6px 8px; border: 1px solid #9ca3af; border-radius: 6px; min-width: 0; }
  #message { flex: 1; }
  button { font: inherit; padding: 6px 14px; border: 0; border-radius: 6px; background: #1d4ed8; color: #fff; cursor: pointer; align-self: flex-end; }
  button:disabled { background: #9ca3af; cursor: default; }
  button[hidden] { display: none; }
  #state { font-size: 0.9rem; color: #374151; margin: 4px 0; }
  #identity { font-size: 0.85rem; color: #4b5563; margin: 0 0 4px; }
  #identity[hidden] { display: none; }
  #count-note { font-size: 0.8rem; opacity: 0.85; }
  #messages { list-style: none; margin: 0; padding: 8px; height: 45vh; min-height: 180px; max-height: 480px; overflow-y: auto; background: #fff; border: 1px solid #d1d5db; border-radius: 8px; }
  #messages li { display: flex; gap: 8px; align-items: baseline; padding: 3px 4px; border-radius: 4px; overflow-wrap: anywhere; }
  #messages li time { flex: none; min-width: 3.2em; color: #6b7280; font-size: 0.75rem; font-style: normal; font-variant-numeric: tabular-nums; }
  #messages li .text { flex: 1; min-width: 0; }
  #messages li.history { opacity: 0.75; }
  #messages li.divider { display: flex; gap: 8px; color: #4b5563; font-size: 0.8rem; margin: 6px 0; }
  #messages li.divider::before, #messages li.divider::after { content: ""; flex: 1; border-top: 1px solid #d1d5db; align-self: center; }
  #messages li.divider[hidden] { display: none; }
  #messages li.system { color: #6b7280; font-style: italic; }
  #messages li.mine { background: #dbeafe; }
  #messages li.broadcast { color: #92400e; }
  #messages li.error { color: #b91c1c; }
  #messages li .delivery { flex: none; color: #047857; font-size: 0.8rem; }
  #presence-box h2 { font-size: 0.9rem; margin: 8px 0 0; color: #374151; }
  #presence { list-style: none; display: flex; flex-wrap: wrap; gap: 6px; padding: 0; margin: 4px 0 8px; }
  #presence li { background: #e5e7eb; border-radius: 999px; padding: 2px 10px; font-size: 0.85rem; overflow-wrap: anywhere; }
`;

/** The CSP source that allows one inline text (a style element) by its hash. */
export const sha256 = (text: string): string =>
  `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** Headers sent with a page under the given Content-Security-Policy. */
export function pageHeaders(csp: string): Readonly<Record<string, string>> {
  return Object.freeze({
    'Content-Security-Policy': csp,
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-store',
  });
}

/** The page's Content-Security-Policy: its own script and inline style, same-origin fetch/WebSocket. */
export const CHAT_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  `style-src ${sha256(STYLE)}`,
  "connect-src 'self'",
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers sent with the page script. */
export const PAGE_SCRIPT_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Content-Type': 'text/javascript; charset=utf-8',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-cache',
});

/** Headers sent with the page. */
export const CHAT_PAGE_HEADERS = pageHeaders(CHAT_PAGE_CSP);

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
      <p class="hint">WebSocket and HTTP on one port. Pick a name and a room, then chat with everyone in that room. Without a token you appear as <span class="nowrap">guest-&lt;name&gt;</span>; this browser remembers your name and room.</p>
    </div>
    <span class="count" title="WebSocket clients connected to this server, in every room">Clients online: <strong id="client-count">-</strong> <span id="count-note">(without you)</span></span>
  </header>
  <form id="join-form" autocomplete="off">
    <label>Name <input id="name" maxlength="32" placeholder="Ada" required></label>
    <label>Room <input id="room" maxlength="32" pattern="[A-Za-z0-9_.\\-]{1,32}" value="lobby" required></label>
    <label>Token (optional) <input id="token" placeholder="alice-token"></label>
    <button id="join" type="submit">Join</button>
  </form>
  <p id="state" role="status">Not connected</p>
  <p id="identity" hidden></p>
  <button id="reconnect" type="button" hidden>Reconnect</button>
  <section id="presence-box" aria-label="Who is in this room">
    <h2>In this room: <span id="presence-count">-</span></h2>
    <ul id="presence" aria-live="polite"></ul>
  </section>
  <ul id="messages" aria-live="polite"></ul>
  <form id="send-form" autocomplete="off">
    <input id="message" maxlength="2000" placeholder="Write a message" aria-label="Message">
    <button id="send" type="submit" disabled>Send</button>
  </form>
</main>
<script src="${PAGE_SCRIPT_PATH}"></script>
</body>
</html>
`;
