// WS fan-out to 5,000 clients: the broadcast path at a size where per-client costs show.
import { clientFor } from '../lib/clients.mjs';
import { fanout } from '../lib/fanout.mjs';

export default {
  name: 'ws-fanout-5k',
  title: 'WS broadcast fan-out to 5,000 clients',
  order: 30,
  about:
    'Deliveries per second: BENCH_FANOUT_BIG_CLIENTS clients (connected 100 at a time, before the clock starts), one of them sends BENCH_FANOUT_BIG_ROUNDS `fanout` events at once, each broadcast as `tick` to every client. Raw ws is a plain `for (const c of wss.clients) c.send(text)` loop.',
  limits:
    '@pkg/core defaults (max_connections 10,000, max_buffered_amount 4 MiB, heartbeat every 25 s, inbound budget 100 messages/s with bursts of 200: the 20 triggers fit); raw ws maxPayload 1 MiB, no heartbeat; socket.io defaults (ping every 25 s). The clients live in the runner process (5,000 descriptors, under the 20,000 limit).',
  async run(ctx) {
    const clients = ctx.param('BENCH_FANOUT_BIG_CLIENTS', 5000, 1000);
    const rounds = ctx.param('BENCH_FANOUT_BIG_ROUNDS', 20, 5);
    const res = await ctx.series(['ws', 'pkg', 'socket.io'], (k, server) =>
      fanout(clientFor(k), server, { clients, rounds, timeoutMs: 120_000 }),
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
