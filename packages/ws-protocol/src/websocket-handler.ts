/**
 * WebSocketHandler: the WebSocket side of the server on top of `ws` in `noServer` mode.
 * `ws` owns the frames (masking, fragmentation, control frames, UTF-8, close handshake,
 * permessage-deflate); this class owns who may connect (origin policy and handshake hooks),
 * the `{event, data}` envelope, liveness (heartbeat), limits and back-pressure, and shutdown.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import type { RawData } from 'ws';
import type { LoggerInterface } from '@pkg/logger';
import { generateAcceptKey } from './accept-key';
import { nextClientId } from './client-id';
import { assertCloseFrame, closeCodeForWsError, WsCloseCode } from './close-codes';
import { Connection } from './connection';
import type { WsClient } from './connection';
import { decodeMessage, MessageDecodeError, prepareError, prepareMessage } from './envelope';
import type { Envelope, EventData, RequestId } from './envelope';
import { describe } from './describe';
import { createWsError, WsEventErrorCode } from './errors';
import { FairScheduler } from './fairness';
import { HeartbeatSweep } from './heartbeat';
import { refuseCheaply } from './inbound-budget';
import type { WsErrorCode } from './errors';
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
import { compileOriginPolicy } from './origin';
import type { OriginPredicate } from './origin';
import { resolveWsHandlerOptions } from './options';
import type { ResolvedWebSocketHandlerOptions, WebSocketHandlerOptions } from './options';

/** Called once per client after its handshake, with the upgrade request (kept or not). */
export type WsConnectListener = (client: WsClient, request: IncomingMessage) => void;
export type WsMessageListener = (client: WsClient, envelope: Envelope) => void;
export type WsDisconnectListener = (client: WsClient, code: number, reason: string) => void;

/** Send options of every outbound message: a text frame, also when given a Buffer. */
const SEND_AS_TEXT = { binary: false } as const;

/** Bytes a client may send before its handshake completes (they are kept for `ws`). */
const MAX_EARLY_BYTES = 64 * 1024;

/** Where a `ws` socket keeps its Connection, for the listeners shared by every connection. */
const kConnection = Symbol('connection');
type TaggedSocket = WebSocket & { [kConnection]?: Connection<WebSocketHandler> };

function connectionOf(ws: WebSocket): Connection<WebSocketHandler> | undefined {
  return (ws as TaggedSocket)[kConnection];
}

function toBuffer(raw: RawData | string): Buffer | string {
  if (typeof raw === 'string' || Buffer.isBuffer(raw)) return raw;
  if (Array.isArray(raw)) return Buffer.concat(raw);
  return Buffer.from(raw);
}

/** The size of a message as `ws` hands it over. */
function rawLength(raw: RawData): number {
  if (Buffer.isBuffer(raw)) return raw.length;
  if (Array.isArray(raw)) return raw.reduce((n, b) => n + b.length, 0);
  return raw.byteLength;
}

const NOT_AN_OBJECT =
  'The message is not a JSON object: send {"event": "name", "data": {}} as a text message.';
const NOT_JSON =
  'The message is not valid JSON: send {"event": "name", "data": {}} as a text message.';

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function assertFunction(value: unknown, method: string): void {
  if (typeof value !== 'function') {
    throw createWsError(
      TypeError,
      'PKG_ERR_WS_INVALID_ARGUMENT',
      `${method} expects a function, got ${describe(value)}.`,
    );
  }
}

export class WebSocketHandler {
  readonly #options: ResolvedWebSocketHandlerOptions;
  readonly #log: LoggerInterface;
  readonly #wss: WebSocketServer;
  #allowedOrigins: readonly string[];
  #originAllowed: OriginPredicate;
  readonly #hooks: HandshakeHook[] = [];
  readonly #connectListeners: WsConnectListener[] = [];
  readonly #messageListeners: WsMessageListener[] = [];
  readonly #disconnectListeners: WsDisconnectListener[] = [];
  readonly #clients = new Map<string, Connection<WebSocketHandler>>();
  readonly #heartbeat: HeartbeatSweep<Connection<WebSocketHandler>>;
  /** Ids of handshakes under way, so that an id is never given out twice. */
  readonly #pending = new Set<string>();
  #closing = false;
  readonly #fair: FairScheduler<Connection<WebSocketHandler>>;

