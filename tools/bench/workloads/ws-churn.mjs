// Connection churn across two instances: clients in one room lose their socket at random
// while broadcasts go on, come back, and recover what they missed. @pkg/core with
// @pkg/redis-adapter (room history in Redis Streams, recovery through join_room.since, on
// the other instance) side by side with socket.io with @socket.io/redis-streams-adapter and
// connection state recovery (its client reconnects to the instance it left), same run, same
// Redis. Also the cost of history: deliveries/s and CPU per delivery with history on and off.
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { PkgClient, SocketIoClient } from '../lib/churn-clients.mjs';
import { BroadcastLoop } from '../lib/broadcast-loop.mjs';
import { closeAll, connectMany } from '../lib/clients.mjs';
import { sleep, within } from '../lib/proc.mjs';
import { startRedis } from '../lib/redis.mjs';
import { median, percentile } from '../lib/stats.mjs';
import { waitForCount } from '../lib/wait.mjs';

const servers = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'servers');
const FILES = {
  pkg: path.join(servers, 'pkg-redis.mjs'),
  'socket.io': path.join(servers, 'socketio-redis-streams.mjs'),
};
const HISTORY = [{ match: 'churn', size: 100, ttl: 300_000 }];

/** One churn run of `kind`: delivered fraction, lateness of missed messages, recovery time. */
async function churn(ctx, kind, url, { clients: n, seconds, rate, killEvery }) {
  const env = { BENCH_REDIS_URL: url };
  const pkgConfig = { heartbeat_interval: 0, history: HISTORY };
  const pair = [];
  const clients = [];
  let published = 0;
  const publishedAt = new Map(); // seq -> time
  let measuring = false;
  let firstSeq = Infinity;
  let lastSeq = 0;
  const missedLate = []; // receipt - publish, ms, of messages published while the client was away
  const recoveryTimes = []; // kill -> up again, ms
  let duplicates = 0;
  const hooks = {
    tick(client, data) {
      const now = performance.now();
      client.seen ??= new Set();
      if (client.seen.has(data.seq)) duplicates += 1;
      client.seen.add(data.seq);
      if (client.awayFrom !== undefined && data.t >= client.awayFrom && data.t <= client.awayTo) {
        missedLate.push(now - data.t);
      }
    },
    up(client) {
      if (client.killedAt !== undefined) {
        recoveryTimes.push(performance.now() - client.killedAt);
        client.awayFrom = client.killedAt;
        client.awayTo = performance.now();
        client.killedAt = undefined;
      }
    },
  };
  try {
    for (let i = 0; i < 2; i++) {
      pair.push(await ctx.startServer(FILES[kind], { pkgConfig, env }));
    }
    const ports = pair.map((s) => s.port);
    const Client = kind === 'pkg' ? PkgClient : SocketIoClient;
    for (let i = 0; i < n; i++) clients.push(new Client(ports, i, hooks));
    await Promise.all(clients.map((c) => c.open()));
    await sleep(300);
    const send = () => {
      published += 1;
      const order = { seq: published, t: performance.now() };
      publishedAt.set(published, order.t);
      if (measuring) {
        firstSeq = Math.min(firstSeq, published);
        lastSeq = published;
      }
      pair[published % 2].child.stdin.write(`R ${JSON.stringify(order)}\n`);
    };
    // Warm-up: every client holds a position before sockets start dying.
    for (let i = 0; i < 5; i++) {
      send();
      await sleep(1000 / rate);
    }
    await sleep(300);
    measuring = true;
    let kills = 0;
    const end = performance.now() + seconds * 1000;
    const broadcasts = setInterval(send, 1000 / rate);
    const killer = setInterval(() => {
      const up = clients.filter((c) => c.up);
      const victim = up[Math.floor(Math.random() * up.length)];
      if (!victim) return;
      victim.killedAt = performance.now();
      kills += 1;
      victim.kill();
    }, killEvery);
    await sleep(end - performance.now());
    clearInterval(killer);
    clearInterval(broadcasts);
    measuring = false;
    // Everybody back and settled (bounded).
    await within(
      (async () => {
        while (!clients.every((c) => c.up)) await sleep(50);
        await sleep(1000);
      })(),
      20_000,
      null,
    );
    let expected = 0;
    let got = 0;
    for (const c of clients) {
      for (let seq = firstSeq; seq <= lastSeq; seq++) {
        expected += 1;
        if (c.seen?.has(seq)) got += 1;
      }
    }
    return {
      delivered: (100 * got) / Math.max(1, expected),
      missedP99: percentile(missedLate, 99),
      recoveryP99: percentile(recoveryTimes, 99),
      kills,
      gaps: clients.reduce((sum, c) => sum + c.gaps, 0),
      duplicates,
      notBack: clients.filter((c) => !c.up).length,
    };
  } finally {
    for (const c of clients) c.close?.();
    await sleep(100);
    await Promise.all(pair.map((s) => s.stop()));
  }
}

