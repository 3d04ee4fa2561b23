// @pkg/core with @pkg/redis-adapter, for the cross-instance workload: no controllers, the
// runner orders broadcasts on stdin (`B <json>` broadcasts `tick` with that data to every
// client of the cluster). Redis at BENCH_REDIS_URL; ServerConfig options as JSON in
// BENCH_PKG_CONFIG over host 127.0.0.1 and port 0.
import { NullLogger, Server, ServerConfig } from '@pkg/core';
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
const adapter = new RedisAdapter({ url, keyPrefix: 'bench-pkg' });
server.setAdapter(adapter);
await server.run();
await adapter.ready();
serve({
  port: server.getPort(),
  count: () => server.getClientCount(),
  close: () => server.close(),
  command: (line) => {
    if (line.startsWith('B ')) server.broadcast('tick', JSON.parse(line.slice(2)));
  },
});
