// socket.io with WebSocket transport only (no polling), the usual production setting.
import http from 'node:http';
import { Server } from 'socket.io';

const server = http.createServer();
const io = new Server(server, { transports: ['websocket'], serveClient: false });
io.on('connection', (socket) => {
  socket.on('echo', (data) => socket.emit('echo', data));
  socket.on('fanout', (data) => io.emit('tick', data));
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${server.address().port}\n`));

// The runner asks for this process's CPU time (user + system, µs) with a line on stdin.
process.stdin.on('data', () => {
  const { user, system } = process.cpuUsage();
  process.stdout.write(`CPU ${user + system}\n`);
});
