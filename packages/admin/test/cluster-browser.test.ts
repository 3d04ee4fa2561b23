// The admin page in a real browser (Debian's Chromium through playwright-core) against two
// instances sharing the Redis at 127.0.0.1:6379, with real sockets: the page is opened on
// one instance and each view shows the connections and rooms of both; a trace started from
// the page follows a connection of the other instance.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chromium, type Browser, type Page } from 'playwright-core';
import { RedisAdapter } from '@pkg/redis-adapter';
import { Client, closeAll, startInstance, type Instance } from './helpers';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Redis at 127.0.0.1:6379: required under CI=true, else the suite is skipped with a notice. */
function sharedRedis(): boolean {
  const probe = spawnSync(
    process.execPath,
    [
      '-e',
      "const s=require('net').connect(6379,'127.0.0.1',()=>s.write('PING\\r\\n'));s.setTimeout(1000,()=>process.exit(1));s.on('error',()=>process.exit(1));s.on('data',d=>process.exit(String(d).startsWith('+PONG')?0:1));",
    ],
    { stdio: 'ignore' },
  );
  if (probe.status === 0) return true;
  if (process.env['CI'] === 'true') {
    throw new Error('@pkg/admin browser test: Redis at 127.0.0.1:6379 is unreachable, and CI=true requires it.'); // prettier-ignore
  }
  console.warn('@pkg/admin browser test: skipped, no Redis at 127.0.0.1:6379 (start one, or set CI=true to fail instead).'); // prettier-ignore
  return false;
}

