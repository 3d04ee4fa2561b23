import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { bundlePageScript } from '../src/page-bundle';
import { CHROMIUM_ARGS, ensureChromium } from './helpers/chromium';
import { startTestDemo, type RunningDemo } from './helpers/app';

const RESULTS = path.join(__dirname, '..', 'test-results');

let demo: RunningDemo | undefined;
let browser: Browser | undefined;
let pageScript = '';
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  const executablePath = ensureChromium();
  // The page's script with @pkg/client, bundled from the sources as the build does.
  pageScript = await bundlePageScript();
  demo = await startTestDemo({}, { pageScript });
  browser = await chromium.launch({ executablePath, headless: true, args: [...CHROMIUM_ARGS] });
}, 600_000);

afterAll(async () => {
  await closePages();
  await browser?.close();
  await demo?.stop();
});

async function closePages(): Promise<void> {
  for (const context of contexts.splice(0)) await context.close();
}

/** Every WebSocket URL the pages opened: the token must never be in one. */
const socketUrls: string[] = [];

async function openPage(): Promise<{ page: Page; problems: string[] }> {
  const context = await browser!.newContext({ viewport: { width: 900, height: 720 } });
  contexts.push(context);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('websocket', (socket) => socketUrls.push(socket.url()));
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(msg.text());
  });
  await page.goto(`${demo!.http}/`);
  return { page, problems };
}

async function openChat(name: string, room: string, token = ''): Promise<Page> {
  const { page, problems } = await openPage();
  await page.fill('#name', name);
  await page.fill('#room', room);
  await page.fill('#token', token);
  await page.click('#join');
  await page.locator('#messages li', { hasText: `You joined room ${room}.` }).waitFor();
  expect(problems).toEqual([]);
  return page;
}

async function messages(page: Page): Promise<string[]> {
  return page.locator('#messages li').allTextContents();
}

async function say(from: Page, text: string, to: Page): Promise<void> {
  await from.fill('#message', text);
  await from.click('#send');
  await to.locator('#messages li', { hasText: text }).waitFor();
}

