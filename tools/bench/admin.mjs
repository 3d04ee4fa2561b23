#!/usr/bin/env node
// The admin page (@pkg/admin) at scale: two instances of @pkg/core sharing a private Redis,
// each holding BENCH_ADMIN_PER_INSTANCE idle protocol version 1 clients (in rooms, some with
// presence and history), the page opened in Debian's Chromium (playwright-core) on
// instance A. It measures, in one run:
//   - page load: a fresh page until its first view (nodes) has drawn its data;
//   - each view: a click on its tab until it has drawn its data (and the JSON endpoints
//     alone, from this process);
//   - what the open page costs A: A's CPU per second with the page closed, open as it opens
//     (connections, oldest first, polled every 2 s) and open on its heaviest view
//     (connections by traffic, every second), in rotating windows of BENCH_SECONDS;
//   - server throughput on A with the page open against closed, in the same run: a closed
//     loop of `echo` requests over BENCH_ADMIN_ECHO connections, in alternating windows.
// Limits: a process here may hold at most `ulimit -n` descriptors (20,000 on this machine,
// and the hard limit cannot be raised in its container), so an instance holds at most some
// 19,900 connections; the clients are spread over client processes of at most 10,000 each.
// With --screenshots it also writes a PNG of each view to packages/admin/docs/.
//
//   pnpm build && node tools/bench/admin.mjs [--screenshots]
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import WebSocket from 'ws';
import { setUpPinning, spawnLines, startServer, usePinning } from './lib/proc.mjs';
import { startRedis } from './lib/redis.mjs';
import { median, percentile } from './lib/stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
/**
 * Raises `ulimit -n` for the servers to `want` when the hard limit allows it: the launcher
 * (a shell that raises the limit, then runs Node) and the limit each server gets.
 */
function descriptorLimit(want) {
  const ask = (n) => spawnSync('sh', ['-c', `ulimit -n ${n}`], { stdio: 'ignore' }).status === 0;
  const current = Number(spawnSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).stdout.trim()); // prettier-ignore
  if (ask(want)) {
    return { limit: want, launcher: ['sh', '-c', `ulimit -n ${want} && exec "$0" "$@"`], text: `\`ulimit -n\` raised to ${want} for the servers` }; // prettier-ignore
  }
  return { limit: current, launcher: [], text: `\`ulimit -n\` is ${current} and cannot be raised here (hard limit)` }; // prettier-ignore
}
const nofile = descriptorLimit(65_536);
// Each instance: its clients, the echo connections, Redis links, the listener and Node's own.
const PER_INSTANCE = Number(
  process.env.BENCH_ADMIN_PER_INSTANCE ?? Math.min(25_000, Math.floor((nofile.limit - 400) / 500) * 500), // prettier-ignore
);
const PER_PROCESS = 10_000;
const ECHO = Number(process.env.BENCH_ADMIN_ECHO ?? 32);
const INFLIGHT = 4;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const WINDOWS = Number(process.env.BENCH_ADMIN_WINDOWS ?? 6);
const SAMPLES = Number(process.env.BENCH_ADMIN_SAMPLES ?? 5);
const screenshots = process.argv.includes('--screenshots');
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const VIEWS = [
  'nodes',
  'connections',
  'rooms',
  'presence',
  'history',
  'refusals',
  'trace',
  'audit',
];
const log = (msg) => process.stderr.write(`  [admin] ${msg}\n`);
const fmt = (n, d = 0) =>
  n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });

const pinning = setUpPinning();
usePinning(pinning);
const redis = await startRedis();
const env = { BENCH_REDIS_URL: redis.url, BENCH_KEY_PREFIX: `bench-admin-${process.pid}` };
const serverFile = path.join(here, 'servers', 'pkg-admin.mjs');
const children = [];
let browser;

async function cleanup() {
  await browser?.close().catch(() => {});
  for (const c of children.splice(0).reverse()) await c.stop();
  await redis.stop();
}

/** The crowd of one instance, over client processes of at most PER_PROCESS clients. */
async function crowd(port, from, count) {
  const started = [];
  for (let offset = 0; offset < count; offset += PER_PROCESS) {
    const n = Math.min(PER_PROCESS, count - offset);
    const proc = spawnLines(process.execPath, [path.join(here, 'clients', 'admin-crowd.mjs'), String(port), String(from + offset), String(n)], { name: 'admin-crowd' }); // prettier-ignore
    children.push({ stop: async () => { proc.child.kill('SIGKILL'); await proc.exit; } }); // prettier-ignore
    started.push(proc.next('READY '));
  }
  return (await Promise.all(started)).reduce((sum, line) => sum + Number(line.slice(6)), 0);
}

