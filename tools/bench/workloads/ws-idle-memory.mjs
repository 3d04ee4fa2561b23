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

/**
 * The second measure: `connections` clients connect with `concurrency` handshakes under way at
 * once (a connect storm), and the server's memory is read as soon as it holds all of them,
 * without collecting first, against a reading taken (after GC) before the storm.
 */
async function afterStorm(kind, server, { connections, concurrency }) {
  await closeAll(await connectMany(kind, server.port, 20, 20));
  await waitForCount(server, 0);
  const before = await server.mem();
  const clients = await connectMany(kind, server.port, connections, concurrency);
  try {
    await waitForCount(server, connections);
    const after = await server.memNow();
    const per1k = (key) => (((after[key] - before[key]) / connections) * 1000) / MiB;
    return { heap: per1k('heapUsed'), rss: per1k('rss') };
  } finally {
    await closeAll(clients);
  }
}

/** A row of MiB per 1,000 connections (`m`: heap or rss) against raw ws and socket.io. */
function memoryRow(res, label, m) {
  return {
    label,
    better: 'lower',
    digits: 2,
    values: Object.fromEntries(Object.entries(res).map(([k, v]) => [k, v[m]])),
    baseline: 'ws',
    peer: 'socket.io',
  };
}

const idleMemory = {
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
    const row = (label, m) => memoryRow(res, label, m);
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

const stormMemory = {
  name: 'ws-idle-storm',
  title: 'WS memory per 1,000 connections, right after a connect storm',
  order: 61,
  about:
    "BENCH_STORM_IDLE_CONNECTIONS clients connect with BENCH_STORM_IDLE_CONCURRENCY handshakes under way at once and stay idle; as soon as the server holds all of them it reports process.memoryUsage() without collecting first, against a reading after three full GCs before the storm; the deltas scaled to 1,000 connections (MiB). This is how an outside observer sees a server after a reconnect wave: the storm's garbage (upgrade requests, handshake buffers, parsers) is still in the heap and the pages it took are still resident, where ws-idle-memory collects and waits first.",
  limits:
    '@pkg/core defaults (heartbeat every 25 s with its timers, max_connections 10,000, handshake_timeout 10 s, per_message_deflate off); raw ws no heartbeat; socket.io defaults (ping every 25 s).',
  async run(ctx) {
    const connections = ctx.param('BENCH_STORM_IDLE_CONNECTIONS', 5000, 1000);
    const concurrency = ctx.param('BENCH_STORM_IDLE_CONCURRENCY', 200);
    const res = await ctx.series(['ws', 'pkg', 'socket.io'], (k, server) =>
      afterStorm(clientFor(k), server, { connections, concurrency }),
    );
    const row = (label, m) => memoryRow(res, label, m);
    return {
      rows: [
        row('JS heap per 1,000 connections, MiB (not collected)', 'heap'),
        row('RSS per 1,000 connections, MiB (not collected)', 'rss'),
      ],
    };
  },
};

export default [idleMemory, stormMemory];