describe('chat page in Chromium', () => {
  it('relays a message within one room only and shows the client count', async () => {
    const ada = await openChat('Ada', 'lobby');
    const bob = await openChat('Bob', 'lobby');
    await ada.locator('#messages li.system', { hasText: 'guest-Bob joined the room.' }).waitFor();
    const cy = await openChat('Cy', 'other');

    await ada.fill('#message', 'hello lobby');
    await ada.click('#send');
    await bob.locator('#messages li', { hasText: 'guest-Ada: hello lobby' }).waitFor();
    await ada.locator('#messages li.mine', { hasText: 'guest-Ada: hello lobby' }).waitFor();

    // Cy's own message is relayed after Ada's was handled; had Ada's reached Cy, it would
    // already be on Cy's page by the time Cy's own message shows.
    await cy.fill('#message', 'hello other');
    await cy.click('#send');
    await cy.locator('#messages li', { hasText: 'guest-Cy: hello other' }).waitFor();
    expect((await messages(cy)).some((text) => text.includes('hello lobby'))).toBe(false);
    expect((await messages(ada)).some((text) => text.includes('hello other'))).toBe(false);

    await bob.fill('#message', 'hi Ada');
    await bob.click('#send');
    await ada.locator('#messages li', { hasText: 'guest-Bob: hi Ada' }).waitFor();

    // The count comes with welcome and with the room's join/leave notices: Cy connected
    // third. Ada's page asked /api/status once, on load, and not on every event.
    await cy.waitForFunction(() => document.getElementById('client-count')?.textContent === '3');
    // Cy is in another room: Ada never hears of Cy, Cy never of Ada's room. People appear
    // by their display name (guest-…); a bare "Cy" could be part of a random client id in
    // the page's own "Connected as" line.
    expect((await messages(ada)).some((text) => text.includes('guest-Cy'))).toBe(false);
    expect((await messages(cy)).some((text) => /guest-(Ada|Bob)/.test(text))).toBe(false);

    // Bob closes the tab: Ada sees him leave and the count go down.
    await bob.context().close();
    await ada.locator('#messages li.system', { hasText: 'guest-Bob left the room.' }).waitFor();
    await ada.waitForFunction(() => document.getElementById('client-count')?.textContent === '2');

    mkdirSync(RESULTS, { recursive: true });
    await ada.screenshot({ path: path.join(RESULTS, 'demo-chat.png'), fullPage: true });
  }, 120_000);

  it('explains a refused token and a refused room in words', async () => {
    const { page: refused, problems } = await openPage();
    await refused.fill('#name', 'Eve');
    await refused.fill('#token', 'not-a-token');
    await refused.click('#join');
    await refused
      .locator('#messages li.error', { hasText: 'the server refused the token' })
      .waitFor();
    expect(await refused.locator('#send').isDisabled()).toBe(true);
    // The browser itself logs the failed handshake; nothing else may go wrong on the page.
    expect(problems.filter((text) => !text.includes('WebSocket connection'))).toEqual([]);

    const anon = await openChat('Finn', 'lobby');
    await anon.fill('#room', 'private-team');
    await anon.click('#join');
    const error = anon.locator('#messages li.error', { hasText: 'is for signed-in users' });
    await error.waitFor();
    expect(await error.textContent()).toBe(
      'Room "private-team" is for signed-in users; connect with a token.',
    );
    await anon.locator('#state', { hasText: 'In room lobby as guest-Finn' }).waitFor();

    const alice = await openChat('Alice', 'private-team', 'alice-token');
    await alice
      .locator('#messages li', { hasText: 'Connected as Alice, signed in as Alice' })
      .waitFor();
    // The token went in $hello.auth: no WebSocket URL of any page carries it.
    expect(socketUrls.length).toBeGreaterThan(0);
    expect(socketUrls.filter((url) => /key=|token/.test(url))).toEqual([]);

    mkdirSync(RESULTS, { recursive: true });
    await anon.screenshot({ path: path.join(RESULTS, 'demo-errors.png'), fullPage: true });
  }, 120_000);

  it('reconnects both pages after a server restart, back in their room, and keeps chatting', async () => {
    await closePages();
    const ada = await openChat('Ada', 'restart');
    const bob = await openChat('Bob', 'restart');
    await ada.locator('#messages li.system', { hasText: 'guest-Bob joined the room.' }).waitFor();
    await say(ada, 'before the restart', bob);

    // The same port again: stop the demo, then start a new one on the port the first got.
    const port = Number(new URL(demo!.http).port);
    await demo!.stop();
    demo = undefined;
    await ada
      .locator('#messages li.system', { hasText: 'Connection lost; reconnecting' })
      .waitFor();
    demo = await startTestDemo({ port }, { pageScript });

    // The client reconnects with backoff and the page enters its room again on its own.
    for (const page of [ada, bob]) {
      await page.locator('#messages li.system', { hasText: 'Reconnected.' }).waitFor();
      await page.locator('#messages li.system', { hasText: 'Back in room restart.' }).waitFor();
      await page.locator('#state', { hasText: 'In room restart as' }).waitFor();
    }
    await say(ada, 'after the restart', bob);
    await say(bob, 'still here', ada);
    // Nothing typed into the join form in between: the room came back without the user.
    expect(await ada.inputValue('#room')).toBe('restart');

    mkdirSync(RESULTS, { recursive: true });
    await bob.screenshot({ path: path.join(RESULTS, 'demo-restart.png'), fullPage: true });
  }, 120_000);
});

describe('names and rooms in Chromium', () => {
  it("shows a guest who picks a user's name as a guest, and only the page's room's lines", async () => {
    await closePages();
    const alice = await openChat('Alice', 'lobby', 'alice-token');
    const fake = await openChat('Alice', 'lobby');
    const away = await openChat('Away', 'elsewhere');
    await alice
      .locator('#messages li.system', { hasText: 'guest-Alice joined the room.' })
      .waitFor();
    await say(fake, 'it is me, Alice', alice);
    expect(await alice.locator('#messages li', { hasText: 'it is me, Alice' }).textContent()).toBe(
      'guest-Alice: it is me, Alice',
    );
    // A broadcast to one room shows on that room's pages only.
    const res = await fetch(`${demo!.http}/api/broadcast`, {
      method: 'POST',
      headers: { authorization: 'Bearer admin-token', 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'to lobby', room: 'lobby' }),
    });
    expect(res.status).toBe(200);
    await alice.locator('#messages li.broadcast', { hasText: 'to lobby' }).waitFor();
    await say(away, 'still elsewhere', away);
    expect((await messages(away)).some((text) => /to lobby|it is me|Alice/.test(text))).toBe(false);
  }, 120_000);
});

