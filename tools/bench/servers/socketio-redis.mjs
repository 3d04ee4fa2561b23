// socket.io (WebSocket transport only) with @socket.io/redis-adapter over node-redis, for the
// cross-instance workload: the runner orders broadcasts on stdin (`B <json>` emits `tick`
// with that data to every client of the cluster). Redis at BENCH_REDIS_URL; socket.io's
// and the adapter's defaults otherwise.
import http from 'node:http';
import { createAdapter } from '@socket.io/redis-adapter';
import { createClient } from 'redis';
import { Server } from 'socket.io';
import { serve } from './control.mjs';

const url = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
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
httpServer.listen(0, '127.0.0.1', () =>
  serve({
    port: httpServer.address().port,
    count: () => io.engine.clientsCount,
    close: () =>
      new Promise((resolve) => io.close(() => resolve())).then(() =>
        Promise.all([pub.close(), sub.close()]),
      ),
    command: (line) => {
      if (line.startsWith('B ')) io.emit('tick', JSON.parse(line.slice(2)));
    },
  }),
);