/** ECHO connections to A, each keeping INFLIGHT echo requests under way. */
async function echoClients(port) {
  const clients = [];
  for (let i = 0; i < ECHO; i++) {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, ['pkg.v1'], { perMessageDeflate: false });
    await new Promise((resolve, reject) => {
      ws.once('error', reject);
      ws.once('open', resolve);
    });
    ws.send(JSON.stringify({ event: '$hello', data: { v: 1, auth: `echo-${i}` } }));
    await new Promise((resolve) => ws.once('message', resolve));
    clients.push(ws);
  }
  let done = 0;
  let running = false;
  const payload = JSON.stringify({ event: 'echo', data: { text: 'x'.repeat(64) }, id: 'e' });
  for (const ws of clients) {
    ws.on('message', () => {
      done += 1;
      if (running) ws.send(payload);
    });
  }
  return {
    /**
     * Echo answers per second over `ms`, and the server's CPU µs per answer (`cpu()` reads
     * its process CPU time): on a machine others load too, the rate follows the CPU the
     * server gets, the CPU per answer what it costs.
     */
    async measure(ms, cpu = async () => 0) {
      running = true;
      for (const ws of clients) for (let k = 0; k < INFLIGHT; k++) ws.send(payload);
      await new Promise((r) => setTimeout(r, 500)); // warm-up within the window
      const before = done;
      const cpu0 = await cpu();
      const t0 = performance.now();
      await new Promise((r) => setTimeout(r, ms));
      const answers = done - before;
      const rate = (answers * 1000) / (performance.now() - t0);
      const cpuPer = ((await cpu()) - cpu0) / answers;
      running = false;
      await new Promise((r) => setTimeout(r, 300)); // let the loop drain
      return { rate, cpuPer };
    },
    close: () => clients.forEach((ws) => ws.terminate()),
  };
}

/** Times of SAMPLES × 2 requests one after another, and A's CPU µs per request. */
async function timeJson(base, name, query, cpu) {
  const times = [];
  const cpu0 = await cpu();
  for (let i = 0; i < SAMPLES * 2; i++) {
    const t0 = performance.now();
    const res = await fetch(`${base}/admin/api/${name}${query}`);
    await res.json();
    if (!res.ok) throw new Error(`${name}${query}: HTTP ${res.status}`);
    times.push(performance.now() - t0);
  }
  return { times, cpuPer: ((await cpu()) - cpu0) / times.length };
}

/**
 * The polling page's states: `closed` (about:blank); `default` (the connections view as it
 * opens: oldest first, polled every 2 s); `heavy` (connections sorted by traffic, the view
 * that reads every socket, polled every second).
 */
async function pageState(page, base, state) {
  // Always through about:blank: a second goto to the same page and another hash would stay
  // in the same document, with the settings of the state before.
  await page.goto('about:blank');
  if (state === 'closed') return;
  await page.goto(`${base}/admin#connections`);
  await loadedView(page, 'connections');
  if (state === 'heavy') {
    await page.selectOption('#view-connections [data-sort]', 'traffic');
    await page.selectOption('#interval', '1000');
  }
}

async function loadedView(page, view) {
  await page.waitForFunction((v) => document.body.dataset.loaded === v, view, { timeout: 30_000 }); // prettier-ignore
}

