/**
 * Keeps a Yjs document in step with the server's copy of it, through `@pkg/client`: the
 * document page uses it, and so do the tests in Node (nothing here touches the DOM).
 *
 * - Every local change (the doc's `update` event) goes out as one binary frame,
 *   `doc.update`; the server relays the bytes to the document's other pages and keeps them
 *   in the room's history.
 * - Entering the document reads that history (`client.history`) and applies it; then the
 *   page sends its whole document once (`doc.state`, `Y.encodeStateAsUpdate`), which also
 *   carries any edit made while it was away. Yjs updates can be applied in any order and
 *   twice, so a page converges whatever it receives first.
 * - After a lost connection the client resumes the session or, on a fresh one, the page
 *   opens the document again and the server replays what it missed (`recovered`); when
 *   that is not possible (`recovered: false`) the page reads the history again.
 * - Every STATE_EVERY updates a page sends its whole document instead of an update, so the
 *   room's last DOC_HISTORY_SIZE messages always hold the whole document.
 */
import { ClientError, type Client, type ConnectInfo, type RecoveredInfo } from '@pkg/client';
import * as Y from 'yjs';
import { DOC_HISTORY_SIZE, DOC_NAMESPACE, STATE_EVERY } from '../doc-rules';
import type { DocClientEvents, DocServerEvents } from '../events';

export type DocClient = Client<DocClientEvents, DocServerEvents>;

/**
 * Where a page stands: `opening` (asking the server), `synced` (in the document, edits go
 * out), `offline` (edits wait for the connection), `refused` (the server refused the
 * document; `detail` says why).
 */
export type DocSyncState = 'opening' | 'synced' | 'offline' | 'refused';

export interface DocSyncOptions {
  /** Told of every change of state. */
  onState?: (state: DocSyncState, detail?: string) => void;
}

export interface DocSync {
  readonly state: DocSyncState;
  /** Received updates that Yjs could not read (sent by a broken or hostile client): dropped. */
  readonly dropped: number;
  /** Stops listening to the client and the document (neither is closed). */
  stop(): void;
}

/** Refusals that pass: the whole document is sent again after a while. */
const PASSING = new Set(['rate_limited', 'too_many_messages', 'busy']);

/** How long to wait before sending again after a passing refusal, in ms (unless it says). */
const RETRY_MS = 1000;

/** The wait a refusal asks for (`retryAfter`, seconds), or undefined when it does not pass. */
function retryDelay(error: unknown): number | undefined {
  if (!(error instanceof ClientError) || !PASSING.has(error.remoteCode ?? '')) return undefined;
  const after = (error.data as { retryAfter?: unknown } | undefined)?.retryAfter;
  return typeof after === 'number' && after > 0 ? after * 1000 : RETRY_MS;
}

/** The origin of the updates the server sent: they are not sent back. */
const REMOTE = Symbol('remote');

/** True for a document that holds nothing yet (its state vector lists no client). */
const isEmpty = (doc: Y.Doc): boolean => doc.store.clients.size === 0;

/**
 * Syncs `doc` as the document `name` over `client`. Call it before or after
 * `client.connect()`: the document is opened on every new session.
 */
export function syncDoc(
  client: DocClient,
  doc: Y.Doc,
  name: string,
  options: DocSyncOptions = {},
): DocSync {
  let state: DocSyncState = 'opening';
  let dropped = 0;
  /** Whether the server has this page in the document on the current session. */
  let open = false;
  /** Whether the history was read once; later entries come from recovery. */
  let loaded = false;
  /** Updates seen since the last whole document (sent or received). */
  let sinceState = 0;
  /** A local change did not reach the server: the next send is the whole document. */
  let unsent = false;
  let stopped = false;
  let retry: ReturnType<typeof setTimeout> | undefined;

  const setState = (next: DocSyncState, detail?: string): void => {
    state = next;
    options.onState?.(next, detail);
  };

  const apply = (event: keyof DocServerEvents, bytes: Uint8Array): void => {
    try {
      Y.applyUpdate(doc, bytes, REMOTE);
    } catch {
      dropped += 1;
      return;
    }
    sinceState = event === 'doc.state' ? 0 : sinceState + 1;
  };

  /**
   * A send that did not reach the server: the next one is the whole document. After a lost
   * connection that is on the next connection; after a refusal that passes (a rate limit),
   * once the server says so; after another refusal, with the next edit.
   */
  const failed = (error: unknown): void => {
    unsent = true;
    const delay = retryDelay(error);
    if (delay === undefined || retry !== undefined || stopped) return;
    retry = setTimeout(() => {
      retry = undefined;
      if (unsent && open && client.connected) sendState();
    }, delay);
  };

  const sendState = (): void => {
    unsent = false;
    sinceState = 0;
    if (isEmpty(doc)) return;
    client.emitWithAck('doc.state', Y.encodeStateAsUpdate(doc)).catch(failed);
  };

  const onLocalUpdate = (update: Uint8Array, origin: unknown): void => {
    if (origin === REMOTE) return;
    if (!open || !client.connected) {
      unsent = true;
      return;
    }
    if (unsent || sinceState >= STATE_EVERY) {
      sendState();
      return;
    }
    sinceState += 1;
    client.emitWithAck('doc.update', update).catch(failed);
  };

  const loadHistory = async (): Promise<void> => {
    const { messages } = await client.history(name, {
      namespace: DOC_NAMESPACE,
      limit: DOC_HISTORY_SIZE,
    });
    for (const m of messages) apply(m.event, m.data);
    loaded = true;
  };

  const enter = async (): Promise<void> => {
    setState('opening');
    try {
      await client.emitWithAck('doc.open', { doc: name });
    } catch (error) {
      if (stopped || !client.connected) return; // the next connection tries again
      setState('refused', error instanceof Error ? error.message : String(error));
      return;
    }
    open = true;
    // A page that comes back on a fresh session gets what it missed from the recovery.
    if (!loaded) await loadHistory().catch(() => undefined);
    if (stopped) return;
    sendState();
    setState('synced');
  };

  const onUpdate = (bytes: Uint8Array): void => apply('doc.update', bytes);
  const onState = (bytes: Uint8Array): void => apply('doc.state', bytes);
  const onConnect = (info: ConnectInfo): void => {
    if (info.resumed && open) {
      if (unsent) sendState();
      setState('synced');
      return;
    }
    open = false;
    void enter();
  };
  const onDisconnect = (): void => setState('offline');
  const onRecovered = (info: RecoveredInfo): void => {
    if (info.room !== name || info.namespace !== DOC_NAMESPACE || info.recovered) return;
    // Too much was missed (or the server lost the history): read what it keeps, and send
    // the whole document, which puts back what the history lost.
    void loadHistory()
      .catch(() => undefined)
      .then(() => sendState());
  };

  client.on('doc.update', onUpdate);
  client.on('doc.state', onState);
  client.on('connect', onConnect);
  client.on('disconnect', onDisconnect);
  client.on('recovered', onRecovered);
  doc.on('update', onLocalUpdate);
  if (client.connected) void enter();

  return {
    get state() {
      return state;
    },
    get dropped() {
      return dropped;
    },
    stop() {
      stopped = true;
      clearTimeout(retry);
      client.off('doc.update', onUpdate);
      client.off('doc.state', onState);
      client.off('connect', onConnect);
      client.off('disconnect', onDisconnect);
      client.off('recovered', onRecovered);
      doc.off('update', onLocalUpdate);
    },
  };
}
