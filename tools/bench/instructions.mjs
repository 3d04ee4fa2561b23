// Counts the CPU instructions a server spends per operation, under valgrind's callgrind: a
// count, not a time, so it repeats from run to run whatever else the machine is doing, and a
// change of a few percent shows where throughput figures on a shared machine cannot. Run
// `pnpm build` first; needs valgrind (and callgrind_control, which comes with it).
//
//   node tools/bench/instructions.mjs [workload ...]
//
// workloads: http-get, http-param, http-post (server pkg against node:http), ws-echo,
// ws-echo-10 and ws-connect (pkg against ws); all of them when none is named. ws-echo-10 keeps
// 10 echoes in flight on its one WebSocket (written in one burst, all answers awaited, and
// again), counted per round trip: a client that pipelines, where a server can answer a
// connection's messages of one turn in one write. Each server runs under
// callgrind with the workload's bench settings (tools/bench/lib/limits.mjs); the load is one
// client doing one operation at a time (a request on one keep-alive connection, an echo on one
// WebSocket, a connection opened and closed), INSTR_WARMUP operations first (default 40,000, or
// 3,000 connections, so that the hot code is compiled before counting starts), then the counter is zeroed and INSTR_OPS operations
// (default 10,000, or 2,000 connections) are counted. One operation at a time means no batching: each operation pays
// its own event-loop turn, for every server alike. The table gives instructions per operation
// and the ratio of the library to its floor (lower is better), and how many of each count
// V8 spent compiling (a count should hold none: a server that runs for long compiles its hot
// code once, not per operation).
//
// INSTR_PKG_SERVER counts another build of the library's server (the absolute path of a
// server file speaking servers/control.mjs's protocol, such as an earlier dist/pkg.js
// bundled with its packages) in the library's place.
// INSTR_PKG_CONFIG (JSON) adds ServerConfig options to the library's server, to see what a
// setting costs (`{"request_id_header": null}`). INSTR_SERVERS picks the servers among
// `floor`, `pkg` and `peer` (Fastify for the HTTP workloads, socket.io for the WebSocket
// ones, driven over its own protocol on a plain WebSocket, or Fastify with @fastify/websocket
// with INSTR_WS_PEER=fastify-ws); default all three, so that
// "ahead of the peer" is checked on this stable measure too.
// INSTR_KEEP=1 keeps each callgrind dump and prints its path (callgrind_annotate shows the
// native functions; JIT-compiled code is unnamed). INSTR_PROFILE=1 runs Node with
// `--perf-basic-prof` and prints, after each server's count, where its instructions go: by
// layer (JavaScript of the server and its packages, Node's own JavaScript, V8's built-ins and
// regular expressions, native code) and the JavaScript functions with the most instructions
// per operation, callees included (lib/callgrind.mjs). INSTR_NODE_ARGS adds Node options.
// INSTR_SEMI_SPACE fixes V8's young generation of every server at that many megabytes per
// semi-space (default 4; 0 leaves V8 to size it by its own timing, which valgrind distorts:
// lib/young-generation.mjs).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { THROUGHPUT_PKG_CONFIG } from './lib/limits.mjs';
import { once, startServer } from './lib/proc.mjs';
import {
  compilingInstructions,
  heaviestFunctions,
  layerOf,
  readCallgrind,
  SERVER_CODE,
} from './lib/callgrind.mjs';
import { readSemiSpace, semiSpaceOptions } from './lib/young-generation.mjs';
import { echoBursts } from './lib/echo-burst.mjs';

const POST_BODY = '{"hello":"world","n":1}';

/**
 * The library's server: dist/pkg.js, or the file INSTR_PKG_SERVER names (an absolute path: a
 * bundle of another build, to count before and after in one run).
 */
const PKG_SERVER = process.env.INSTR_PKG_SERVER ?? 'pkg';
/** The peer of the WebSocket workloads: socket.io, or INSTR_WS_PEER (`fastify-ws`). */
const WS_PEER = process.env.INSTR_WS_PEER ?? 'socket.io';

