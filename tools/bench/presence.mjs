#!/usr/bin/env node
// The presence workload: two server processes (servers/pkg-presence.mjs) share a private
// redis-server; PRESENCE_CLIENTS (2,000) protocol version 1 clients, split over the two,
// join one room in a burst. Reports the time from the last join sent until every member's
// view (its $presence state with the $presence_diff batches applied) lists every client,
// presence messages and bytes per member, Redis commands per join (INFO commandstats) and
// the servers' CPU time per join.
//   pnpm build && node tools/bench/presence.mjs
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createClient } from 'redis';
import WebSocket from 'ws';
import { once, sleep, spawnLines } from './lib/proc.mjs';

const N = Number(process.env.PRESENCE_CLIENTS ?? 2000);
const ROOM = 'storm';
const server = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'servers',
  'pkg-presence.mjs',
);
// Every key listed: the bound must be over the room's size for views to be complete.
// No ping/pong: one runner process holds every client, and its pauses must not end them.
const CONFIG = { presence_max_list: N + 1000, heartbeat_interval: 0 };
// Every SAMPLE-th member keeps its view (parses every message); the others count only.
const SAMPLE = Number(process.env.PRESENCE_SAMPLE ?? 20);

const freePort = () =>
  new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });

async function startRedis() {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  const redis = createClient({ url });
  for (let i = 0; ; i++) {
    try {
      await redis.connect();
      break;
    } catch (err) {
      if (i > 50) throw err;
      await sleep(100);
    }
  }
  return { url, redis, stop: async () => (child.kill('SIGKILL'), await once(child, 'exit')) };
}

async function commandCount(redis) {
  const info = await redis.info('commandstats');
  let calls = 0;
  for (const m of info.matchAll(/^cmdstat_(\w+(?:\|\w+)?):calls=(\d+)/gm)) {
    if (m[1] !== 'info') calls += Number(m[2]);
  }
  return calls;
}

/** A version 1 client keeping the room's view as the protocol says. */
async function member(port, keeps) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`, ['pkg.v1']);
  await once(ws, 'open');
  const m = { ws, keeps, messages: 0, bytes: 0, view: new Map(), complete: 0, closed: 0 };
  ws.on('close', (code) => (m.closed = code));
  ws.on('message', (raw) => {
    const text = raw.toString();
    if (!keeps) {
      if (text.startsWith('{"event":"$presence')) {
        m.messages += 1;
        m.bytes += raw.length;
      }
      return;
    }
    const { event, data } = JSON.parse(text);
    if (event === '$presence') {
      m.view = new Map();
      for (const entry of Object.values(data.state ?? {}))
        for (const meta of entry.metas) m.view.set(meta.clientId, meta);
    } else if (event === '$presence_diff') {
      for (const entry of Object.values(data.leaves))
        for (const meta of entry.metas) m.view.delete(meta.clientId);
      for (const entry of Object.values(data.joins))
        for (const meta of entry.metas) m.view.set(meta.clientId, meta);
    } else return;
    m.messages += 1;
    m.bytes += Buffer.byteLength(text);
    if (m.view.size === N && m.complete === 0) m.complete = performance.now();
  });
  const welcome = new Promise((resolve) =>
    ws.on('message', function first(raw) {
      if (raw.toString().includes('"$welcome"')) {
        ws.off('message', first);
        resolve();
      }
    }),
  );
  ws.send(JSON.stringify({ event: '$hello', data: { v: 1 } }));
  await welcome;
  return m;
}

const redis = await startRedis();
const env = { BENCH_REDIS_URL: redis.url, BENCH_PKG_CONFIG: JSON.stringify(CONFIG) };
const servers = [0, 1].map(() =>
  spawnLines(process.execPath, [server], { env, name: 'pkg-presence' }),
);
const members = [];
try {
  const ports = await Promise.all(
    servers.map(async (s) => Number((await s.next('PORT ')).slice(5))),
  );
  for (let i = 0; i < N; i += 100) {
    members.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(100, N - i) }, (_, j) =>
          member(ports[(i + j) % 2], (i + j) % SAMPLE === 0),
        ),
      )),
    );
  }
  process.stderr.write(`${N} clients connected\n`);
  const cpu = async () => {
    let sum = 0;
    for (const s of servers) {
      s.send('cpu');
      sum += Number((await s.next('CPU ')).slice(4));
    }
    return sum;
  };
  const [commands0, cpu0] = [await commandCount(redis.redis), await cpu()];
  const t0 = performance.now();
  for (const m of members) m.ws.send(JSON.stringify({ event: 'join_room', data: { room: ROOM } }));
  const sent = performance.now();
  const deadline = sent + 60_000;
  const kept = members.filter((m) => m.keeps);
  while (kept.some((m) => m.complete === 0) && performance.now() < deadline) await sleep(20);
  const done = kept.every((m) => m.complete > 0);
  await sleep(500); // let the last batches land before counting
  const [commands1, cpu1] = [await commandCount(redis.redis), await cpu()];
  const last = Math.max(...kept.map((m) => m.complete));
  const msgs = members.map((m) => m.messages).sort((a, b) => a - b);
  const bytes = members.map((m) => m.bytes).sort((a, b) => a - b);
  const stats = [];
  for (const s of servers) {
    s.send('P');
    stats.push(JSON.parse((await s.next('P ')).slice(2)));
  }
  if (!done) {
    const sizes = new Map();
    for (const m of kept) sizes.set(m.view.size, (sizes.get(m.view.size) ?? 0) + 1);
    console.error('view sizes', [...sizes].slice(0, 20), JSON.stringify(stats));
    console.error(
      'closed',
      members
        .filter((m) => m.closed)
        .map((m) => m.closed)
        .slice(0, 10),
    );
  }
  const med = (xs) => xs[Math.floor(xs.length / 2)];
  console.log(`## presence: ${N} clients on 2 instances join one room\n`);
  console.log('| measure | value |\n| --- | --- |');
  console.log(`| members keeping a view (every ${SAMPLE}th) | ${kept.length} |`);
  console.log(`| every kept view complete | ${done ? 'yes' : 'NO (gave up after 60 s)'} |`);
  console.log(`| joins sent in | ${(sent - t0).toFixed(0)} ms |`);
  console.log(
    `| last view complete after the last join was sent | ${(last - sent).toFixed(0)} ms |`,
  );
  console.log(`| presence messages per member: median / max | ${med(msgs)} / ${msgs.at(-1)} |`);
  console.log(`| presence bytes per member: median / max | ${med(bytes)} / ${bytes.at(-1)} |`);
  console.log(
    `| Redis commands per join (INFO commandstats, heartbeats included) | ${((commands1 - commands0) / N).toFixed(2)} |`,
  );
  console.log(`| server CPU per join (both instances) | ${((cpu1 - cpu0) / N).toFixed(0)} µs |`);
  console.log(
    `| presence commands counted by the adapters | ${stats.map((s) => s.commands).join(' + ')} |`,
  );
} finally {
  for (const m of members) m.ws.terminate();
  for (const s of servers) s.child.kill('SIGKILL');
  await redis.redis.close().catch(() => {});
  await redis.stop();
}
