// `node dist/cluster.js`: the demo under node:cluster, WORKERS processes sharing one port.
// Each worker is a full demo instance (runCli); with REDIS_URL set they share broadcasts,
// rooms, counts and rate limits through Redis. A worker that dies is replaced; SIGINT /
// SIGTERM reach every worker, which closes gracefully, and the primary exits after them.
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { runCli } from './cli';

/** How many workers: `WORKERS`, default the number of CPUs. */
export function workerCount(env: Readonly<Record<string, string | undefined>>): number {
  const raw = env['WORKERS']?.trim();
  if (raw === undefined || raw === '') return availableParallelism();
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 256) {
    throw new Error(`WORKERS must be a whole number from 1 to 256 (got "${raw}").`);
  }
  return n;
}

if (cluster.isPrimary) {
  const count = workerCount(process.env);
  if (!process.env['REDIS_URL']) {
    console.warn(
      'REDIS_URL is not set: each worker keeps its own rooms and broadcasts. Set it to share them.',
    );
  }
  let stopping = false;
  for (let i = 0; i < count; i++) cluster.fork();
  cluster.on('exit', (worker, code) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    console.error(`worker ${worker.process.pid} exited with ${code}; starting another`);
    cluster.fork();
  });
  const stop = (): void => {
    stopping = true;
    // Workers get the signal from the terminal's process group too; send it for the other cases.
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  console.log(`Demo primary ${process.pid}: ${count} workers`);
} else {
  runCli(process.env).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
