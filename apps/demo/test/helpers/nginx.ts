// nginx (Debian's package) in front of demo instances, with the config of
// apps/demo/deploy/nginx.conf (ports rewritten, files in a temporary folder). Installed with
// apt-get when missing and the test runs as root; under CI=true a missing nginx or Redis
// fails the file instead of skipping it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { buildSync } from 'esbuild';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

function which(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** nginx, installed with apt-get when missing and we may (root); null when it cannot be had. */
export function findNginx(): string | null {
  const paths = ['/usr/sbin/nginx', '/usr/bin/nginx'];
  const found = (): string | null => paths.find((p) => spawnSync(p, ['-v']).status === 0) ?? null;
  if (found()) return found();
  if (process.getuid?.() === 0 && which('apt-get')) {
    spawnSync(
      'sh',
      ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx'],
      { stdio: 'ignore', timeout: 180_000 },
    );
  }
  return found();
}

/** Whether Redis answers at 127.0.0.1:6379 (checked synchronously, at load time). */
export function redisAnswers(): boolean {
  const probe = spawnSync(process.execPath, [
    '-e',
    "const s=require('net').connect(6379,'127.0.0.1',()=>s.write('PING\\r\\n'));s.setTimeout(1000,()=>process.exit(1));s.on('error',()=>process.exit(1));s.on('data',d=>process.exit(String(d).startsWith('+PONG')?0:1));",
  ]);
  return probe.status === 0;
}

/**
 * Whether an end-to-end suite behind nginx can run: true with nginx and Redis; under
 * CI=true a missing one throws; otherwise a notice is printed and false returned.
 */
export function nginxSuiteAvailable(suite: string): { nginx: string | null; ok: boolean } {
  const nginx = findNginx();
  const redis = redisAnswers();
  if ((!nginx || !redis) && process.env['CI'] === 'true') {
    throw new Error(
      `${suite}: ${nginx ? 'Redis at 127.0.0.1:6379 is unreachable' : 'nginx could not be installed'}, and CI=true requires it.`,
    );
  }
  if (!nginx || !redis) {
    console.warn(
      `${suite}: skipped, ${nginx ? 'no Redis at 127.0.0.1:6379' : 'nginx is not installed (run as root to let the test install it)'}.`,
    );
  }
  return { nginx, ok: nginx !== null && redis };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Polls `check` every 20 ms; fails after `limitMs` naming what it waited for. */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  what: string,
  limitMs = 10_000,
): Promise<void> {
  const end = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface RunningNginx {
  readonly port: number;
  readonly dir: string;
  stop(): Promise<void>;
}

/** Starts nginx with deploy/nginx.conf in front of the two instance ports. */
export async function startNginx(
  nginx: string,
  upstreams: [number, number],
): Promise<RunningNginx> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'pkg-nginx-'));
  chmodSync(dir, 0o777); // nginx workers run as an unprivileged user
  const template = readFileSync(path.join(__dirname, '..', '..', 'deploy', 'nginx.conf'), 'utf8');
  const config = template
    .replace('listen 8080;', `listen 127.0.0.1:${port};`)
    .replace('server 127.0.0.1:6001', `server 127.0.0.1:${upstreams[0]}`)
    .replace('server 127.0.0.1:6002', `server 127.0.0.1:${upstreams[1]}`)
    .replace('worker_processes auto;', 'worker_processes 1;')
    .replace(
      'http {',
      [
        'client_body_temp_path',
        'proxy_temp_path',
        'fastcgi_temp_path',
        'uwsgi_temp_path',
        'scgi_temp_path',
      ]
        .map((d) => `${d} ${dir}/${d};`)
        .reduce((text, line) => `${text}\n    ${line}`, 'http {'),
    )
    .replace('/var/log/nginx/pkg-demo.access.log', `${dir}/access.log`);
  writeFileSync(path.join(dir, 'nginx.conf'), config);
  const proxy: ChildProcess = spawn(
    nginx,
    [
      '-p',
      dir,
      '-c',
      path.join(dir, 'nginx.conf'),
      '-g',
      `daemon off; pid ${dir}/nginx.pid; error_log ${dir}/error.log;`,
    ],
    { stdio: 'ignore' },
  );
  await waitUntil(() => portOpen(port), 'nginx to listen');
  return {
    port,
    dir,
    async stop() {
      if (proxy.exitCode === null) {
        const exited = new Promise((r) => proxy.once('exit', r));
        proxy.kill('SIGQUIT');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** test/fixtures/instance.ts bundled (from the sources) into `dir`; returns the script. */
export function bundleInstance(dir: string): string {
  const outfile = path.join(dir, 'instance.cjs');
  buildSync({
    entryPoints: [path.join(__dirname, '..', 'fixtures', 'instance.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    conditions: ['source'],
    external: ['bufferutil', 'utf-8-validate'],
    logLevel: 'error',
  });
  return outfile;
}

export interface InstanceProcess {
  readonly port: number;
  /** SIGTERM (a graceful close, as a deploy sends), resolved once the process exited. */
  stop(): Promise<void>;
}

/** Starts a bundled demo instance in its own process with `options` (DemoConfig). */
export async function startInstance(
  script: string,
  options: Record<string, unknown>,
): Promise<InstanceProcess> {
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, DEMO_INSTANCE: JSON.stringify(options) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /PORT (\d+)/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`demo instance exited with ${code}`)));
  });
  return {
    port,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
