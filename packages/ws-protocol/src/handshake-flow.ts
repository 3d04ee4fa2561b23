/**
 * The handshake of a WebSocketHandler, from the `upgrade` event to an accepted `ws`
 * connection: shutdown, the RFC 6455 checks, the origin policy, the client id, the handshake
 * hooks (reading early bytes meanwhile), then `ws`'s upgrade. Every refusal is a short HTTP
 * answer (see handshake.ts) and a log line.
 */
import { Buffer } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { WebSocket } from 'ws';
import type { LoggerInterface } from '@pkg/logger';
import { nextClientId } from './client-id';
import { createWsError } from './errors';
import {
  headerValue,
  holdEarlyBytes,
  splitRequestTarget,
  validateUpgradeRequest,
  writeHandshakeError,
} from './handshake';
import type { HandshakeContext, HandshakeFailure, HandshakeHook } from './handshake';
import { runHandshakeHooks } from './hooks';
import { selectSubprotocol } from './subprotocol';
import type { OriginPredicate } from './origin';
import type { ResolvedWebSocketHandlerOptions } from './options';
import type { ClientTable } from './client-table';

/** Bytes a client may send before its handshake completes (they are kept for `ws`). */
const MAX_EARLY_BYTES = 64 * 1024;

const SHUTTING_DOWN: HandshakeFailure = Object.freeze({
  status: 503,
  code: 'PKG_ERR_WS_SHUTTING_DOWN',
  message: 'The server is shutting down.',
});

/** Makes the accepted `ws` connection a client; throws when that fails. */
export type AcceptConnection = (
  ws: WebSocket,
  request: IncomingMessage,
  rawSocket: Duplex,
  id: string,
  ip: string,
  data: Record<string, unknown>,
) => void;

/** What the handshake shares with the handler. */
export interface HandshakeParts {
  readonly options: ResolvedWebSocketHandlerOptions;
  readonly log: LoggerInterface;
  readonly wss: WebSocketServer;
  readonly table: ClientTable;
  readonly hooks: readonly HandshakeHook[];
  readonly originAllowed: () => OriginPredicate;
  readonly closing: () => boolean;
  readonly accept: AcceptConnection;
  /** Undoes a failed accept (the 101 is on the wire: the connection is dropped). */
  readonly abandon: (ws: WebSocket, id: string) => void;
}

/** The `ws` server (noServer mode) that completes upgrades with the handler's options. */
export function createWsServer(options: ResolvedWebSocketHandlerOptions): WebSocketServer {
  const { perMessageDeflate, controlEvents } = options;
  return new WebSocketServer({
    noServer: true,
    // `pkg.v1` when offered and the handler speaks protocol version 1; else the first
    // offered, as `ws` does by default.
    handleProtocols: (offered) => selectSubprotocol(offered, controlEvents),
    clientTracking: false,
    maxPayload: options.maxPayload,
    // Pings are answered by sendPong, so that pongs obey the send-buffer limit as well.
    autoPong: false,
    perMessageDeflate: perMessageDeflate
      ? {
          threshold: perMessageDeflate.threshold,
          // No context takeover: zlib state is freed after each message instead of being
          // held per connection, the main memory cost of compression.
          serverNoContextTakeover: true,
          clientNoContextTakeover: true,
        }
      : false,
    // Newer `ws` versions honour this too; the handler keeps its own timer regardless.
    ...({ closeTimeout: options.closeTimeout } as object),
  });
}

/** Runs one handshake; see `WebSocketHandler.performHandshake`. */
export async function performHandshake(
  p: HandshakeParts,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  clientId?: string,
): Promise<boolean> {
  const onSocketError = (err: Error): void => {
    p.log.debug('WebSocket handshake socket error', { error: err.message });
    socket.destroy();
  };
  // From the first moment: a reset connection must never become an uncaught error.
  socket.on('error', onSocketError);
  try {
    return await handshake(p, req, socket, head, clientId, onSocketError);
  } catch (err) {
    p.log.exception(err, { phase: 'websocket handshake' });
    writeHandshakeError(socket, { status: 500 });
    return false;
  }
}

