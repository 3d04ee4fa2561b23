// Binary messages from a real browser: the client bundled for the page, Chromium's own
// WebSocket (binaryType set to 'arraybuffer' by the client), and a small `ws` server here
// that speaks $hello / $welcome and @pkg/wire's binary frame (not @pkg/core).
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chromium, type Browser } from 'playwright-core';
import { WebSocketServer } from 'ws';
import { SUBPROTOCOL, decodeBinaryFrame, encodeBinaryFrame, encodeEnvelope } from '@pkg/wire';
import { CHROMIUM, bundleClient, requireChromium } from './browser-kit';

let browser: Browser | undefined;
let wss: WebSocketServer;
let script: string;
const received: Array<{ event: string; length: number }> = [];

beforeAll(async () => {
  requireChromium();
  script = await bundleClient();
  wss = new WebSocketServer({
    port: 0,
    host: '127.0.0.1',
    handleProtocols: (offered) => (offered.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
  });
  await once(wss, 'listening');
  wss.on('connection', (ws) => {
    ws.on('message', (raw: Buffer, isBinary: boolean) => {
      if (!isBinary) {
        const text = JSON.parse(raw.toString('utf8')) as { event: string };
        if (text.event === '$hello') {
          ws.send(
            encodeEnvelope('$welcome', { v: 1, clientId: 'b1', heartbeat: null, resumed: false }),
          );
          // A binary event of its own, with a seq: 256 bytes 0..255.
          const data = Uint8Array.from({ length: 256 }, (_, i) => i);
          ws.send(encodeBinaryFrame({ event: 'doc.update', seq: 1, data }));
        }
        return;
      }
      const read = decodeBinaryFrame(raw);
      if (!read.ok) return;
      const { event, id, data } = read.frame;
      received.push({ event, length: data.length });
      if (id !== undefined) ws.send(encodeBinaryFrame({ event, id, data }));
    });
  });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  for (const c of wss.clients) c.terminate();
  await new Promise<void>((resolve) => wss.close(() => resolve()));
});

describe('@pkg/client binary messages in Chromium', () => {
  it('sends, receives and echoes bytes as binary frames', async () => {
    const context = await browser!.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.setContent(
      `<!doctype html><script>${script.replace(/<\/script/gi, '<\\/script')}</script>`,
    );
    const url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/`;
    const result = await page.evaluate(async (u) => {
      const { Client } = (window as unknown as { PkgClient: typeof import('../src/index') })
        .PkgClient;
      const client = new Client(u, { reconnection: false });
      const pushed = new Promise<{ isBytes: boolean; sum: number }>((resolve) =>
        client.on('doc.update', (data) => {
          const bytes = data as Uint8Array;
          resolve({ isBytes: bytes instanceof Uint8Array, sum: bytes.reduce((a, b) => a + b, 0) });
        }),
      );
      await client.connect();
      client.emit('file.put', new Uint8Array(1000).fill(0xff));
      const payload = Uint8Array.from({ length: 64 * 1024 }, (_, i) => (i * 7) & 0xff);
      const back = (await client.emitWithAck('echo', payload)) as Uint8Array;
      const same = back.length === payload.length && back.every((b, i) => b === payload[i]);
      const out = { protocol: client.protocol, same, pushed: await pushed };
      client.disconnect();
      return out;
    }, url);
    expect(result).toEqual({ protocol: 1, same: true, pushed: { isBytes: true, sum: 255 * 128 } });
    expect(received).toEqual([
      { event: 'file.put', length: 1000 },
      { event: 'echo', length: 64 * 1024 },
    ]);
    expect(problems).toEqual([]);
    await context.close();
  });
});
