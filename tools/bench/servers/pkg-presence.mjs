// @pkg/core with presence, for the presence workload: RoomsController (`join_room`), the
// ServerConfig options as JSON in BENCH_PKG_CONFIG (the workload sets `presence`) over host
// 127.0.0.1 and port 0, and with BENCH_REDIS_URL the Redis adapter (presence shared between
// the instances).
import { NullLogger, RoomsController, Server, ServerConfig } from '@pkg/core';
import { RedisAdapter } from '@pkg/redis-adapter';
import { serve } from './control.mjs';

const url = process.env.BENCH_REDIS_URL;
const options = JSON.parse(process.env.BENCH_PKG_CONFIG || '{}');
const server = new Server(
  new ServerConfig({ ...options, host: '127.0.0.1', port: 0 }),
  undefined,
  undefined,
  undefined,
  new NullLogger(),
);
server.registerController(new RoomsController());
let adapter;
if (url) {
  adapter = new RedisAdapter({ url, keyPrefix: 'bench-presence' });
  server.setAdapter(adapter);
}
await server.run();
await adapter?.ready();
serve({
  port: server.getPort(),
  count: () => server.getClientCount(),
  close: () => server.close(),
});
