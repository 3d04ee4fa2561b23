// The client in a real browser: the package bundled for the page (no `ws`, the browser's
// own WebSocket), two pages in Chromium chatting in a room through the real server, a
// server restart after which both are back in their room without user action, and the
// browser's offline / online events.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { HttpRoute, Response, RoomsController, SocketController, SocketOn } from '@pkg/core';
import { cleanup, startCoreServer, type CoreServer } from './helpers';
import { CHROMIUM, bundleClient, requireChromium } from './browser-kit';

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let page: string;
let browser: Browser | undefined;
let server: CoreServer;
const contexts: BrowserContext[] = [];

class ChatController extends SocketController {
  @SocketOn('chat.say')
  say(clientId: string, data: unknown): void {
    const { room, text } = data as { room: string; text: string };
    this.broadcast('chat.said', { from: clientId, text }, '/', room);
  }
}

class PageController extends SocketController {
  @HttpRoute('GET', '/')
  index(): Response {
    return Response.html(page);
  }
}

beforeAll(async () => {
  requireChromium();
  const script = await bundleClient();
  page = `<!doctype html><meta charset="utf-8"><title>client</title>
<script>${script.replace(/<\/script/gi, '<\\/script')}</script>
<script>
  window.log = [];
  window.start = async () => {
    // A path: resolved against the page, http: turned into ws:.
    const client = new PkgClient.Client('/', { reconnectionDelay: 20, reconnectionDelayMax: 100 });
    window.client = client;
    for (const name of ['connect', 'reconnect', 'room_joined']) client.on(name, () => log.push(name));
    client.on('disconnect', (info) => log.push('disconnect:' + info.code));
    client.on('chat.said', (data) => log.push('said:' + data.text));
    await client.connect();
    await client.joinRoom('lobby');
  };
</script>`;
  server = await startCoreServer(() => [
    new ChatController(),
    new RoomsController(),
    new PageController(),
  ]);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
  });
}, 120_000);

afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await cleanup();
});

async function openPage(): Promise<{ page: Page; context: BrowserContext; problems: string[] }> {
  const context = await browser!.newContext();
  contexts.push(context);
  const p = await context.newPage();
  const problems: string[] = [];
  p.on('pageerror', (error) => problems.push(error.message));
  await p.goto(`http://127.0.0.1:${server.port}/`);
  await p.evaluate(() => (window as unknown as { start(): Promise<void> }).start());
  return { page: p, context, problems };
}

function count(p: Page, entry: string, n: number): Promise<unknown> {
  return p.waitForFunction(
    ([e, k]) => (window as unknown as { log: string[] }).log.filter((x) => x === e).length >= k,
    [entry, n] as const,
  );
}

function say(p: Page, text: string): Promise<void> {
  return p.evaluate((t) => {
    const w = window as unknown as { client: { emit(e: string, d: object): void } };
    w.client.emit('chat.say', { room: 'lobby', text: t });
  }, text);
}

describe('@pkg/client in Chromium', () => {
  it('chats in a room, survives a server restart and the network going offline', async () => {
    const ada = await openPage();
    const bob = await openPage();
    await say(ada.page, 'one');
    await count(bob.page, 'said:one', 1);

    await server.restart();
    await Promise.all([count(ada.page, 'room_joined', 2), count(bob.page, 'room_joined', 2)]);
    await count(ada.page, 'reconnect', 1);
    await say(ada.page, 'two');
    await count(bob.page, 'said:two', 1);

    await ada.context.setOffline(true);
    await count(ada.page, 'disconnect:4000', 1);
    expect(
      await ada.page.evaluate(
        () => (window as unknown as { client: { status: string } }).client.status,
      ),
    ).toBe('waiting');
    await ada.context.setOffline(false);
    // Back within the recovery window: the session is resumed, rooms kept by the server.
    await count(ada.page, 'connect', 3);
    await say(bob.page, 'three');
    await count(ada.page, 'said:three', 1);

    expect(ada.problems).toEqual([]);
    expect(bob.problems).toEqual([]);
  }, 60_000);
});
