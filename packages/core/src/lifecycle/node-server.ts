import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { ServerConfig } from '../config/server-config';

/** The `node:http` or `node:https` server under a `Server`. */
export type NodeServer = ReturnType<typeof createHttpServer> | ReturnType<typeof createHttpsServer>;

/** How often Node checks header and request timeouts (ms): their documented precision. */
export const CONNECTIONS_CHECKING_INTERVAL = 1_000;

/**
 * Creates the Node server with the configured timeouts and connection limit: `https` when
 * `tls` is configured, `http` otherwise.
 */
export function createNodeServer(config: ServerConfig): NodeServer {
  const tls = config.getTls();
  // Node checks headers_timeout and request_timeout every connectionsCheckingInterval
  // (30 s by default), so a slow client was cut up to 30 s late; checked every second, the
  // timeouts fire within a second of when they are due. max_connections is enforced by the
  // lifecycle (ConnectionGate), which answers 503 instead of resetting the connection.
  const options = { connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL };
  const server: NodeServer = tls
    ? createHttpsServer({ ...options, ...tls })
    : createHttpServer(options);
  server.headersTimeout = config.getHeadersTimeout();
  server.requestTimeout = config.getRequestTimeout();
  server.keepAliveTimeout = config.getKeepAliveTimeout();
  return server;
}

/**
 * Listens and resolves with the bound port. A failure (port in use, no permission) rejects
 * with an error that says where and what to do, keeping the system error's `code` and
 * `cause`.
 */
export async function listen(server: NodeServer, host: string, port: number): Promise<number> {
  try {
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void => {
        server.removeListener('listening', onListening);
        reject(err);
      };
      const onListening = (): void => {
        server.removeListener('error', onError);
        resolve();
      };
      server.once('error', onError);
      server.once('listening', onListening);
      server.listen(port, host);
    });
  } catch (err) {
    const code = (err as { code?: string }).code;
    const hint =
      code === 'EADDRINUSE'
        ? ' Another process uses this port: stop it or choose another port (0 picks a free one).'
        : code === 'EACCES'
          ? ' Ports below 1024 need privileges: choose a port of 1024 or more.'
          : '';
    const reason = (err as { message?: unknown }).message;
    const wrapped = new Error(
      `Cannot listen on ${host}:${port}: ${String(reason ?? err)}.${hint}`,
      {
        cause: err,
      },
    );
    if (code !== undefined)
      Object.defineProperty(wrapped, 'code', { value: code, enumerable: true });
    throw wrapped;
  }
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : port;
}
