/**
 * The shared document page's script, bundled with @pkg/client and yjs for the browser at
 * build time (see `../page-bundle.ts`). The page holds one `Y.Doc` whose text is bound to the
 * textarea (`text-binding.ts`); `doc-sync.ts` keeps it in step with the server: each edit
 * goes out as one binary frame, the document's history is read on entering it, and after a
 * lost connection the client comes back and the server replays what was missed. The
 * document's name comes from the address (`/doc?doc=notes`), so a reload opens it again.
 */
import { Client } from '@pkg/client';
import * as Y from 'yjs';
import { ROOM_NAME } from '../room-policy';
import type { DocClientEvents, DocServerEvents } from '../events';
import { syncDoc, type DocSyncState } from './doc-sync';
import { bindTextarea } from './text-binding';

const byId = <T extends HTMLElement = HTMLElement>(id: string): T => {
  const element = document.getElementById(id);
  if (!element) throw new Error(`The page has no #${id}.`);
  return element as T;
};

const stateEl = byId('doc-state');
const nameInput = byId<HTMLInputElement>('doc-name');
const area = byId<HTMLTextAreaElement>('doc');

/** What the page says in each state. */
const SAID: Readonly<Record<DocSyncState, (doc: string) => string>> = {
  opening: (doc) => `Opening document ${doc}...`,
  synced: (doc) => `Editing document ${doc}: your changes reach everyone who has it open.`,
  offline: (doc) =>
    `Connection lost; reconnecting... Your changes to ${doc} are kept and sent once it is back.`,
  refused: (doc) => `The server refused document ${doc}.`,
};

const name = new URLSearchParams(location.search).get('doc');
if (name !== null && ROOM_NAME.test(name)) {
  nameInput.value = name;
  const doc = new Y.Doc();
  bindTextarea(doc.getText('text'), area);
  const client = new Client<DocClientEvents, DocServerEvents>('/');
  syncDoc(client, doc, name, {
    onState: (state, detail) => {
      stateEl.textContent = detail ? `${SAID[state](name)} ${detail}` : SAID[state](name);
      // Editable once the document is open; edits made while offline are kept and sent later.
      if (state === 'synced') area.disabled = false;
      if (state === 'refused') area.disabled = true;
    },
  });
  client.connect().catch(() => {
    stateEl.textContent = 'Could not connect to the server. Is it running?';
  });
} else if (name !== null) {
  stateEl.textContent = 'A document name is 1-32 letters, digits, "_", "." or "-".';
}
