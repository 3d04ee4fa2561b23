// The shared document across two demo instances that share Redis, with Y.Docs in Node and
// the page's own sync: a page on each instance edits one document, and a page whose
// connection is cut comes back on the other instance and gets the edits it missed from
// the document's history in Redis. The page behind the cut connects through a small TCP
// relay whose target the test chooses. Needs Redis at 127.0.0.1:6379: with CI=true a
// missing Redis fails the run, otherwise the suite is skipped with a notice.
import { afterEach, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import WebSocket from 'ws';
import * as Y from 'yjs';
import { Client, type RecoveredInfo } from '@pkg/client';
import { syncDoc, type DocClient, type DocSync } from '../src/browser/doc-sync';
import type { DocClientEvents, DocServerEvents } from '../src/events';
import { startTestDemo, type RunningDemo } from './helpers/app';
import { redisAnswers } from './helpers/nginx';

const REDIS_URL = 'redis://127.0.0.1:6379';

const redis = redisAnswers();
if (!redis && process.env['CI'] === 'true') {
  throw new Error(
    'document instances: Redis at 127.0.0.1:6379 is unreachable, and CI=true requires it.',
  );
}
if (!redis) console.warn('document instances: skipped, no Redis at 127.0.0.1:6379.');
const describeRedis = redis ? describe : describe.skip;

/** A TCP relay to one port, or to none (`target` null: connections are closed at once). */
class Relay {
  target: number | null = null;
  readonly #sockets = new Set<Socket>();
  readonly #server = createServer((inbound) => {
    if (this.target === null) {
      inbound.destroy();
      return;
    }
    const outbound = connect(this.target, '127.0.0.1');
    for (const s of [inbound, outbound]) {
      this.#sockets.add(s);
      s.on('close', () => {
        this.#sockets.delete(s);
        inbound.destroy();
        outbound.destroy();
      });
      s.on('error', () => s.destroy());
    }
    inbound.pipe(outbound);
    outbound.pipe(inbound);
  });

  listen(): Promise<number> {
    return new Promise((resolve) =>
      this.#server.listen(0, '127.0.0.1', () =>
        resolve((this.#server.address() as AddressInfo).port),
      ),
    );
  }

  /** Destroys every connection: no close frame on either side. */
  cut(): void {
    for (const s of this.#sockets) s.destroy();
  }

  close(): Promise<void> {
    this.target = null;
    this.cut();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

const demos: RunningDemo[] = [];
const clients: DocClient[] = [];
const syncs: DocSync[] = [];
let relay: Relay | undefined;
afterEach(async () => {
  for (const s of syncs.splice(0)) s.stop();
  for (const c of clients.splice(0)) c.disconnect();
  await relay?.close();
  relay = undefined;
  for (const d of demos.splice(0)) await d.stop();
});

async function openPage(url: string, name: string): Promise<{ doc: Y.Doc; client: DocClient }> {
  const doc = new Y.Doc();
  const client = new Client<DocClientEvents, DocServerEvents>(url, {
    WebSocket,
    network: null,
    reconnectionDelay: 10,
    reconnectionDelayMax: 50,
  });
  clients.push(client);
  const synced = new Promise<void>((resolve) => {
    syncs.push(syncDoc(client, doc, name, { onState: (s) => s === 'synced' && resolve() }));
  });
  await client.connect();
  await synced;
  return { doc, client };
}

const textOf = (doc: Y.Doc): string => doc.getText('text').toString();

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

describeRedis('the shared document on two instances sharing Redis', () => {
  it('brings a page cut off from one instance back on the other with the edits it missed', async () => {
    for (let i = 0; i < 2; i += 1) demos.push(await startTestDemo({ redisUrl: REDIS_URL }));
    const [one, two] = demos as [RunningDemo, RunningDemo];
    relay = new Relay();
    relay.target = two.app.server.getPort();
    const relayed = `ws://127.0.0.1:${await relay.listen()}/`;
    const name = `doc-${randomBytes(4).toString('hex')}`; // Redis keeps history across runs

    const a = await openPage(one.ws + '/', name);
    const b = await openPage(relayed, name);
    a.doc.getText('text').insert(0, 'one');
    await textBecomes(b.doc, 'one');
    b.doc.getText('text').insert(3, ' two');
    await textBecomes(a.doc, 'one two');

    // B's connection to instance two is cut, and nothing reaches any instance for now.
    relay.target = null;
    const away = new Promise((resolve) => b.client.once('disconnect', resolve));
    relay.cut();
    await away;
    a.doc.getText('text').insert(7, ' three');
    a.doc.getText('text').insert(13, ' four');
    // Both updates are in the document's history (in Redis) before B comes back. (A's own
    // $history would leave them out: a sender does not read its own messages back.)
    const kept = async (): Promise<number> =>
      (await one.app.server.history(name, { namespace: '/docs' })).messages.length;
    while ((await kept()) < 4) await new Promise((resolve) => setTimeout(resolve, 20));

    // B comes back through the relay, now to instance one.
    const recovered = new Promise<RecoveredInfo>((resolve) =>
      b.client.on('recovered', (info) => info.room === name && resolve(info)),
    );
    relay.target = one.app.server.getPort();
    await textBecomes(b.doc, 'one two three four');
    expect(await recovered).toMatchObject({ room: name, namespace: '/docs', recovered: true });
    // ...and goes on editing with A from there.
    b.doc.getText('text').insert(0, '> ');
    await textBecomes(a.doc, '> one two three four');
  }, 60_000);
});
