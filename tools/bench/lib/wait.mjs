// Polls the server's WebSocket connection count until it is `n` (bounded).
import { sleep } from './proc.mjs';

export async function waitForCount(server, n, ms = 15_000) {
  const deadline = Date.now() + ms;
  let count = await server.count();
  while (count !== n && Date.now() < deadline) {
    await sleep(20);
    count = await server.count();
  }
  if (count !== n) throw new Error(`${server.name}: holds ${count} connections, expected ${n}`);
}
