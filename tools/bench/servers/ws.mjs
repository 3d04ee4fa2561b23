// Raw `ws` with the same envelope work as the library (one JSON.parse per message, one
// JSON.stringify per broadcast, sent to every client in a plain loop).
// Limits: maxPayload 1 MiB; no heartbeat, no connection cap. An invalid message throws.
import http from 'node:http';
import { WebSocketServer } from 'ws';
import { serve } from './control.mjs';

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
server.listen(0, '127.0.0.1', () =>
  serve({
    port: server.address().port,
    count: () => wss.clients.size,
    close: () =>
      new Promise((resolve) => {
        for (const client of wss.clients) client.close(1001);
        wss.close();
        server.close(() => resolve());
      }),
  }),
);