if (!existsSync(CHROMIUM) && process.env['CI'] === 'true') {
  throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium).`); // prettier-ignore
}
const ready = sharedRedis() && existsSync(CHROMIUM);
const describeCluster = ready ? describe : describe.skip;

describeCluster('the admin page against two instances sharing Redis', () => {
  const keyPrefix = `admin-browser-${process.pid}-${Date.now()}`;
  let a: Instance;
  let b: Instance;
  let nodes: [string, string];
  let browser: Browser | undefined;
  let page: Page;
  const problems: string[] = [];
  const clientsOfB: Client[] = [];

  async function instance(): Promise<{ instance: Instance; node: string }> {
    let adapter: RedisAdapter | undefined;
    const started = await startInstance(
      { actions: { disconnect: true } },
      { presence: [{ match: 'p:*' }], history: [{ match: 'h:*', size: 20, ttl: 60_000 }] },
      (server) => {
        adapter = new RedisAdapter({ url: 'redis://127.0.0.1:6379', keyPrefix });
        server.setAdapter(adapter);
        server.on('say', (_id, data) => data);
      },
    );
    await adapter!.ready();
    return { instance: started, node: adapter!.nodeId };
  }

  beforeAll(async () => {
    const first = await instance();
    const second = await instance();
    a = first.instance;
    b = second.instance;
    nodes = [first.node, second.node];
    for (const [inst, names, list] of [
      [a, ['ann-a', 'amy-a'], [] as Client[]],
      [b, ['bob-b', 'ben-b', 'bea-b'], clientsOfB],
    ] as const) {
      for (const name of names) list.push(await Client.open(inst.wsUrl, name));
      const ids = inst.server.listConnections().rows.map((r) => r.id);
      for (const id of ids) {
        inst.server.joinRoom(id, 'shared');
        inst.server.joinRoom(id, 'p:lobby');
        inst.server.joinRoom(id, 'h:news');
      }
      inst.server.joinRoom(ids[0]!, inst === a ? 'only-a' : 'only-b');
    }
    b.server.broadcast('headline', { n: 1 }, { room: 'h:news' });
    b.server.broadcast('headline', { n: 2 }, { room: 'h:news' });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS }); // prettier-ignore
    page = await browser.newPage();
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto(`${a.base}/admin`);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await closeAll();
  });

  /** Opens a view and waits until it has drawn its data once. */
  async function open(view: string): Promise<void> {
    await page.click(`#tabs button[data-view="${view}"]`);
    await page.waitForFunction((v) => document.body.dataset['loaded'] === v, view);
  }

  /** The text of every cell of the visible view's first table, row by row. */
  function cells(view: string, table = 'table'): Promise<string[][]> {
    return page.$$eval(`#view-${view} ${table} tbody tr`, (rows) =>
      rows.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.textContent ?? '')),
    );
  }

  it('shows both nodes with their connections', async () => {
    await open('nodes');
    const rows = await cells('nodes');
    expect(rows.map((r) => r[0]).sort()).toEqual([...nodes].sort());
    const byNode = new Map(rows.map((r) => [r[0], r[2]]));
    expect(byNode.get(nodes[0])).toBe('2');
    expect(byNode.get(nodes[1])).toBe('3');
  });

  it('lists the connections of both instances, searches them and pages through them', async () => {
    await open('connections');
    const rows = await cells('connections');
    expect(rows.map((r) => r[2]).sort()).toEqual(['amy-a', 'ann-a', 'bea-b', 'ben-b', 'bob-b']);
    expect(new Set(rows.map((r) => r[1]))).toEqual(new Set(nodes));
    await page.fill('#view-connections [data-search]', 'b-b');
    await page.waitForFunction(() => document.querySelectorAll('#view-connections tbody tr').length === 1); // prettier-ignore
    expect((await cells('connections'))[0]![2]).toBe('bob-b');
    await page.fill('#view-connections [data-search]', '');
    await page.selectOption('#view-connections [data-limit]', '25');
    await page.waitForFunction(() => document.querySelectorAll('#view-connections tbody tr').length === 5); // prettier-ignore
    expect(await page.isDisabled('#view-connections [data-next]')).toBe(true);
  });

  it('lists rooms with their members summed over both instances', async () => {
    await open('rooms');
    const rows = await cells('rooms');
    const byRoom = new Map(rows.map((r) => [r[1], [r[2], r[3]]]));
    expect(byRoom.get('shared')).toEqual(['5', '2']);
    expect(byRoom.get('only-a')).toEqual(['1', '1']);
    expect(byRoom.get('only-b')).toEqual(['1', '1']);
    expect(byRoom.get('p:lobby')).toEqual(['5', '2']);
  });

  it('shows the presence of a room with members of both instances', async () => {
    await open('presence');
    const rows = await cells('presence');
    expect(rows.map((r) => [r[1], r[2], r[3]])).toEqual([['p:lobby', '5', '5']]);
    await page.click('#view-presence tbody button');
    await page.waitForSelector('#view-presence [data-detail]:not([hidden]) tbody tr');
    const keys = (await cells('presence', '[data-detail] table')).map((r) => r[0]).sort();
    expect(keys).toEqual(['amy-a', 'ann-a', 'bea-b', 'ben-b', 'bob-b']);
  });

  it('shows the history a room keeps', async () => {
    await open('history');
    const rows = await cells('history');
    expect(rows.map((r) => [r[1], r[3]])).toEqual([['h:news', '2']]);
  });

  it('shows refusals and budgets for both nodes', async () => {
    await open('refusals');
    const heads = await page.$$eval('#view-refusals [data-limits] th', (ths) => ths.map((th) => th.textContent)); // prettier-ignore
    expect(heads.slice(1).sort()).toEqual([...nodes].sort());
    const rows = await cells('refusals', '[data-limits]');
    expect(rows[0]!.slice(0, 1)).toEqual(['connections now']);
    expect(rows[0]!.slice(1).sort()).toEqual(['2', '3']);
    expect(rows.find((r) => r[0] === 'max_connections')?.slice(1)).toEqual(['10,000', '10,000']);
  });

  it('traces a connection of the other instance from the page, and audits it', async () => {
    await open('connections');
    const bob = (await cells('connections')).findIndex((r) => r[2] === 'bob-b');
    await page.click(`#view-connections tbody tr:nth-child(${bob + 1}) button:text("trace")`);
    await page.waitForFunction(() => document.body.dataset['loaded'] === 'trace');
    const client = clientsOfB[0]!;
    client.send('say', { text: 'hello from b' }, 'm1');
    await client.next((m) => m.id === 'm1');
    await page.click('#tabs button[data-view="trace"]');
    await page.waitForFunction(() =>
      Array.from(document.querySelectorAll('#view-trace tbody td')).some((td) =>
        td.textContent?.includes('hello from b'),
      ),
    );
    const dirs = (await cells('trace')).map((r) => r[2]);
    expect(dirs).toEqual(expect.arrayContaining(['in', 'out']));
    await open('audit');
    const audit = await cells('audit');
    expect(audit[0]!.slice(1, 3)).toEqual(['127.0.0.1', 'trace']);
    expect(audit[0]![4]).toBe(`start on ${nodes[1]}`);
  });

  it('disconnects a connection of the other instance from the page', async () => {
    await open('connections');
    const ben = (await cells('connections')).findIndex((r) => r[2] === 'ben-b');
    await page.click(`#view-connections tbody tr:nth-child(${ben + 1}) button:text("disconnect")`);
    expect(await clientsOfB[1]!.closed).toBe(1000);
    await page.waitForFunction(() =>
      Array.from(document.querySelectorAll('#view-connections tbody tr')).every(
        (tr) => !tr.textContent?.includes('ben-b'),
      ),
    );
    expect(problems).toEqual([]);
  });
});
