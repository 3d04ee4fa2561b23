// The cost of observability: the same WS echo and HTTP GET against @pkg/core four ways, in
// turn within each round: request ids off (`request_id_header: null`, metrics off), the
// defaults (an HTTP request id, no log scope, metrics off), the log scope on (`log_context`),
// and metrics on (`metrics_path`, prom-client loaded, every call site recording). Reported as operations/s and the server's
// CPU time per operation, each against the first.
import autocannon from 'autocannon';
import { THROUGHPUT_LIMITS, THROUGHPUT_PKG_CONFIG } from '../lib/limits.mjs';
import { clientFor, closeAll, connectMany } from '../lib/clients.mjs';
import { median, secondsSince } from '../lib/stats.mjs';

const VARIANTS = [
  ['off', 'ids off, metrics off', { request_id_header: null }],
  ['ids', 'defaults: request ids on, no log scope, metrics off', {}],
  ['scope', 'request ids and the log scope (log_context) on', { log_context: true }],
  ['metrics', 'defaults and metrics on', { metrics_path: '/metrics' }],
];

async function echo(server, { clients: n, seconds }) {
  const clients = await connectMany(clientFor('pkg'), server.port, n);
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

async function get(server, { connections, seconds }) {
  const before = await server.cpu();
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}/json`,
    connections,
    duration: seconds,
  });
  const after = await server.cpu();
  if (result.non2xx || result.errors || result.timeouts) {
    throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors, ${result.timeouts} timeouts`); // prettier-ignore
  }
  return { rate: result.requests.average, cpu: (after - before) / result.requests.total };
}

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
    echo,
    (ctx) => ({
      clients: ctx.param('BENCH_ECHO_CLIENTS', 50),
    }),
  ),
  workload('observability-http-get', 'Observability cost, HTTP GET', 91, 'request', get, (ctx) => ({
    connections: ctx.param('BENCH_HTTP_CONNECTIONS', 50),
  })),
];
