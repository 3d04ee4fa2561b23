// WS broadcast: deliveries per second of broadcasts to a few hundred clients.
import { THROUGHPUT_LIMITS, THROUGHPUT_PKG_CONFIG } from '../lib/limits.mjs';
import { clientFor } from '../lib/clients.mjs';
import { fanout } from '../lib/fanout.mjs';

export default {
  name: 'ws-broadcast',
  title: 'WS broadcast',
  order: 20,
  about:
    'Deliveries per second: one client sends BENCH_FANOUT_ROUNDS `fanout` events at once; the server broadcasts each as `tick` to all BENCH_FANOUT_CLIENTS clients (raw ws: one JSON.stringify, then a `send` loop).',
  limits: `${THROUGHPUT_LIMITS} (max_buffered_amount 4 MiB); raw ws maxPayload 1 MiB; socket.io defaults.`,
  async run(ctx) {
    const clients = ctx.param('BENCH_FANOUT_CLIENTS', 200);
    const rounds = ctx.param('BENCH_FANOUT_ROUNDS', 300, 100);
    const res = await ctx.series(
      ['ws', 'pkg', 'socket.io'],
      (k, server) => fanout(clientFor(k), server, { clients, rounds }),
      { pkgConfig: THROUGHPUT_PKG_CONFIG },
    );
    return {
      rows: ctx.rateAndCpuRows(res, {
        rate: 'deliveries/s',
        op: 'delivery',
        baseline: 'ws',
        peer: 'socket.io',
      }),
    };
  },
};