/**
 * The cost of history: two @pkg/core instances, `clients` clients in room `churn` split
 * over them, broadcasts to the room ordered on the instances in turn with at most
 * `inflight` not yet delivered everywhere; history on (Redis Streams) or off.
 */
async function cost(ctx, url, history, { clients: n, seconds, inflight }) {
  const env = { BENCH_REDIS_URL: url, BENCH_HISTORY: history ? '1' : '0' };
  const pkgConfig = { heartbeat_interval: 0, ...(history ? { history: HISTORY } : {}) };
  const pair = [];
  let clients = [];
  try {
    for (let i = 0; i < 2; i++) pair.push(await ctx.startServer(FILES.pkg, { pkgConfig, env }));
    const halves = await Promise.all(
      pair.map((s, i) => connectMany('ws', s.port, Math.ceil((n - i) / 2))),
    );
    clients = halves.flat();
    await Promise.all(pair.map((s, i) => waitForCount(s, halves[i].length)));
    let joined = 0;
    await new Promise((resolve) => {
      for (const c of clients) {
        c.on('room_joined', () => ++joined === clients.length && resolve());
        c.send('join_room', { room: 'churn' });
      }
    });
    await sleep(500);
    let deliveries = 0;
    let counting = false;
    const loop = new BroadcastLoop({
      inflight,
      expected: () => clients.length,
      send: (seq) =>
        pair[seq % 2].child.stdin.write(`R ${JSON.stringify({ seq, text: 'hello room' })}\n`),
      lost: (n) => `history ${history ? 'on' : 'off'}: ${n} broadcast(s) lost`,
    });
    for (const c of clients) {
      c.on('tick', (data) => {
        if (counting) deliveries += 1;
        loop.delivered(data.seq);
      });
    }
    await loop.run(500);
    const cpu0 = await Promise.all(pair.map((s) => s.cpu()));
    counting = true;
    const t0 = performance.now();
    await loop.run(seconds * 1000);
    const elapsed = (performance.now() - t0) / 1000;
    counting = false;
    const cpu1 = await Promise.all(pair.map((s) => s.cpu()));
    const cpu = cpu1.reduce((sum, v, i) => sum + v - cpu0[i], 0);
    return { rate: deliveries / elapsed, cpu: cpu / Math.max(1, deliveries) };
  } finally {
    await closeAll(clients);
    await Promise.all(pair.map((s) => s.stop()));
  }
}

const fmt = (v, digits) => (Number.isFinite(v) ? v.toFixed(digits) : '—');

