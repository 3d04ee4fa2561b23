// The cost of request ids and metrics in CPU time per operation, measured in one process
// with nothing else in it: `server.inject()` GETs and WebSocket echoes over `server.connect()`
// (an in-memory connection, no kernel sockets), so the figure is the library's own work,
// client side included. One variant per process: once any AsyncLocalStorage scope has run,
// Node 20 keeps its promise hooks on for the whole process.
//
//   node tools/bench/observability-cpu.mjs <off|ids|scope|metrics> <http|ws> <operations>
//
// prints `<variant> <workload> <operations> <CPU µs per operation>`. Run it under
// `valgrind --tool=callgrind` with two operation counts to get instructions per operation
// that the machine's load does not change (see README.md).
import { Server, ServerConfig, NullLogger, Response } from '@pkg/core';

const [variant = 'off', workload = 'http', countText = '5000'] = process.argv.slice(2);
const count = Number(countText);
const VARIANTS = {
  off: { request_id_header: null },
  ids: {},
  scope: { log_context: true },
  metrics: { metrics_path: '/metrics' },
};
if (!(variant in VARIANTS) || !['http', 'ws'].includes(workload) || !(count >= 0)) {
  console.error('usage: observability-cpu.mjs <off|ids|scope|metrics> <http|ws> <operations>');
  process.exit(2);
}

const server = new Server(
  new ServerConfig({
    port: 0,
    heartbeat_interval: 0,
    ws_max_messages_per_second: 1_000_000,
    ws_max_bytes_per_second: 1_000_000_000,
    ...VARIANTS[variant],
  }),
  undefined,
  undefined,
  undefined,
  new NullLogger(),
);
server.route('GET', '/json', () => Response.json({ hello: 'world' }));
server.on('echo', function (clientId, data) {
  this.emit(clientId, 'echo', data);
});

async function http(n) {
  for (let i = 0; i < n; i += 1) {
    const res = await server.inject({ method: 'GET', url: '/json' });
    if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
  }
}

async function ws(n) {
  const client = await server.connect();
  const text = JSON.stringify({ event: 'echo', data: { text: 'hello', n: 1 } });
  let next;
  client.on('message', () => next());
  for (let i = 0; i < n; i += 1) {
    await new Promise((resolve) => {
      next = resolve;
      client.send(text);
    });
  }
  client.close();
}

const run = workload === 'http' ? http : ws;
await run(Math.min(500, count)); // warm-up (JIT), not measured
const before = process.cpuUsage();
await run(count);
const used = process.cpuUsage(before);
console.log(`${variant} ${workload} ${count} ${((used.user + used.system) / count).toFixed(2)}`);
await server.close();
