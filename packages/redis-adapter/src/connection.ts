import { createClient } from 'redis';
import { reconnectDelay } from './options';

export interface ConnectionOptions {
  readonly url: string;
  readonly maxReconnectDelay: number;
  /**
   * false: a command issued while Redis is unreachable fails at once (publishing, rate-limit
   * hits), so nothing piles up in memory during an outage. true: it waits for the reconnection
   * (subscriptions, which are few and must survive).
   */
  readonly queueWhileOffline: boolean;
  readonly name: string;
}

/**
 * A client that reconnects by itself forever, with backoff. Its `error` events must have a
 * listener (node-redis rethrows otherwise): the caller passes `onError`.
 */
// The return type is left to inference: node-redis's client type depends on the options.
export function createConnection(options: ConnectionOptions, onError: (err: Error) => void) {
  const client = createClient({
    url: options.url,
    name: options.name,
    disableOfflineQueue: !options.queueWhileOffline,
    socket: {
      reconnectStrategy: (retries: number) => reconnectDelay(retries, options.maxReconnectDelay),
    },
  });
  client.on('error', onError);
  return client;
}

/** The node-redis client type this package uses. */
export type RedisClient = ReturnType<typeof createConnection>;

/** Closes a client whatever its state, never throwing. */
export async function closeConnection(client: RedisClient): Promise<void> {
  if (!client.isOpen) return;
  if (client.isReady) {
    try {
      await client.close();
      return;
    } catch {
      // fall through to destroy
    }
  }
  if (client.isOpen) client.destroy();
}
