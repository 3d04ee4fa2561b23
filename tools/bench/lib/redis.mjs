// The Redis the cross-instance workloads share: a private redis-server on a free port when
// one is installed, else the one the environment names.
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { once, within } from './proc.mjs';

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A private redis-server on a free port (no persistence) when `redis-server` is installed,
 * so that no other user of the machine's Redis weighs on the figures; else BENCH_REDIS_URL
 * or REDIS_URL (default redis://127.0.0.1:6379).
 */
export async function startRedis() {
  if (spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status !== 0) {
    const url = process.env.BENCH_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
    return { url, text: `${url} (redis-server not installed)`, stop: async () => {} };
  }
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  child.stdout.setEncoding('utf8');
  let out = '';
  const ready = new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('Ready to accept connections')) resolve(true);
    });
    child.once('exit', () => reject(new Error(`redis-server exited at start:\n${out}`)));
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
  };
  if (!(await within(ready, 10_000, false))) {
    await stop();
    throw new Error('redis-server did not start within 10 s');
  }
  child.stdout.resume();
  return { url: `redis://127.0.0.1:${port}`, text: `a private redis-server on port ${port}`, stop };
}
