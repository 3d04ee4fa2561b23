import { createServer, type IncomingMessage } from 'node:http';
import { Duplex } from 'node:stream';
import type { WebSocketHandler } from '@pkg/ws-protocol';
import { WebSocket, type ClientOptions } from 'ws';

// `server.connect()`: a real `ws` client whose TCP connection is replaced by an in-memory
// pair of streams. The server end is accepted as a listener's socket is: counted against
// max_connections, parsed by Node's own HTTP parser, admitted (draining, allowed_hosts,
// max_connections_per_ip), then the server's WebSocketHandler (origin policy, handshake
// middleware, OnConnect, envelopes, rooms, OnDisconnect); no port is opened.

/** Options of `server.connect()`. */
export interface ConnectOptions {
  /** Path and query of the upgrade request. Default `'/'`. */
  path?: string;
  /** Extra upgrade request headers (`Origin`, `Authorization`, `Cookie`...). */
  headers?: Record<string, string>;
  /** The peer address the server sees. Default `'127.0.0.1'`. */
  remoteAddress?: string;
  /**
   * Skip the admission the listener applies (draining, `allowed_hosts`, `max_connections`,
   * `max_connections_per_ip`): the connection goes straight to the WebSocket handshake
   * (origin policy and handshake middleware still apply) and takes no per-address slot.
   * Default `false`.
   */
  skipAdmission?: boolean;
}

/** One end of an in-memory stream pair: what is written to it is read from its peer. */
class MemoryEnd extends Duplex {
  peer: MemoryEnd | undefined;
  readonly remoteAddress: string;
  readonly remotePort = 0;

  constructor(remoteAddress: string) {
    super({ allowHalfOpen: false });
    this.remoteAddress = remoteAddress;
  }

  override _read(): void {}

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error) => void): void {
    const peer = this.peer;
    if (peer === undefined || peer.destroyed) {
      done();
      return;
    }
    // Delivered on a later tick, like bytes from a socket.
    setImmediate(() => {
      if (!peer.destroyed) peer.push(chunk);
      done();
    });
  }

  override _final(done: (err?: Error) => void): void {
    const peer = this.peer;
    setImmediate(() => {
      if (peer !== undefined && !peer.destroyed) peer.push(null);
      done();
    });
  }

  override _destroy(err: Error | null, done: (err: Error | null) => void): void {
    const peer = this.peer;
    if (peer !== undefined && !peer.destroyed) setImmediate(() => peer.destroy());
    done(err);
  }

  // What node:http and ws may call on a net.Socket.
  setTimeout(): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
}

function memoryPair(remoteAddress: string): [client: MemoryEnd, server: MemoryEnd] {
  const client = new MemoryEnd('127.0.0.1');
  const server = new MemoryEnd(remoteAddress);
  client.peer = server;
  server.peer = client;
  return [client, server];
}

/**
 * Hands the server end of an in-memory connection straight to `handler`'s handshake,
 * without the server's admission (`skipAdmission`).
 */
export function handshakeOnly(handler: WebSocketHandler): (socket: Duplex) => void {
  return (socket) => {
    // A parser only: this node:http server never listens.
    const parser = createServer();
    parser.on('upgrade', (req: IncomingMessage, upgraded: Duplex, head: Buffer) => {
      void handler.performHandshake(req, upgraded, head).catch(() => upgraded.destroy());
    });
    parser.emit('connection', socket);
  };
}

/**
 * Opens an in-memory WebSocket connection whose server end is given to `accept` (the
 * server's in-process listener, or {@link handshakeOnly}) and resolves with the open
 * client, or rejects when the handshake is refused (the error message has the status).
 */
export function connectInMemory(
  accept: (socket: Duplex) => void,
  options: ConnectOptions = {},
): Promise<WebSocket> {
  const [clientEnd, serverEnd] = memoryPair(options.remoteAddress ?? '127.0.0.1');
  accept(serverEnd);
  const clientOptions: ClientOptions = {
    createConnection: () => clientEnd as unknown as import('node:net').Socket,
    ...(options.headers ? { headers: options.headers } : {}),
  };
  const ws = new WebSocket(`ws://in-memory${options.path ?? '/'}`, clientOptions);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      reject(new Error(`The WebSocket handshake was refused with ${res.statusCode}.`));
      clientEnd.destroy();
    });
    ws.once('error', reject);
  });
}