export default {
  name: 'ws-churn',
  title: 'Connection churn across two instances, with recovery',
  order: 75,
  about:
    'Two server processes share one Redis; BENCH_CHURN_CLIENTS clients in one room split over them; BENCH_CHURN_RATE broadcasts/s to the room, ordered on the two instances in turn; every BENCH_CHURN_KILL_MS ms a random connected client loses its TCP connection (terminated without a close frame) and reconnects after 100 ms with recovery, for BENCH_CHURN_SECONDS. Delivered: the share of (client, broadcast) pairs of the timed part that reached the client (target 100 %). Missed-message lateness: publish to receipt of the messages published while a client was away (its replay). Recovery time: from the kill to the client being back in the room. @pkg/core clients speak protocol version 1, drop a position seen before, and come back on the OTHER instance (join_room.since); socket.io clients (its own client, WebSocket transport) come back on the same instance with connectionStateRecovery. Then the cost of history: deliveries/s and server CPU per delivery of room broadcasts (200 clients in the room over both instances, BENCH_CHURN_COST_INFLIGHT broadcasts in flight, BENCH_SECONDS, median of BENCH_ROUNDS) with history on and off.',
  limits:
    "@pkg/core: heartbeat_interval 0, history [{match: 'churn', size: 100, ttl: 300000}], RedisAdapter defaults (history in Redis Streams). socket.io: WebSocket transport only, @socket.io/redis-streams-adapter defaults (maxLen 10000), connectionStateRecovery maxDisconnectionDuration 120 s. Both instances on the server core; Redis inherits the load generator's core.",
  async run(ctx) {
    const settings = {
      clients: ctx.param('BENCH_CHURN_CLIENTS', 200, 50),
      seconds: ctx.param('BENCH_CHURN_SECONDS', 10, 3),
      rate: ctx.param('BENCH_CHURN_RATE', 20),
      killEvery: ctx.param('BENCH_CHURN_KILL_MS', 100),
    };
    const costSettings = {
      clients: settings.clients,
      seconds: ctx.seconds,
      // Enough in flight that throughput, not one broadcast's latency, is measured.
      inflight: ctx.param('BENCH_CHURN_COST_INFLIGHT', 64),
    };
    const redis = await startRedis();
    const res = {};
    const costs = { on: [], off: [] };
    try {
      for (const kind of ['pkg', 'socket.io']) {
        ctx.log(`churn: ${kind}`);
        res[kind] = await churn(ctx, kind, redis.url, settings);
      }
      for (let r = 0; r < ctx.rounds; r++) {
        for (const h of r % 2 === 0 ? ['on', 'off'] : ['off', 'on']) {
          ctx.log(`cost round ${r + 1}/${ctx.rounds}: history ${h}`);
          costs[h].push(await cost(ctx, redis.url, h === 'on', costSettings));
        }
      }
    } finally {
      await redis.stop();
    }
    const m = (h, k) => median(costs[h].map((s) => s[k]));
    const on = { rate: m('on', 'rate'), cpu: m('on', 'cpu') };
    const off = { rate: m('off', 'rate'), cpu: m('off', 'cpu') };
    const row = (label, key, digits) => [
      label,
      fmt(res.pkg[key], digits),
      fmt(res['socket.io'][key], digits),
    ];
    return {
      tables: [
        {
          columns: [
            'churn',
            '@pkg/core (history in Redis Streams)',
            'socket.io + redis-streams-adapter',
          ],
          rows: [
            row('delivered, %', 'delivered', 2),
            row('missed-message lateness p99, ms', 'missedP99', 1),
            row('recovery time p99, ms', 'recoveryP99', 1),
            row('sockets killed', 'kills', 0),
            row('recoveries that reported a gap', 'gaps', 0),
            row('duplicates handed on', 'duplicates', 0),
            row('clients not back at the end', 'notBack', 0),
          ],
        },
        {
          columns: [
            'cost of history (@pkg/core, two instances)',
            'history on',
            'history off',
            'on / off',
          ],
          rows: [
            [
              'deliveries/s (higher is better)',
              fmt(on.rate, 0),
              fmt(off.rate, 0),
              fmt(on.rate / off.rate, 2),
            ],
            [
              'server CPU per delivery (both instances), µs',
              fmt(on.cpu, 2),
              fmt(off.cpu, 2),
              fmt(on.cpu / off.cpu, 2),
            ],
          ],
        },
      ],
      notes: [`Redis: ${redis.text}.`],
    };
  },
};
