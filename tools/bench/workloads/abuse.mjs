// Abuse: one flooding client must not take the server from everyone else. For each phase
// (no flood, then one flood kind at a time) a fresh @pkg/core server runs; a flooder process
// floods it for BENCH_FLOOD_SECONDS while a victim client measures echo latency and a poller
// times /health; then SIGTERM goes to the server with the flood still running and the time
// to its exit is taken (SIGKILL after BENCH_SIGTERM_CAP_MS).
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { once, sleep, spawnLines, within } from '../lib/proc.mjs';
import { median, msSince, percentile } from '../lib/stats.mjs';

const flooderFile = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'clients',
  'flooder.mjs',
);
const KINDS = ['invalid-json', 'unknown-event', 'valid-event'];

/** Open loop: one echo every `interval` ms whatever the answers; latency per answer. */
async function startVictim(port, interval) {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
  await once(ws, 'open');
  const sentAt = new Map();
  const latencies = [];
  let seq = 0;
  ws.on('message', (raw) => {
    let msg;
    try {
      msg = JSON.parse(raw.toString());
    } catch {
      return;
    }
    const t = msg?.event === 'echo' ? sentAt.get(msg.data?.seq) : undefined;
    if (t !== undefined) {
      latencies.push(msStamp() - t);
      sentAt.delete(msg.data.seq);
    }
  });
  ws.on('error', () => {});
  // A few round trips before the clock starts.
  for (let i = 0; i < 5; i++) {
    const reply = once(ws, 'message');
    ws.send(JSON.stringify({ event: 'echo', data: { seq: -1 - i } }));
    await reply;
  }
  const timer = setInterval(() => {
    if (ws.readyState !== WebSocket.OPEN) return;
    const s = seq++;
    sentAt.set(s, msStamp());
    ws.send(JSON.stringify({ event: 'echo', data: { seq: s } }));
  }, interval);
  return {
    stop: () => clearInterval(timer),
    pending: () => sentAt.size,
    /** Unanswered echoes count with the time they have waited (a lower bound). */
    result: () => {
      const now = msStamp();
      const all = [...latencies, ...[...sentAt.values()].map((t) => now - t)];
      return {
        sent: seq,
        lost: sentAt.size,
        p50: percentile(all, 50),
        p99: percentile(all, 99),
        max: Math.max(...all),
      };
    },
    socket: ws,
  };
}

/** Open loop: GET /health every `interval` ms on a new connection each time. */
function startHealth(port, interval) {
  const open = new Map();
  const latencies = [];
  let failures = 0;
  let n = 0;
  const poll = () => {
    const id = n++;
    const t = msStamp();
    open.set(id, t);
    const req = http.get({ host: '127.0.0.1', port, path: '/health', agent: false }, (res) => {
      res.resume();
      res.on('end', () => {
        if (!open.delete(id)) return;
        latencies.push(msStamp() - t);
        if (res.statusCode !== 200) failures++;
      });
    });
    req.on('error', () => {
      if (!open.delete(id)) return;
      latencies.push(msStamp() - t);
      failures++;
    });
  };
  poll();
  const timer = setInterval(poll, interval);
  return {
    stop: () => clearInterval(timer),
    pending: () => open.size,
    result: () => {
      const now = msStamp();
      const all = [...latencies, ...[...open.values()].map((t) => now - t)];
      return { polls: n, failures: failures + open.size, worst: Math.max(...all) };
    },
  };
}

const t00 = process.hrtime.bigint();
const msStamp = () => msSince(t00);

async function waitUntil(pred, ms) {
  const deadline = Date.now() + ms;
  while (!pred() && Date.now() < deadline) await sleep(20);
}

async function phase(ctx, flood, p) {
  const server = await ctx.startServer('pkg', { pkgConfig: { health_check_path: '/health' } });
  let flooder = null;
  try {
    if (flood) {
      flooder = spawnLines(process.execPath, [flooderFile, String(server.port), flood], {
        name: 'flooder',
        env: {
          BENCH_FLOOD_MAX_SECONDS: String(p.seconds + p.capMs / 1000 + 5),
          BENCH_FLOOD_MAX_FRAMES: String(p.maxFrames),
        },
      });
      try {
        os.setPriority(flooder.child.pid, 10); // the victim's process goes first on the shared core
      } catch {
        // not allowed here: the flooder runs at normal priority
      }
      await flooder.next('READY');
    }
    const victim = await startVictim(server.port, p.interval);
    const health = startHealth(server.port, p.healthInterval);
    flooder?.send('go');
    await sleep(p.seconds * 1000);
    victim.stop();
    health.stop();
    await waitUntil(() => victim.pending() === 0 && health.pending() === 0, p.graceMs);
    const v = victim.result();
    const h = health.result();

    // SIGTERM with the flood still running.
    const t0 = process.hrtime.bigint();
    server.child.kill('SIGTERM');
    const exit = await within(server.exit, p.capMs, null);
    const shutdown = {
      ms: msSince(t0),
      code: exit?.code ?? null,
      signal: exit?.signal ?? null,
      capped: exit === null,
    };
    victim.socket.terminate();

    let flood_ = null;
    if (flooder) {
      flooder.send('stop');
      const done = await within(flooder.next('DONE '), 5000, null).catch(() => null);
      flood_ = done ? JSON.parse(done.slice(5)) : null;
      flooder.child.kill('SIGKILL');
      await flooder.exit;
    }
    return { victim: v, health: h, shutdown, flood: flood_ };
  } finally {
    await server.stop();
    if (flooder?.isRunning()) {
      flooder.child.kill('SIGKILL');
      await flooder.exit;
    }
  }
}

