// Child processes for the bench: the servers (pinned to their own core when possible) and
// helper clients, all speaking a line protocol on stdin/stdout (see servers/control.mjs).
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..');

/** Every server the workloads can start, by name. */
export const SERVERS = {
  pkg: path.join(root, 'dist', 'pkg.js'),
  ws: path.join(root, 'servers', 'ws.mjs'),
  'socket.io': path.join(root, 'servers', 'socketio.mjs'),
  'node:http': path.join(root, 'servers', 'http.mjs'),
  fastify: path.join(root, 'servers', 'fastify.mjs'),
  'fastify-ws': path.join(root, 'servers', 'fastify-ws.mjs'),
};

/** Display names in the tables. */
export const LABELS = { pkg: '@pkg/core', 'fastify-ws': 'Fastify + @fastify/websocket' };

function parseCpuList(text) {
  const cpus = [];
  for (const part of text.trim().split(',')) {
    const [a, b] = part.split('-').map(Number);
    if (Number.isInteger(a)) for (let c = a; c <= (Number.isInteger(b) ? b : a); c++) cpus.push(c);
  }
  return cpus;
}

/**
 * Decides the pinning once: with `taskset` and at least two usable cores, this process (the
 * load generator, and every client process it starts) goes on the first allowed CPU and each
 * server on the second. BENCH_PIN=0 turns it off.
 */
export function setUpPinning() {
  const cores = os.availableParallelism?.() ?? os.cpus().length;
  const off = (why) => ({ cores, pinned: false, text: `not pinned (${why})` });
  if (process.env.BENCH_PIN === '0') return off('BENCH_PIN=0');
  if (cores < 2) return off(`${cores} core`);
  const query = spawnSync('taskset', ['-cp', String(process.pid)], { encoding: 'utf8' });
  if (query.error || query.status !== 0) return off('taskset not available');
  const allowed = parseCpuList(query.stdout.split(':').pop() ?? '');
  if (allowed.length < 2) return off(`only CPU ${allowed.join(',')} allowed`);
  const [load, server] = allowed;
  const set = spawnSync('taskset', ['-a', '-cp', String(load), String(process.pid)], {
    encoding: 'utf8',
  });
  if (set.error || set.status !== 0) return off('taskset could not set the affinity');
  return {
    cores,
    pinned: true,
    load,
    server,
    text: `server on CPU ${server}, load generator on CPU ${load} (taskset; ${cores} cores)`,
  };
}

let pinning = { pinned: false, text: 'not pinned' };
export function usePinning(p) {
  pinning = p;
}

/**
 * Starts a child that speaks lines: `next(prefix)` resolves with the next line starting
 * with `prefix`, `send(line)` writes one line to its stdin.
 */
export function spawnLines(command, args, { env, name = command, pin = false } = {}) {
  const [cmd, argv] =
    pin && pinning.pinned
      ? ['taskset', ['-c', String(pinning.server), command, ...args]]
      : [command, args];
  const child = spawn(cmd, argv, {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  const lines = [];
  const waiters = [];
  let buf = '';
  let exited = false;
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const i = waiters.findIndex((w) => line.startsWith(w.prefix));
      if (i >= 0) waiters.splice(i, 1)[0].resolve(line);
      else lines.push(line);
    }
  });
  child.stdin.on('error', () => {}); // the child may be gone when we write
  const exit = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      exited = true;
      for (const w of waiters.splice(0)) w.reject(new Error(`${name} exited (${code ?? signal})`));
      resolve({ code, signal });
    }),
  );
  const next = (prefix) =>
    new Promise((resolve, reject) => {
      const i = lines.findIndex((l) => l.startsWith(prefix));
      if (i >= 0) return resolve(lines.splice(i, 1)[0]);
      if (exited) return reject(new Error(`${name} exited`));
      waiters.push({ prefix, resolve, reject });
    });
  const send = (line) => {
    if (!exited) child.stdin.write(`${line}\n`);
  };
  return { child, next, send, exit, isRunning: () => !exited };
}

/**
 * Starts one bench server in its own process (pinned, with --expose-gc) and waits for its
 * `PORT` line. `name` is one of SERVERS or the path of a server file that speaks the same
 * protocol (servers/control.mjs). `pkgConfig` is handed to the @pkg/core server as its
 * ServerConfig options; `env` and `args` go to the process as they are, `nodeArgs` to Node
 * (before the script). `launcher` is a command line that runs Node (`['valgrind', ...]`);
 * the child's pid is then the launcher's.
 */
export async function startServer(
  name,
  { pkgConfig, env = {}, args = [], nodeArgs = [], launcher = [] } = {},
) {
  const file = SERVERS[name] ?? (path.isAbsolute(name) ? name : undefined);
  if (!file)
    throw new Error(
      `unknown server ${name}: one of ${Object.keys(SERVERS).join(', ')}, or an absolute path`,
    );
  const argv = [process.execPath, '--expose-gc', ...nodeArgs, file, ...args];
  const [command, ...rest] = [...launcher, ...argv];
  const proc = spawnLines(command, rest, {
    name,
    pin: true,
    env: { BENCH_PKG_CONFIG: JSON.stringify(pkgConfig ?? {}), ...env },
  });
  const port = Number((await proc.next('PORT ')).slice(5));
  const ask = async (cmd, prefix) => {
    proc.send(cmd);
    return (await proc.next(prefix)).slice(prefix.length);
  };
  return {
    name,
    port,
    child: proc.child,
    exit: proc.exit,
    /** The server's CPU time so far, µs. */
    cpu: async () => Number(await ask('cpu', 'CPU ')),
    /** process.memoryUsage() after full GCs. */
    mem: async () => JSON.parse(await ask('mem', 'MEM ')),
    /** process.memoryUsage() as it is, without collecting first. */
    memNow: async () => JSON.parse(await ask('memnow', 'MEM ')),
    /** Writes a heap snapshot (after full GCs) to `file`; resolves with its path. */
    snapshot: async (file) => ask(`snapshot ${file}`, 'SNAPSHOT '),
    /** WebSocket connections held now. */
    count: async () => Number(await ask('count', 'COUNT ')),
    stop: async () => {
      if (proc.isRunning()) proc.child.kill('SIGKILL');
      await proc.exit;
    },
  };
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves with `promise`, or with `fallback` after `ms`. */
export function within(promise, ms, fallback) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((resolve) => {
      timer = setTimeout(() => resolve(fallback), ms);
    }),
  ]);
}

export { once };