// With a server of protocol version 1 the page sends chat lines with emitWithAck and marks
// each as delivered when the answer arrives. A version 0 connection has no answers, so the
// mark also shows that Chromium accepted the subprotocol pkg.v1 the server selected.
describe('delivery marks in Chromium', () => {
  it('shows "delivered" on a message once the server acknowledged it', async () => {
    await closePages();
    const ada = await openChat('Ada', 'acks');
    await ada.fill('#message', 'acknowledged line');
    await ada.click('#send');
    const mine = ada.locator('#messages li.mine', { hasText: 'acknowledged line' });
    await mine.locator('.delivery', { hasText: 'delivered' }).waitFor();
    expect(await mine.getAttribute('class')).toContain('delivered');
  }, 60_000);
});

// disconnectClient closes with 1000: the client does not come back on its own
// (`reconnect_stopped`); the page says it was sent away and comes back only on a click.
describe('sent away by the server, in Chromium', () => {
  it('says the server closed the connection, does not reconnect, and reconnects on a click', async () => {
    await closePages();
    const ada = await openChat('Ada', 'away');
    const connected = await ada
      .locator('#messages li.system', { hasText: 'Connected as guest-Ada' })
      .textContent();
    const id = /\(([^()]+)\)\.$/.exec(connected ?? '')![1]!;
    expect(await ada.locator('#reconnect').isVisible()).toBe(false);

    demo!.app.server.disconnectClient(id);
    const notice = ada.locator('#messages li.error', {
      hasText: 'The server closed this connection',
    });
    await notice.waitFor();
    expect(await notice.textContent()).toContain('does not reconnect on its own');
    await ada.locator('#state', { hasText: 'Sent away by the server' }).waitFor();
    expect(await ada.locator('#send').isDisabled()).toBe(true);
    // No automatic attempt: after a while the page still has only its first connection.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await ada.locator('#messages li', { hasText: 'Reconnected.' }).count()).toBe(0);
    expect(demo!.app.server.getClientCount()).toBe(0);

    await ada.locator('#reconnect').click();
    await ada.locator('#state', { hasText: 'In room away as guest-Ada' }).waitFor();
    expect(await ada.locator('#reconnect').isVisible()).toBe(false);
    expect(demo!.app.server.getClientCount()).toBe(1);
    await say(ada, 'back again', ada);
  }, 60_000);
});

