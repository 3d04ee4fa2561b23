// WS echo: round trips per second, every client keeping one `{event, data}` message in flight
// for BENCH_SECONDS (`ws-echo`), or BENCH_ECHO_INFLIGHT of them (`ws-echo-10`: a client that
// pipelines, where answers to one connection in one turn can leave in one write).
import { THROUGHPUT_LIMITS, THROUGHPUT_PKG_CONFIG } from '../lib/limits.mjs';
import { clientFor } from '../lib/clients.mjs';
import { measureEcho } from '../lib/measure.mjs';

const SERVERS = ['ws', 'pkg', 'fastify-ws', 'socket.io'];

function echoWorkload({ name, title, order, inflight }) {
  return {
    name,
    title,
    order,
    about: `Round trips per second: each client keeps ${inflight === undefined ? 'one `{event: "echo", data}` message' : 'BENCH_ECHO_INFLIGHT `{event: "echo", data}` messages'} in flight and the server sends each back; counted after BENCH_WARMUP seconds of the same loop. Peers: socket.io, and Fastify with @fastify/websocket (its last two rows).`,
    limits: `${THROUGHPUT_LIMITS} (max_message_size 1 MiB, max_connections 10,000); raw ws and @fastify/websocket maxPayload 1 MiB; socket.io defaults.`,
    async run(ctx) {
      const clients = ctx.param('BENCH_ECHO_CLIENTS', 50);
      const n = inflight === undefined ? 1 : ctx.param('BENCH_ECHO_INFLIGHT', inflight);
      const res = await ctx.series(
        SERVERS,
        (k, server) =>
          measureEcho(clientFor(k), server, {
            clients,
            seconds: ctx.seconds,
            warmup: ctx.warmup,
            inflight: n,
          }),
        { pkgConfig: THROUGHPUT_PKG_CONFIG },
      );
      const rows = (peer) =>
        ctx.rateAndCpuRows(res, { rate: 'round trips/s', op: 'round trip', baseline: 'ws', peer });
      return { rows: [...rows('socket.io'), ...rows('fastify-ws')] };
    },
  };
}

export default [
  echoWorkload({ name: 'ws-echo', title: 'WS echo', order: 10 }),
  echoWorkload({ name: 'ws-echo-10', title: 'WS echo, 10 in flight', order: 11, inflight: 10 }),
];