try {
  log(`redis: ${redis.text}; ${pinning.text}; ${nofile.text}`);
  const a = await startServer(serverFile, { env, launcher: nofile.launcher });
  children.push(a);
  // B runs beside the load generator: the server core is A's alone.
  const [bCommand, ...bArgs] = [...nofile.launcher, process.execPath, '--expose-gc', serverFile];
  const bProc = spawnLines(bCommand, bArgs, {
    name: 'B',
    env: { ...env, BENCH_PKG_CONFIG: '{}' },
  });
  const bPort = Number((await bProc.next('PORT ')).slice(5));
  children.push({ stop: async () => { bProc.child.kill('SIGKILL'); await bProc.exit; } }); // prettier-ignore
  const base = `http://127.0.0.1:${a.port}`;

  const t0 = performance.now();
  const [inA, inB] = await Promise.all([
    crowd(a.port, 0, PER_INSTANCE),
    crowd(bPort, PER_INSTANCE, PER_INSTANCE),
  ]);
  const connected = inA + inB;
  log(`${fmt(connected)} clients in (${fmt(inA)} on A, ${fmt(inB)} on B) after ${fmt((performance.now() - t0) / 1000, 1)} s`); // prettier-ignore
  for (let r = 0; r < 20; r++) bProc.send(`H h:news-${r}`);
  const echo = await echoClients(a.port);

  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS }); // prettier-ignore
  const context = await browser.newContext({ viewport: { width: 1200, height: 660 } });

  // ---------------------------------------------------------------- page load
  const loads = [];
  for (let i = 0; i < SAMPLES; i++) {
    const page = await context.newPage();
    const start = performance.now();
    await page.goto(`${base}/admin#nodes`);
    await loadedView(page, 'nodes');
    loads.push(performance.now() - start);
    await page.close();
  }
  log(`page load: median ${fmt(median(loads))} ms`);

  // ---------------------------------------------------------------- each view
  const page = await context.newPage();
  await page.goto(`${base}/admin#nodes`);
  await loadedView(page, 'nodes');
  await page.selectOption('#interval', '0'); // only the clicks below ask for data
  const viewTimes = {};
  for (const view of VIEWS) viewTimes[view] = [];
  for (let i = 0; i < SAMPLES; i++) {
    for (const view of VIEWS) {
      const start = performance.now();
      await page.click(`#tabs button[data-view="${view}"]`);
      await loadedView(page, view);
      viewTimes[view].push(performance.now() - start);
    }
  }
  // The connections view's other questions: a search, the traffic sort, the next page.
  const extra = { 'connections: search': [], 'connections: by traffic': [], 'connections: next page': [] }; // prettier-ignore
  await page.click('#tabs button[data-view="connections"]');
  await loadedView(page, 'connections');
  for (let i = 0; i < SAMPLES; i++) {
    const steps = [
      [
        'connections: search',
        () => page.fill('#view-connections [data-search]', `user-${1000 + i}`),
      ],
      ['connections: by traffic', async () => { await page.fill('#view-connections [data-search]', ''); await page.selectOption('#view-connections [data-sort]', 'traffic'); }], // prettier-ignore
      ['connections: next page', () => page.click('#view-connections [data-next]')],
    ];
    for (const [name, act] of steps) {
      await page.evaluate(() => delete document.body.dataset.loaded);
      const start = performance.now();
      await act();
      await page.waitForFunction(() => document.body.dataset.loaded === 'connections');
      extra[name].push(performance.now() - start);
    }
    await page.selectOption('#view-connections [data-sort]', 'age');
    await loadedView(page, 'connections');
  }
  const api = {};
  for (const [name, q] of [
    ['nodes', ''],
    ['connections', ''],
    ['connections', '?sort=traffic'],
    ['connections', '?search=user-12345'],
    ['connections', '?limit=200'],
    ['rooms', ''],
    ['rooms', '?only=presence'],
    ['rooms', '?only=history'],
    ['refusals', ''],
  ]) {
    api[`${name}${q}`] = await timeJson(base, name, q, a.cpu);
  }

  // ---------------------------------------------------------------- the page's own cost
  // A's CPU per second without the echo load, the page closed, open as it opens, and open on
  // its heaviest view, in rotating windows: what the open page takes from A.
  const polling = await context.newPage();
  const STATES = ['closed', 'default', 'heavy'];
  const idle = { closed: [], default: [], heavy: [] };
  for (let w = 0; w < WINDOWS; w++) {
    for (let k = 0; k < STATES.length; k++) {
      const state = STATES[(w + k) % STATES.length];
      await pageState(polling, base, state);
      await new Promise((r) => setTimeout(r, 1000));
      const c0 = await a.cpu();
      const t0 = performance.now();
      await new Promise((r) => setTimeout(r, SECONDS * 1000));
      idle[state].push(((await a.cpu()) - c0) / 1000 / ((performance.now() - t0) / 1000));
    }
  }
  log(`A's CPU without load, ms/s: closed ${fmt(median(idle.closed), 1)}, default ${fmt(median(idle.default), 1)}, heavy ${fmt(median(idle.heavy), 1)}`); // prettier-ignore

  // ---------------------------------------------------------------- throughput, open vs closed
  const open = [];
  const closed = [];
  for (let w = 0; w < WINDOWS; w++) {
    for (const state of w % 2 === 0 ? ['closed', 'default'] : ['default', 'closed']) {
      await pageState(polling, base, state);
      const sample = await echo.measure(SECONDS * 1000, a.cpu);
      (state === 'default' ? open : closed).push(sample);
      log(`window ${w + 1}/${WINDOWS}, page ${state}: ${fmt(sample.rate)} echoes/s, ${fmt(sample.cpuPer, 2)} µs CPU per echo`); // prettier-ignore
    }
  }
  await polling.close();

  // ---------------------------------------------------------------- screenshots
  if (screenshots) {
    const dir = path.join(root, 'packages', 'admin', 'docs');
    mkdirSync(dir, { recursive: true });
    await page.selectOption('#interval', '0');
    // Something to show in the trace and audit views: a trace of one echo connection,
    // started from the trace view as an operator would.
    const id = await page.evaluate(async () => {
      const res = await fetch('admin/api/connections?search=echo-0');
      return (await res.json()).rows[0].id;
    });
    await page.click('#tabs button[data-view="trace"]');
    await loadedView(page, 'trace');
    await page.fill('#view-trace [data-trace-id]', id);
    for (const view of VIEWS) {
      await page.click(`#tabs button[data-view="${view}"]`);
      await loadedView(page, view);
      if (view === 'trace') {
        await page.click('#view-trace [data-trace-start]');
        await loadedView(page, 'trace');
        await echo.measure(300);
        await page.evaluate(() => delete document.body.dataset.loaded);
        await page.click('#tabs button[data-view="trace"]');
        await page.waitForSelector('#view-trace tbody tr');
      }
      if (view === 'presence') {
        await page.click('#view-presence tbody button');
        await page.waitForSelector('#view-presence [data-detail]:not([hidden]) tbody tr');
      }
      await page.screenshot({ path: path.join(dir, `${view}.png`) });
    }
    log(`screenshots in ${path.relative(root, dir)}`);
  }
  echo.close();

  // ---------------------------------------------------------------- report
  const row = (name, xs) => `| ${name} | ${fmt(median(xs))} | ${fmt(percentile(xs, 95))} | ${fmt(Math.max(...xs))} |`; // prettier-ignore
  const out = [];
  out.push(`### Admin page at ${fmt(connected)} connections on 2 instances (\`admin.mjs\`)\n`);
  out.push(`node ${process.version}, ${pinning.text}; ${redis.text}; Chromium headless (playwright-core); ${SAMPLES} samples per figure.`); // prettier-ignore
  out.push(`Limits: ${fmt(inA)} clients on A and ${fmt(inB)} on B (${nofile.text}: that is what caps an instance), idle after \`$hello\` and their joins (5,000 rooms; every tenth client also in one of 20 presence rooms and one of 20 rooms keeping 20 messages); admin defaults (page size 50, query timeout 1 s); heartbeat off, max_connections 30,000.\n`); // prettier-ignore
  out.push('| page | median ms | p95 ms | max ms |', '|---|---|---|---|');
  out.push(row('page load (until the nodes view has drawn)', loads));
  for (const view of VIEWS) out.push(row(`view: ${view}`, viewTimes[view]));
  for (const [name, xs] of Object.entries(extra)) out.push(row(`view: ${name}`, xs));
  out.push('', '| JSON endpoint (from the bench process) | median ms | p95 ms | max ms | CPU of A per request, ms |', '|---|---|---|---|---|'); // prettier-ignore
  for (const [name, { times, cpuPer }] of Object.entries(api)) out.push(`${row(`\`${name}\``, times)} ${fmt(cpuPer / 1000, 2)} |`); // prettier-ignore
  const rates = (xs) => xs.map((x) => x.rate);
  const cpus = (xs) => xs.map((x) => x.cpuPer);
  const rateRatio = median(rates(open)) / median(rates(closed));
  // Answers per CPU second of the server, open against closed.
  const cpuRatio = median(cpus(closed)) / median(cpus(open));
  const cost = (state) => median(idle[state]) - median(idle.closed);
  out.push(
    '',
    `What the open page takes from A, without other load (${WINDOWS} rotating windows of ${SECONDS} s; A's CPU in ms per second):`, // prettier-ignore
    '',
    '| page | A\'s CPU, ms/s, median | the page\'s share of one core | a saturated server keeps | windows (ms/s) |', // prettier-ignore
    '|---|---|---|---|---|',
    ...STATES.map((state) => `| ${{ closed: 'closed', default: 'open as it opens (connections, oldest first, every 2 s)', heavy: 'open on connections by traffic, every 1 s' }[state]} | ${fmt(median(idle[state]), 1)} | ${state === 'closed' ? '—' : `${fmt(cost(state) / 10, 2)} %`} | ${state === 'closed' ? '—' : (1 - cost(state) / 1000).toFixed(3)} | ${idle[state].map((x) => fmt(x, 1)).join(', ')} |`), // prettier-ignore
    '',
    `Server throughput on A under load (${ECHO} connections × ${INFLIGHT} echo requests in flight, ${WINDOWS} alternating windows of ${SECONDS} s, the page closed or open as it opens):`, // prettier-ignore
    '',
    '| page | echoes/s, median | server CPU per echo, µs, median | windows (echoes/s) |',
    '|---|---|---|---|',
    `| closed | ${fmt(median(rates(closed)))} | ${fmt(median(cpus(closed)), 2)} | ${rates(closed).map((x) => fmt(x)).join(', ')} |`, // prettier-ignore
    `| open | ${fmt(median(rates(open)))} | ${fmt(median(cpus(open)), 2)} | ${rates(open).map((x) => fmt(x)).join(', ')} |`, // prettier-ignore
    '',
    `Open / closed: ${rateRatio.toFixed(3)} in echoes per second, ${cpuRatio.toFixed(3)} in echoes per server CPU second.`, // prettier-ignore
  );
  console.log(out.join('\n'));
} finally {
  await cleanup();
}
