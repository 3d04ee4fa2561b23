// WebSocket clients for the workloads: one uniform shape over raw `ws` (the library and raw
// ws servers speak `{event, data}` JSON) and socket.io-client (WebSocket transport only).
import { once } from 'node:events';
import { io as ioClient } from 'socket.io-client';
import WebSocket from 'ws';

/** Which client speaks to a server: socket.io needs its own, the others take raw ws. */
export const clientFor = (server) => (server === 'socket.io' ? 'socket.io' : 'ws');

/**
 * Opens one client and resolves once its handshake is done (`open` for ws; `connect`,
 * the namespace handshake, for socket.io). `{send, on, close}`; `closed` resolves when the
 * connection has ended.
 */
export async function connect(kind, port) {
  if (kind === 'socket.io') {
    const s = ioClient(`http://127.0.0.1:${port}`, {
      transports: ['websocket'],
      forceNew: true,
      reconnection: false,
    });
    await new Promise((resolve, reject) => {
      s.once('connect', resolve);
      s.once('connect_error', reject);
    });
    const closed = new Promise((resolve) => s.once('disconnect', resolve));
    return {
      send: (e, d) => s.emit(e, d),
      on: (e, fn) => s.on(e, fn),
      close: () => s.close(),
      closed,
    };
  }
  const s = new WebSocket(`ws://127.0.0.1:${port}/`);
  const closed = new Promise((resolve) => s.once('close', () => resolve()));
  await once(s, 'open'); // rejects on a failed handshake
  s.on('error', () => {}); // a reset after the handshake ends in 'close'
  const handlers = new Map();
  s.on('message', (raw) => {
    const msg = JSON.parse(raw.toString());
    handlers.get(msg.event)?.(msg.data);
  });
  return {
    send: (e, d) => s.send(JSON.stringify({ event: e, data: d })),
    on: (e, fn) => handlers.set(e, fn),
    close: () => s.close(),
    closed,
  };
}

/** Opens `n` clients with at most `concurrency` handshakes under way at once. */
export async function connectMany(kind, port, n, concurrency = 100) {
  const clients = new Array(n);
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      clients[i] = await connect(kind, port);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  return clients;
}

/** Closes every client and waits (at most `ms`) until each connection has ended. */
export async function closeAll(clients, ms = 10_000) {
  for (const c of clients) c.close();
  let timer;
  await Promise.race([
    Promise.all(clients.map((c) => c.closed)),
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}
