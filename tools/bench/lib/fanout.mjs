// Deliveries per second of server broadcasts: `clients` connected clients, one of them
// sends `rounds` `fanout` events at once, each of which the server broadcasts as `tick` to
// every client; the server's CPU µs per delivery counts the timed part only. Bounded: fails after `timeoutMs` if deliveries are missing.
import { closeAll, connectMany } from './clients.mjs';
import { secondsSince } from './stats.mjs';

export async function fanout(kind, server, { clients: n, rounds, timeoutMs = 60_000 }) {
  const clients = await connectMany(kind, server.port, n);
  try {
    const expected = rounds * clients.length;
    let received = 0;
    let resolveAll;
    const all = new Promise((resolve) => {
      resolveAll = resolve;
    });
    for (const c of clients) c.on('tick', () => ++received === expected && resolveAll());
    const cpu0 = await server.cpu();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < rounds; i++) clients[0].send('fanout', { i, text: 'tick' });
    let timer;
    await Promise.race([all, new Promise((r) => (timer = setTimeout(r, timeoutMs)))]);
    clearTimeout(timer);
    const elapsed = secondsSince(t0);
    const cpu1 = await server.cpu();
    if (received < expected) throw new Error(`${kind}: only ${received}/${expected} deliveries`);
    return { rate: received / elapsed, cpu: (cpu1 - cpu0) / received };
  } finally {
    await closeAll(clients);
  }
}