const WORKLOADS = {
  'http-get': {
    floor: 'node:http',
    peer: 'fastify',
    op: (port, agent) => request(port, agent, 'GET', '/json'),
  },
  'http-param': {
    floor: 'node:http',
    peer: 'fastify',
    op: (port, agent) => request(port, agent, 'GET', '/users/42'),
  },
  'http-post': {
    floor: 'node:http',
    peer: 'fastify',
    op: (port, agent) => request(port, agent, 'POST', '/echo', POST_BODY),
  },
  'ws-echo': { floor: 'ws', peer: WS_PEER, ws: true, inflight: 1 },
  'ws-echo-10': { floor: 'ws', peer: WS_PEER, ws: true, inflight: 10 },
  'ws-connect': { floor: 'ws', peer: WS_PEER, ws: true },
};

/**
 * Operations before counting, so that the window holds no compilation: 40,000 (3,000
 * connections, each of which costs as much as a hundred echoes). After 10,000, V8 was still
 * optimising parts of the library's echo and POST paths (functions called once per message
 * or once per body, and the cold path of fairness) inside the window, 2-3k instructions per
 * operation that a long-running server pays once.
 */
const WARMUP = { operations: 40000, connections: 3000 };
/**
 * Operations counted: 10,000 (2,000 connections). With 2,000 requests the library's counts
 * fell in two modes about 15 % apart, as a major collection landed in the window or not;
 * with 10,000 they stay within about 4 %.
 */
const COUNTED = { operations: 10000, connections: 2000 };
/** `defaults`' figure for a workload: connections for ws-connect, operations for the rest. */
const defaultOf = (defaults, name) =>
  name === 'ws-connect' ? defaults.connections : defaults.operations;
/** The defaults as the report's heading says them. */
const describeDefaults = (defaults) =>
  `${defaults.operations.toLocaleString('en')} operations (${defaults.connections.toLocaleString('en')} connections)`;
const warmupOf = (name) => Number(process.env.INSTR_WARMUP ?? defaultOf(WARMUP, name));
const countedOf = (name) => Number(process.env.INSTR_OPS ?? defaultOf(COUNTED, name));
const names = process.argv.slice(2);
for (const name of names) {
  if (!WORKLOADS[name]) {
    process.stderr.write(`unknown workload ${name}: one of ${Object.keys(WORKLOADS).join(', ')}\n`);
    process.exit(2);
  }
}
/** Megabytes per semi-space every server runs with; 0 when V8 sizes it. */
let semiSpace;
try {
  semiSpace = readSemiSpace(process.env.INSTR_SEMI_SPACE);
} catch (err) {
  process.stderr.write(`${err.message}\n`);
  process.exit(2);
}
const youngGeneration = semiSpaceOptions(semiSpace);
for (const tool of ['valgrind', 'callgrind_control']) {
  const probe = spawnSync(tool, ['--version'], { encoding: 'utf8' });
  if (probe.error) {
    process.stderr.write(`${tool} is not installed (Debian: apt-get install valgrind)\n`);
    process.exit(2);
  }
}

/**
 * One request on the keep-alive agent. A request written on a kept socket just as the server
 * closed it for idleness (a race the slowness under valgrind makes likely when the machine is
 * loaded: `node:http` closes after 5 s) is sent once more, on a new connection.
 */
function request(port, agent, method, target, body, retried = false) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: target,
        agent,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
      },
      (res) => {
        res.resume();
        res.once('end', () =>
          res.statusCode === 200
            ? resolve()
            : reject(new Error(`${method} ${target} answered ${res.statusCode}`)),
        );
      },
    );
    req.once('error', (err) => {
      if (!retried && req.reusedSocket && err.code === 'ECONNRESET') {
        resolve(request(port, agent, method, target, body, true));
      } else reject(err);
    });
    req.end(body);
  });
}

/**
 * socket.io's framing over a plain WebSocket (Engine.IO 4): the client answers the server's
 * pings ('2' with '3'), joins the default namespace ('40') and sends and receives events as
 * '42' followed by a JSON array, so the same loop drives it as the other servers.
 */
const SOCKET_IO_PATH = '/socket.io/?EIO=4&transport=websocket';