  constructor(options: WebSocketHandlerOptions = {}) {
    this.#options = resolveWsHandlerOptions(options);
    this.#log = this.#options.logger;
    this.#fair = new FairScheduler(this.#options.maxMessagesPerTurn, (conn, raw, isBinary) =>
      this.#receive(conn, raw, isBinary),
    );
    this.#allowedOrigins = Object.freeze([...this.#options.allowedOrigins]);
    this.#originAllowed = compileOriginPolicy(
      this.#allowedOrigins,
      this.#options.allowMissingOrigin,
    );
    this.#heartbeat = new HeartbeatSweep({
      interval: this.#options.heartbeatInterval,
      timeout: this.#options.heartbeatTimeout,
      ping: (conn) => this.#ping(conn),
      onTimeout: (conn) => this.#heartbeatExpired(conn),
    });
    const { perMessageDeflate, controlEvents } = this.#options;
    this.#wss = new WebSocketServer({
      noServer: true,
      // `pkg.v1` when offered and the handler speaks protocol version 1; else the first
      // offered, as `ws` does by default.
      handleProtocols: (offered) => selectSubprotocol(offered, controlEvents),
      clientTracking: false,
      maxPayload: this.#options.maxPayload,
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
      ...({ closeTimeout: this.#options.closeTimeout } as object),
    });
  }

  // ---------------------------------------------------------------- configuration

  /** The origins that may connect (as given; `'*'` means any). */
  getAllowedOrigins(): readonly string[] {
    return this.#allowedOrigins;
  }

  /** Replaces the origin allow-list; applies to handshakes from now on. */
  setAllowedOrigins(origins: string[]): void {
    if (!Array.isArray(origins)) {
      throw createWsError(
        TypeError,
        'PKG_ERR_WS_INVALID_ARGUMENT',
        "setAllowedOrigins expects an array of origins, e.g. ['https://app.example.com'].",
      );
    }
    const predicate = compileOriginPolicy(origins, this.#options.allowMissingOrigin);
    this.#allowedOrigins = Object.freeze([...origins]);
    this.#originAllowed = predicate;
  }

  /** Adds a hook that runs on every handshake after the origin check (e.g. authentication). */
  addHandshakeHook(hook: HandshakeHook): this {
    assertFunction(hook, 'addHandshakeHook');
    this.#hooks.push(hook);
    return this;
  }

  /** Called once per client after its handshake completed. */
  onConnect(fn: WsConnectListener): this {
    assertFunction(fn, 'onConnect');
    this.#connectListeners.push(fn);
    return this;
  }

  /** Called with every valid envelope a client sends. */
  onMessage(fn: WsMessageListener): this {
    assertFunction(fn, 'onMessage');
    this.#messageListeners.push(fn);
    return this;
  }

  /** Called exactly once per connected client, however the connection ended. */
  onDisconnect(fn: WsDisconnectListener): this {
    assertFunction(fn, 'onDisconnect');
    this.#disconnectListeners.push(fn);
    return this;
  }

  // ---------------------------------------------------------------- handshake

  /**
   * Takes an `upgrade` event of a `node:http` server: checks the request, the origin and the
   * handshake hooks, then completes the upgrade with `ws`. Resolves true when the client is
   * connected, false when the handshake was refused (answered with 400, 403, 426, a hook's
   * status, 500 or 503) or the client went away meanwhile. Never rejects.
   */
  async performHandshake(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    clientId?: string,
  ): Promise<boolean> {
    const onSocketError = (err: Error): void => {
      this.#log.debug('WebSocket handshake socket error', { error: err.message });
      socket.destroy();
    };
    // From the first moment: a reset connection must never become an uncaught error.
    socket.on('error', onSocketError);
    try {
      return await this.#handshake(req, socket, head, clientId, onSocketError);
    } catch (err) {
      this.#log.exception(err, { phase: 'websocket handshake' });
      writeHandshakeError(socket, 500, 'Internal Server Error');
      return false;
    }
  }

  async #handshake(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    givenId: string | undefined,
    onSocketError: (err: Error) => void,
  ): Promise<boolean> {
    const refuse = (failure: HandshakeFailure, level: 'debug' | 'info' | 'notice'): false => {
      this.#log[level]('WebSocket handshake refused', {
        code: failure.code,
        status: failure.status,
        reason: failure.message,
        // The path only: a query string may carry a token.
        path: splitRequestTarget(req.url ?? '/').path,
        remoteAddress: req.socket?.remoteAddress,
      });
      writeHandshakeError(socket, failure.status, failure.message, failure.headers);
      return false;
    };
    const shuttingDown: HandshakeFailure = {
      status: 503,
      code: 'PKG_ERR_WS_SHUTTING_DOWN',
      message: 'The server is shutting down.',
    };

    if (this.#closing) return refuse(shuttingDown, 'debug');
    const invalid = validateUpgradeRequest(req);
    if (invalid) return refuse(invalid, 'debug');

    const origin = headerValue(req.headers.origin);
    if (!this.#originAllowed(origin)) {
      return refuse(
        {
          status: 403,
          code: 'PKG_ERR_WS_ORIGIN_NOT_ALLOWED',
          message: origin === undefined ? 'Origin header required.' : 'Origin not allowed.',
        },
        'notice',
      );
    }

    const id = givenId ?? (this.#options.generateId ?? nextClientId)();
    if (typeof id !== 'string' || id === '') {
      throw createWsError(
        TypeError,
        'PKG_ERR_WS_INVALID_ARGUMENT',
        `A client id must be a non-empty string, got ${JSON.stringify(id)}; check generateId or the clientId argument.`,
      );
    }
    if (this.#clients.has(id) || this.#pending.has(id)) {
      this.#log.error('WebSocket handshake refused: client id already in use', {
        code: 'PKG_ERR_WS_DUPLICATE_CLIENT_ID',
        clientId: id,
      });
      writeHandshakeError(socket, 500, 'Internal Server Error');
      return false;
    }

    const ip =
      (this.#options.clientIp ? this.#options.clientIp(req) : req.socket?.remoteAddress) ?? '';
    const data: Record<string, unknown> = {};

    let upgradeHead = Buffer.isBuffer(head) ? head : Buffer.alloc(0);
    if (this.#hooks.length > 0) {
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
      this.#pending.add(id);
      let failure: HandshakeFailure | undefined;
      let kept: Buffer = Buffer.alloc(0);
      try {
        failure = await runHandshakeHooks(
          this.#hooks,
          context,
          this.#options.handshakeTimeout,
          this.#log,
        );
      } finally {
        this.#pending.delete(id);
        kept = early.release();
      }
      if (failure) return refuse(failure, failure.status >= 500 ? 'notice' : 'info');
      if (kept.length > 0) upgradeHead = Buffer.concat([upgradeHead, kept]);
    }

    if (this.#closing) return refuse(shuttingDown, 'debug');
    if (socket.destroyed || !socket.readable || !socket.writable) {
      this.#log.debug('WebSocket client left during the handshake', { clientId: id });
      socket.destroy();
      return false;
    }

    let upgraded: WebSocket | undefined;
    // Without verifyClient, `ws` completes (or refuses) the upgrade synchronously.
    this.#wss.handleUpgrade(req, socket, upgradeHead, (ws) => {
      upgraded = ws;
    });
    if (!upgraded) {
      this.#log.debug('WebSocket upgrade refused by ws', { clientId: id });
      return false;
    }
    socket.removeListener('error', onSocketError);
    try {
      this.#accept(upgraded, req, socket, id, ip, data);
    } catch (err) {
      // The 101 answer is already on the wire: an HTTP error page would be read as a
      // corrupt frame. Drop the connection instead.
      this.#log.exception(err, { phase: 'websocket accept', clientId: id });
      const conn = connectionOf(upgraded);
      if (conn !== undefined) this.#heartbeat.remove(conn);
      this.#clients.delete(id);
      upgraded.terminate();
      return false;
    }
    return true;
  }

  #accept(
    ws: WebSocket,
    request: IncomingMessage,
    rawSocket: Duplex,
    id: string,
    ip: string,
    data: Record<string, unknown>,
  ): void {
    const client: WsClient = Object.freeze({
      id,
      socket: ws,
      ip,
      data,
      request: this.#options.keepRequest ? request : undefined,
    });
    const conn = new Connection<WebSocketHandler>(client, rawSocket, this, this.#options);
    this.#clients.set(id, conn);
    (ws as TaggedSocket)[kConnection] = conn;
    // The same five functions for every connection: no closures per client.
    ws.on('error', WebSocketHandler.#onSocketError);
    ws.on('message', WebSocketHandler.#onSocketMessage);
    ws.on('ping', WebSocketHandler.#onSocketPing);
    ws.on('pong', WebSocketHandler.#onSocketPong);
    ws.on('close', WebSocketHandler.#onSocketClose);
    this.#heartbeat.add(conn);

    this.#log.debug('WebSocket client connected', { clientId: id, ip });
    for (const fn of this.#connectListeners) {
      try {
        fn(client, request);
      } catch (err) {
        this.#log.exception(err, { clientId: id, listener: 'onConnect' });
      }
    }
  }

  static #onSocketError(this: WebSocket, err: Error): void {
    const conn = connectionOf(this);
    if (conn !== undefined) conn.owner.#onConnectionError(conn, err);
  }

  static #onSocketMessage(this: WebSocket, raw: RawData, isBinary: boolean): void {
    const conn = connectionOf(this);
    if (conn !== undefined) conn.owner.#fair.offer(conn, raw, isBinary);
  }

  static #onSocketPing(this: WebSocket, payload: Buffer): void {
    connectionOf(this)?.owner.sendPong(this, payload);
  }

  static #onSocketPong(this: WebSocket): void {
    const conn = connectionOf(this);
    if (conn !== undefined) conn.owner.#heartbeat.pong(conn);
  }

  static #onSocketClose(this: WebSocket, code: number, reason: Buffer): void {
    const conn = connectionOf(this);
    if (conn !== undefined) conn.owner.#onClose(conn, code, reason.toString('utf8'));
  }

  // ---------------------------------------------------------------- inbound

  /**
   * The message path of one inbound message: a binary message gets an `error` event (or
   * close 1003 with `binaryMessages: 'close'`), a text message is decoded into the envelope
   * and given to the onMessage listeners, or answered with an `error` event
   * `{code, message}` when it is not a valid envelope. The connection stays open except for
   * 1003. Returns true when the message reached the listeners.
   */
  handle(client: WsClient, raw: RawData | string, isBinary: boolean): boolean {
    const conn = this.#clients.get(client.id);
    if (conn !== undefined && conn.client === client) return this.#receive(conn, raw, isBinary);
    return this.#process(client, raw, isBinary);
  }

  /**
   * Counts a protocol error against the client's budget (closing it with 1008 once it has
   * made too many) and answers the `error` event `{code, message, ...extra}`, at most once
   * per `errorReplyInterval` for the same code. With `protocolError` false only the reply
   * is limited. With `id` (the refused message was a request) the reply answers it
   * (`{"event": "error", "id", "data"}`) and is always sent, since the requester waits for
   * it; the protocol-error cap still bounds how many such replies a client can earn.
   * Returns true when the reply was sent.
   */
  refuse(
    clientId: string,
    code: string,
    message: string,
    extra: Record<string, unknown> = {},
    protocolError = true,
    id?: RequestId,
  ): boolean {
    const conn = this.#clients.get(clientId);
    if (conn === undefined) return false;
    return this.#refuse(conn, code, message, extra, protocolError, id);
  }

  #refuse(
    conn: Connection<WebSocketHandler>,
    code: string,
    message: string,
    extra: Record<string, unknown>,
    protocolError: boolean,
    id?: RequestId,
  ): boolean {
    if (conn.ending || conn.gone) return false;
    const now = Date.now();
    if (protocolError && conn.budget.protocolError(now)) {
      this.#log.notice('WebSocket client made too many protocol errors; closing with 1008', {
        clientId: conn.client.id,
        code: 'PKG_ERR_WS_TOO_MANY_PROTOCOL_ERRORS' satisfies WsErrorCode,
        closeCode: WsCloseCode.POLICY_VIOLATION,
        lastError: code,
        maxProtocolErrors: this.#options.maxProtocolErrors,
      });
      conn.close(
        WsCloseCode.POLICY_VIOLATION,
        'Too many protocol errors',
        this.#options.closeTimeout,
        this.#log,
      );
      return false;
    }
    if (id !== undefined) return this.#deliver(conn, prepareError(code, message, id, extra));
    if (!conn.budget.mayReply(code, now)) return false;
    return this.#deliver(conn, prepareError(code, message, undefined, extra));
  }

  /**
   * The request id of a message refused before it was decoded (shutdown, over budget), so
   * that the refusal answers it. Decoding costs a parse, but a client pays for over-budget
   * messages with protocol errors and is closed with 1008 after `maxProtocolErrors` of them.
   */
  #requestIdOf(raw: RawData | string, isBinary: boolean): RequestId | undefined {
    if (isBinary) return undefined;
    try {
      return decodeMessage(toBuffer(raw), this.#options.prototypeKeys, this.#options.controlEvents)
        .id;
    } catch (err) {
      return err instanceof MessageDecodeError ? err.id : undefined;
    }
  }

  /** A message of a connected client: budget and shutdown checks, then #process. */
  #receive(conn: Connection<WebSocketHandler>, raw: RawData | string, isBinary: boolean): boolean {
    if (conn.ending || conn.gone) return false;
    const { client } = conn;
    if (this.#closing) {
      this.#refuse(
        conn,
        WsEventErrorCode.SHUTTING_DOWN,
        'The server is shutting down: the message was not handled.',
        {},
        false,
        this.#requestIdOf(raw, isBinary),
      );
      return false;
    }
    const size = typeof raw === 'string' ? Buffer.byteLength(raw) : rawLength(raw);
    if (!conn.budget.take(size, Date.now())) {
      this.#log.debug('WebSocket message over the inbound budget', {
        clientId: client.id,
        code: 'PKG_ERR_WS_OVER_BUDGET' satisfies WsErrorCode,
      });
      this.#refuse(
        conn,
        WsEventErrorCode.TOO_MANY_MESSAGES,
        `Too many messages: at most ${this.#options.maxMessagesPerSecond} messages and ${this.#options.maxBytesPerSecond} bytes per second. Slow down.`,
        {},
        true,
        this.#requestIdOf(raw, isBinary),
      );
      return false;
    }
    return this.#process(client, raw, isBinary, conn);
  }

  #process(
    client: WsClient,
    raw: RawData | string,
    isBinary: boolean,
    conn?: Connection<WebSocketHandler>,
  ): boolean {
    const refuse = (code: string, message: string, id?: RequestId): void => {
      if (conn !== undefined) this.#refuse(conn, code, message, {}, true, id);
      else this.sendError(client.id, code, message, id);
    };
    if (isBinary) {
      if (this.#options.binaryMessages === 'close') {
        this.#log.notice('WebSocket client sent a binary message; closing with 1003', {
          clientId: client.id,
          code: 'PKG_ERR_WS_BINARY_NOT_SUPPORTED',
        });
        this.#clients
          .get(client.id)
          ?.close(
            WsCloseCode.UNSUPPORTED_DATA,
            'Binary messages are not supported',
            this.#options.closeTimeout,
            this.#log,
          );
      } else {
        refuse(
          WsEventErrorCode.BINARY_NOT_SUPPORTED,
          'Binary messages are not supported: send the envelope as a JSON text message.',
        );
      }
      return false;
    }
    const text = toBuffer(raw);
    // Cheap rejection: what cannot be a JSON object is refused without parsing it.
    const cheap = refuseCheaply(text);
    if (cheap !== undefined) {
      this.#log.debug('WebSocket message refused', {
        clientId: client.id,
        code: 'PKG_ERR_WS_INVALID_MESSAGE',
        reason: cheap,
      });
      refuse(cheap, cheap === WsEventErrorCode.INVALID_JSON ? NOT_JSON : NOT_AN_OBJECT);
      return false;
    }
    let envelope: Envelope;
    try {
      envelope = decodeMessage(text, this.#options.prototypeKeys, this.#options.controlEvents);
    } catch (err) {
      const known = err instanceof MessageDecodeError;
      const code = known ? err.code : WsEventErrorCode.INVALID_JSON;
      const message = known ? err.message : 'Invalid message.';
      this.#log.debug('WebSocket message refused', {
        clientId: client.id,
        code: 'PKG_ERR_WS_INVALID_MESSAGE',
        reason: code,
      });
      refuse(code, message, known ? err.id : undefined);
      return false;
    }
    for (const fn of this.#messageListeners) {
      try {
        fn(client, envelope);
      } catch (err) {
        this.#log.exception(err, { clientId: client.id, event: envelope.event });
      }
    }
    return true;
  }

  /** Decodes the text payload of a frame (already unmasked by `ws`) into the envelope. */
  decodeWebSocketFrame(raw: RawData | string): Envelope {
    return decodeMessage(toBuffer(raw), this.#options.prototypeKeys, this.#options.controlEvents);
  }

  // ---------------------------------------------------------------- outbound

  /** `{"event", "data"}` as JSON text; throws a TypeError for a bad event name or data. */
  prepareMessage(event: string, data: EventData): string {
    return prepareMessage(event, data);
  }

  /** The `Sec-WebSocket-Accept` value for a `Sec-WebSocket-Key`. */
  generateAcceptKey(key: string): string {
    return generateAcceptKey(key);
  }

  /** Answers a ping (the handler does this for every client ping), within the send limit. */
  sendPong(socket: WebSocket, data?: Buffer): void {
    if (socket.readyState !== WebSocket.OPEN) return;
    const conn = connectionOf(socket);
    if (conn !== undefined && conn.owner === this && this.#overLimit(conn)) return;
    try {
      socket.pong(data);
    } catch (err) {
      this.#log.debug('WebSocket pong not sent', { error: errorMessage(err) });
    }
  }

  /** Sends one event to one client. False when the client is unknown, closing or dropped. */
  send(clientId: string, event: string, data: EventData): boolean {
    return this.sendRaw(clientId, prepareMessage(event, data));
  }

  /** Sends an already serialised envelope (see prepareMessage) to one client. */
  sendRaw(clientId: string, text: string): boolean {
    const conn = this.#clients.get(clientId);
    return conn !== undefined && this.#deliver(conn, text);
  }

  /**
   * Sends one already serialised envelope to many clients; it is converted to bytes once.
   * Returns how many clients it was handed to.
   */
  sendToMany(clientIds: Iterable<string>, text: string): number {
    const payload = Buffer.from(text, 'utf8');
    let count = 0;
    for (const id of clientIds) {
      const conn = this.#clients.get(id);
      if (conn !== undefined && this.#deliver(conn, payload)) count += 1;
    }
    return count;
  }

  /**
   * Sends the `error` event `{code, message}` to one client; with `id`, the error answers
   * that client request (`{"event": "error", "id", "data"}`).
   */
  sendError(clientId: string, code: string, message: string, id?: RequestId): boolean {
    return this.sendRaw(clientId, prepareError(code, message, id));
  }

  #deliver(conn: Connection<WebSocketHandler>, payload: string | Buffer): boolean {
    if (!conn.usable || this.#overLimit(conn)) return false;
    try {
      conn.client.socket.send(payload, SEND_AS_TEXT);
      return true;
    } catch (err) {
      this.#log.debug('WebSocket send failed', {
        clientId: conn.client.id,
        error: errorMessage(err),
      });
      return false;
    }
  }

  /** True (and the client is being dropped) when its unsent bytes exceed the limit. */
  #overLimit(conn: Connection<WebSocketHandler>): boolean {
    const buffered = conn.client.socket.bufferedAmount;
    if (buffered <= this.#options.maxBufferedAmount) return false;
    if (!conn.ending) {
      this.#log.warning('Dropping slow WebSocket client: its send buffer exceeded the limit', {
        clientId: conn.client.id,
        code: 'PKG_ERR_WS_SLOW_CONSUMER' satisfies WsErrorCode,
        closeCode: WsCloseCode.TRY_AGAIN_LATER,
        bufferedAmount: buffered,
        maxBufferedAmount: this.#options.maxBufferedAmount,
      });
      conn.close(
        WsCloseCode.TRY_AGAIN_LATER,
        'Send buffer limit exceeded',
        this.#options.closeTimeout,
        this.#log,
      );
    }
    return true;
  }

  // ---------------------------------------------------------------- clients

  getClient(id: string): WsClient | undefined {
    return this.#clients.get(id)?.client;
  }

  *getClients(): IterableIterator<WsClient> {
    for (const conn of this.#clients.values()) yield conn.client;
  }

  /**
   * Gives a connected client another id, for a server that resumes a session under the id
   * the client had before. Returns the client under its new id, or undefined (nothing
   * changed) when `currentId` is not connected or `newId` is in use.
   */
  renameClient(currentId: string, newId: string): WsClient | undefined {
    const conn = this.#clients.get(currentId);
    if (conn === undefined || typeof newId !== 'string' || newId === '') return undefined;
    if (this.#clients.has(newId) || this.#pending.has(newId)) return undefined;
    conn.client = Object.freeze({ ...conn.client, id: newId });
    this.#clients.delete(currentId);
    this.#clients.set(newId, conn);
    return conn.client;
  }

  /** True once closeAll() began: handshakes get 503, messages `shutting_down`. */
  get closing(): boolean {
    return this.#closing;
  }

  /**
   * Stops handling messages (each is answered `shutting_down`) and refuses handshakes with
   * 503, without closing anyone yet; closeAll() does this first.
   */
  stopAccepting(): void {
    this.#closing = true;
  }

  /** Number of connected clients (including those whose close is under way). */
  get size(): number {
    return this.#clients.size;
  }

  /**
   * Starts the close handshake with one client (default 1000); it is terminated if the
   * handshake does not complete within closeTimeout. False when the client is unknown.
   */
  disconnect(clientId: string, code: number = WsCloseCode.NORMAL, reason = ''): boolean {
    assertCloseFrame(code, reason, 'disconnect');
    const conn = this.#clients.get(clientId);
    if (!conn) return false;
    conn.close(code, reason, this.#options.closeTimeout, this.#log);
    return true;
  }

  /**
   * Graceful shutdown: refuses new handshakes (503), sends a close frame to every client,
   * terminates whoever has not closed after `timeoutMs` (default closeTimeout), and
   * resolves once every client is gone.
   */
  async closeAll(
    code: number = WsCloseCode.GOING_AWAY,
    reason = 'Server shutting down',
    timeoutMs: number = this.#options.closeTimeout,
  ): Promise<void> {
    assertCloseFrame(code, reason, 'closeAll');
    if (!Number.isInteger(timeoutMs) || timeoutMs < 0 || timeoutMs > 2 ** 31 - 1) {
      throw createWsError(
        RangeError,
        'PKG_ERR_WS_INVALID_ARGUMENT',
        `closeAll: timeoutMs must be an integer number of milliseconds from 0 to 2147483647, got ${String(timeoutMs)}.`,
      );
    }
    this.#closing = true;
    const conns = [...this.#clients.values()];
    for (const conn of conns) conn.close(code, reason, timeoutMs, this.#log);
    await Promise.all(conns.map((c) => c.closed));
  }

  // ---------------------------------------------------------------- liveness and closing

  #ping(conn: Connection<WebSocketHandler>): boolean {
    if (!conn.usable || this.#overLimit(conn)) return false;
    try {
      conn.client.socket.ping();
      return true;
    } catch (err) {
      this.#log.debug('WebSocket ping failed', {
        clientId: conn.client.id,
        error: errorMessage(err),
      });
      return false;
    }
  }

  #heartbeatExpired(conn: Connection<WebSocketHandler>): void {
    if (conn.gone) return;
    this.#log.notice('WebSocket client did not answer the ping; terminating', {
      clientId: conn.client.id,
      code: 'PKG_ERR_WS_HEARTBEAT_TIMEOUT' satisfies WsErrorCode,
      heartbeatTimeout: this.#options.heartbeatTimeout,
    });
    conn.terminate(WsCloseCode.ABNORMAL, 'Heartbeat timeout');
  }

  #onConnectionError(conn: Connection<WebSocketHandler>, err: Error): void {
    const wsCode = (err as { code?: unknown }).code;
    const clientId = conn.client.id;
    if (typeof wsCode !== 'string' || !wsCode.startsWith('WS_ERR_')) {
      this.#log.debug('WebSocket connection error', { clientId, error: err.message });
      return;
    }
    // `ws` has sent a close frame with this code and stopped reading, so the peer's echo is
    // never seen; remember the code for onDisconnect.
    conn.noteIntent(closeCodeForWsError(wsCode), '');
    if (wsCode === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') {
      this.#log.notice('WebSocket message larger than maxPayload; closing with 1009', {
        clientId,
        code: 'PKG_ERR_WS_MESSAGE_TOO_LARGE' satisfies WsErrorCode,
        maxPayload: this.#options.maxPayload,
      });
    } else {
      this.#log.notice('WebSocket protocol error; ws closed the connection', {
        clientId,
        code: 'PKG_ERR_WS_PROTOCOL_ERROR' satisfies WsErrorCode,
        wsCode,
        error: err.message,
      });
    }
  }

  #onClose(conn: Connection<WebSocketHandler>, code: number, reason: string): void {
    const final = conn.settle(code, reason);
    if (!final) return;
    this.#fair.drop(conn);
    this.#heartbeat.remove(conn);
    const { client } = conn;
    if (this.#clients.get(client.id) === conn) this.#clients.delete(client.id);
    this.#log.debug('WebSocket client disconnected', {
      clientId: client.id,
      closeCode: final.code,
      reason: final.reason,
    });
    for (const fn of this.#disconnectListeners) {
      try {
        fn(client, final.code, final.reason);
      } catch (err) {
        this.#log.exception(err, { clientId: client.id, listener: 'onDisconnect' });
      }
    }
    conn.resolveClosed();
  }
}
