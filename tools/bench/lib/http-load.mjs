// HTTP workloads from wrk (autocannon when wrk cannot be installed) against the three HTTP
// servers, which all define the same routes (GET /json, GET /users/{id}, POST /echo).
import autocannon from 'autocannon';
import { ensureWrk, wrk } from './wrk.mjs';

const LIMITS =
  '@pkg/core with heartbeat_interval 0, other settings default (max_body_size 1 MiB, keep_alive_timeout 5 s, max_connections 10,000); node:http with Node defaults; Fastify defaults (bodyLimit 1 MiB).';

/**
 * One route, as two workloads: `name` (one request at a time per connection) and
 * `name-pipelined` (BENCH_PIPELINING requests in flight per connection).
 */
export function httpWorkloads({ name, title, order, about, request }) {
  const make = (pipelined) => ({
    name: pipelined ? `${name}-pipelined` : name,
    title: pipelined ? `${title}, pipelined` : title,
    order: order + (pipelined ? 1 : 0),
    about: `${about} Requests/s from wrk (autocannon when wrk is missing and cannot be installed; the table's notes say which ran) over BENCH_HTTP_CONNECTIONS keep-alive connections${pipelined ? ', BENCH_PIPELINING requests pipelined on each' : ', one request at a time on each'}, counted after BENCH_WARMUP seconds of the same load.`,
    limits: LIMITS,
    async run(ctx) {
      const connections = ctx.param('BENCH_HTTP_CONNECTIONS', 50);
      const pipelining = pipelined ? ctx.param('BENCH_PIPELINING', 10) : 1;
      const res = await ctx.series(
        ['node:http', 'pkg', 'fastify'],
        async (_k, server) => {
          const load = {
            url: `http://127.0.0.1:${server.port}${request.path}`,
            method: request.method ?? 'GET',
            headers: request.body ? { 'content-type': 'application/json' } : undefined,
            body: request.body,
            connections,
            pipelining,
          };
          const viaWrk = ensureWrk();
          const drive = async (duration) => {
            if (viaWrk) return wrk({ ...load, duration });
            const r = await autocannon({ ...load, duration });
            return { rate: r.requests.average, total: r.requests.total, non2xx: r.non2xx, errors: r.errors, timeouts: r.timeouts }; // prettier-ignore
          };
          // The same load for BENCH_WARMUP seconds first, not counted.
          if (ctx.warmup > 0) await drive(ctx.warmup);
          const before = await server.cpu();
          const result = await drive(ctx.seconds);
          const after = await server.cpu();
          if (result.non2xx || result.errors || result.timeouts) {
            throw new Error(
              `${server.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors, ${result.timeouts} timeouts`,
            );
          }
          return { rate: result.rate, cpu: (after - before) / result.total };
        },
        { pkgConfig: { heartbeat_interval: 0 } },
      );
      return {
        notes: [
          `Load generator: ${ensureWrk() ? 'wrk, one thread' : 'autocannon (wrk unavailable)'}.`,
        ],
        rows: ctx.rateAndCpuRows(res, {
          rate: 'requests/s',
          op: 'request',
          baseline: 'node:http',
          peer: 'fastify',
        }),
      };
    },
  });
  return [make(false), make(true)];
}
