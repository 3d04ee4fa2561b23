// wrk for the HTTP workloads: a load generator in C, so that on a machine where the load
// shares the cores with the server it takes far less of them than autocannon (which runs in
// Node). When wrk is missing it is installed with Debian's apt-get (as root, or through
// `sudo -n`); when that fails too, the workloads fall back to autocannon and say so.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

let available;

function run(command, args) {
  const asRoot = typeof process.getuid !== 'function' || process.getuid() === 0;
  const [cmd, argv] = asRoot ? [command, args] : ['sudo', ['-n', command, ...args]];
  const result = spawnSync(cmd, argv, {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  return !result.error && result.status === 0;
}

const hasWrk = () => !spawnSync('wrk', ['--version'], { encoding: 'utf8' }).error;

/**
 * True when wrk can run: when it is missing, runs `apt-get update` and `apt-get install -y
 * wrk` once (waiting up to five minutes for another apt process's lock). BENCH_HTTP_LOAD=
 * autocannon skips it.
 */
export function ensureWrk() {
  if (available !== undefined) return available;
  if (process.env.BENCH_HTTP_LOAD === 'autocannon') return (available = false);
  if (hasWrk()) return (available = true);
  process.stderr.write('wrk is missing: installing it with apt-get\n');
  const lockWait = ['-o', 'DPkg::Lock::Timeout=300'];
  available =
    run('apt-get', [...lockWait, 'update']) &&
    run('apt-get', [...lockWait, 'install', '-y', '--no-install-recommends', 'wrk']) &&
    hasWrk();
  if (!available) process.stderr.write('wrk could not be installed: using autocannon\n');
  return available;
}

/**
 * The Lua script of one load: the method, headers and body of every request, and
 * `pipelining` requests written together (wrk's own way of pipelining).
 */
function script({ method, headers, body, pipelining }) {
  const lua = [`wrk.method = ${JSON.stringify(method)}`];
  for (const [name, value] of Object.entries(headers ?? {})) {
    lua.push(`wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`);
  }
  if (body !== undefined) lua.push(`wrk.body = ${JSON.stringify(body)}`);
  if (pipelining > 1) {
    lua.push(
      'local batch',
      `init = function(args) local r = {} for i = 1, ${pipelining} do r[i] = wrk.format() end batch = table.concat(r) end`,
      'request = function() return batch end',
    );
  }
  return `${lua.join('\n')}\n`;
}

/** The figures wrk prints: requests/s, total, non-2xx answers, socket errors and timeouts. */
export function parseWrk(text) {
  const number = (re) => {
    const m = re.exec(text);
    return m === null ? 0 : Number(m[1]);
  };
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  return {
    rate: number(/Requests\/sec:\s+([\d.]+)/),
    total: number(/(\d+) requests in /),
    non2xx: number(/Non-2xx or 3xx responses: (\d+)/),
    errors: errors === null ? 0 : Number(errors[1]) + Number(errors[2]) + Number(errors[3]),
    timeouts: errors === null ? 0 : Number(errors[4]),
  };
}

/**
 * One wrk run of `duration` seconds over `connections` keep-alive connections, from one
 * thread (the load generator has one core).
 */
export async function wrk({ url, method, headers, body, connections, pipelining, duration }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pkg-wrk-'));
  const file = path.join(dir, 'load.lua');
  fs.writeFileSync(file, script({ method, headers, body, pipelining }));
  try {
    const child = spawn(
      'wrk',
      ['-t1', `-c${connections}`, `-d${duration}s`, '--timeout', '10s', '-s', file, url],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => (out += chunk));
    const code = await new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
    if (code !== 0) throw new Error(`wrk exited with ${code}: ${out}`);
    const result = parseWrk(out);
    if (result.total === 0) throw new Error(`wrk answered nothing readable: ${out}`);
    return result;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
