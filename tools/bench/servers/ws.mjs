// Raw `ws` with the same envelope work (JSON parse, JSON stringify once per broadcast).
import http from 'node:http';
import { WebSocketServer } from 'ws';

const server = http.createServer((_req, res) => res.end());
const wss = new WebSocketServer({ server, maxPayload: 1024 * 1024 });
wss.on('connection', (socket) => {
  socket.on('message', (raw) => {
    const msg = JSON.parse(raw.toString());
    if (msg.event === 'echo') socket.send(JSON.stringify({ event: 'echo', data: msg.data }));
    else if (msg.event === 'fanout') {
      const text = JSON.stringify({ event: 'tick', data: msg.data });
      for (const client of wss.clients) client.send(text);
    }
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${server.address().port}\n`));

// The runner asks for this process's CPU time (user + system, µs) with a line on stdin.
process.stdin.on('data', () => {
  const { user, system } = process.cpuUsage();
  process.stdout.write(`CPU ${user + system}\n`);
});
