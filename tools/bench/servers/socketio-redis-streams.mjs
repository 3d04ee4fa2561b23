// socket.io (WebSocket transport only) with @socket.io/redis-streams-adapter and connection
// state recovery on, for the churn workload: every client is put in room `churn` when it
// connects without a recovered session; the runner orders broadcasts on stdin (`R <json>`
// emits `tick` with that data to room `churn` of the cluster). Redis at BENCH_REDIS_URL.
import http from 'node:http';
import { createAdapter } from '@socket.io/redis-streams-adapter';
import { createClient } from 'redis';
import { Server } from 'socket.io';
import { serve } from './control.mjs';

const url = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const redis = createClient({ url });
redis.on('error', () => {});
await redis.connect();
const httpServer = http.createServer();
const io = new Server(httpServer, {
  transports: ['websocket'],
  serveClient: false,
  adapter: createAdapter(redis, { streamName: 'bench-sio-churn' }),
  // Sessions are kept for two minutes, longer than any run; missed packets are replayed.
  connectionStateRecovery: { maxDisconnectionDuration: 120_000, skipMiddlewares: true },
});
io.on('connection', (socket) => {
  if (!socket.recovered) socket.join('churn');
});
httpServer.listen(0, '127.0.0.1', () =>
  serve({
    port: httpServer.address().port,
    count: () => io.engine.clientsCount,
    close: () => new Promise((resolve) => io.close(() => resolve())).then(() => redis.close()),
    command: (line) => {
      if (line.startsWith('R ')) io.to('churn').emit('tick', JSON.parse(line.slice(2)));
    },
  }),
);
