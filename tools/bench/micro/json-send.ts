// Times what @pkg/core spends sending one large JSON message (292 KB, the size a 64 KB Yjs
// state takes as a JSON array of numbers), to check that carrying bytes beside JSON did not
// slow the JSON path down. Run `pnpm build` first, then:
//
//   node tools/bench/dist/json-send.js [clients=100] [rounds=40]
//
// `@pkg/core` is this workspace's build (`pnpm build` at the root first). The clients run in a child process (so the figures are the server's own CPU), all on
// loopback, with the library's defaults (`max_buffered_amount` 4 MiB, `recovery_window`
// 120 s). Each round sends the message once and ends when every client has received it.
// Ways:
//
// - `emit to one client`: `server.send` to one version 0 client;
// - `broadcast, version 0 clients`: `server.broadcast` to `clients` version 0 clients (one
//   text shared by all);
// - `broadcast, version 1 clients`: the same to version 1 clients (each with a session: the
//   text with its own `seq`, kept for replay).
//
// To compare two builds (this one and main's), bundle the same file against each tree's
// packages with `node tools/bench/micro/build-against.mjs <tree> json-send <label>` and run
// both bundles one after the other. On a loaded machine, count instructions instead of
// time: run a bundle under callgrind with JSON_SEND_INSTR=1, and it prints instructions per
// round of the counted rounds (the warm-up rounds are not counted; the clients run outside
// valgrind):
//
//   JSON_SEND_INSTR=1 valgrind --tool=callgrind --smc-check=all-non-file \
//     --callgrind-out-file=/tmp/json-send.%p node tools/bench/dist/json-send.main.js 100 20
import { execFile, fork } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, readdirSync } from 'node:fs';
import { promisify } from 'node:util';
import { WebSocket } from 'ws';
import { NullLogger, Server, ServerConfig } from '@pkg/core';

const TARGET_BYTES = 292 * 1000;
/** Count instructions (under callgrind) instead of time. */
const INSTR = process.env['JSON_SEND_INSTR'] === '1';
const WARMUP = 3;

/** Tells callgrind (this process runs under it) to zero its counters or to dump them. */
async function callgrind(command: '-z' | '-d'): Promise<void> {
  await promisify(execFile)('callgrind_control', [command, String(process.pid)]);
}

/**
 * Instructions of the last dump callgrind wrote for this process (its `totals:` line, the
 * last one it writes: the dump is read again until it is complete).
 */
async function lastDumpTotal(): Promise<number> {
  const out = process.env['JSON_SEND_OUT'] ?? '/tmp';
  for (let i = 0; i < 100; i += 1) {
    const dumps = readdirSync(out)
      .filter((f) => f.startsWith(`json-send.${process.pid}.`))
      .sort((a, b) => Number(a.split('.').at(-1)) - Number(b.split('.').at(-1)));
    const last = dumps.at(-1);
    const total = last && /^totals: (\d+)/m.exec(readFileSync(`${out}/${last}`, 'utf8'));
    if (total) return Number(total[1]);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no complete callgrind dump of this process in ${out}`);
}

/** A JSON object of about 292 KB: an update as an array of byte values. */
function message(): { update: number[] } {
  const update: number[] = [];
  let length = '{"update":[]}'.length;
  for (let i = 0; length < TARGET_BYTES; i += 1) {
    const n = (i * 131 + 7) % 256;
    update.push(n);
    length += String(n).length + 1;
  }
  return { update };
}

async function clients(url: string, count: number, version: string): Promise<void> {
  let bytes = 0;
  let want = 0;
  const sockets: WebSocket[] = [];
  for (let i = 0; i < count; i += 1) {
    const ws = new WebSocket(url, version === '1' ? ['pkg.v1'] : [], { maxPayload: 1 << 21 });
    ws.on('message', (data: Buffer) => {
      bytes += data.length;
      if (want > 0 && bytes >= want) {
        want = 0;
        process.send!('round');
      }
    });
    await once(ws, 'open');
    if (version === '1') ws.send(JSON.stringify({ event: '$hello', data: { v: 1 } }));
    sockets.push(ws);
  }
  process.on('message', (m: { expect: number } | 'exit') => {
    if (m === 'exit') {
      for (const ws of sockets) ws.terminate();
      process.exit(0);
    }
    bytes = 0;
    want = m.expect;
    process.send!('armed');
  });
  process.send!('ready');
}

interface Way {
  name: string;
  clients: number;
  version: 0 | 1;
  send(server: Server, ids: string[]): void;
}

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 100);
  const rounds = Number(process.argv[3] ?? 40);
  const data = message();
  const size = JSON.stringify({ event: 'doc', data }).length;
  const ways: Way[] = [
    { name: 'emit to one client', clients: 1, version: 0, send: (s, ids) => s.send(ids[0]!, 'doc', data) }, // prettier-ignore
    { name: `broadcast, ${count} version 0 clients`, clients: count, version: 0, send: (s) => s.broadcast('doc', data) }, // prettier-ignore
    { name: `broadcast, ${count} version 1 clients`, clients: count, version: 1, send: (s) => s.broadcast('doc', data) }, // prettier-ignore
  ];
  console.log(`${size} B of JSON per message, median of ${rounds} rounds\n`);
  if (INSTR) {
    console.log('| way | instructions per round (millions) |');
    console.log('| --- | ---: |');
  } else {
    console.log('| way | ms per round | server CPU ms per round |');
    console.log('| --- | ---: | ---: |');
  }
  for (const way of ways) {
    const server = new Server(
      new ServerConfig({
        host: '127.0.0.1',
        port: 0,
        heartbeat_interval: 0,
        shutdown_timeout: 100,
      }),
      undefined,
      undefined,
      undefined,
      new NullLogger(),
    );
    await server.run();
    const url = `ws://127.0.0.1:${server.getPort()}/`;
    const child = fork(process.argv[1]!, ['--clients', url, String(way.clients), String(way.version)], { stdio: 'inherit' }); // prettier-ignore
    const [ready] = (await once(child, 'message')) as [string];
    if (ready !== 'ready') throw new Error('the clients did not start');
    while (server.getAllClients().length < way.clients) await new Promise((r) => setTimeout(r, 10));
    const ids = server.getAllClients();
    const times: number[] = [];
    const cpus: number[] = [];
    for (let r = 0; r < rounds + WARMUP; r += 1) {
      if (INSTR && r === WARMUP) await callgrind('-z');
      const armed = once(child, 'message');
      // A version 1 receiver's copy carries `,"seq":n` (at most 20 bytes more).
      child.send({ expect: way.clients * size });
      await armed;
      const done = once(child, 'message');
      const start = process.hrtime.bigint();
      const cpu = process.cpuUsage();
      way.send(server, ids);
      await done;
      const used = process.cpuUsage(cpu);
      if (r < WARMUP) continue;
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
      cpus.push((used.user + used.system) / 1000);
    }
    times.sort((a, b) => a - b);
    cpus.sort((a, b) => a - b);
    const median = (xs: number[]): string => xs[Math.floor(xs.length / 2)]!.toFixed(2);
    if (INSTR) {
      await callgrind('-d');
      console.log(`| ${way.name} | ${((await lastDumpTotal()) / rounds / 1e6).toFixed(2)} |`);
    } else console.log(`| ${way.name} | ${median(times)} | ${median(cpus)} |`);
    child.send('exit');
    await once(child, 'exit');
    await server.close();
  }
}

if (process.argv[2] === '--clients') {
  void clients(process.argv[3]!, Number(process.argv[4]), process.argv[5]!);
} else {
  void main();
}
