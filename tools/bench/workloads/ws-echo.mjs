// WS echo: round trips per second, every client keeping one `{event, data}` message in
// flight for BENCH_SECONDS.
import { THROUGHPUT_LIMITS, THROUGHPUT_PKG_CONFIG } from '../lib/limits.mjs';
import { clientFor } from '../lib/clients.mjs';
import { measureEcho } from '../lib/measure.mjs';

export default {
  name: 'ws-echo',
  title: 'WS echo',
  order: 10,
  about:
    'Round trips per second: each client keeps one `{event: "echo", data}` message in flight and the server sends it back; counted after BENCH_WARMUP seconds of the same loop.',
  limits: `${THROUGHPUT_LIMITS} (max_message_size 1 MiB, max_connections 10,000); raw ws maxPayload 1 MiB; socket.io defaults.`,
  async run(ctx) {
    const clients = ctx.param('BENCH_ECHO_CLIENTS', 50);
    const res = await ctx.series(
      ['ws', 'pkg', 'socket.io'],
      (k, server) =>
        measureEcho(clientFor(k), server, {
          clients,
          seconds: ctx.seconds,
          warmup: ctx.warmup,
        }),
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
