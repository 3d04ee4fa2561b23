// socket.io with the WebSocket transport only (no polling), the usual production setting.
// Limits: socket.io's defaults (maxHttpBufferSize 1 MB, ping every 25 s, 20 s timeout).
import http from 'node:http';
import { Server } from 'socket.io';
import { serve } from './control.mjs';

const server = http.createServer();
const io = new Server(server, { transports: ['websocket'], serveClient: false });
io.on('connection', (socket) => {
  socket.on('echo', (data) => socket.emit('echo', data));
  socket.on('fanout', (data) => io.emit('tick', data));
});
server.listen(0, '127.0.0.1', () =>
  serve({
    port: server.address().port,
    count: () => io.engine.clientsCount,
    close: () => new Promise((resolve) => io.close(() => resolve())),
  }),
);
