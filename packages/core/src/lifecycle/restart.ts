/**
 * The close of a restart (`close()` with `restart_spread` > 0): every WebSocket client gets
 * close 1012 (service restart) with the reason `restart; retry after <ms> ms`, the delays
 * spread evenly over the window so that the clients of a stopped instance come back over
 * `restart_spread` ms instead of all at once. With `restart_spread: 0` the close is 1001
 * (going away) without a hint, as before.
 */
import { CloseCode, restartReason } from '@pkg/wire';
import type { WebSocketHandler } from '@pkg/ws-protocol';

/** The code and reason of the close that ends every connection on `close()`. */
export function shutdownClose(spreadMs: number): { code: number; reason: string } {
  return spreadMs > 0
    ? { code: CloseCode.SERVICE_RESTART, reason: restartReason(spreadMs) }
    : { code: CloseCode.GOING_AWAY, reason: 'Server shutting down' };
}

/**
 * Delay hints for `count` clients over `spreadMs`: client i gets a random point of the i-th
 * of `count` equal slices, so the hints cover the window evenly (stratified sampling)
 * whatever the order of the clients, and two instances do not hand out the same times.
 */
export function restartDelays(
  count: number,
  spreadMs: number,
  random: () => number = Math.random,
): number[] {
  const delays = new Array<number>(count);
  for (let i = 0; i < count; i += 1) {
    delays[i] = Math.min(spreadMs, Math.floor(((i + random()) * spreadMs) / count));
  }
  return delays;
}

/**
 * Starts the 1012 close of every connected client, each with its own delay hint. The
 * caller's `closeAll` then waits for them (and closes any client this missed with the
 * window's end as its hint).
 */
export function announceRestart(wsHandler: WebSocketHandler, spreadMs: number): number {
  const clients = [...wsHandler.getClients()];
  const delays = restartDelays(clients.length, spreadMs);
  clients.forEach((client, i) => {
    wsHandler.disconnect(client.id, CloseCode.SERVICE_RESTART, restartReason(delays[i]!));
  });
  return clients.length;
}
