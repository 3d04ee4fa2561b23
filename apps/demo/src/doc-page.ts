import { MAX_DOC_LENGTH } from './doc-rules';
import { pageHeaders, sha256 } from './page';

// The shared document's page, at DOC_PAGE_PATH: its HTML and style are strings here, its
// script is `browser/doc-page.ts` bundled with @pkg/client and yjs (`page-bundle.ts`),
// served from the same port at DOC_SCRIPT_PATH. Opening another document is a plain GET
// form (`/doc?doc=name`), so a reload keeps the document open.

/** Where the document page is served. */
export const DOC_PAGE_PATH = '/doc';

/** Where the document page loads its script from. */
export const DOC_SCRIPT_PATH = '/doc.js';

const STYLE = `
  :root { color-scheme: light; font-family: system-ui, sans-serif; }
  body { margin: 0; background: #f3f4f6; color: #111827; }
  main { max-width: 760px; margin: 0 auto; padding: 24px 16px; }
  h1 { font-size: 1.5rem; margin: 0 0 4px; }
  .hint { color: #4b5563; margin: 0 0 16px; font-size: 0.9rem; }
  a { color: #1d4ed8; }
  form { display: flex; gap: 8px; flex-wrap: wrap; margin: 12px 0; }
  label { display: flex; flex-direction: column; font-size: 0.8rem; color: #374151; gap: 2px; }
  input { font: inherit; padding: 6px 8px; border: 1px solid #9ca3af; border-radius: 6px; }
  button { font: inherit; padding: 6px 14px; border: 0; border-radius: 6px; background: #1d4ed8; color: #fff; cursor: pointer; align-self: flex-end; }
  #doc-state { font-size: 0.9rem; color: #374151; margin: 4px 0; }
  #doc { box-sizing: border-box; width: 100%; height: 50vh; min-height: 200px; padding: 10px; font: 1rem/1.5 ui-monospace, monospace; border: 1px solid #d1d5db; border-radius: 8px; background: #fff; resize: vertical; }
  #doc:disabled { background: #e5e7eb; }
`;

/** The page's Content-Security-Policy: its own script, inline style and GET form, same-origin WebSocket. */
export const DOC_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  `style-src ${sha256(STYLE)}`,
  "connect-src 'self'",
  'img-src data:',
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers sent with the page. */
export const DOC_PAGE_HEADERS = pageHeaders(DOC_PAGE_CSP);

/** The document page served at `/doc`. */
export const DOC_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Shared document</title>
<link rel="icon" href="data:,">
<style>${STYLE}</style>
</head>
<body>
<main>
  <h1>Shared document</h1>
  <p class="hint">Everyone who opens the same document edits it together (Yjs, synced through this server as binary updates). Open this page in a second tab to try it. <a href="/">Back to the chat</a></p>
  <form id="doc-form" method="get" action="${DOC_PAGE_PATH}" autocomplete="off">
    <label>Document <input id="doc-name" name="doc" maxlength="32" pattern="[A-Za-z0-9_.\\-]{1,32}" value="notes" required></label>
    <button id="open" type="submit">Open</button>
  </form>
  <p id="doc-state" role="status">No document open</p>
  <textarea id="doc" maxlength="${MAX_DOC_LENGTH}" aria-label="Document text" spellcheck="false" disabled></textarea>
</main>
<script src="${DOC_SCRIPT_PATH}"></script>
</body>
</html>
`;
