// Cross-instance broadcast: two server processes share one Redis, the clients are split over
// the two, and broadcasts alternate between the instances, so half of every broadcast's
// deliveries cross Redis. @pkg/core with @pkg/redis-adapter side by side with socket.io with
// @socket.io/redis-adapter, in the same run, on the same Redis.
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { BroadcastLoop } from '../lib/broadcast-loop.mjs';
import { closeAll, connectMany } from '../lib/clients.mjs';
import { sleep } from '../lib/proc.mjs';
import { startRedis } from '../lib/redis.mjs';
import { median, percentile } from '../lib/stats.mjs';
import { waitForCount } from '../lib/wait.mjs';

const servers = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'servers');
const FILES = {
  pkg: path.join(servers, 'pkg-redis.mjs'),
  'socket.io': path.join(servers, 'socketio-redis.mjs'),
};

/**
 * One measurement: two instances of `kind`, `clients` clients split over them, broadcasts
 * ordered on the instances' stdin in turn with at most `inflight` not yet delivered to every
 * client. Latency runs from the order to a client's receipt (both in this process).
 */
async function measure(ctx, kind, url, { seconds, clients: n, inflight }) {
  const env = { BENCH_REDIS_URL: url };
  const pair = [];
  let clients = [];
  try {
    for (let i = 0; i < 2; i++) {
      pair.push(await ctx.startServer(FILES[kind], { pkgConfig: { heartbeat_interval: 0 }, env }));
    }
    const client = kind === 'socket.io' ? 'socket.io' : 'ws';
    const halves = await Promise.all(
      pair.map((s, i) => connectMany(client, s.port, Math.ceil((n - i) / 2))),
    );
    clients = halves.flat();
    await Promise.all(pair.map((s, i) => waitForCount(s, halves[i].length)));
    // Subscriptions (and socket.io's namespace sync) settle before the warm-up.
    await sleep(300);

    const latencies = [];
    let deliveries = 0;
    let measuring = false;
    const loop = new BroadcastLoop({
      inflight,
      expected: () => clients.length,
      send: (seq) => {
        const order = { seq, t: performance.now(), text: 'hello from the other instance' };
        pair[seq % 2].child.stdin.write(`B ${JSON.stringify(order)}\n`);
      },
      lost: (n) => `${kind}: ${n} broadcast(s) never reached every client (a delivery was lost)`,
    });
    const onTick = (data) => {
      if (measuring) {
        latencies.push(performance.now() - data.t);
        deliveries += 1;
      }
      loop.delivered(data.seq);
    };
    for (const c of clients) c.on('tick', onTick);

    await loop.run(500); // warm-up
    const cpu0 = await Promise.all(pair.map((s) => s.cpu()));
    measuring = true;
    const t0 = performance.now();
    await loop.run(seconds * 1000);
    const elapsed = (performance.now() - t0) / 1000;
    measuring = false;
    const cpu1 = await Promise.all(pair.map((s) => s.cpu()));
    const cpu = cpu1.reduce((sum, v, i) => sum + v - cpu0[i], 0);
    return {
      rate: deliveries / elapsed,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      cpu: cpu / Math.max(1, deliveries),
    };
  } finally {
    await closeAll(clients);
    await Promise.all(pair.map((s) => s.stop()));
  }
}

export default {
  name: 'cross-instance',
  title: 'Cross-instance broadcast over Redis',
  order: 70,
  about:
    'Two server processes share one Redis; BENCH_CROSS_CLIENTS clients are split over them; broadcasts of `tick` to every client are ordered on the two instances in turn (on stdin), at most BENCH_CROSS_INFLIGHT not yet delivered to every client, for BENCH_SECONDS after a 0.5 s warm-up. Deliveries/s, delivery latency from the order to the receipt (p50, p99), and the CPU µs of both servers together per delivery. The peer is socket.io with @socket.io/redis-adapter (node-redis clients).',
  limits:
    "@pkg/core with heartbeat_interval 0 and RedisAdapter defaults; socket.io with the WebSocket transport only and the adapter defaults. Both instances on the server core; Redis inherits the load generator's core (the runner's affinity).",
  async run(ctx) {
    const settings = {
      seconds: ctx.seconds,
      clients: ctx.param('BENCH_CROSS_CLIENTS', 200, 50),
      inflight: ctx.param('BENCH_CROSS_INFLIGHT', 8),
    };
    const redis = await startRedis();
    const samples = { pkg: [], 'socket.io': [] };
    try {
      for (let r = 0; r < ctx.rounds; r++) {
        // The two take turns, in alternating order, so drift in the machine's load spreads.
        for (const kind of r % 2 === 0 ? ['pkg', 'socket.io'] : ['socket.io', 'pkg']) {
          ctx.log(`round ${r + 1}/${ctx.rounds}: ${kind}`);
          samples[kind].push(await measure(ctx, kind, redis.url, settings));
        }
      }
    } finally {
      await redis.stop();
    }
    const res = Object.fromEntries(
      Object.entries(samples).map(([kind, list]) => [
        kind,
        Object.fromEntries(
          ['rate', 'p50', 'p99', 'cpu'].map((k) => [k, median(list.map((s) => s[k]))]),
        ),
      ]),
    );
    const values = (m) => ({ pkg: res.pkg[m], 'socket.io': res['socket.io'][m] });
    const row = (label, m, better, digits) => ({
      label,
      better,
      digits,
      values: values(m),
      peer: 'socket.io',
    });
    return {
      rows: [
        row('deliveries/s', 'rate', 'higher', 0),
        row('p50 delivery latency, ms', 'p50', 'lower', 1),
        row('p99 delivery latency, ms', 'p99', 'lower', 1),
        row('server CPU per delivery (both instances), µs', 'cpu', 'lower', 2),
      ],
      notes: [
        `Redis: ${redis.text}. The peer column is socket.io with @socket.io/redis-adapter; there is no baseline.`,
      ],
    };
  },
};
