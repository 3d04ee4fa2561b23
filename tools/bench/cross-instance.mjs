#!/usr/bin/env node
// Cross-instance broadcast: two server processes share one Redis; clients are split over the
// two; broadcasts alternate between the instances, so half of every broadcast's deliveries
// cross Redis. @pkg/core with @pkg/redis-adapter side by side with socket.io with
// @socket.io/redis-adapter, in the same run, on the same machine and the same Redis.
//
//   pnpm build && node tools/bench/cross-instance.mjs
//
// Reports broadcast deliveries per second and the delivery latency (p50 / p99, from the
// moment the runner asks an instance to broadcast to the moment a client has the message).
// Each server runs in its own child process (this file with `serve <kind>`); the clients and
// the pacing live in this process. A private redis-server on a free port is started when
// `redis-server` is installed, else REDIS_URL (default redis://127.0.0.1:6379) is used.
// Settings: BENCH_SECONDS (5), BENCH_ROUNDS (3), BENCH_CLIENTS (200, split over the two
// instances), BENCH_INFLIGHT (8 broadcasts in flight at most).
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const self = fileURLToPath(import.meta.url);

// ------------------------------------------------------------------ server side

async function serve(kind, url) {
  let broadcast;
  let port;
  if (kind === 'pkg') {
    const { NullLogger, Server, ServerConfig } = await import('@pkg/core');
    const { RedisAdapter } = await import('@pkg/redis-adapter');
    const server = new Server(
      new ServerConfig({ host: '127.0.0.1', port: 0, heartbeat_interval: 0 }),
      undefined,
      undefined,
      undefined,
      new NullLogger(),
    );
    const adapter = new RedisAdapter({ url, keyPrefix: 'bench-pkg' });
    server.setAdapter(adapter);
    await server.run();
    await adapter.ready();
    port = server.getPort();
    broadcast = (data) => server.broadcast('tick', data);
  } else {
    const http = await import('node:http');
    const { Server } = await import('socket.io');
    const { createAdapter } = await import('@socket.io/redis-adapter');
    const { createClient } = await import('redis');
    const pub = createClient({ url });
    const sub = pub.duplicate();
    pub.on('error', () => {});
    sub.on('error', () => {});
    await Promise.all([pub.connect(), sub.connect()]);
    const httpServer = http.createServer();
    const io = new Server(httpServer, {
      transports: ['websocket'],
      serveClient: false,
      adapter: createAdapter(pub, sub, { key: 'bench-sio' }),
    });
    await new Promise((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
    port = httpServer.address().port;
    broadcast = (data) => io.emit('tick', data);
  }
  let buf = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.startsWith('B ')) broadcast(JSON.parse(line.slice(2)));
      else if (line === 'cpu') {
        const { user, system } = process.cpuUsage();
        process.stdout.write(`CPU ${user + system}\n`);
      }
    }
  });
  process.stdout.write(`PORT ${port}\n`);
}

// ------------------------------------------------------------------ runner side

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function startRedis() {
  if (spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status !== 0) {
    return { url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', stop: async () => {} };
  }
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  child.stdout.setEncoding('utf8');
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (out.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', () => reject(new Error('redis-server exited at start')));
  });
  child.stdout.resume();
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: async () => {
      child.kill('SIGKILL');
      await once(child, 'exit');
    },
  };
}

async function startServer(kind, url) {
  const child = spawn(process.execPath, [self, 'serve', kind, url], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  child.stdout.setEncoding('utf8');
  let buf = '';
  const waiters = [];
  child.stdout.on('data', (chunk) => {
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const i = waiters.findIndex((w) => line.startsWith(w.prefix));
      if (i >= 0) waiters.splice(i, 1)[0].resolve(line);
    }
  });
  const next = (prefix) =>
    new Promise((resolve, reject) => {
      waiters.push({ prefix, resolve });
      child.once('exit', () => reject(new Error(`${kind} server exited`)));
    });
  const port = Number((await next('PORT ')).slice(5));
  return {
    port,
    broadcast: (data) => child.stdin.write(`B ${JSON.stringify(data)}\n`),
    cpu: async () => Number((await next('CPU ', child.stdin.write('cpu\n'))).slice(4)),
    stop: async () => {
      child.kill('SIGKILL');
      await once(child, 'exit');
    },
  };
}

