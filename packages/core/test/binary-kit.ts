// A raw WebSocket client for the binary-message tests: it records text and binary messages
// in arrival order (binary ones decoded by @pkg/wire), and says $hello for version 1.
import { expect } from '@jest/globals';
import WebSocket from 'ws';
import { decodeBinaryFrame, type BinaryFrame } from '@pkg/wire';

/** One received message: a JSON envelope (text) or a decoded binary frame. */
export type Received =
  | { readonly kind: 'text'; readonly m: Record<string, unknown> }
  | { readonly kind: 'binary'; readonly f: BinaryFrame; readonly size: number };

const open = new Set<WebSocket>();

/** Terminates every peer still open (call in afterEach). */
export function closePeers(): void {
  for (const ws of open) ws.terminate();
  open.clear();
}

export async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i += 1) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

export class Peer {
  readonly got: Received[] = [];
  welcome: Record<string, unknown> | undefined;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (raw: Buffer, isBinary) => {
      if (!isBinary) {
        this.got.push({ kind: 'text', m: JSON.parse(String(raw)) as Record<string, unknown> });
        return;
      }
      const read = decodeBinaryFrame(new Uint8Array(raw));
      if (read.ok) this.got.push({ kind: 'binary', f: read.frame, size: raw.length });
    });
  }

  /** Connects; with `hello` (version 1) offers `pkg.v1`, says `$hello` and waits for `$welcome`. */
  static async connect(url: string, hello?: Record<string, unknown>): Promise<Peer> {
    const ws = new WebSocket(url, hello === undefined ? [] : ['pkg.v1']);
    open.add(ws);
    const peer = new Peer(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    if (hello !== undefined) {
      ws.send(JSON.stringify({ event: '$hello', data: hello }));
      await waitFor(() => peer.texts().some((m) => m['event'] === '$welcome'));
      peer.welcome = peer.texts().find((m) => m['event'] === '$welcome')!['data'] as Record<
        string,
        unknown
      >;
    }
    return peer;
  }

  texts(): Array<Record<string, unknown>> {
    return this.got.flatMap((r) => (r.kind === 'text' ? [r.m] : []));
  }

  frames(): BinaryFrame[] {
    return this.got.flatMap((r) => (r.kind === 'binary' ? [r.f] : []));
  }

  /** Sends a JSON request and waits for the answer with that `id`. */
  async request(
    event: string,
    data: unknown,
    id: string | number,
  ): Promise<Record<string, unknown>> {
    this.ws.send(JSON.stringify({ event, data, id }));
    await waitFor(() => this.texts().some((m) => m['id'] === id));
    return this.texts().find((m) => m['id'] === id)!;
  }

  /** Closes the connection and waits until it is closed. */
  async drop(): Promise<void> {
    const closed = new Promise((resolve) => this.ws.once('close', resolve));
    this.ws.terminate();
    await closed;
    open.delete(this.ws);
  }
}

export function sameBytes(a: unknown, b: Uint8Array): boolean {
  return a instanceof Uint8Array && Buffer.from(a).equals(Buffer.from(b));
}
