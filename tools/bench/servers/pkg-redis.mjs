// @pkg/core with @pkg/redis-adapter, for the cross-instance and churn workloads: the runner
// orders broadcasts on stdin (`B <json>` broadcasts `tick` with that data to every client of
// the cluster, `R <json>` to the members of room `churn`). Redis at BENCH_REDIS_URL;
// ServerConfig options as JSON in BENCH_PKG_CONFIG over host 127.0.0.1 and port 0 (the churn
// workload passes `history` there); BENCH_HISTORY=0 turns the adapter's Redis history off.
// Clients join rooms themselves (join_room, RoomsController).
import { NullLogger, RoomsController, Server, ServerConfig } from '@pkg/core';
import { RedisAdapter } from '@pkg/redis-adapter';
import { serve } from './control.mjs';

const url = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const options = JSON.parse(process.env.BENCH_PKG_CONFIG || '{}');
const server = new Server(
  new ServerConfig({ ...options, host: '127.0.0.1', port: 0 }),
  undefined,
  undefined,
  undefined,
  new NullLogger(),
);
const adapter = new RedisAdapter({
  url,
  keyPrefix: 'bench-pkg',
  history: process.env.BENCH_HISTORY !== '0',
});
server.setAdapter(adapter);
server.registerController(new RoomsController());
await server.run();
await adapter.ready();
serve({
  port: server.getPort(),
  count: () => server.getClientCount(),
  close: () => server.close(),
  command: (line) => {
    if (line.startsWith('B ')) server.broadcast('tick', JSON.parse(line.slice(2)));
    else if (line.startsWith('R '))
      server.broadcast('tick', JSON.parse(line.slice(2)), { room: 'churn' });
  },
});