async function openSocket(port, serverName) {
  const socketIo = serverName === 'socket.io';
  const socket = new WebSocket(`ws://127.0.0.1:${port}${socketIo ? SOCKET_IO_PATH : '/'}`);
  if (!socketIo) {
    await once(socket, 'open');
    return socket;
  }
  const joined = new Promise((resolve, reject) => {
    socket.on('message', (data) => {
      const text = data.toString();
      if (text === '2') socket.send('3');
      else if (text.startsWith('0')) socket.send('40');
      else if (text.startsWith('40')) resolve();
      else if (text.startsWith('44')) reject(new Error(`socket.io refused: ${text}`));
    });
    socket.once('error', reject);
  });
  await joined;
  return socket;
}

/** Runs `count` operations of `name`, one at a time. */
async function drive(name, port, count, state, serverName) {
  const workload = WORKLOADS[name];
  if (workload.op) {
    state.agent ??= new http.Agent({ keepAlive: true, maxSockets: 1 });
    for (let i = 0; i < count; i++) await workload.op(port, state.agent);
    return;
  }
  if (name === 'ws-connect') {
    for (let i = 0; i < count; i++) {
      const socket = await openSocket(port, serverName);
      const closed = once(socket, 'close');
      socket.close();
      await closed;
    }
    return;
  }
  state.socket ??= await openSocket(port, serverName);
  const data = { n: 1, text: 'hello' };
  const message =
    serverName === 'socket.io'
      ? `42${JSON.stringify(['echo', data])}`
      : JSON.stringify({ event: 'echo', data });
  await echoBursts(state.socket, message, count, workload.inflight);
}

function callgrind(pid, command) {
  const result = spawnSync('callgrind_control', [command, String(pid)], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`callgrind_control ${command} failed: ${result.stderr}`);
}

/** Instructions per operation of one server under one workload. */
async function measure(name, serverName) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pkg-instructions-'));
  const server = await startServer(serverName === 'pkg' ? PKG_SERVER : serverName, {
    pkgConfig: {
      ...(WORKLOADS[name].ws ? THROUGHPUT_PKG_CONFIG : { heartbeat_interval: 0 }),
      ...JSON.parse(process.env.INSTR_PKG_CONFIG ?? '{}'),
    },
    nodeArgs: [
      // V8 also writes a log of code events with the map; keep it with the dump, not in the
      // working directory.
      ...(profiling ? ['--perf-basic-prof', `--logfile=${path.join(dir, 'v8.log')}`] : []),
      ...youngGeneration,
      ...(process.env.INSTR_NODE_ARGS ?? '').split(' ').filter(Boolean),
    ],
    launcher: [
      'valgrind',
      '--tool=callgrind',
      '--smc-check=all-non-file',
      `--log-file=${path.join(dir, 'valgrind.log')}`,
      `--callgrind-out-file=${path.join(dir, 'callgrind.out')}`,
    ],
  });
  const state = {};
  const counted = countedOf(name);
  try {
    await drive(name, server.port, warmupOf(name), state, serverName);
    callgrind(server.child.pid, '-z');
    await drive(name, server.port, counted, state, serverName);
    callgrind(server.child.pid, '-d');
  } finally {
    state.agent?.destroy();
    state.socket?.terminate();
    await server.stop();
  }
  const dump = fs
    .readdirSync(dir)
    .filter((f) => f.startsWith('callgrind.out.'))
    .sort()
    .at(-1);
  if (dump === undefined) throw new Error(`callgrind wrote no dump in ${dir}`);
  const perfMap = path.join(os.tmpdir(), `perf-${server.child.pid}.map`);
  const profile = readCallgrind(path.join(dir, dump), profiling ? perfMap : undefined);
  const total = profile.summary;
  if (!Number.isFinite(total)) throw new Error(`no total in ${path.join(dir, dump)}`);
  const compiling = compilingInstructions(profile) / counted;
  if (profiling) {
    profiles.push({ name, serverName, ...describeProfile(profile, counted) });
    if (process.env.INSTR_KEEP === '1') process.stderr.write(`${serverName}: ${perfMap}\n`);
    else fs.rmSync(perfMap, { force: true });
  }
  if (process.env.INSTR_KEEP === '1')
    process.stderr.write(`${serverName}: ${path.join(dir, dump)}\n`);
  else fs.rmSync(dir, { recursive: true, force: true });
  return { perOp: total / counted, compiling };
}

