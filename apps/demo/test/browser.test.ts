import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { bundlePageScript } from '../src/page-bundle';
import { CHROMIUM_ARGS, ensureChromium } from './helpers/chromium';
import { startTestDemo, type RunningDemo } from './helpers/app';

const RESULTS = path.join(__dirname, '..', 'test-results');
/** The README's screenshots: written there too when DEMO_SCREENSHOTS=1. */
const SCREENSHOTS = path.join(__dirname, '..', 'docs', 'screenshots');
const README_SHOTS = new Set([
  'demo-history.png',
  'demo-names.png',
  'demo-remembered.png',
  'demo-badge.png',
  'demo-missed.png',
]);

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

async function openPage(base = demo!.http): Promise<{ page: Page; problems: string[] }> {
  const context = await browser!.newContext({ viewport: { width: 900, height: 720 } });
  contexts.push(context);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('websocket', (socket) => socketUrls.push(socket.url()));
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(msg.text());
  });
  await page.goto(`${base}/`);
  return { page, problems };
}

async function openChat(name: string, room: string, token = '', base?: string): Promise<Page> {
  const { page, problems } = await openPage(base);
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

/**
 * Saves a screenshot of the page in test-results/ (ignored by git) and, with
 * DEMO_SCREENSHOTS=1, the README's in docs/screenshots/.
 */
async function snap(page: Page, name: string): Promise<void> {
  mkdirSync(RESULTS, { recursive: true });
  await page.screenshot({ path: path.join(RESULTS, name), fullPage: true });
  if (process.env['DEMO_SCREENSHOTS'] === '1' && README_SHOTS.has(name)) {
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SCREENSHOTS, name), fullPage: true });
  }
}

