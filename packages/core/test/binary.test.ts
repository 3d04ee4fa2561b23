// Binary messages through the server (protocol version 1, docs/protocol.md "Binary frames"),
// over a real socket: a handler gets the bytes of a binary frame as a Uint8Array, and a
// handler that returns bytes answers its request with one binary frame.
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { SocketOn } from '@pkg/decorators';
import { decodeBinaryFrame, encodeBinaryFrame } from '@pkg/wire';
import { SocketController } from '../src/index';
import { cleanup, startServer } from './helpers';

afterEach(cleanup);

class Bytes extends SocketController {
  readonly seen: unknown[] = [];

  @SocketOn('echo')
  echo(_clientId: string, data: unknown): unknown {
    this.seen.push(data);
    return data;
  }
}

async function v1(url: string): Promise<{ ws: WebSocket; frames: Array<string | Buffer> }> {
  const ws = new WebSocket(url, ['pkg.v1']);
  const frames: Array<string | Buffer> = [];
  ws.on('message', (raw, isBinary) => frames.push(isBinary ? (raw as Buffer) : String(raw)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ event: '$hello', data: { v: 1 } }));
  await waitFor(() => frames.some((f) => typeof f === 'string' && f.includes('$welcome')));
  return { ws, frames };
}

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i += 1) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

describe('binary messages', () => {
  it('a 64 KiB echo: the handler gets a Uint8Array, the answer is one binary frame of equal bytes', async () => {
    const app = new Bytes();
    const { wsUrl } = await startServer([app]);
    const { ws, frames } = await v1(wsUrl);
    const payload = new Uint8Array(randomBytes(64 * 1024));
    ws.send(encodeBinaryFrame({ event: 'echo', data: payload, id: 1 }));
    await waitFor(() => frames.some((f) => typeof f !== 'string'));
    const answer = frames.find((f): f is Buffer => typeof f !== 'string')!;
    const decoded = decodeBinaryFrame(new Uint8Array(answer));
    expect(decoded.ok).toBe(true);
    if (!decoded.ok) return;
    expect(decoded.frame.event).toBe('echo');
    expect(decoded.frame.id).toBe(1);
    expect(Buffer.from(decoded.frame.data).equals(Buffer.from(payload))).toBe(true);
    expect(app.seen[0]).toBeInstanceOf(Uint8Array);
    // The answer costs the payload plus a small header.
    expect(answer.length - payload.length).toBeLessThanOrEqual(64);
    ws.close();
  });

  it('a JSON request still gets a JSON answer beside binary ones', async () => {
    const { wsUrl } = await startServer([new Bytes()]);
    const { ws, frames } = await v1(wsUrl);
    ws.send(JSON.stringify({ event: 'echo', data: { a: 1 }, id: 2 }));
    await waitFor(() => frames.some((f) => typeof f === 'string' && f.includes('"id":2')));
    expect(
      frames.some((f) => typeof f === 'string' && f === '{"event":"echo","id":2,"data":{"a":1}}'),
    ).toBe(true);
    ws.close();
  });
});
