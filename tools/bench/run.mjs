#!/usr/bin/env node
// Side-by-side benchmarks in one run, reported as ratios to the peers.
//   pnpm bench            (from the root; builds nothing: run `pnpm build` first)
//   BENCH_SECONDS=5 node tools/bench/run.mjs
// Every server runs in its own child process on 127.0.0.1 with port 0; the load comes from
// this process. Each workload is bounded in time and in count and stops by itself.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { io as ioClient } from 'socket.io-client';
import WebSocket from 'ws';

const here = path.dirname(fileURLToPath(import.meta.url));
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const echoClients = Number(process.env.BENCH_ECHO_CLIENTS ?? 50);
const fanoutClients = Number(process.env.BENCH_FANOUT_CLIENTS ?? 200);
const fanoutRounds = Number(process.env.BENCH_FANOUT_ROUNDS ?? 300);

const servers = {
  pkg: path.join(here, 'dist', 'pkg.js'),
  ws: path.join(here, 'servers', 'ws.mjs'),
  'socket.io': path.join(here, 'servers', 'socketio.mjs'),
  'node:http': path.join(here, 'servers', 'http.mjs'),
  fastify: path.join(here, 'servers', 'fastify.mjs'),
};

async function start(name) {
  const child = spawn(process.execPath, [servers[name]], { stdio: ['ignore', 'pipe', 'inherit'] });
  let buf = '';
  for await (const chunk of child.stdout) {
    buf += chunk;
    const m = /PORT (\d+)/.exec(buf);
    if (m) return { child, port: Number(m[1]) };
  }
  throw new Error(`${name} server exited before listening`);
}

async function stop({ child }) {
  child.kill('SIGKILL');
  await once(child, 'exit');
}

// A uniform client: `send(event, data)` and `on(event, fn)` over raw ws or socket.io-client.
async function connect(kind, port) {
  if (kind === 'socket.io') {
    const s = ioClient(`http://127.0.0.1:${port}`, { transports: ['websocket'], forceNew: true });
    await once(s, 'connect');
    return { send: (e, d) => s.emit(e, d), on: (e, fn) => s.on(e, fn), close: () => s.close() };
  }
  const s = new WebSocket(`ws://127.0.0.1:${port}/`);
  await once(s, 'open');
  const handlers = new Map();
  s.on('message', (raw) => {
    const msg = JSON.parse(raw.toString());
    handlers.get(msg.event)?.(msg.data);
  });
  return {
    send: (e, d) => s.send(JSON.stringify({ event: e, data: d })),
    on: (e, fn) => handlers.set(e, fn),
    close: () => s.close(),
  };
}

// Round trips per second: every client keeps one message in flight for `seconds`.
async function echo(kind, port) {
  const clients = await Promise.all(Array.from({ length: echoClients }, () => connect(kind, port)));
  let count = 0;
  let running = true;
  const payload = { text: 'hello', n: 1 };
  const done = clients.map(
    (c) =>
      new Promise((resolve) => {
        c.on('echo', () => {
          count++;
          if (running) c.send('echo', payload);
          else resolve();
        });
        c.send('echo', payload);
      }),
  );
  const t0 = process.hrtime.bigint();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  running = false;
  const elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
  await Promise.race([Promise.all(done), new Promise((r) => setTimeout(r, 2000))]);
  clients.forEach((c) => c.close());
  return count / elapsed;
}

// Deliveries per second: one sender triggers `fanoutRounds` broadcasts to every client.
async function fanout(kind, port) {
  const clients = await Promise.all(
    Array.from({ length: fanoutClients }, () => connect(kind, port)),
  );
  const expected = fanoutRounds * clients.length;
  let received = 0;
  const all = new Promise((resolve) => {
    for (const c of clients) c.on('tick', () => ++received === expected && resolve());
  });
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < fanoutRounds; i++) clients[0].send('fanout', { i, text: 'tick' });
  const timeout = new Promise((r) => setTimeout(r, 60_000));
  await Promise.race([all, timeout]);
  const elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
  clients.forEach((c) => c.close());
  if (received < expected) throw new Error(`${kind}: only ${received}/${expected} deliveries`);
  return received / elapsed;
}

async function httpLoad(port) {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/json`,
    connections: 50,
    duration: seconds,
  });
  if (result.non2xx || result.errors) throw new Error('HTTP benchmark saw errors');
  return result.requests.average;
}

async function measure(name, fn) {
  const server = await start(name);
  try {
    return await fn(server.port);
  } finally {
    await stop(server);
  }
}

const fmt = (n) => Math.round(n).toLocaleString('en-US');
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
// Servers take turns within each round, so drift in the machine's load spreads over all of
// them; each figure is the median of the rounds.
async function series(kinds, fn) {
  const samples = Object.fromEntries(kinds.map((k) => [k, []]));
  for (let r = 0; r < rounds; r++) {
    for (const k of kinds) samples[k].push(await measure(k, (p) => fn(k, p)));
  }
  return Object.fromEntries(kinds.map((k) => [k, median(samples[k])]));
}
const rows = [];
const wsKinds = ['ws', 'pkg', 'socket.io'];
const client = (k) => (k === 'socket.io' ? k : 'ws');
const echoRes = await series(wsKinds, (k, p) => echo(client(k), p));
const fanRes = await series(wsKinds, (k, p) => fanout(client(k), p));
const httpRes = await series(['node:http', 'pkg', 'fastify'], (_k, p) => httpLoad(p));

rows.push(['WS echo, round trips/s', echoRes, 'ws', 'socket.io']);
rows.push(['WS broadcast, deliveries/s', fanRes, 'ws', 'socket.io']);
rows.push(['HTTP GET JSON, requests/s', httpRes, 'node:http', 'fastify']);

console.log(
  `\nBenchmarks (median of ${rounds} rounds of ${seconds}s per workload, ${echoClients} echo clients, ${fanoutClients} broadcast clients, node ${process.version})\n`,
);
console.log('| workload | @pkg/core | baseline | peer | pkg / baseline | pkg / peer |');
console.log('|---|---|---|---|---|---|');
for (const [label, res, base, peer] of rows) {
  console.log(
    `| ${label} | ${fmt(res.pkg)} | ${base} ${fmt(res[base])} | ${peer} ${fmt(res[peer])} | ${(res.pkg / res[base]).toFixed(2)} | ${(res.pkg / res[peer]).toFixed(2)} |`,
  );
}
process.exit(0);