// The chat rooms keep history: a page entering a room shows its last messages, and a page
// whose connection was cut shows what was said meanwhile, once, when it is back: resumed in
// the same session, or (after the server ended the session) recovered from the room's
// position, which the page reports.
describe('room history in Chromium', () => {
  const idOf = async (page: Page): Promise<string> => {
    const line = await page
      .locator('#messages li.system', { hasText: 'Connected as' })
      .last()
      .textContent();
    return /\(([^()]+)\)\.$/.exec(line ?? '')![1]!;
  };
  const count = (page: Page, text: string): Promise<number> =>
    page.locator('#messages li', { hasText: text }).count();
  const postToRoom = async (message: string, room: string): Promise<void> => {
    const res = await fetch(`${demo!.http}/api/broadcast`, {
      method: 'POST',
      headers: { authorization: 'Bearer admin-token', 'content-type': 'application/json' },
      body: JSON.stringify({ message, room }),
    });
    expect(res.status).toBe(200);
  };

  it('shows the last messages on entering a room, in order and once', async () => {
    await closePages();
    const ada = await openChat('Ada', 'kept');
    await say(ada, 'early one', ada);
    await say(ada, 'early two', ada);
    await postToRoom('posted early', 'kept');
    await ada.locator('#messages li.broadcast', { hasText: 'posted early' }).waitFor();

    const bob = await openChat('Bob', 'kept');
    await bob.locator('#messages li', { hasText: 'posted early' }).waitFor();
    const lines = await messages(bob);
    const at = (text: string): number => lines.findIndex((line) => line.includes(text));
    expect(at('guest-Ada: early one')).toBeGreaterThan(at('You joined room kept.'));
    expect(at('guest-Ada: early two')).toBeGreaterThan(at('guest-Ada: early one'));
    expect(at('[broadcast] posted early')).toBeGreaterThan(at('guest-Ada: early two'));
    // Bob's own arrival is kept too; it shows once, though it came live and in the history.
    await say(ada, 'now live', bob);
    expect(await count(bob, 'guest-Ada: early one')).toBe(1);
    expect(await count(bob, 'now live')).toBe(1);
    expect(await count(ada, 'guest-Bob joined the room.')).toBe(1);
  }, 120_000);

  it('shows what was missed after the page’s connection was cut, and after a new session', async () => {
    await closePages();
    const ada = await openChat('Ada', 'missed');
    const bob = await openChat('Bob', 'missed');
    await ada.locator('#messages li.system', { hasText: 'guest-Bob joined the room.' }).waitFor();

    // The browser goes offline: the page's socket is dropped and the client waits.
    await bob.context().setOffline(true);
    await bob
      .locator('#messages li.system', { hasText: 'Connection lost; reconnecting' })
      .waitFor();
    await say(ada, 'said while Bob was away', ada);
    await postToRoom('posted while Bob was away', 'missed');
    await bob.context().setOffline(false);
    await bob.locator('#messages li', { hasText: 'said while Bob was away' }).waitFor();
    await bob.locator('#messages li', { hasText: 'posted while Bob was away' }).waitFor();
    await bob.locator('#state', { hasText: 'In room missed as guest-Bob' }).waitFor();

    // The server ends Bob's session; what is said now can only come back from the room's
    // history when Bob reconnects (the Reconnect button): the page says it caught up.
    demo!.app.server.disconnectClient(await idOf(bob));
    await bob.locator('#reconnect').waitFor();
    await say(ada, 'said in the new session gap', ada);
    await bob.locator('#reconnect').click();
    await bob
      .locator('#messages li.system', { hasText: /Caught up: \d+ missed message/ })
      .waitFor();
    await bob.locator('#messages li', { hasText: 'said in the new session gap' }).waitFor();
    await say(ada, 'and live again', bob);
    for (const text of [
      'said while Bob was away',
      'posted while Bob was away',
      'said in the new session gap',
      'and live again',
    ]) {
      expect(await count(bob, text)).toBe(1);
    }

    mkdirSync(RESULTS, { recursive: true });
    await bob.screenshot({ path: path.join(RESULTS, 'demo-history.png'), fullPage: true });
  }, 120_000);
});

// Presence: the "In this room" list of the page, from client.presence(room).
describe('who is in the room, in Chromium', () => {
  const shown = (page: Page): Promise<string[]> => page.locator('#presence li').allTextContents();

  it('shows the members live: two pages see each other, two tabs of one user once, one leaving disappears', async () => {
    await closePages();
    const alice = await openChat('Alice', 'people', 'alice-token');
    await alice.locator('#presence li', { hasText: 'Alice (you)' }).waitFor();
    const bob = await openChat('Bob', 'people', 'bob-token');
    await bob.locator('#presence li', { hasText: 'Alice' }).waitFor();
    await alice.locator('#presence li', { hasText: 'Bob' }).waitFor();
    expect((await shown(bob)).sort()).toEqual(['Alice', 'Bob (you)']);

    // A second tab of Alice's: still one Alice, with two tabs.
    const aliceAgain = await openChat('Alice', 'people', 'alice-token');
    await bob.locator('#presence li', { hasText: 'Alice (2 tabs)' }).waitFor();
    expect((await shown(bob)).sort()).toEqual(['Alice (2 tabs)', 'Bob (you)']);
    expect(await bob.locator('#presence-count').textContent()).toBe('2');

    // Bob closes his tab: he disappears from both of Alice's pages.
    await bob.context().close();
    for (const page of [alice, aliceAgain]) {
      await page.waitForFunction(
        () => !document.getElementById('presence')?.textContent?.includes('Bob'),
      );
      expect(await shown(page)).toEqual(['Alice (2 tabs) (you)']);
    }

    mkdirSync(RESULTS, { recursive: true });
    await alice.screenshot({ path: path.join(RESULTS, 'demo-presence.png'), fullPage: true });
  }, 120_000);
});
