// WS echo: round trips per second, every client keeping one `{event, data}` message in
// flight for BENCH_SECONDS.
import { THROUGHPUT_LIMITS, THROUGHPUT_PKG_CONFIG } from '../lib/limits.mjs';
import { clientFor, closeAll, connectMany } from '../lib/clients.mjs';
import { secondsSince } from '../lib/stats.mjs';

async function echo(kind, server, { clients: n, seconds }) {
  const clients = await connectMany(kind, server.port, n);
  let count = 0;
  let running = true;
  const payload = { text: 'hello', n: 1 };
  const done = clients.map(
    (c) =>
      new Promise((resolve) => {
        c.on('echo', () => {
          count++;
          if (running) c.send('echo', payload);
          else resolve();
        });
        c.send('echo', payload);
      }),
  );
  const cpu0 = await server.cpu();
  const t0 = process.hrtime.bigint();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  running = false;
  const elapsed = secondsSince(t0);
  const cpu1 = await server.cpu();
  await Promise.race([Promise.all(done), new Promise((r) => setTimeout(r, 2000))]);
  await closeAll(clients);
  return { rate: count / elapsed, cpu: (cpu1 - cpu0) / count };
}

export default {
  name: 'ws-echo',
  title: 'WS echo',
  order: 10,
  about:
    'Round trips per second: each client keeps one `{event: "echo", data}` message in flight and the server sends it back.',
  limits: `${THROUGHPUT_LIMITS} (max_message_size 1 MiB, max_connections 10,000); raw ws maxPayload 1 MiB; socket.io defaults.`,
  async run(ctx) {
    const clients = ctx.param('BENCH_ECHO_CLIENTS', 50);
    const res = await ctx.series(
      ['ws', 'pkg', 'socket.io'],
      (k, server) => echo(clientFor(k), server, { clients, seconds: ctx.seconds }),
      { pkgConfig: THROUGHPUT_PKG_CONFIG },
    );
    return {
      rows: ctx.rateAndCpuRows(res, {
        rate: 'round trips/s',
        op: 'round trip',
        baseline: 'ws',
        peer: 'socket.io',
      }),
    };
  },
};