const f1 = (n) => (Number.isFinite(n) ? n.toFixed(1) : '—');
const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—');

export default {
  name: 'abuse',
  title: 'Abuse: one flooding client',
  order: 90,
  about:
    'Per phase, a fresh @pkg/core server; a flooder process (nice 10, on the load generator\'s core) sends one kind of frame as fast as its socket takes it and reads every answer: `invalid-json` (`{not json}`, 10 bytes), `unknown-event` (`{"event":"no.such.event","data":{}}`), `valid-event` (an echo). Meanwhile a victim client sends an echo every BENCH_VICTIM_INTERVAL_MS (open loop, so a stall is not hidden) and a poller GETs /health every BENCH_HEALTH_INTERVAL_MS on a new connection. Unanswered requests count with the time they waited (a lower bound) and as lost/failed. Then SIGTERM goes to the server with the flood still running; the server\'s handler is `await server.close(); process.exit(0)`.',
  limits:
    '@pkg/core defaults plus health_check_path /health (max_message_size 1 MiB, max_buffered_amount 4 MiB, heartbeat every 25 s, shutdown_timeout 10 s, max_connections 10,000).',
  async run(ctx) {
    const p = {
      seconds: ctx.param('BENCH_FLOOD_SECONDS', 10, 2),
      maxFrames: ctx.param('BENCH_FLOOD_MAX_FRAMES', 10_000_000),
      interval: ctx.param('BENCH_VICTIM_INTERVAL_MS', 10),
      healthInterval: ctx.param('BENCH_HEALTH_INTERVAL_MS', 100),
      capMs: ctx.param('BENCH_SIGTERM_CAP_MS', 15_000),
      graceMs: 2000,
    };
    const rounds = ctx.param('BENCH_ABUSE_ROUNDS', 1);
    const kinds = (process.env.BENCH_FLOOD_KINDS ?? KINDS.join(',')).split(',').filter(Boolean);
    for (const k of kinds)
      if (!KINDS.includes(k)) throw new RangeError(`BENCH_FLOOD_KINDS: unknown kind ${k}`);
    ctx.params.push(`BENCH_FLOOD_KINDS=${kinds.join(',')}`);
    const phases = [null, ...kinds];
    const samples = new Map(phases.map((f) => [f, []]));
    for (let r = 0; r < rounds; r++) {
      for (const f of phases) {
        ctx.log(`round ${r + 1}/${rounds}: ${f ?? 'no flood'}`);
        samples.get(f).push(await phase(ctx, f, p));
      }
    }
    const med = (f, pick) => median(samples.get(f).map(pick));
    const columns = [
      'phase',
      'echo p50, ms',
      'echo p99, ms',
      'echo max, ms',
      'echoes lost',
      '/health worst, ms',
      '/health failed',
      'flood frames/s',
      'SIGTERM to exit, ms',
      'exit',
    ];
    const rows = phases.map((f) => {
      const last = samples.get(f).at(-1);
      const exit = last.shutdown.capped
        ? `killed after cap`
        : (last.shutdown.signal ?? `code ${last.shutdown.code}`);
      return [
        f ?? 'no flood',
        f1(med(f, (s) => s.victim.p50)),
        f1(med(f, (s) => s.victim.p99)),
        f1(med(f, (s) => s.victim.max)),
        `${int(med(f, (s) => s.victim.lost))} / ${int(med(f, (s) => s.victim.sent))}`,
        f1(med(f, (s) => s.health.worst)),
        `${int(med(f, (s) => s.health.failures))} / ${int(med(f, (s) => s.health.polls))}`,
        f ? int(med(f, (s) => (s.flood ? s.flood.sent / s.flood.seconds : NaN))) : '—',
        `${last.shutdown.capped ? '> ' : ''}${int(med(f, (s) => s.shutdown.ms))}`,
        exit,
      ];
    });
    const base = med(null, (s) => s.victim.p99);
    return {
      rows: [],
      tables: [{ columns, rows }],
      notes: [
        `Victim p99 under flood / without: ${kinds.map((k) => `${k} ${(med(k, (s) => s.victim.p99) / base).toFixed(1)}x`).join(', ')} (target: within 5x). The exit column is the last round's.`,
      ],
      raw: Object.fromEntries(phases.map((f) => [f ?? 'none', samples.get(f)])),
    };
  },
};
