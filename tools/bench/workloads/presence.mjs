// Presence under a join storm: BENCH_PRESENCE_CLIENTS protocol version 1 clients, split over
// BENCH_PRESENCE_INSTANCES @pkg/core instances sharing one Redis, all join one room with
// presence at once. Measured: the time from the last join's answer until every member's
// view (its `$presence` state plus the `$presence_diff` joins) holds every member, the
// presence messages and bytes each member received for the whole storm, the Redis commands
// per join (INFO commandstats before and after), and the servers' CPU per join.
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { createClient } from 'redis';
import WebSocket from 'ws';
import { within } from '../lib/proc.mjs';
import { median } from '../lib/stats.mjs';
import { waitForCount } from '../lib/wait.mjs';
import { startRedis } from '../lib/redis.mjs';

const SERVER = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'servers',
  'pkg-presence.mjs',
);
const ROOM = 'storm';

/** One member: a version 1 connection that keeps a bitmap of the members it knows of. */
function member(port, index, ids, n, onEvent) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`, ['pkg.v1']);
  const m = {
    ws,
    index,
    id: undefined,
    seen: new Uint8Array(n),
    known: 0,
    messages: 0,
    bytes: 0,
    statsOnly: false,
    joinedAt: undefined,
    firstAt: undefined,
    completeAt: undefined,
    closed: new Promise((resolve) => ws.once('close', (code) => resolve((m.closeCode = code)))),
    closeCode: undefined,
  };
  const mark = (state, on) => {
    for (const entry of Object.values(state ?? {})) {
      for (const meta of entry?.metas ?? []) {
        const i = ids.get(meta.clientId);
        if (i === undefined || m.seen[i] === (on ? 1 : 0)) continue;
        m.seen[i] = on ? 1 : 0;
        m.known += on ? 1 : -1;
      }
    }
  };
  const welcomed = new Promise((resolve, reject) => {
    ws.once('error', reject);
    ws.on('message', (raw, isBinary) => {
      if (isBinary) return;
      const text = raw.toString();
      const msg = JSON.parse(text);
      if (msg.event === '$welcome') {
        m.id = msg.data.clientId;
        ids.set(m.id, index);
        resolve();
        return;
      }
      if (msg.event === '$presence' || msg.event === '$presence_diff') {
        m.messages += 1;
        m.firstAt ??= performance.now();
        m.bytes += Buffer.byteLength(text);
        if (msg.event === '$presence') {
          m.seen.fill(0);
          m.known = 0;
          if (msg.data.stats) m.statsOnly = true;
          mark(msg.data.state, true);
        } else {
          mark(msg.data.joins, true);
          mark(msg.data.leaves, false);
        }
        if (m.known === n && m.completeAt === undefined) {
          m.completeAt = performance.now();
          onEvent();
        }
      } else if (msg.event === 'room_joined') {
        m.joinedAt = performance.now();
        onEvent();
      }
    });
  });
  ws.once('open', () => ws.send(JSON.stringify({ event: '$hello', data: { v: 1 } })));
  return { m, welcomed };
}

async function redisCalls(client) {
  const text = await client.sendCommand(['INFO', 'commandstats']);
  const calls = {};
  for (const line of text.split('\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (match) calls[match[1]] = Number(match[2]);
  }
  return calls;
}

async function measure(ctx, { clients: n, instances, interval, redisUrl }) {
  const env = redisUrl ? { BENCH_REDIS_URL: redisUrl } : {};
  const pkgConfig = {
    heartbeat_interval: 0,
    presence: [{ match: ROOM }],
    presence_interval: interval,
    presence_max_list: n,
  };
  const servers = [];
  const members = [];
  const redis = redisUrl ? createClient({ url: redisUrl }) : undefined;
  try {
    await redis?.connect();
    for (let i = 0; i < instances; i++)
      servers.push(await ctx.startServer(SERVER, { pkgConfig, env }));
    const ids = new Map();
    let onEvent = () => {};
    const event = () => onEvent();
    // Connect and say $hello, at most 100 handshakes under way (not timed).
    let next = 0;
    const worker = async () => {
      while (next < n) {
        const i = next++;
        const { m, welcomed } = member(servers[i % instances].port, i, ids, n, event);
        members[i] = m;
        await welcomed;
      }
    };
    await Promise.all(Array.from({ length: Math.min(100, n) }, worker));
    await Promise.all(
      servers.map((s, i) =>
        waitForCount(s, members.filter((m) => m.index % instances === i).length),
      ),
    );

    const cpu0 = await Promise.all(servers.map((s) => s.cpu()));
    const calls0 = redis ? await redisCalls(redis) : {};
    const done = new Promise((resolve) => {
      onEvent = () => {
        if (
          members.every(
            (m) => m.joinedAt !== undefined && (m.completeAt !== undefined || m.statsOnly),
          )
        )
          resolve(true);
      };
    });
    const own0 = process.cpuUsage();
    const t0 = performance.now();
    for (const m of members)
      m.ws.send(JSON.stringify({ event: 'join_room', data: { room: ROOM } }));
    const finished = await within(done, 60_000, false);
    const own = process.cpuUsage(own0);
    const calls1 = redis ? await redisCalls(redis) : {};
    const cpu1 = await Promise.all(servers.map((s) => s.cpu()));
    const lastJoin = Math.max(...members.map((m) => m.joinedAt ?? Number.NaN));
    const incomplete = members.filter((m) => m.completeAt === undefined && !m.statsOnly).length;
    if (!finished) {
      throw new Error(
        `${incomplete} of ${n} views were not complete 60 s after the storm started (known: median ${median(members.map((m) => m.known))}, min ${Math.min(...members.map((m) => m.known))}, max ${Math.max(...members.map((m) => m.known))} of ${n}; ${members.filter((m) => m.joinedAt === undefined).length} without a join answer, ${members.filter((m) => m.ws.readyState !== WebSocket.OPEN).length} closed; presence messages per member: median ${median(members.map((m) => m.messages))})`,
      );
    }
    const lastComplete = Math.max(...members.map((m) => m.completeAt ?? 0));
    const delta = {};
    for (const [name, count] of Object.entries(calls1)) {
      const d = count - (calls0[name] ?? 0);
      if (d > 0) delta[name] = d;
    }
    const redisTotal = Object.values(delta).reduce((a, b) => a + b, 0);
    const cpu = cpu1.reduce((sum, v, i) => sum + v - cpu0[i], 0);
    return {
      joinsMs: lastJoin - t0,
      completeAfterLastJoin: lastComplete - lastJoin,
      completeMs: lastComplete - t0,
      messagesMedian: median(members.map((m) => m.messages)),
      messagesMax: Math.max(...members.map((m) => m.messages)),
      bytesMedian: median(members.map((m) => m.bytes)),
      bytesMax: Math.max(...members.map((m) => m.bytes)),
      statsOnly: members.filter((m) => m.statsOnly).length,
      redisPerJoin: redis ? redisTotal / n : Number.NaN,
      cpuPerJoin: cpu / n,
      runnerCpuPerJoin: (own.user + own.system) / n,
      firstMessageMs: median(members.map((m) => (m.firstAt ?? Number.NaN) - t0)),
      commands: delta,
    };
  } finally {
    for (const m of members) m?.ws.close();
    await within(Promise.all(members.map((m) => m?.closed)), 10_000, undefined);
    await Promise.all(servers.map((s) => s.stop()));
    await redis?.quit().catch(() => undefined);
  }
}

export default {
  name: 'presence',
  title: 'Presence join storm',
  order: 75,
  about:
    "BENCH_PRESENCE_CLIENTS clients of protocol version 1 are connected over BENCH_PRESENCE_INSTANCES @pkg/core instances (round robin; with 2, the Redis adapter shares presence between them), then all send `join_room` for one room with presence at once. Each member keeps its view from its `$presence` state and the `$presence_diff` joins and leaves. Reported: the time from the storm to the last join answer, from the last join answer until every view holds every member, the presence messages and bytes per member for the whole storm (median and max), the Redis commands per join (INFO commandstats delta over the storm, all commands of both instances, heartbeats included), and both servers' CPU per join.",
  limits:
    '@pkg/core with heartbeat_interval 0, presence [{match: "storm"}], presence_interval BENCH_PRESENCE_INTERVAL (100 ms, the default), presence_max_list = the number of clients (so every member gets the list, not counts; the default is 1000), RedisAdapter defaults, a private redis-server. Every instance on the server core; the 2,000 members and Redis share the load generator\'s core.',
  async run(ctx) {
    const settings = {
      clients: ctx.param('BENCH_PRESENCE_CLIENTS', 2000, 500),
      instances: ctx.param('BENCH_PRESENCE_INSTANCES', 2),
      interval: ctx.param('BENCH_PRESENCE_INTERVAL', 100),
    };
    const redis = settings.instances > 1 ? await startRedis() : undefined;
    const samples = [];
    try {
      for (let r = 0; r < ctx.rounds; r++) {
        ctx.log(`round ${r + 1}/${ctx.rounds}`);
        samples.push(await measure(ctx, { ...settings, redisUrl: redis?.url }));
      }
    } finally {
      await redis?.stop();
    }
    const pick = (k) => ({ pkg: median(samples.map((s) => s[k])) });
    const row = (label, k, digits = 0, better = 'lower') => ({
      label,
      better,
      digits,
      values: pick(k),
    });
    const last = samples.at(-1);
    const top = Object.entries(last.commands)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8)
      .map(([name, count]) => [name, String(count), (count / settings.clients).toFixed(2)]);
    return {
      rows: [
        row('storm start to last join answer, ms', 'joinsMs'),
        row('last join answer to every view complete, ms', 'completeAfterLastJoin'),
        row('presence messages per member, median', 'messagesMedian', 1),
        row('presence messages per member, max', 'messagesMax'),
        row('presence bytes per member, median', 'bytesMedian'),
        row('presence bytes per member, max', 'bytesMax'),
        row('Redis commands per join (all instances)', 'redisPerJoin', 2),
        row("storm start to a member's first presence message, median, ms", 'firstMessageMs'),
        row('server CPU per join (all instances), µs', 'cpuPerJoin', 0),
        row(
          "members' CPU per join (the load generator: parsing every view), µs",
          'runnerCpuPerJoin',
          0,
        ),
        row('members that got counts instead of a list', 'statsOnly'),
      ],
      tables: redis
        ? [{ columns: ['Redis command (last round)', 'calls', 'per join'], rows: top }]
        : [],
      notes: [
        redis
          ? `Redis: ${redis.text}. Targets: every view complete within 1 s after the last join; at most 20 presence messages per member.`
          : 'One instance, no Redis. Targets: every view complete within 1 s after the last join; at most 20 presence messages per member.',
      ],
    };
  },
};
