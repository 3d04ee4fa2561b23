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
  const child = spawn(process.execPath, [servers[name]], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = [];
  const waiters = [];
  let buf = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const waiter = waiters.findIndex((w) => line.startsWith(w.prefix));
      if (waiter >= 0) waiters.splice(waiter, 1)[0].resolve(line);
      else lines.push(line);
    }
  });
  const next = (prefix) =>
    new Promise((resolve, reject) => {
      const i = lines.findIndex((l) => l.startsWith(prefix));
      if (i >= 0) return resolve(lines.splice(i, 1)[0]);
      waiters.push({ prefix, resolve });
      child.once('exit', () => reject(new Error(`${name} server exited`)));
    });
  const port = Number((await next('PORT ')).slice(5));
  // The server's own CPU time so far, in µs.
  const cpu = async () => {
    child.stdin.write('cpu\n');
    return Number((await next('CPU ')).slice(4));
  };
  return { child, port, cpu };
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
  return { rate: count / elapsed, ops: count };
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
  return { rate: received / elapsed, ops: received };
}

async function httpLoad(port) {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/json`,
    connections: 50,
    duration: seconds,
  });
  if (result.non2xx || result.errors) throw new Error('HTTP benchmark saw errors');
  return { rate: result.requests.average, ops: result.requests.total };
}

// Throughput, and the server's CPU time per operation (µs): the second does not depend on
// how the two cores were shared with the load generator.
async function measure(name, fn) {
  const server = await start(name);
  try {
    const before = await server.cpu();
    const { rate, ops } = await fn(server.port);
    const after = await server.cpu();
    return { rate, cpu: (after - before) / ops };
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
  return Object.fromEntries(
    kinds.map((k) => [
      k,
      { rate: median(samples[k].map((x) => x.rate)), cpu: median(samples[k].map((x) => x.cpu)) },
    ]),
  );
}
const wsKinds = ['ws', 'pkg', 'socket.io'];
const client = (k) => (k === 'socket.io' ? k : 'ws');
const rows = [
  [
    'WS echo, round trips/s',
    await series(wsKinds, (k, p) => echo(client(k), p)),
    'ws',
    'socket.io',
  ],
  [
    'WS broadcast, deliveries/s',
    await series(wsKinds, (k, p) => fanout(client(k), p)),
    'ws',
    'socket.io',
  ],
  [
    'HTTP GET JSON, requests/s',
    await series(['node:http', 'pkg', 'fastify'], (_k, p) => httpLoad(p)),
    'node:http',
    'fastify',
  ],
];

const us = (n) => `${n.toFixed(2)} µs`;
console.log(
  `\nBenchmarks (median of ${rounds} rounds of ${seconds}s per workload, ${echoClients} echo clients, ${fanoutClients} broadcast clients, node ${process.version})\n`,
);
console.log('Throughput (higher is better):\n');
console.log('| workload | @pkg/core | baseline | peer | pkg / baseline | pkg / peer |');
console.log('|---|---|---|---|---|---|');
for (const [label, res, base, peer] of rows) {
  console.log(
    `| ${label} | ${fmt(res.pkg.rate)} | ${base} ${fmt(res[base].rate)} | ${peer} ${fmt(res[peer].rate)} | ${(res.pkg.rate / res[base].rate).toFixed(2)} | ${(res.pkg.rate / res[peer].rate).toFixed(2)} |`,
  );
}
console.log('\nServer CPU time per operation (lower is better):\n');
console.log('| workload | @pkg/core | baseline | peer | pkg / baseline | pkg / peer |');
console.log('|---|---|---|---|---|---|');
for (const [label, res, base, peer] of rows) {
  console.log(
    `| ${label.split(',')[0]} | ${us(res.pkg.cpu)} | ${base} ${us(res[base].cpu)} | ${peer} ${us(res[peer].cpu)} | ${(res.pkg.cpu / res[base].cpu).toFixed(2)} | ${(res.pkg.cpu / res[peer].cpu).toFixed(2)} |`,
  );
}
process.exit(0);