async function handshake(
  p: HandshakeParts,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  givenId: string | undefined,
  onSocketError: (err: Error) => void,
): Promise<boolean> {
  const { options, log, table } = p;
  const refuse = (failure: HandshakeFailure, level: 'debug' | 'info' | 'notice'): false => {
    log[level]('WebSocket handshake refused', {
      code: failure.code,
      status: failure.status,
      reason: failure.message,
      // The path only: a query string may carry a token.
      path: splitRequestTarget(req.url ?? '/').path,
      remoteAddress: req.socket?.remoteAddress,
    });
    writeHandshakeError(socket, failure, log);
    return false;
  };

  if (p.closing()) return refuse(SHUTTING_DOWN, 'debug');
  const invalid = validateUpgradeRequest(req);
  if (invalid) return refuse(invalid, 'debug');

  const origin = headerValue(req.headers.origin);
  if (!p.originAllowed()(origin)) {
    return refuse(
      {
        status: 403,
        code: 'PKG_ERR_WS_ORIGIN_NOT_ALLOWED',
        message: origin === undefined ? 'Origin header required.' : 'Origin not allowed.',
      },
      'notice',
    );
  }

  const id = givenId ?? (options.generateId ?? nextClientId)();
  if (typeof id !== 'string' || id === '') {
    throw createWsError(
      TypeError,
      'PKG_ERR_WS_INVALID_ARGUMENT',
      `A client id must be a non-empty string, got ${JSON.stringify(id)}; check generateId or the clientId argument.`,
    );
  }
  if (table.taken(id)) {
    log.error('WebSocket handshake refused: client id already in use', {
      code: 'PKG_ERR_WS_DUPLICATE_CLIENT_ID',
      clientId: id,
    });
    writeHandshakeError(socket, { status: 500 });
    return false;
  }

  const ip = (options.clientIp ? options.clientIp(req) : req.socket?.remoteAddress) ?? '';
  const data: Record<string, unknown> = {};

  let upgradeHead = Buffer.isBuffer(head) ? head : Buffer.alloc(0);
  if (p.hooks.length > 0) {
    // The context is made only for hooks: without them, no query string is parsed.
    const { path, query } = splitRequestTarget(req.url ?? '/');
    const context: HandshakeContext = Object.freeze({
      request: req,
      headers: req.headers,
      query,
      path,
      ip,
      origin,
      clientId: id,
      data,
    });
    // While hooks run (they may be slow), keep reading so that a client that leaves is
    // noticed; anything it sends early is kept and handed to `ws`.
    const early = holdEarlyBytes(socket, MAX_EARLY_BYTES);
    table.hold(id);
    let failure: HandshakeFailure | undefined;
    let kept: Buffer = Buffer.alloc(0);
    try {
      failure = await runHandshakeHooks(p.hooks, context, options.handshakeTimeout, log);
    } finally {
      table.unhold(id);
      kept = early.release();
    }
    if (failure) return refuse(failure, failure.status >= 500 ? 'notice' : 'info');
    if (kept.length > 0) upgradeHead = Buffer.concat([upgradeHead, kept]);
  }

  if (p.closing()) return refuse(SHUTTING_DOWN, 'debug');
  if (socket.destroyed || !socket.readable || !socket.writable) {
    log.debug('WebSocket client left during the handshake', { clientId: id });
    socket.destroy();
    return false;
  }

  let upgraded: WebSocket | undefined;
  // Without verifyClient, `ws` completes (or refuses) the upgrade synchronously.
  p.wss.handleUpgrade(req, socket, upgradeHead, (ws) => {
    upgraded = ws;
  });
  if (!upgraded) {
    log.debug('WebSocket upgrade refused by ws', { clientId: id });
    return false;
  }
  socket.removeListener('error', onSocketError);
  try {
    p.accept(upgraded, req, socket, id, ip, data);
  } catch (err) {
    // The 101 answer is already on the wire: an HTTP error page would be read as a
    // corrupt frame. Drop the connection instead.
    log.exception(err, { phase: 'websocket accept', clientId: id });
    p.abandon(upgraded, id);
    return false;
  }
  return true;
}
