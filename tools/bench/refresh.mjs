#!/usr/bin/env node
// Credentials refreshed on a live connection under load (docs/protocol.md, "Credentials
// that expire"): one version 1 client sends BENCH_REFRESHES (1,000) `$refresh` requests one
// after another while the server broadcasts BENCH_RATE (1,000) messages per second to it.
// Reported: the refresh round trip (median, p99, max), the broadcast messages lost and
// received twice, and reconnects (the socket closing). Server and client run in this
// process (the figures are of the protocol's path, not a throughput race); the limits are
// the library's defaults but the inbound budget, which 1,000 requests in a row would meet.
//
//   pnpm build && node tools/bench/refresh.mjs
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { NullLogger, Server, ServerConfig } from '@pkg/core';
import { percentile } from './lib/stats.mjs';

const refreshes = Number(process.env.BENCH_REFRESHES ?? 1000);
const rate = Number(process.env.BENCH_RATE ?? 1000);

const server = new Server(
  new ServerConfig({ host: '127.0.0.1', port: 0, ws_max_messages_per_second: 0 }),
  undefined,
  undefined,
  undefined,
  new NullLogger(),
);
// Tokens `<identity>:<ttl ms>`: accepted until now + ttl.
server.addAuthHandler((ctx) => {
  const [identity, ttl] = String(ctx.auth).split(':');
  return { identity, ttl: Number(ttl) };
});
await server.run();

const ws = new WebSocket(`ws://127.0.0.1:${server.getPort()}`, ['pkg.v1']);
const seen = [];
let closes = 0;
const waiting = new Map();
let welcomed;
const welcome = new Promise((resolve) => (welcomed = resolve));
ws.on('close', () => (closes += 1));
ws.on('message', (raw) => {
  const m = JSON.parse(String(raw));
  if (m.event === 'tick') seen.push(m.data.n);
  else if (m.event === '$welcome') welcomed(m.data);
  else if (m.id !== undefined) waiting.get(m.id)?.(m);
});
await new Promise((resolve, reject) => {
  ws.once('open', resolve);
  ws.once('error', reject);
});
ws.send(JSON.stringify({ event: '$hello', data: { v: 1, auth: 'ann:60000' } }));
await welcome;

let sent = 0;
const perTick = Math.max(1, Math.round(rate / 100));
const ticker = setInterval(() => {
  for (let i = 0; i < perTick; i += 1) server.broadcast('tick', { n: (sent += 1) });
}, 10);
const times = [];
let refused = 0;
for (let i = 0; i < refreshes; i += 1) {
  const started = performance.now();
  const answer = await new Promise((resolve) => {
    waiting.set(i, resolve);
    ws.send(JSON.stringify({ event: '$refresh', data: { auth: 'ann:60000' }, id: i }));
  });
  waiting.delete(i);
  times.push(performance.now() - started);
  if (answer.event !== '$refresh') refused += 1;
  // One refresh per millisecond or so: the broadcast runs for the whole series.
  await new Promise((resolve) => setTimeout(resolve, 1));
}
clearInterval(ticker);
await new Promise((resolve) => setTimeout(resolve, 200));

const counts = new Map();
for (const n of seen) counts.set(n, (counts.get(n) ?? 0) + 1);
let lost = 0;
let twice = 0;
for (let n = 1; n <= sent; n += 1) {
  const c = counts.get(n) ?? 0;
  if (c === 0) lost += 1;
  if (c > 1) twice += 1;
}
const ms = (x) => x.toFixed(2);
process.stdout.write(
  [
    `### Credentials refreshed under a broadcast (\`refresh.mjs\`)`,
    '',
    `${refreshes} \`$refresh\` requests in a row on one connection while the server broadcast ${rate} messages/s to it (${sent} in all). Limits: library defaults (\`auth_refresh_grace\` 10000 ms, \`auth_timeout\` 10000 ms), inbound budget off.`,
    '',
    '| metric | value |',
    '| --- | --- |',
    `| refresh round trip, median (ms) | ${ms(percentile(times, 50))} |`,
    `| refresh round trip, p99 (ms) | ${ms(percentile(times, 99))} |`,
    `| refresh round trip, max (ms) | ${ms(Math.max(...times))} |`,
    `| refreshes refused | ${refused} |`,
    `| broadcast messages lost | ${lost} |`,
    `| broadcast messages received twice | ${twice} |`,
    `| reconnects (socket closed) | ${closes} |`,
    '',
  ].join('\n'),
);
ws.close();
await server.close();
