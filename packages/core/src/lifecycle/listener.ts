import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { LoggerInterface } from '@pkg/logger';
import type { NodeServer } from './node-server';

/** Where the events of a `node:http` server go. */
export interface ListenerHandlers {
  /** A new connection (TCP, TLS after its handshake, or in-process). */
  readonly onConnection: (socket: Duplex) => void;
  readonly onRequest: (req: IncomingMessage, res: ServerResponse) => void;
  readonly onUpgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** The largest body accepted, to answer `Expect: 100-continue`. */
  readonly maxBodySize: number;
}

/**
 * Wires a `node:http` / `node:https` server to the handlers: connections, requests (with
 * `Expect: 100-continue`), upgrades, and TLS handshake failures (logged at debug).
 */
export function attachListeners(
  server: NodeServer | ReturnType<typeof createServer>,
  handlers: ListenerHandlers,
  tls: boolean,
  logger: LoggerInterface,
): void {
  server.on(tls ? 'secureConnection' : 'connection', handlers.onConnection);
  server.on('request', handlers.onRequest);
  // `Expect: 100-continue`: invite the body only when its declared size fits; otherwise the
  // handler answers 413 at once and the client never sends it.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const declared = Number(req.headers['content-length']);
    if (!(declared > handlers.maxBodySize)) res.writeContinue();
    handlers.onRequest(req, res);
  });
  server.on('upgrade', handlers.onUpgrade);
  if (tls) {
    server.on('tlsClientError', (err: Error) => {
      logger.debug('TLS handshake failed', { error: err.message });
    });
  }
}

/**
 * A `node:http` server that never listens, wired like the listening one: an in-process
 * connection (`server.connect()`) is handed to it with `emit('connection', socket)` and goes
 * through Node's own parser and the same handlers, admission included.
 */
export function inProcessServer(
  handlers: ListenerHandlers,
  logger: LoggerInterface,
): ReturnType<typeof createServer> {
  const server = createServer();
  attachListeners(server, handlers, false, logger);
  return server;
}
