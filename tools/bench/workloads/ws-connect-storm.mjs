// WS connect storm: how fast the server accepts new WebSocket connections.
import { clientFor, closeAll, connectMany } from '../lib/clients.mjs';
import { secondsSince } from '../lib/stats.mjs';
import { waitForCount } from '../lib/wait.mjs';

async function storm(kind, server, { connections, concurrency, warmup }) {
  // Warm-up, not counted: the same storm, opened and closed, again until `warmup` seconds
  // have passed (at least 20 connections once): the first connections run in V8's
  // interpreter while the accept path is compiled, which is start-up, not the steady cost.
  const warmUntil = process.hrtime.bigint() + BigInt(Math.round(warmup * 1e9));
  do {
    const n = warmup > 0 ? connections : 20;
    await closeAll(await connectMany(kind, server.port, n, Math.min(n, concurrency)));
    await waitForCount(server, 0);
  } while (process.hrtime.bigint() < warmUntil);
  const cpu0 = await server.cpu();
  const t0 = process.hrtime.bigint();
  const clients = await connectMany(kind, server.port, connections, concurrency);
  const elapsed = secondsSince(t0);
  await closeAll(clients);
  await waitForCount(server, 0);
  const cpu1 = await server.cpu();
  return { rate: connections / elapsed, cpu: (cpu1 - cpu0) / connections };
}

export default {
  name: 'ws-connect-storm',
  title: 'WS connect storm',
  order: 50,
  about:
    'Connections per second: BENCH_STORM_CONNECTIONS clients open as fast as they can with BENCH_STORM_CONCURRENCY handshakes under way at once (each done at `open` for ws, at `connect` for socket.io, whose handshake includes its namespace packet); the clock stops when the last is open. Then all close. Server CPU per connection covers open and close, until the server holds none. Before the clock, the same storm opens and closes for BENCH_WARMUP seconds (at least once).',
  limits:
    "@pkg/core defaults (max_connections 10,000, handshake_timeout 10 s, heartbeat every 25 s, per_message_deflate off); raw ws no limits, no heartbeat; socket.io defaults. The server's listen backlog is Node's (511).",
  async run(ctx) {
    const connections = ctx.param('BENCH_STORM_CONNECTIONS', 2000, 500);
    const concurrency = ctx.param('BENCH_STORM_CONCURRENCY', 100);
    const res = await ctx.series(['ws', 'pkg', 'socket.io'], (k, server) =>
      storm(clientFor(k), server, { connections, concurrency, warmup: ctx.warmup }),
    );
    return {
      rows: ctx.rateAndCpuRows(res, {
        rate: 'connections/s',
        op: 'connection',
        baseline: 'ws',
        peer: 'socket.io',
      }),
    };
  },
};
