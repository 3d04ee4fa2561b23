// One Redis against a Redis Cluster of 3 masters, in the same run: two instances of
// @pkg/core with @pkg/redis-adapter in this process, A broadcasting to `ROOMS` rooms and B
// holding one member in each. Reports messages/s received across instances (plain rooms,
// and rooms that keep history: one script per message) and the subscribe connections B
// holds (CLIENT LIST on every Redis node). Beside it, the same for two socket.io servers
// with socket.io's sharded Redis adapter (`createShardedAdapter` of @socket.io/redis-adapter,
// SPUBLISH/SSUBSCRIBE, one channel per room with `subscriptionMode: 'dynamic'`, no history:
// plain rooms only), counted where its adapter on B receives them. Needs `pnpm build` and
// redis-server/redis-cli.
//
//   node tools/bench/redis-cluster.mjs        (BENCH_MESSAGES, BENCH_ROOMS to change the size)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createServer as createHttpServer } from 'node:http';
import { createClient, createCluster } from 'redis';
import { Server as IoServer } from 'socket.io';
import { io as ioClient } from 'socket.io-client';
import { createShardedAdapter } from '@socket.io/redis-adapter';
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

/** Subscribe connections named `name` (CLIENT LIST on every node). */
async function subscribersNamed(ports, name) {
  let n = 0;
  for (const port of ports) {
    const c = await ping(port);
    const list = String(await c.sendCommand(['CLIENT', 'LIST']));
    c.destroy();
    n += list
      .split('\n')
      .filter((l) => l.includes(` name=${name} `) && /(?:^| )s?sub=[1-9]/.test(l)).length;
  }
  return n;
}

/** A socket.io server with the sharded Redis adapter; `received` counts what its adapter got from Redis. */
async function ioInstance(ports, cluster, name) {
  const pub = cluster
    ? createCluster({
        rootNodes: ports.map((p) => ({ url: `redis://127.0.0.1:${p}` })),
        defaults: { name },
      })
    : createClient({ url: `redis://127.0.0.1:${ports[0]}`, name });
  const sub = pub.duplicate();
  pub.on('error', () => undefined);
  sub.on('error', () => undefined);
  await Promise.all([pub.connect(), sub.connect()]);
  const http = createHttpServer();
  const io = new IoServer(http, {
    adapter: createShardedAdapter(pub, sub, { subscriptionMode: 'dynamic' }),
  });
  const counter = { received: 0 };
  const adapter = io.of('/').adapter;
  const onRaw = adapter.onRawMessage.bind(adapter);
  adapter.onRawMessage = (raw, channel) => {
    counter.received += 1;
    onRaw(raw, channel);
  };
  await new Promise((r) => http.listen(0, '127.0.0.1', r));
  const close = async () => {
    io.close();
    await Promise.allSettled([pub.close(), sub.close()]);
  };
  return { io, counter, port: http.address().port, close };
}

/** Emits MESSAGES from socket.io server A to the rooms; messages/s until B's adapter received them all. */
async function runIo(a, b) {
  const start = b.counter.received;
  const t0 = performance.now();
  let sent = 0;
  while (sent < MESSAGES) {
    for (let i = 0; i < INFLIGHT && sent < MESSAGES; i++, sent++) {
      a.io.to(`plain-${sent % ROOMS}`).emit('tick', { n: sent });
    }
    await waitFor(() => b.counter.received - start >= sent - INFLIGHT * 8, 'B to keep up');
  }
  await waitFor(() => b.counter.received - start >= MESSAGES, 'every message at B');
  return MESSAGES / ((performance.now() - t0) / 1000);
}

async function measureIo(label, cluster) {
  const redis = await startRedis(cluster);
  let a;
  let b;
  let client;
  try {
    a = await ioInstance(redis.ports, cluster, 'io-a');
    b = await ioInstance(redis.ports, cluster, 'io-b');
    const joined = new Promise((resolve) =>
      b.io.on('connection', (socket) => {
        for (let r = 0; r < ROOMS; r++) socket.join(`plain-${r}`);
        resolve();
      }),
    );
    client = ioClient(`http://127.0.0.1:${b.port}`, { transports: ['websocket'] });
    client.on('tick', () => undefined);
    await joined;
    // Its SSUBSCRIBEs are sent without waiting: wait until B's connections hold every room.
    await waitFor(async () => {
      let held = 0;
      for (const port of redis.ports) {
        const c = await ping(port);
        const list = String(await c.sendCommand(['CLIENT', 'LIST']));
        c.destroy();
        for (const line of list.split('\n')) {
          if (line.includes(' name=io-b ')) held += Number(/ ssub=(\d+)/.exec(line)?.[1] ?? 0);
        }
      }
      return held >= ROOMS;
    }, 'the room subscriptions of B');
    const subscribing = await subscribersNamed(redis.ports, 'io-b');
    await runIo(a, b); // warm-up
    const plain = await runIo(a, b);
    return { label, plain, kept: null, subscribing };
  } finally {
    client?.close();
    await a?.close();
    await b?.close();
    await redis.stop();
  }
}

const one = await measure('one Redis', false);
const three = await measure('Redis Cluster, 3 masters', true);
const ioOne = await measureIo('socket.io sharded adapter, one Redis', false);
const ioThree = await measureIo('socket.io sharded adapter, Redis Cluster, 3 masters', true);
const fmt = (n) => Math.round(n).toLocaleString('en-US');
console.log(
  `${MESSAGES.toLocaleString('en-US')} messages over ${ROOMS.toLocaleString('en-US')} rooms, A -> B`,
);
console.log(
  '| Redis | plain rooms msg/s | rooms with history msg/s | subscribe connections of B |',
);
console.log('| --- | --- | --- | --- |');
for (const r of [one, three, ioOne, ioThree]) {
  const kept = r.kept === null ? 'n/a (no history)' : fmt(r.kept);
  console.log(`| ${r.label} | ${fmt(r.plain)} | ${kept} | ${r.subscribing} |`);
}
console.log(
  `cluster / one Redis: plain ${(three.plain / one.plain).toFixed(2)}x, history ${(three.kept / one.kept).toFixed(2)}x; ` +
    `socket.io sharded adapter ${(ioThree.plain / ioOne.plain).toFixed(2)}x`,
);
console.log(
  `@pkg/redis-adapter / socket.io sharded adapter, plain rooms: one Redis ${(one.plain / ioOne.plain).toFixed(2)}x, ` +
    `3 masters ${(three.plain / ioThree.plain).toFixed(2)}x`,
);
