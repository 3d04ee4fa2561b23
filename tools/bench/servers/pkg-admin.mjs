// @pkg/core with @pkg/redis-adapter and @pkg/admin mounted, for tools/bench/admin.mjs: every
// client says $hello with its identity as `auth`, joins rooms with join_room
// (RoomsController), and `echo` answers its request with its data. Redis at
// BENCH_REDIS_URL; `presence` on rooms `p:*`, `history` on rooms `h:*` (20 messages, 10 min);
// the admin's disconnect action is on (its use is audited); max_connections 30,000. The server's logger drops
// everything, so that stdout stays free for the runner.
import { NullLogger, RoomsController, Server, ServerConfig } from '@pkg/core';
import { RedisAdapter } from '@pkg/redis-adapter';
import { mountAdmin } from '@pkg/admin';
import { serve } from './control.mjs';

const url = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const options = JSON.parse(process.env.BENCH_PKG_CONFIG || '{}');
const server = new Server(
  new ServerConfig({
    heartbeat_interval: 0,
    // Above what one process can hold here (ulimit -n 20,000): the descriptors are the cap.
    max_connections: 30_000,
    ws_max_messages_per_second: 1_000_000,
    ws_max_bytes_per_second: 1_000_000_000,
    presence: [{ match: 'p:*' }],
    history: [{ match: 'h:*', size: 20, ttl: 600_000 }],
    ...options,
    host: '127.0.0.1',
    port: 0,
  }),
  undefined,
  undefined,
  undefined,
  new NullLogger(),
);
const adapter = new RedisAdapter({ url, keyPrefix: process.env.BENCH_KEY_PREFIX ?? 'bench-admin' });
server.setAdapter(adapter);
server.registerController(new RoomsController());
server.addAuthHandler((ctx) => (typeof ctx.auth === 'string' ? { identity: ctx.auth } : false));
server.on('echo', (_clientId, data) => data);
mountAdmin(server, { actions: { disconnect: true } });
await server.run();
await adapter.ready();
serve({
  port: server.getPort(),
  count: () => server.getLoad().webSocketClients,
  close: () => server.close(),
  command: (line) => {
    // `H <room>`: a broadcast to a room that keeps history.
    if (line.startsWith('H ')) server.broadcast('news', { at: Date.now() }, { room: line.slice(2) }); // prettier-ignore
  },
});
