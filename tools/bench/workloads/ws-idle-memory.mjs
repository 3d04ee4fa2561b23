// Idle memory per 1,000 WebSocket connections, measured inside the server after GC.
import { clientFor, closeAll, connectMany } from '../lib/clients.mjs';
import { sleep } from '../lib/proc.mjs';
import { waitForCount } from '../lib/wait.mjs';

const MiB = 1024 * 1024;

async function idle(kind, server, { connections }) {
  await closeAll(await connectMany(kind, server.port, 20, 20));
  await waitForCount(server, 0);
  const before = await server.mem();
  const clients = await connectMany(kind, server.port, connections, 100);
  try {
    await waitForCount(server, connections);
    await sleep(500);
    const after = await server.mem();
    const per1k = (key) => (((after[key] - before[key]) / connections) * 1000) / MiB;
    return { heap: per1k('heapUsed'), rss: per1k('rss') };
  } finally {
    await closeAll(clients);
  }
}

export default {
  name: 'ws-idle-memory',
  title: 'WS idle memory per 1,000 connections',
  order: 60,
  about:
    'BENCH_IDLE_CONNECTIONS clients connect and stay idle; the server reports process.memoryUsage() after three full GCs (started with --expose-gc) before and after, and the deltas are scaled to 1,000 connections (MiB). 20 connections are opened and closed first so that code loading is not counted.',
  limits:
    '@pkg/core defaults (heartbeat every 25 s with its timers, max_connections 10,000, per_message_deflate off); raw ws no heartbeat; socket.io defaults (ping every 25 s).',
  async run(ctx) {
    const connections = ctx.param('BENCH_IDLE_CONNECTIONS', 2000, 500);
    const res = await ctx.series(['ws', 'pkg', 'socket.io'], (k, server) =>
      idle(clientFor(k), server, { connections }),
    );
    const values = (m) => Object.fromEntries(Object.entries(res).map(([k, v]) => [k, v[m]]));
    const row = (label, m) => ({
      label,
      better: 'lower',
      digits: 2,
      values: values(m),
      baseline: 'ws',
      peer: 'socket.io',
    });
    return {
      rows: [
        row('JS heap per 1,000 connections, MiB', 'heap'),
        row('RSS per 1,000 connections, MiB', 'rss'),
      ],
      notes: [
        'RSS also holds kernel-independent socket buffers of Node and freed heap pages not returned to the system; the heap row is the steadier of the two.',
      ],
    };
  },
};
