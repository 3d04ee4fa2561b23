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
 *   room's last DOC_HISTORY_SIZE messages always hold the whole document (while it is at
 *   most MAX_DOC_UPDATE_BYTES: 20,000 characters of ordinary typing make about 45 KB).
 * - An update that did not reach the server (a lost connection, a rate limit) is kept and
 *   sent merged with the next one: on the next connection, or once the refusal's
 *   `retryAfter` has passed. One the server refuses for good (too large) is dropped.
 */
import { ClientError, type Client, type ConnectInfo, type RecoveredInfo } from '@pkg/client';
import * as Y from 'yjs';
import { DOC_HISTORY_SIZE, DOC_NAMESPACE, MAX_DOC_UPDATE_BYTES, STATE_EVERY } from '../doc-rules';
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

/** Refusals that pass: what was refused is sent again after a while. */
const PASSING = new Set(['rate_limited', 'too_many_messages', 'busy']);

/** How long to wait before sending again after a passing refusal, in ms (unless it says). */
const RETRY_MS = 1000;

/**
 * What to do with a send that failed: `later` (the connection was lost or the answer did
 * not come: sent with the next connection), `retry` after a number of ms (a passing
 * refusal, after its `retryAfter`), or `drop` (the server refused those bytes for good).
 */
function onFailure(error: unknown): 'later' | 'drop' | number {
  if (!(error instanceof ClientError) || error.code !== 'PKG_ERR_CLIENT_REMOTE') return 'later';
  if (!PASSING.has(error.remoteCode ?? '')) return 'drop';
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
  /** Local updates that have not reached the server yet, sent merged with the next one. */
  let pending: Uint8Array[] = [];
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

  /** Sends `update` with whatever is pending, merged into one update. */
  const send = (update?: Uint8Array): void => {
    const parts = update === undefined ? pending : [...pending, update];
    pending = [];
    if (parts.length === 0) return;
    const bytes = parts.length === 1 ? parts[0]! : Y.mergeUpdates(parts);
    sinceState += 1;
    client.emitWithAck('doc.update', bytes).catch((error: unknown) => failed(bytes, error));
  };

  /** Keeps bytes that did not reach the server, and sends them again when it lets us. */
  const failed = (bytes: Uint8Array, error: unknown): void => {
    const then = onFailure(error);
    if (then === 'drop') return;
    pending.push(bytes);
    if (then === 'later' || retry !== undefined || stopped) return;
    retry = setTimeout(() => {
      retry = undefined;
      if (open && client.connected) send();
    }, then);
  };

  /**
   * Sends the whole document, which carries everything pending too. A document larger than
   * the server takes whole is not (tried again STATE_EVERY updates later): its pending
   * updates go as they are.
   */
  const sendState = (): void => {
    const whole = Y.encodeStateAsUpdate(doc);
    sinceState = 0;
    if (whole.length > MAX_DOC_UPDATE_BYTES) {
      send();
      return;
    }
    pending = [];
    if (isEmpty(doc)) return;
    client.emitWithAck('doc.state', whole).catch((error: unknown) => failed(whole, error));
  };

  const onLocalUpdate = (update: Uint8Array, origin: unknown): void => {
    if (origin === REMOTE) return;
    if (!open || !client.connected) {
      pending.push(update);
    } else if (sinceState >= STATE_EVERY) {
      pending.push(update);
      sendState();
    } else {
      send(update);
    }
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
      send();
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
