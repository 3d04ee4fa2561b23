// @pkg/core with @pkg/redis-adapter and presence on every room, for the presence workload
// (presence.mjs). Speaks control.mjs's line protocol; `P` answers `P <json>` with the
// adapter's presence counters. Redis at BENCH_REDIS_URL; ServerConfig options as JSON in
// BENCH_PKG_CONFIG over host 127.0.0.1 and port 0.
import { NullLogger, RoomsController, Server, ServerConfig } from '@pkg/core';
import { RedisAdapter } from '@pkg/redis-adapter';
import { serve } from './control.mjs';

const url = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const options = JSON.parse(process.env.BENCH_PKG_CONFIG || '{}');
const server = new Server(
  new ServerConfig({ presence: [{ match: '*' }], ...options, host: '127.0.0.1', port: 0 }),
  undefined,
  undefined,
  undefined,
  new NullLogger(),
);
const adapter = new RedisAdapter({ url, keyPrefix: 'bench-presence' });
server.setAdapter(adapter);
server.registerController(new RoomsController());
await server.run();
await adapter.ready();
serve({
  port: server.getPort(),
  count: () => server.getClientCount(),
  close: () => server.close(),
  command: (line) => {
    if (line.trim() === 'P')
      process.stdout.write(`P ${JSON.stringify(adapter.presence.stats())}\n`);
  },
});
