// The cost of observability: the same WS echo and HTTP GET against @pkg/core four ways, in
// turn within each round: request ids off (`request_id_header: null`, metrics off), the
// defaults (an HTTP request id, no log scope, metrics off), the log scope on (`log_context`),
// and metrics on (`metrics_path`, prom-client loaded, every call site recording). Reported as operations/s and the server's
// CPU time per operation, each against the first.
import { THROUGHPUT_LIMITS, THROUGHPUT_PKG_CONFIG } from '../lib/limits.mjs';
import { clientFor } from '../lib/clients.mjs';
import { measureEcho, measureGet } from '../lib/measure.mjs';
import { median } from '../lib/stats.mjs';

const VARIANTS = [
  ['off', 'ids off, metrics off', { request_id_header: null }],
  ['ids', 'defaults: request ids on, no log scope, metrics off', {}],
  ['scope', 'request ids and the log scope (log_context) on', { log_context: true }],
  ['metrics', 'defaults and metrics on', { metrics_path: '/metrics' }],
];

function workload(name, title, order, op, measure, params) {
  return {
    name,
    title,
    order,
    about: `The cost of request ids and metrics on ${op === 'round trip' ? 'WS echo (`ws-echo`)' : 'HTTP GET (`http-get`)'}: @pkg/core four ways, in turn within each round.`,
    limits: THROUGHPUT_LIMITS,
    async run(ctx) {
      const settings = params(ctx);
      const samples = Object.fromEntries(VARIANTS.map(([key]) => [key, []]));
      for (let r = 0; r < ctx.rounds; r++) {
        for (const [key, , config] of VARIANTS) {
          ctx.log(`round ${r + 1}/${ctx.rounds}: ${key}`);
          const server = await ctx.startServer('pkg', {
            pkgConfig: { ...THROUGHPUT_PKG_CONFIG, ...config },
          });
          try {
            samples[key].push(await measure(server, { ...settings, seconds: ctx.seconds }));
          } finally {
            await server.stop();
          }
        }
      }
      const med = (key, m) => median(samples[key].map((s) => s[m]));
      const base = { rate: med('off', 'rate'), cpu: med('off', 'cpu') };
      return {
        tables: [
          {
            columns: ['variant', `${op}s/s`, `server CPU per ${op}, µs`, 'ops/s vs off', 'CPU vs off'], // prettier-ignore
            rows: VARIANTS.map(([key, label]) => [
              label,
              med(key, 'rate').toFixed(0),
              med(key, 'cpu').toFixed(2),
              (med(key, 'rate') / base.rate).toFixed(3),
              (med(key, 'cpu') / base.cpu).toFixed(3),
            ]),
          },
        ],
      };
    },
  };
}

export default [
  workload(
    'observability-ws-echo',
    'Observability cost, WS echo',
    90,
    'round trip',
    (server, settings) => measureEcho(clientFor('pkg'), server, settings),
    (ctx) => ({
      clients: ctx.param('BENCH_ECHO_CLIENTS', 50),
    }),
  ),
  workload(
    'observability-http-get',
    'Observability cost, HTTP GET',
    91,
    'request',
    measureGet,
    (ctx) => ({
      connections: ctx.param('BENCH_HTTP_CONNECTIONS', 50),
    }),
  ),
];