/** Posts a broadcast to one room as the admin. */
async function postToRoom(message: string, room: string): Promise<void> {
  const res = await fetch(`${demo!.http}/api/broadcast`, {
    method: 'POST',
    headers: { authorization: 'Bearer admin-token', 'content-type': 'application/json' },
    body: JSON.stringify({ message, room }),
  });
  expect(res.status).toBe(200);
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

    await snap(ada, 'demo-chat.png');
  }, 120_000);

  it('signs in with a session token that expires, and says so when an admin revokes the room', async () => {
    const bob = await openChat('Bob', 'revocable', 'bob-token');
    // The page traded bob-token for a session token: the server knows when it expires.
    const server = demo!.app.server;
    const bobs = server
      .getAllClients()
      .map((id) => server.getCredentials(id))
      .filter((c) => c?.identity === 'bob');
    expect(bobs).toHaveLength(1);
    expect(bobs[0]!.expiresAt).toBeGreaterThan(Date.now());
    const res = await fetch(`${demo!.http}/api/admin/revoke`, {
      method: 'POST',
      headers: { authorization: 'Bearer admin-token', 'content-type': 'application/json' },
      body: JSON.stringify({ user: 'bob', room: 'revocable' }),
    });
    expect(await res.json()).toEqual({ user: 'bob', room: 'revocable', revoked: 1 });
    await bob
      .locator('#messages li.system', {
        hasText: 'You are no longer in room revocable: an admin removed you.',
      })
      .waitFor();
    expect(await bob.locator('#send').isDisabled()).toBe(true);
  });

  it('explains a refused token and a refused room in words', async () => {
    const { page: refused, problems } = await openPage();
    await refused.fill('#name', 'Eve');
    await refused.fill('#token', 'not-a-token');
    await refused.click('#join');
    await refused
      .locator('#messages li.error', { hasText: 'the server refused the token' })
      .waitFor();
    expect(await refused.locator('#send').isDisabled()).toBe(true);
    // The browser itself logs the failed handshake and the refused token exchange (the page
    // asks POST /api/token for a session token first: 401 for this token); nothing else may
    // go wrong on the page.
    const logged = (text: string): boolean =>
      text.includes('WebSocket connection') ||
      text === 'Failed to load resource: the server responded with a status of 401 (Unauthorized)';
    expect(problems.filter((text) => !logged(text))).toEqual([]);
    expect(problems.some((text) => text.includes('401'))).toBe(true);

    const anon = await openChat('Finn', 'lobby');
    await anon.fill('#room', 'private-team');
    await anon.click('#join');
    const error = anon.locator('#messages li.error', { hasText: 'is for signed-in users' });
    await error.waitFor();
    expect(await error.locator('.text').textContent()).toBe(
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

    await snap(anon, 'demo-errors.png');
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

    await snap(bob, 'demo-restart.png');
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
    expect(
      await alice
        .locator('#messages li', { hasText: 'it is me, Alice' })
        .locator('.text')
        .textContent(),
    ).toBe('guest-Alice: it is me, Alice');
    // A broadcast to one room shows on that room's pages only.
    await postToRoom('to lobby', 'lobby');
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

  // A refusal answers its request (the `error` carries the id), so it is no `error` event:
  // the page shows the server's words from the rejected emitWithAck.
  it('shows a refused message in words: over the rate limit, no mark', async () => {
    await closePages();
    // chat.message: 3 per 10 s at a tenth of the budgets.
    const strict = await startTestDemo({ rateLimitScale: 0.1 }, { pageScript });
    try {
      const ada = await openChat('Ada', 'limited', '', strict.http);
      for (const n of [1, 2, 3]) await say(ada, `line ${n}`, ada);
      await ada.fill('#message', 'one too many');
      await ada.click('#send');
      const refused = ada.locator('#messages li.error', { hasText: 'Too many "chat.message"' });
      await refused.waitFor();
      expect(await refused.getAttribute('title')).toBe('code: rate_limited');
      expect(await ada.locator('#messages li', { hasText: 'one too many' }).count()).toBe(0);
    } finally {
      await closePages();
      await strict.stop();
    }
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
    // Earlier messages come above the divider, in order; the page's own arrival below it.
    expect(at('guest-Ada: early two')).toBeGreaterThan(at('guest-Ada: early one'));
    expect(at('[broadcast] posted early')).toBeGreaterThan(at('guest-Ada: early two'));
    expect(at('Earlier messages of room kept above')).toBeGreaterThan(
      at('[broadcast] posted early'),
    );
    expect(at('You joined room kept.')).toBeGreaterThan(at('Earlier messages of room kept above'));
    // A line both in the history and live shows once; Bob's own arrival, kept in the
    // history, is not shown on his page at all ("You joined room kept." says it).
    await say(ada, 'now live', bob);
    expect(await count(bob, 'guest-Ada: early one')).toBe(1);
    expect(await count(bob, 'now live')).toBe(1);
    expect(at('now live')).toBe(-1);
    expect((await messages(bob)).findIndex((line) => line.includes('now live'))).toBeGreaterThan(
      at('You joined room kept.'),
    );
    expect(await count(bob, 'guest-Bob joined')).toBe(0);
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

    await snap(bob, 'demo-missed.png');
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

    await snap(alice, 'demo-presence.png');
  }, 120_000);
});

// What a first-time visitor reads: history as history, people by one name, the name the page
// uses explained, the page remembering its visitor, a badge that counts what it says.
describe('a page that reads like a chat, in Chromium', () => {
  /** The lines of a page in order: kind (class) and text, without their times. */
  const rows = (page: Page): Promise<Array<{ kind: string; text: string; time: string }>> =>
    page.locator('#messages li').evaluateAll((items) =>
      items.map((li) => ({
        kind: li.className,
        text: (li.querySelector('.text') ?? li).textContent ?? '',
        time: li.querySelector('time')?.textContent ?? '',
      })),
    );
  const presenceOf = (page: Page): Promise<string[]> =>
    page.locator('#presence li').allTextContents();
  const clientIdOf = async (page: Page): Promise<string> => {
    const line = await page
      .locator('#messages li.system', { hasText: 'Connected as' })
      .last()
      .textContent();
    return /\(([^()]+)\)\.$/.exec(line ?? '')![1]!;
  };

  it('shows earlier messages with their times above a divider, old joins folded, and one join line for oneself', async () => {
    await closePages();
    const ada = await openChat('Ada', 'story');
    const cy = await openChat('Cy', 'story');
    await ada.locator('#messages li.system', { hasText: 'guest-Cy joined the room.' }).waitFor();
    await cy.context().close();
    await ada.locator('#messages li.system', { hasText: 'guest-Cy left the room.' }).waitFor();
    await say(ada, 'early one', ada);
    await say(ada, 'early two', ada);
    await postToRoom('posted early', 'story');
    await ada.locator('#messages li.broadcast', { hasText: 'posted early' }).waitFor();

    const started = Date.now();
    const bob = await openChat('Bob', 'story');
    const divider = bob.locator('#messages li.divider');
    await divider.waitFor();
    expect(await divider.textContent()).toBe(
      'Earlier messages of room story above \u00b7 new ones below',
    );
    await say(ada, 'now live', bob);

    const lines = await rows(bob);
    const at = lines.findIndex((row) => row.kind === 'divider');
    // Above the divider: the room's history, marked as such, the joins and leaves of the
    // time folded into one line; Bob's own arrival (kept in the history too) is left out.
    expect(lines.slice(0, at).filter((row) => row.kind.includes('history'))).toEqual([
      {
        kind: 'system history',
        text: 'guest-Ada joined; guest-Cy joined and left.',
        time: expect.any(String),
      },
      { kind: 'chat history', text: 'guest-Ada: early one', time: expect.any(String) },
      { kind: 'chat history', text: 'guest-Ada: early two', time: expect.any(String) },
      { kind: 'broadcast history', text: '[broadcast] posted early', time: expect.any(String) },
    ]);
    // Below it: one line for one's own arrival, then the live lines.
    expect(lines.slice(at + 1).map((row) => row.text)).toEqual([
      'You joined room story.',
      'guest-Ada: now live',
    ]);
    expect(lines.filter((row) => /joined/.test(row.text) && row.text.includes('Bob'))).toEqual([]);
    // Every line has its time (hours and minutes of the browser's clock), the history's
    // from the server's timestamps: within the last minute or two.
    for (const row of lines.filter((r) => r.kind !== 'divider')) {
      expect(row.time).toMatch(/^\d{2}:\d{2}$/);
    }
    const stamps = await bob
      .locator('#messages li.history time')
      .evaluateAll((times) => times.map((t) => Date.parse(t.getAttribute('datetime') ?? '')));
    for (const stamp of stamps) {
      expect(stamp).toBeGreaterThan(started - 120_000);
      expect(stamp).toBeLessThanOrEqual(Date.now());
    }

    await snap(bob, 'demo-history.png');
  }, 120_000);

  it('names a guest the same way in "In this room" and in the chat, and says which name it uses and why', async () => {
    await closePages();
    const alice = await openChat('Zed', 'names', 'alice-token');
    // The token's account name replaces the name typed, and the page says so.
    const aliceSays = await alice.locator('#identity').textContent();
    expect(aliceSays).toContain('You chat as Alice: the token signs you in as Alice');
    expect(aliceSays).toContain('the name you typed ("Zed") is not used');
    await alice.locator('#state', { hasText: 'In room names as Alice' }).waitFor();

    const grace = await openChat('Grace', 'names');
    expect(await grace.locator('#identity').textContent()).toMatch(
      /^You chat as guest-Grace: without a token you are a guest, and a guest.s name always starts with "guest-"/,
    );
    await alice.locator('#presence li', { hasText: 'guest-Grace' }).waitFor();
    await grace.locator('#presence li', { hasText: 'Alice' }).waitFor();
    expect((await presenceOf(alice)).sort()).toEqual(['Alice (you)', 'guest-Grace']);
    expect((await presenceOf(grace)).sort()).toEqual(['Alice', 'guest-Grace (you)']);
    await say(grace, 'hello from Grace', alice);
    const line = alice.locator('#messages li.chat', { hasText: 'hello from Grace' });
    expect(await line.locator('.text').textContent()).toBe('guest-Grace: hello from Grace');
    // Nobody is shown by a client id.
    const graceId = await clientIdOf(grace);
    expect((await presenceOf(alice)).join(' ')).not.toContain(graceId);

    // A new name in the same room: the list follows it.
    await grace.fill('#name', 'Gracie');
    await grace.click('#join');
    await alice.locator('#presence li', { hasText: 'guest-Gracie' }).waitFor();
    expect((await presenceOf(alice)).sort()).toEqual(['Alice (you)', 'guest-Gracie']);
    await grace.locator('#identity', { hasText: 'You chat as guest-Gracie' }).waitFor();
    await grace.fill('#name', 'Grace');
    await grace.click('#join');
    await alice.locator('#presence li', { hasText: /^guest-Grace$/ }).waitFor();

    await snap(alice, 'demo-names.png');
  }, 120_000);

  it('remembers name and room in this browser and joins again after a reload', async () => {
    await closePages();
    const grace = await openChat('Grace', 'remembered');
    await say(grace, 'before the reload', grace);
    await grace.reload();
    // Nobody touches the form: the page fills it and joins.
    await grace.locator('#state', { hasText: 'In room remembered as guest-Grace' }).waitFor();
    expect(await grace.inputValue('#name')).toBe('Grace');
    expect(await grace.inputValue('#room')).toBe('remembered');
    await grace
      .locator('#messages li.system', {
        hasText: 'Welcome back: this browser remembers you in room remembered as "Grace"',
      })
      .waitFor();
    await grace
      .locator('#messages li.history', { hasText: 'guest-Grace: before the reload' })
      .waitFor();
    expect(
      await grace.locator('#messages li', { hasText: 'You joined room remembered.' }).count(),
    ).toBe(1);
    await say(grace, 'after the reload', grace);

    // A signed-in page comes back under its account: the token is kept for its tab.
    const alice = await openChat('Alice', 'remembered-too', 'alice-token');
    await alice.reload();
    await alice.locator('#state', { hasText: 'In room remembered-too as Alice' }).waitFor();
    expect(await alice.inputValue('#token')).toBe('alice-token');
    // Another tab of the same browser knows the room and name, not the token: it does not
    // join as a guest under Alice's name, it asks for the token.
    const tab = await alice.context().newPage();
    await tab.goto(`${demo!.http}/`);
    await tab
      .locator('#messages li.system', { hasText: 'enter the token and press Join' })
      .waitFor();
    expect(await tab.inputValue('#room')).toBe('remembered-too');
    expect(await tab.inputValue('#token')).toBe('');
    expect(await tab.locator('#state').textContent()).toBe('Not connected');

    await snap(grace, 'demo-remembered.png');
  }, 120_000);

  it('counts what the badge says, before and after joining', async () => {
    await closePages();
    const server = demo!.app.server;
    for (let i = 0; server.getClientCount() > 0 && i < 100; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(server.getClientCount()).toBe(0);
    const badge = (page: Page): Promise<string> =>
      page.locator('header .count').evaluate((el) => el.textContent ?? '');
    const until = (page: Page, text: string): Promise<unknown> =>
      page.waitForFunction(
        (want) => document.querySelector('header .count')?.textContent === want,
        text,
      );

    const { page: first } = await openPage();
    await until(first, 'Clients online: 0 (without you)');
    await first.fill('#name', 'First');
    await first.fill('#room', 'counted');
    await first.click('#join');
    await until(first, 'Clients online: 1 (with you)');

    const { page: second } = await openPage();
    await until(second, 'Clients online: 1 (without you)');
    await snap(second, 'demo-badge.png');
    await second.fill('#name', 'Second');
    await second.fill('#room', 'counted');
    await second.click('#join');
    await until(second, 'Clients online: 2 (with you)');
    await until(first, 'Clients online: 2 (with you)');
    expect(await badge(first)).toBe(await badge(second));

    await second.context().close();
    await until(first, 'Clients online: 1 (with you)');
  }, 120_000);
});
