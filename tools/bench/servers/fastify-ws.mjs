// Fastify with @fastify/websocket: the WebSocket events of servers/ws.mjs on Fastify's
// route for the upgrade (`{websocket: true}`), one JSON.parse per message.
// Limits: Fastify's defaults, @fastify/websocket's defaults (ws's maxPayload set to 1 MiB as
// for raw ws); no heartbeat, no connection cap. An invalid message throws.
import Fastify from 'fastify';
import websocket from '@fastify/websocket';
import { serve } from './control.mjs';

const app = Fastify({ logger: false });
await app.register(websocket, { options: { maxPayload: 1024 * 1024 } });
app.register(async (scope) => {
  scope.get('/', { websocket: true }, (socket) => {
    socket.on('message', (raw) => {
      const msg = JSON.parse(raw.toString());
      if (msg.event === 'echo') socket.send(JSON.stringify({ event: 'echo', data: msg.data }));
      else if (msg.event === 'fanout') {
        const text = JSON.stringify({ event: 'tick', data: msg.data });
        for (const client of app.websocketServer.clients) client.send(text);
      }
    });
  });
});
await app.listen({ port: 0, host: '127.0.0.1' });
serve({
  port: app.server.address().port,
  count: () => app.websocketServer.clients.size,
  close: () => app.close(),
});