async function connect(kind, port, onTick) {
  if (kind === 'socket.io') {
    const { io } = await import('socket.io-client');
    const s = io(`http://127.0.0.1:${port}`, { transports: ['websocket'], forceNew: true });
    await once(s, 'connect');
    s.on('tick', onTick);
    return () => s.close();
  }
  const { default: WebSocket } = await import('ws');
  const s = new WebSocket(`ws://127.0.0.1:${port}/`);
  await once(s, 'open');
  s.on('message', (raw) => {
    const msg = JSON.parse(raw.toString());
    if (msg.event === 'tick') onTick(msg.data);
  });
  return () => s.terminate();
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function workload(kind, url, { seconds, clients, inflight }) {
  const servers = [await startServer(kind, url), await startServer(kind, url)];
  const pending = new Map(); // seq -> deliveries still expected
  const latencies = [];
  let deliveries = 0;
  let measuring = false;
  let onComplete = () => {};
  const onTick = (data) => {
    if (measuring) {
      latencies.push(performance.now() - data.t);
      deliveries += 1;
    }
    const left = pending.get(data.seq) - 1;
    if (left === 0) {
      pending.delete(data.seq);
      onComplete();
    } else pending.set(data.seq, left);
  };
  const closers = [];
  for (let i = 0; i < clients; i++) closers.push(await connect(kind, servers[i % 2].port, onTick));
  // Let the adapters settle (subscriptions, socket.io's namespace sync) before measuring.
  await new Promise((r) => setTimeout(r, 300));

  let seq = 0;
  const send = () => {
    seq += 1;
    pending.set(seq, clients);
    servers[seq % 2].broadcast({
      seq,
      t: performance.now(),
      text: 'hello from the other instance',
    });
  };
  const run = (ms) =>
    new Promise((resolve) => {
      const end = performance.now() + ms;
      onComplete = () => {
        if (performance.now() < end) send();
        else if (pending.size === 0) resolve();
      };
      for (let i = 0; i < inflight; i++) send();
    });
  await run(500); // warm-up
  const cpuBefore = await Promise.all(servers.map((s) => s.cpu()));
  measuring = true;
  const started = performance.now();
  await run(seconds * 1000);
  const elapsed = (performance.now() - started) / 1000;
  measuring = false;
  const cpuAfter = await Promise.all(servers.map((s) => s.cpu()));
  for (const close of closers) close();
  await Promise.all(servers.map((s) => s.stop()));
  latencies.sort((a, b) => a - b);
  const cpuUs = cpuAfter.reduce((sum, v, i) => sum + v - cpuBefore[i], 0);
  return {
    perSecond: deliveries / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    cpuPerDeliveryUs: cpuUs / Math.max(1, deliveries),
  };
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function main() {
  const settings = {
    seconds: Number(process.env.BENCH_SECONDS ?? 5),
    clients: Number(process.env.BENCH_CLIENTS ?? 200),
    inflight: Number(process.env.BENCH_INFLIGHT ?? 8),
  };
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const redis = await startRedis();
  const results = { pkg: [], 'socket.io': [] };
  try {
    for (let r = 0; r < rounds; r++) {
      for (const kind of r % 2 === 0 ? ['pkg', 'socket.io'] : ['socket.io', 'pkg']) {
        results[kind].push(await workload(kind, redis.url, settings));
        process.stderr.write('.');
      }
    }
  } finally {
    await redis.stop();
  }
  process.stderr.write('\n');
  const summary = {};
  for (const [kind, list] of Object.entries(results)) {
    summary[kind] = Object.fromEntries(
      ['perSecond', 'p50', 'p99', 'cpuPerDeliveryUs'].map((k) => [
        k,
        median(list.map((x) => x[k])),
      ]),
    );
  }
  const fmt = (n, digits = 0) =>
    n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  const p = summary.pkg;
  const s = summary['socket.io'];
  console.log(
    `Cross-instance broadcast: 2 instances, ${settings.clients} clients, ${settings.inflight} broadcasts in flight, median of ${rounds} rounds of ${settings.seconds} s (Node ${process.versions.node})\n`,
  );
  console.log(
    '| measure | @pkg/core + redis-adapter | socket.io + @socket.io/redis-adapter | pkg / socket.io |',
  );
  console.log('| --- | --- | --- | --- |');
  console.log(
    `| deliveries/s (higher is better) | ${fmt(p.perSecond)} | ${fmt(s.perSecond)} | ${(p.perSecond / s.perSecond).toFixed(2)} |`,
  );
  console.log(
    `| p50 latency, ms (lower is better) | ${fmt(p.p50, 2)} | ${fmt(s.p50, 2)} | ${(p.p50 / s.p50).toFixed(2)} |`,
  );
  console.log(
    `| p99 latency, ms (lower is better) | ${fmt(p.p99, 2)} | ${fmt(s.p99, 2)} | ${(p.p99 / s.p99).toFixed(2)} |`,
  );
  console.log(
    `| server CPU per delivery, µs (lower is better) | ${fmt(p.cpuPerDeliveryUs, 2)} | ${fmt(s.cpuPerDeliveryUs, 2)} | ${(p.cpuPerDeliveryUs / s.cpuPerDeliveryUs).toFixed(2)} |`,
  );
}

if (process.argv[2] === 'serve') {
  serve(process.argv[3], process.argv[4]).catch((err) => {
    console.error(err);
    process.exit(1);
  });
} else {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
