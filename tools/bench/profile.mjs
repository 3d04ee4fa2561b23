// Profiles one server under one workload with V8's sampling profiler and prints where its CPU
// time goes: by layer (the library's packages, ws, Node's own code, garbage collection) and the
// functions with the most self time. Run `pnpm build` first.
//
//   node tools/bench/profile.mjs <workload> [server] [seconds]
//
// workload: http-get | http-param | http-post | http-get-pipelined | http-post-pipelined |
//           ws-echo | ws-connect | ws-connect-storm
// server:   pkg (default) | node:http | ws | fastify | socket.io
// The server runs pinned like in run.mjs, with the same settings as the workload's
// (tools/bench/lib/limits.mjs), under `--cpu-prof`; PROFILE_KEEP=1 keeps the .cpuprofile
// (its path is printed) for Chrome DevTools.
import autocannon from 'autocannon';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { closeAll, clientFor, connect, connectMany } from './lib/clients.mjs';
import { waitForCount } from './lib/wait.mjs';
import { THROUGHPUT_PKG_CONFIG } from './lib/limits.mjs';
import { measureEcho } from './lib/measure.mjs';
import { setUpPinning, startServer, usePinning } from './lib/proc.mjs';

const WORKLOADS = {
  'http-get': { kind: 'http', path: '/json' },
  'http-param': { kind: 'http', path: '/users/42' },
  'http-post': { kind: 'http', path: '/echo', method: 'POST', body: '{"hello":"world","n":1}' },
  'http-get-pipelined': { kind: 'http', path: '/json', pipelining: 10 },
  'http-post-pipelined': {
    kind: 'http',
    path: '/echo',
    method: 'POST',
    body: '{"hello":"world","n":1}',
    pipelining: 10,
  },
  'ws-echo': { kind: 'echo' },
  'ws-connect': { kind: 'connect' },
  // The bench's storm: library defaults, 2,000 opened with 100 under way, then all closed.
  'ws-connect-storm': { kind: 'storm', connections: 2000, concurrency: 100 },
};

const [name, serverName = 'pkg', secondsText = '5'] = process.argv.slice(2);
const workload = WORKLOADS[name];
if (!workload) {
  process.stderr.write(
    `usage: node tools/bench/profile.mjs <${Object.keys(WORKLOADS).join('|')}> [server] [seconds]\n`,
  );
  process.exit(2);
}
const seconds = Number(secondsText);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pkg-profile-'));
usePinning(setUpPinning());

const pkgConfig =
  workload.kind === 'http'
    ? { heartbeat_interval: 0 }
    : workload.kind === 'storm'
      ? {}
      : THROUGHPUT_PKG_CONFIG;
const server = await startServer(serverName, {
  pkgConfig,
  nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=200'],
});

let ops = 0;
const cpu0 = await server.cpu();
if (workload.kind === 'http') {
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}${workload.path}`,
    method: workload.method ?? 'GET',
    headers: workload.body ? { 'content-type': 'application/json' } : undefined,
    body: workload.body,
    connections: 50,
    pipelining: workload.pipelining ?? 1,
    duration: seconds,
  });
  ops = result.requests.total;
} else if (workload.kind === 'echo') {
  const kind = clientFor(serverName === 'pkg' ? 'ws' : serverName);
  const res = await measureEcho(kind, server, { clients: 50, seconds });
  ops = Math.round(res.rate * seconds);
} else if (workload.kind === 'storm') {
  const kind = clientFor(serverName === 'pkg' ? 'ws' : serverName);
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    const clients = await connectMany(
      kind,
      server.port,
      workload.connections,
      workload.concurrency,
    );
    ops += clients.length;
    await closeAll(clients);
    await waitForCount(server, 0);
  }
} else {
  const kind = clientFor(serverName === 'pkg' ? 'ws' : serverName);
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    const batch = await Promise.all(Array.from({ length: 100 }, () => connect(kind, server.port)));
    ops += batch.length;
    await closeAll(batch);
  }
}
const cpu1 = await server.cpu();
server.child.kill('SIGTERM');
await server.exit;

const file = fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
if (!file) throw new Error(`no profile written in ${dir}`);
const profile = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));

/** The layer a function belongs to, from its script's URL. */
function layer(url, fn) {
  if (fn === '(garbage collector)') return 'gc';
  if (fn === '(idle)') return 'idle';
  if (fn === '(program)') return 'program (native, outside JS)';
  if (url === '' || url.startsWith('node:')) return 'node';
  const pkg = url.match(/packages\/([a-z-]+)\//);
  if (pkg) return `@pkg/${pkg[1]}`;
  const dep = url.match(/node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/);
  if (dep) return dep[1];
  return 'bench server';
}

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const deltas = profile.timeDeltas;
for (let i = 0; i < profile.samples.length; i++) {
  const node = byId.get(profile.samples[i]);
  self.set(node, (self.get(node) ?? 0) + (deltas[i] ?? 0));
}
const layers = new Map();
const fns = new Map();
let busy = 0;
for (const [node, us] of self) {
  const { url, functionName, lineNumber } = node.callFrame;
  const l = layer(url, functionName);
  if (l === 'idle') continue;
  busy += us;
  layers.set(l, (layers.get(l) ?? 0) + us);
  const key = `${functionName || '(anonymous)'} ${l === 'node' || l === 'gc' ? url || '' : `${path.basename(url)}:${lineNumber + 1}`} [${l}]`;
  fns.set(key, (fns.get(key) ?? 0) + us);
}

const pct = (us) => `${((100 * us) / busy).toFixed(1)} %`;
const perOp = (us) => (ops ? `${(us / ops).toFixed(2)} µs/op` : '');
const out = [];
out.push(`# ${name} on ${serverName}: ${ops} operations in ${seconds} s`);
out.push(`server CPU ${((cpu1 - cpu0) / Math.max(ops, 1)).toFixed(2)} µs/op (process.cpuUsage)`);
out.push('');
out.push('## Self time by layer (sampled, idle excluded)');
for (const [l, us] of [...layers].sort((a, b) => b[1] - a[1])) {
  out.push(`${pct(us).padStart(7)}  ${perOp(us).padStart(14)}  ${l}`);
}
out.push('');
out.push('## Functions with the most self time');
for (const [k, us] of [...fns]
  .sort((a, b) => b[1] - a[1])
  .slice(0, Number(process.env.PROFILE_TOP ?? 30))) {
  out.push(`${pct(us).padStart(7)}  ${k}`);
}
process.stdout.write(`${out.join('\n')}\n`);
if (process.env.PROFILE_KEEP === '1') process.stdout.write(`profile: ${path.join(dir, file)}\n`);
else fs.rmSync(dir, { recursive: true, force: true });
process.exit(0);
