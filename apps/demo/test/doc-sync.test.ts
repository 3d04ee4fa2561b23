// The shared document over real sockets: Y.Docs in Node, each with the page's client and
// the page's own sync (src/browser/doc-sync.ts), against the demo on 127.0.0.1. Edits reach
// the other document as the same bytes, one binary frame each; a page that opens the
// document later reads it from the room's history, and one that comes back on a fresh
// session gets what it missed from the room's recovery. The server's answers to clients
// that send too early, too much or not bytes at all.
import { afterEach, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import * as Y from 'yjs';
import { Client, ClientError } from '@pkg/client';
import { syncDoc, type DocClient, type DocSync } from '../src/browser/doc-sync';
import { MAX_DOC_UPDATE_BYTES, STATE_EVERY } from '../src/doc-rules';
import type { DocClientEvents, DocServerEvents } from '../src/events';
import { useDemo } from './helpers/app';

const start = useDemo();

const clients: DocClient[] = [];
const syncs: DocSync[] = [];
afterEach(() => {
  for (const s of syncs.splice(0)) s.stop();
  for (const c of clients.splice(0)) c.disconnect();
});

function newClient(ws: string): DocClient {
  const client = new Client<DocClientEvents, DocServerEvents>(ws, {
    WebSocket,
    network: null,
    reconnectionDelay: 10,
    reconnectionDelayMax: 50,
  });
  clients.push(client);
  return client;
}

/** A page: a Y.Doc synced as document `name`, resolved once it is in the document. */
async function openPage(ws: string, name: string): Promise<{ doc: Y.Doc; client: DocClient }> {
  const doc = new Y.Doc();
  const client = newClient(ws);
  const synced = new Promise<void>((resolve, reject) => {
    const sync = syncDoc(client, doc, name, {
      onState: (state, detail) => {
        if (state === 'synced') resolve();
        if (state === 'refused') reject(new Error(detail));
      },
    });
    syncs.push(sync);
  });
  await client.connect();
  await synced;
  return { doc, client };
}

const textOf = (doc: Y.Doc): string => doc.getText('text').toString();

/** Resolves once the document's text is `expected` (checked on every change). */
function textBecomes(doc: Y.Doc, expected: string): Promise<void> {
  return new Promise((resolve) => {
    const check = (): void => {
      if (textOf(doc) !== expected) return;
      doc.off('update', check);
      resolve();
    };
    doc.on('update', check);
    check();
  });
}

describe('the shared document (Yjs) through the server', () => {
  it('syncs two Y.Docs: each edit ends in both, relayed as the same bytes', async () => {
    const { ws } = await start();
    const a = await openPage(ws, 'notes');
    const b = await openPage(ws, 'notes');
    const sent: Uint8Array[] = [];
    a.doc.on('update', (update: Uint8Array, origin: unknown) => {
      if (origin === null) sent.push(update);
    });
    const received: Uint8Array[] = [];
    b.client.on('doc.update', (bytes) => void received.push(bytes.slice()));

    a.doc.getText('text').insert(0, 'hello');
    await textBecomes(b.doc, 'hello');
    b.doc.getText('text').insert(5, ' world');
    await textBecomes(a.doc, 'hello world');
    a.doc.getText('text').delete(0, 1);
    a.doc.getText('text').insert(0, 'H');
    await textBecomes(b.doc, 'Hello world');

    expect(textOf(a.doc)).toBe(textOf(b.doc));
    // Each local update arrived at the other page as a Uint8Array with the same bytes.
    expect(received.map((u) => Buffer.from(u).toString('hex'))).toEqual(
      sent.map((u) => Buffer.from(u).toString('hex')),
    );
    expect(received.length).toBe(3);
  });

  it('gives a page that opens the document later the whole of it, from the history', async () => {
    const { ws } = await start();
    const a = await openPage(ws, 'story');
    const text = a.doc.getText('text');
    for (const word of ['once ', 'upon ', 'a ', 'time']) text.insert(text.length, word);
    // A second document does not mix with the first.
    const other = await openPage(ws, 'other');
    other.doc.getText('text').insert(0, 'elsewhere');
    const b = await openPage(ws, 'story');
    const c = await openPage(ws, 'other');
    await textBecomes(b.doc, 'once upon a time');
    await textBecomes(c.doc, 'elsewhere');
    // What B read converges with A when both go on editing.
    b.doc.getText('text').insert(0, '> ');
    await textBecomes(a.doc, '> once upon a time');
  });

  it('hands a page that comes back on a fresh session the edits it missed (recovery)', async () => {
    const { ws, app } = await start();
    const a = await openPage(ws, 'draft');
    const b = await openPage(ws, 'draft');
    a.doc.getText('text').insert(0, 'one');
    await textBecomes(b.doc, 'one');
    // The server sends B away, which ends its session: it can only come back through the
    // document's position in its history.
    const stopped = new Promise((resolve) => b.client.once('reconnect_stopped', resolve));
    app.server.disconnectClient(b.client.id!);
    await stopped;
    a.doc.getText('text').insert(3, ' two');
    a.doc.getText('text').insert(7, ' three');
    const recovered = new Promise((resolve) => b.client.once('recovered', resolve));
    await b.client.connect();
    expect(await recovered).toEqual({
      room: 'draft',
      namespace: '/docs',
      recovered: true,
      replayed: 2,
    });
    await textBecomes(b.doc, 'one two three');
  });

  it('sends the whole document every STATE_EVERY updates, so the history holds all of it', async () => {
    // Ten times the budget: 250 updates in a few seconds, as a fast typist would send them.
    const { ws } = await start({ rateLimitScale: 10 });
    const a = await openPage(ws, 'long');
    const b = await openPage(ws, 'long');
    const text = a.doc.getText('text');
    for (let i = 0; i < 250; i += 1) {
      text.insert(text.length, String(i % 10));
      await textBecomes(b.doc, textOf(a.doc));
    }
    const { messages } = await b.client.history('long', { namespace: '/docs', limit: 300 });
    // Never more than STATE_EVERY updates in a row (a send the server refused, over its
    // per-connection message budget, say, is followed by a whole document too).
    const runs = messages
      .map((m) => (m.event === 'doc.state' ? '|' : '.'))
      .join('')
      .split('|');
    expect(runs.length).toBeGreaterThanOrEqual(1 + Math.floor(250 / (STATE_EVERY + 1)));
    for (const run of runs) expect(run.length).toBeLessThanOrEqual(STATE_EVERY);
    // Only the messages from the last whole document on are needed to build the document.
    const last = messages.map((m) => m.event).lastIndexOf('doc.state');
    const rebuilt = new Y.Doc();
    for (const m of messages.slice(last)) Y.applyUpdate(rebuilt, m.data);
    expect(textOf(rebuilt)).toBe(textOf(a.doc));
  }, 60_000);

  it('goes on with updates once the whole document is larger than the server takes', async () => {
    const { ws } = await start({ rateLimitScale: 10 });
    const a = await openPage(ws, 'big');
    const b = await openPage(ws, 'big');
    const text = a.doc.getText('text');
    // Three updates of 50,000 characters each: the whole document passes 128 KiB.
    for (const letter of ['a', 'b', 'c']) {
      text.insert(text.length, letter.repeat(50_000));
      await textBecomes(b.doc, textOf(a.doc));
    }
    expect(Y.encodeStateAsUpdate(a.doc).length).toBeGreaterThan(MAX_DOC_UPDATE_BYTES);
    // Past STATE_EVERY updates the page would send the whole document: it sends updates.
    for (let i = 0; i < STATE_EVERY + 5; i += 1) {
      text.insert(0, '.');
      await textBecomes(b.doc, textOf(a.doc));
    }
    const { messages } = await b.client.history('big', { namespace: '/docs', limit: 300 });
    expect(messages.filter((m) => m.event === 'doc.state')).toEqual([]);
    expect(messages.length).toBe(3 + STATE_EVERY + 5);
  }, 60_000);

  it('sends refused updates again, merged into one, once a rate limit lets it', async () => {
    // A tenth of the budget: 15 updates per 10 s.
    const { ws } = await start({ rateLimitScale: 0.1 });
    const a = await openPage(ws, 'busy');
    const b = await openPage(ws, 'busy');
    const text = a.doc.getText('text');
    for (let i = 0; i < 20; i += 1) text.insert(text.length, 'x');
    // The updates over the budget were refused; they go out, merged, after the retryAfter.
    await textBecomes(b.doc, 'x'.repeat(20));
    const { messages } = await b.client.history('busy', { namespace: '/docs' });
    expect(messages.length).toBeLessThan(20);
    const rebuilt = new Y.Doc();
    for (const m of messages) Y.applyUpdate(rebuilt, m.data);
    expect(textOf(rebuilt)).toBe('x'.repeat(20));
  }, 30_000);
});

describe('what the server does with odd document messages', () => {
  it('refuses an update before doc.open, no bytes, too many, a bad or private name; moves documents', async () => {
    const { ws } = await start();
    const client = newClient(ws);
    await client.connect();
    const refusal = (promise: Promise<unknown>) =>
      promise.then(
        () => 'answered',
        (error: unknown) => (error instanceof ClientError ? error.remoteCode : String(error)),
      );
    expect(await refusal(client.emitWithAck('doc.update', new Uint8Array([1, 2])))).toBe(
      'not_in_doc',
    );
    await client.emitWithAck('doc.open', { doc: 'odd' });
    const notBytes = { text: 'hi' } as unknown as Uint8Array;
    expect(await refusal(client.emitWithAck('doc.update', notBytes))).toBe('validation_failed');
    const big = new Uint8Array(MAX_DOC_UPDATE_BYTES + 1);
    expect(await refusal(client.emitWithAck('doc.state', big))).toBe('validation_failed');
    // At the bound it is taken (and relayed to nobody: the page is alone in the document).
    const most = new Uint8Array(MAX_DOC_UPDATE_BYTES);
    expect(await client.emitWithAck('doc.state', most)).toEqual({ relayed: true });
    expect(await refusal(client.emitWithAck('doc.open', { doc: 'no spaces' }))).toBe(
      'validation_failed',
    );
    expect(await refusal(client.emitWithAck('doc.open', { doc: 'private-x' }))).toBe('forbidden');
    // Still in "odd" after the refusals; opening another document leaves it.
    await client.history('odd', { namespace: '/docs', limit: 1 });
    expect(await client.emitWithAck('doc.open', { doc: 'odd-2' })).toEqual({ doc: 'odd-2' });
    expect(await refusal(client.history('odd', { namespace: '/docs', limit: 1 }))).toBe(
      'forbidden',
    );
  });

  it('relays bytes Yjs cannot read, which the other pages drop and stay in sync', async () => {
    const { ws } = await start();
    const a = await openPage(ws, 'noise');
    const bDoc = new Y.Doc();
    const bClient = newClient(ws);
    let sync: DocSync | undefined;
    const synced = new Promise<void>((resolve) => {
      sync = syncDoc(bClient, bDoc, 'noise', { onState: (s) => s === 'synced' && resolve() });
    });
    await bClient.connect();
    await synced;
    syncs.push(sync!);
    const odd = newClient(ws);
    await odd.connect();
    await odd.emitWithAck('doc.open', { doc: 'noise' });
    const noise = Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 1, 2, 3]);
    expect(await odd.emitWithAck('doc.update', noise)).toEqual({ relayed: true });
    a.doc.getText('text').insert(0, 'still fine');
    await textBecomes(bDoc, 'still fine');
    expect(sync!.dropped).toBe(1);
    // Twice the same update, or an update opened again, changes nothing.
    await odd.emitWithAck('doc.open', { doc: 'noise' });
    const again = Y.encodeStateAsUpdate(a.doc);
    await odd.emitWithAck('doc.state', again);
    await odd.emitWithAck('doc.state', again);
    a.doc.getText('text').insert(10, '!');
    await textBecomes(bDoc, 'still fine!');
  });
});