/** Where the counted instructions went: by layer, and the heaviest JavaScript functions. */
function describeProfile(profile, counted) {
  const layers = new Map();
  for (const [fn, own] of profile.self) {
    const layer = layerOf(fn);
    layers.set(layer, (layers.get(layer) ?? 0) + own / counted);
  }
  return {
    layers: [...layers].sort((a, b) => b[1] - a[1]),
    functions: heaviestFunctions(profile, SERVER_CODE, counted),
  };
}

function printProfile({ name, serverName, layers, functions }) {
  const out = [`\n## ${name} on ${serverName}: where the instructions go (per operation)\n`];
  out.push('| layer | instructions |', '|---|---|');
  for (const [layer, n] of layers) out.push(`| ${layer} | ${fmt(n)} |`);
  out.push(
    '',
    'JavaScript functions of the server and its packages, callees included (inlined ones count in their caller):',
    '',
  );
  for (const fn of functions) {
    out.push(`- ${fmt(fn.inclusive)} (own ${fmt(fn.self)}) ${fn.name}`);
    for (const callee of fn.callees) out.push(`  - ${fmt(callee.inclusive)} ${callee.name}`);
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

const profiling = process.env.INSTR_PROFILE === '1';
const profiles = [];
const servers = new Set((process.env.INSTR_SERVERS ?? 'floor,pkg,peer').split(','));
const fmt = (n) => (Number.isNaN(n) ? '—' : Math.round(n).toLocaleString('en'));
const ratio = (a, b) => (Number.isNaN(a) || Number.isNaN(b) ? '—' : (a / b).toFixed(2));
const rows = [];
process.stdout.write(
  `# Instructions per operation (callgrind; ${process.env.INSTR_OPS ?? describeDefaults(COUNTED)} counted, one at a time, after a warm-up of ${process.env.INSTR_WARMUP ?? describeDefaults(WARMUP)}; ${semiSpace === 0 ? 'young generation sized by V8' : `young generation fixed at ${semiSpace} MB per semi-space`}; in brackets, how many of them V8 spent compiling)\n\n`,
);
process.stdout.write(
  '| workload | floor | floor instr/op | @pkg/core instr/op | ratio | peer instr/op | peer / floor |\n|---|---|---|---|---|---|---|\n',
);
const NONE = { perOp: Number.NaN, compiling: Number.NaN };
const cell = (m) => (Number.isNaN(m.perOp) ? '—' : `${fmt(m.perOp)} (${fmt(m.compiling)})`);
for (const name of names.length > 0 ? names : Object.keys(WORKLOADS)) {
  const { floor, peer } = WORKLOADS[name];
  const base = servers.has('floor') ? await measure(name, floor) : NONE;
  const pkg = servers.has('pkg') ? await measure(name, 'pkg') : NONE;
  const other = servers.has('peer') && peer !== undefined ? await measure(name, peer) : NONE;
  rows.push({
    name,
    floor,
    base: base.perOp,
    baseCompiling: base.compiling,
    pkg: pkg.perOp,
    pkgCompiling: pkg.compiling,
    peer,
    other: other.perOp,
    otherCompiling: other.compiling,
    semiSpace: semiSpace === 0 ? null : semiSpace,
  });
  process.stdout.write(
    `| ${name} | ${floor} | ${cell(base)} | ${cell(pkg)} | ${ratio(pkg.perOp, base.perOp)} | ${peer === undefined ? '—' : `${cell(other)} (${peer})`} | ${ratio(other.perOp, base.perOp)} |\n`,
  );
}
if (process.env.BENCH_JSON) fs.writeFileSync(process.env.BENCH_JSON, JSON.stringify(rows, null, 2));
for (const profile of profiles) printProfile(profile);
