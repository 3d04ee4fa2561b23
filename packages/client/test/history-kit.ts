// Shared by the client's history tests against the scripted server (history-peer.ts):
// starting it, a connected client with recorders, a cut that holds the client offline until
// it is told to come back, and small waits.
import { afterEach } from '@jest/globals';
import type { Client, MessageInfo, NetworkEvents, RecoveredInfo } from '../src/index';
import { HistoryPeer } from './history-peer';
import { Recorder, cleanup, makeClient, next } from './helpers';

const peers: HistoryPeer[] = [];
afterEach(async () => {
  await cleanup();
  for (const p of peers.splice(0)) await p.close();
});

export async function start(): Promise<HistoryPeer> {
  const peer = await HistoryPeer.start();
  peers.push(peer);
  return peer;
}

/** `online` / `offline` on demand: offline holds the client between a cut and its retry. */
export class Network implements NetworkEvents {
  readonly #listeners = new Map<string, Array<() => void>>();
  addEventListener(type: string, listener: () => void): void {
    this.#listeners.set(type, [...(this.#listeners.get(type) ?? []), listener]);
  }
  removeEventListener(type: string, listener: () => void): void {
    this.#listeners.set(
      type,
      (this.#listeners.get(type) ?? []).filter((l) => l !== listener),
    );
  }
  fire(type: 'online' | 'offline'): void {
    for (const l of this.#listeners.get(type) ?? []) l();
  }
}

export interface Events {
  'chat.said': (data: { n: number }) => void;
}

/** A connected client with a recorder of `chat.said` (n and position) and of `recovered`. */
export async function connected(peer: HistoryPeer, options: { recovery?: boolean } = {}) {
  const network = new Network();
  const client = makeClient<Record<string, never>, Events>(peer.url, { network, ...options });
  const said = new Recorder<{ n: number; offset: number | undefined }>();
  const recovered = new Recorder<RecoveredInfo>();
  client.on('chat.said', (data, info: MessageInfo) =>
    said.push({ n: data.n, offset: info.position?.offset }),
  );
  client.on('recovered', recovered.push);
  await client.connect();
  const id = client.id!;
  return { client, network, said, recovered, id };
}

/** Cuts the client's TCP connection and holds it offline until `back()` is called. */
export async function cut(
  peer: HistoryPeer,
  c: { client: Client<Record<string, never>, Events>; network: Network; id: string },
): Promise<{ back: () => Promise<string> }> {
  const lost = new Promise<void>((resolve) =>
    c.client.once('disconnect', () => {
      c.network.fire('offline');
      resolve();
    }),
  );
  peer.cut(c.id);
  await lost;
  return {
    back: async () => {
      const welcomed = next(c.client, 'connect');
      c.network.fire('online');
      await welcomed;
      return c.client.id!;
    },
  };
}

/** Waits until the client's position read after a join ($history, limit 1) was answered. */
export async function waitForHistoryRequest(peer: HistoryPeer): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (peer.received.some((m) => m.event === '$history')) {
      await new Promise((r) => setTimeout(r, 20)); // its answer is on the way back
      return;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error('no $history after the join');
}

export const lastHello = (peer: HistoryPeer): Record<string, unknown> =>
  peer.received.filter((m) => m.event === '$hello').pop()!.data;
