// The two measurements several workloads share: a WS echo loop and an HTTP GET of `/json`,
// each returning operations per second and the server's CPU µs per operation.
import autocannon from 'autocannon';
import { closeAll, connectMany } from './clients.mjs';
import { secondsSince } from './stats.mjs';

/**
 * `clients` clients of `kind`, each keeping `inflight` (default 1) `echo` messages in flight
 * for `seconds` (each answer sends the next), counted after `warmup` seconds of the same loop.
 */
export async function measureEcho(kind, server, { clients: n, seconds, warmup = 0, inflight = 1 }) {
  const clients = await connectMany(kind, server.port, n);
  let count = 0;
  let running = true;
  const payload = { text: 'hello', n: 1 };
  const done = clients.map(
    (c) =>
      new Promise((resolve) => {
        let pending = inflight;
        c.on('echo', () => {
          count++;
          if (running) c.send('echo', payload);
          else if (--pending === 0) resolve();
        });
        for (let i = 0; i < inflight; i++) c.send('echo', payload);
      }),
  );
  if (warmup > 0) await new Promise((r) => setTimeout(r, warmup * 1000));
  const count0 = count;
  const cpu0 = await server.cpu();
  const t0 = process.hrtime.bigint();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  running = false;
  const elapsed = secondsSince(t0);
  const cpu1 = await server.cpu();
  await Promise.race([Promise.all(done), new Promise((r) => setTimeout(r, 2000))]);
  await closeAll(clients);
  const counted = count - count0;
  return { rate: counted / elapsed, cpu: (cpu1 - cpu0) / counted };
}

/** `GET /json` over `connections` keep-alive connections for `seconds`; fails on any error. */
export async function measureGet(server, { connections, seconds }) {
  const before = await server.cpu();
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}/json`,
    connections,
    duration: seconds,
  });
  const after = await server.cpu();
  if (result.non2xx || result.errors || result.timeouts) {
    throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors, ${result.timeouts} timeouts`); // prettier-ignore
  }
  return { rate: result.requests.average, cpu: (after - before) / result.requests.total };
}
