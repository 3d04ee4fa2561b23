// The shared document page in Debian's Chromium (playwright-core): two pages open the same
// document, what one types appears in the other, and a page reloaded gets the document back
// from the room's history. Once on one instance (history in memory), once on two instances
// that share Redis, a page on each (history in Redis). The page script is bundled from the
// sources as the build does. The second needs Redis at 127.0.0.1:6379: with CI=true a
// missing Redis fails the run, otherwise that suite is skipped with a notice.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { bundleDocScript } from '../src/page-bundle';
import { startTestDemo, type RunningDemo } from './helpers/app';
import { CHROMIUM_ARGS, ensureChromium } from './helpers/chromium';
import { redisAnswers } from './helpers/nginx';

const REDIS_URL = 'redis://127.0.0.1:6379';
const RESULTS = path.join(__dirname, '..', 'test-results');
/** The README's screenshot: written there too when DEMO_SCREENSHOTS=1. */
const SCREENSHOTS = path.join(__dirname, '..', 'docs', 'screenshots');

const redis = redisAnswers();
if (!redis && process.env['CI'] === 'true') {
  throw new Error(
    'document page: Redis at 127.0.0.1:6379 is unreachable, and CI=true requires it.',
  );
}
if (!redis) console.warn('document page: skipped, no Redis at 127.0.0.1:6379.');
const describeRedis = redis ? describe : describe.skip;

let browser: Browser | undefined;
/** One instance alone, then (with Redis) two that share Redis. */
let alone: RunningDemo | undefined;
const pair: RunningDemo[] = [];
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  const executablePath = ensureChromium();
  const docScript = await bundleDocScript();
  alone = await startTestDemo({}, { docScript });
  for (let i = 0; redis && i < 2; i += 1) {
    pair.push(await startTestDemo({ redisUrl: REDIS_URL }, { docScript }));
  }
  browser = await chromium.launch({ executablePath, headless: true, args: [...CHROMIUM_ARGS] });
}, 600_000);

afterAll(async () => {
  for (const context of contexts.splice(0)) await context.close();
  await browser?.close();
  await alone?.stop();
  for (const demo of pair.splice(0)) await demo.stop();
});

/** Opens the document page of one instance with `?doc=`, waiting until it is editable. */
async function openDoc(base: string, doc: string): Promise<{ page: Page; problems: string[] }> {
  const context = await browser!.newContext({ viewport: { width: 900, height: 600 } });
  contexts.push(context);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(msg.text());
  });
  await page.goto(`${base}/doc?doc=${doc}`);
  await editable(page, doc);
  return { page, problems };
}

async function editable(page: Page, doc: string): Promise<void> {
  await page.locator('#doc-state', { hasText: `Editing document ${doc}` }).waitFor();
  await page.locator('#doc:enabled').waitFor();
}

/** Resolves once the page's textarea holds `text`. */
async function shows(page: Page, text: string): Promise<void> {
  await page.waitForFunction(
    (expected) => (document.getElementById('doc') as HTMLTextAreaElement).value === expected,
    text,
  );
}

/**
 * Two pages on `first` and `second` edit the document `doc`; the second page is reloaded and
 * gets the whole document back from the history. Returns the first page.
 */
async function editTogether(first: string, second: string, doc: string): Promise<Page> {
  const one = await openDoc(first, doc);
  const two = await openDoc(second, doc);

  await one.page.locator('#doc').pressSequentially('Hello from A.');
  await shows(two.page, 'Hello from A.');
  // B edits at the start while A's caret stays at its end.
  await two.page.locator('#doc').click();
  await two.page.keyboard.press('Home');
  await two.page.keyboard.type('B: ');
  await shows(one.page, 'B: Hello from A.');
  await one.page.keyboard.type(' More.');
  await shows(two.page, 'B: Hello from A. More.');

  // A reload starts a new Y.Doc on a new connection: the text comes back from the
  // document's history.
  await two.page.reload();
  await editable(two.page, doc);
  await shows(two.page, 'B: Hello from A. More.');
  // ...and the reloaded page goes on editing with the other.
  await two.page.locator('#doc').press('End');
  await two.page.keyboard.type(' Back.');
  await shows(one.page, 'B: Hello from A. More. Back.');

  expect(one.problems).toEqual([]);
  expect(two.problems).toEqual([]);
  return one.page;
}

describe('the shared document page on one instance', () => {
  it('shows one page’s edits in the other, and a reloaded page the whole document', async () => {
    const page = await editTogether(alone!.http, alone!.http, 'notes');
    mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: path.join(RESULTS, 'demo-doc.png') });
    if (process.env['DEMO_SCREENSHOTS'] === '1') {
      mkdirSync(SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: path.join(SCREENSHOTS, 'demo-doc.png') });
    }
  }, 120_000);

  it('opens a document named in the address only when the name is valid', async () => {
    const context = await browser!.newContext();
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${alone!.http}/doc?doc=${encodeURIComponent('no spaces')}`);
    await page.locator('#doc-state', { hasText: 'A document name is 1-32' }).waitFor();
    expect(await page.locator('#doc').isDisabled()).toBe(true);
    // The form opens another document by its address, so a reload keeps it.
    await page.fill('#doc-name', 'notes-2');
    await page.click('#open');
    await page.waitForURL(/\/doc\?doc=notes-2$/);
    await editable(page, 'notes-2');
  }, 60_000);
});

describeRedis('the shared document page on two instances sharing Redis', () => {
  it('shows the edits of a page on one instance in a page on the other, and the document after a reload', async () => {
    // A name of its own: Redis keeps the documents' history across runs.
    await editTogether(pair[0]!.http, pair[1]!.http, `doc-${randomBytes(4).toString('hex')}`);
  }, 120_000);
});
