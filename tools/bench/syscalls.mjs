// Counts the system calls a server makes per WebSocket echo round trip, with `strace -c`
// attached to every thread of the server for the counted window only. A count, like
// instructions.mjs's, so it repeats on a loaded machine; it shows what batching saves (a
// write per answer, or one per turn). Run `pnpm build` first; needs strace.
//
//   node tools/bench/syscalls.mjs [inflight ...]        default: 1 10
//
// For each number of echoes in flight on one connection (written by the client in one burst,
// all answers awaited, again: lib/echo-burst.mjs), each server in SYSCALL_SERVERS (default
// `ws,pkg,fastify-ws`) runs pinned with the workload's settings (lib/limits.mjs), takes
// SYSCALL_WARMUP round trips (default 5,000), then strace counts SYSCALL_OPS (default 5,000).
// The table gives system calls per round trip, all of them and the writes (write, writev)
// and reads (read, recvfrom, readv) alone.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { THROUGHPUT_PKG_CONFIG } from './lib/limits.mjs';
import { echoBursts } from './lib/echo-burst.mjs';
import { once, setUpPinning, sleep, startServer, usePinning } from './lib/proc.mjs';

const inflights = process.argv.slice(2).map(Number);
if (inflights.some((n) => !Number.isInteger(n) || n < 1)) {
  process.stderr.write('usage: node tools/bench/syscalls.mjs [inflight ...] (whole numbers ≥ 1)\n');
  process.exit(2);
}
if (spawnSync('strace', ['-V']).error) {
  process.stderr.write('strace is not installed (Debian: apt-get install strace)\n');
  process.exit(2);
}
const servers = (process.env.SYSCALL_SERVERS ?? 'ws,pkg,fastify-ws').split(',');
const warmup = Number(process.env.SYSCALL_WARMUP ?? 5000);
const counted = Number(process.env.SYSCALL_OPS ?? 5000);
usePinning(setUpPinning());

const WRITES = new Set(['write', 'writev', 'sendto', 'sendmsg']);
const READS = new Set(['read', 'readv', 'recvfrom', 'recvmsg']);

/** strace -c's summary: calls by system call name. */
function parseSummary(text) {
  const calls = new Map();
  for (const line of text.split('\n')) {
    const m = line.trim().match(/^[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?([a-z_0-9]+)$/);
    if (m && m[2] !== 'total') calls.set(m[2], Number(m[1]));
  }
  return calls;
}

async function count(serverName, inflight) {
  const server = await startServer(serverName, { pkgConfig: THROUGHPUT_PKG_CONFIG });
  const socket = new WebSocket(`ws://127.0.0.1:${server.port}/`);
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pkg-syscalls-')), 'strace.txt');
  try {
    await once(socket, 'open');
    const message = JSON.stringify({ event: 'echo', data: { n: 1, text: 'hello' } });
    await echoBursts(socket, message, warmup, inflight);
    const tids = fs.readdirSync(`/proc/${server.child.pid}/task`);
    const strace = spawn('strace', ['-c', '-o', out, ...tids.flatMap((t) => ['-p', t])], {
      stdio: 'ignore',
    });
    await sleep(500); // attached before the window opens
    await echoBursts(socket, message, counted, inflight);
    const exited = once(strace, 'exit');
    strace.kill('SIGINT');
    await exited;
    const calls = parseSummary(fs.readFileSync(out, 'utf8'));
    const sum = (pick) => [...calls].reduce((n, [name, c]) => n + (pick(name) ? c : 0), 0);
    return {
      all: sum(() => true) / counted,
      writes: sum((n) => WRITES.has(n)) / counted,
      reads: sum((n) => READS.has(n)) / counted,
      top: [...calls].sort((a, b) => b[1] - a[1]).slice(0, 5),
    };
  } finally {
    socket.terminate();
    await server.stop();
    fs.rmSync(path.dirname(out), { recursive: true, force: true });
  }
}

const f = (n) => n.toFixed(2);
process.stdout.write(
  `# System calls per echo round trip (strace -c on every server thread; ${counted.toLocaleString('en')} counted after ${warmup.toLocaleString('en')})\n\n| in flight | server | all | writes | reads | most frequent (calls per round trip) |\n|---|---|---|---|---|---|\n`,
);
for (const inflight of inflights.length > 0 ? inflights : [1, 10]) {
  for (const serverName of servers) {
    const r = await count(serverName, inflight);
    const top = r.top.map(([name, c]) => `${name} ${f(c / counted)}`).join(', ');
    process.stdout.write(
      `| ${inflight} | ${serverName} | ${f(r.all)} | ${f(r.writes)} | ${f(r.reads)} | ${top} |\n`,
    );
  }
}
