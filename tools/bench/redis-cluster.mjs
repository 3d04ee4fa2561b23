// One Redis against a Redis Cluster of 3 masters, in the same run: two instances of
// @pkg/core with @pkg/redis-adapter in this process, A broadcasting to `ROOMS` rooms and B
// holding one member in each. Reports messages/s received across instances (plain rooms,
// and rooms that keep history: one script per message) and the subscribe connections B
// holds (CLIENT LIST on every Redis node). Needs `pnpm build` and redis-server/redis-cli.
//
//   node tools/bench/redis-cluster.mjs        (BENCH_MESSAGES, BENCH_ROOMS to change the size)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createClient } from 'redis';
import WebSocket from 'ws';
import { NullLogger, Server, ServerConfig } from '@pkg/core';
import { RedisAdapter } from '@pkg/redis-adapter';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 60_000);
const ROOMS = Number(process.env.BENCH_ROOMS ?? 1_000);
const INFLIGHT = 256;

function listen(port) {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(null));
    srv.listen(port, '127.0.0.1', () => {
      const { port: p } = srv.address();
      srv.close(() => resolve(p));
    });
  });
}

/** A free port below 55535 whose cluster bus port (+10000) is free too. */
async function freePort(taken) {
  for (;;) {
    const port = await listen(0);
    if (port === null || port >= 55535 || taken.has(port)) continue;
    if ((await listen(port + 10000)) === null) continue;
    taken.add(port);
    return port;
  }
}

async function waitFor(check, what, ms = 30_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function ping(port) {
  const c = createClient({ url: `redis://127.0.0.1:${port}` });
  c.on('error', () => undefined);
  try {
    await c.connect();
    return c;
  } catch {
    return null;
  }
}

/** redis-server processes (one, or 3 cluster masters); `stop()` kills them and removes the directory. */
async function startRedis(cluster) {
  const dir = mkdtempSync(path.join(tmpdir(), 'pkg-bench-redis-'));
  const taken = new Set();
  const ports = [];
  const children = [];
  const stop = async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await Promise.all(
      children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null)),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < (cluster ? 3 : 1); i++) {
      const port = await freePort(taken);
      ports.push(port);
      const args = [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
      ];
      if (cluster)
        args.push('--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`);
      children.push(spawn('redis-server', args, { stdio: 'ignore' }));
    }
    for (const port of ports) {
      await waitFor(async () => {
        const c = await ping(port);
        c?.destroy();
        return c !== null;
      }, `redis-server on ${port}`);
    }
    if (cluster) {
      const create = spawn(
        'redis-cli',
        [
          '--cluster',
          'create',
          ...ports.map((p) => `127.0.0.1:${p}`),
          '--cluster-replicas',
          '0',
          '--cluster-yes',
        ],
        { stdio: 'ignore' },
      );
      await new Promise((r) => create.once('exit', r));
      await waitFor(async () => {
        for (const port of ports) {
          const c = await ping(port);
          const info = String(await c.sendCommand(['CLUSTER', 'INFO']));
          c.destroy();
          if (!info.includes('cluster_state:ok')) return false;
        }
        return true;
      }, 'the cluster');
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { ports, stop };
}

async function instance(adapterOptions) {
  const server = new Server(
    new ServerConfig({
      host: '127.0.0.1',
      port: 0,
      heartbeat_interval: 0,
      max_rooms_per_client: 0,
      shutdown_timeout: 200,
      history: [{ match: 'kept-*', size: 100, ttl: 60_000 }],
    }),
    undefined,
    undefined,
    undefined,
    new NullLogger(),
  );
  const adapter = new RedisAdapter({
    ...adapterOptions,
    maxSubscribesPerSecond: 0,
    keyPrefix: 'bench',
  });
  server.setAdapter(adapter);
  await server.run();
  await adapter.ready();
  return { server, adapter };
}

/** Broadcasts MESSAGES from A over the rooms; messages/s until B received them all. */
async function run(a, b, kind) {
  const start = b.adapter.stats().received;
  const t0 = performance.now();
  let sent = 0;
  while (sent < MESSAGES) {
    const batch = [];
    for (let i = 0; i < INFLIGHT && sent < MESSAGES; i++, sent++) {
      batch.push(a.server.broadcast('tick', { n: sent }, '/', `${kind}-${sent % ROOMS}`));
    }
    await Promise.all(batch);
    // Backpressure: at most a few batches ahead of what B has received.
    await waitFor(() => b.adapter.stats().received - start >= sent - INFLIGHT * 8, 'B to keep up');
  }
  await waitFor(() => b.adapter.stats().received - start >= MESSAGES, 'every message at B');
  return MESSAGES / ((performance.now() - t0) / 1000);
}

async function measure(label, cluster) {
  const redis = await startRedis(cluster);
  const options = cluster
    ? { cluster: { rootNodes: redis.ports.map((p) => `redis://127.0.0.1:${p}`) } }
    : { url: `redis://127.0.0.1:${redis.ports[0]}` };
  let a;
  let b;
  let ws;
  try {
    a = await instance(options);
    b = await instance(options);
    ws = new WebSocket(`ws://127.0.0.1:${b.server.getPort()}/`);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.on('message', () => undefined);
    await waitFor(() => b.server.getAllClients().length === 1, 'the member');
    const [id] = b.server.getAllClients();
    for (let r = 0; r < ROOMS; r++) {
      b.server.joinRoom(id, `plain-${r}`);
      b.server.joinRoom(id, `kept-${r}`);
    }
    await b.adapter.synced();
    let subscribing = 0;
    for (const port of redis.ports) {
      const c = await ping(port);
      const list = String(await c.sendCommand(['CLIENT', 'LIST']));
      c.destroy();
      subscribing += list
        .split('\n')
        .filter((l) => l.includes(`-${b.adapter.nodeId}`) && /(?:^| )s?sub=[1-9]/.test(l)).length;
    }
    await run(a, b, 'plain'); // warm-up
    const plain = await run(a, b, 'plain');
    const kept = await run(a, b, 'kept');
    return { label, plain, kept, subscribing };
  } finally {
    ws?.terminate();
    await a?.server.close();
    await b?.server.close();
    await redis.stop();
  }
}

const one = await measure('one Redis', false);
const three = await measure('Redis Cluster, 3 masters', true);
const fmt = (n) => Math.round(n).toLocaleString('en-US');
console.log(
  `${MESSAGES.toLocaleString('en-US')} messages over ${ROOMS.toLocaleString('en-US')} rooms, A -> B`,
);
console.log(
  '| Redis | plain rooms msg/s | rooms with history msg/s | subscribe connections of B |',
);
console.log('| --- | --- | --- | --- |');
for (const r of [one, three]) {
  console.log(`| ${r.label} | ${fmt(r.plain)} | ${fmt(r.kept)} | ${r.subscribing} |`);
}
console.log(
  `cluster / one Redis: plain ${(three.plain / one.plain).toFixed(2)}x, history ${(three.kept / one.kept).toFixed(2)}x`,
);
