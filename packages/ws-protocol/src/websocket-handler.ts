/**
 * WebSocketHandler: the WebSocket side of the server on top of `ws` in `noServer` mode.
 * `ws` owns the frames (masking, fragmentation, control frames, UTF-8, close handshake,
 * permessage-deflate); this class owns who may connect (origin policy and handshake hooks),
 * the `{event, data}` envelope, liveness (heartbeat), limits and back-pressure, and shutdown.
 *
 * A facade over modules of one job each: the handshake (handshake-flow.ts), accepting and
 * ending a connection (accept.ts), the inbound path and its budget (inbound.ts), outbound
 * back-pressure (outbound.ts) and the client table (client-table.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RawData, WebSocket } from 'ws';
import type { LoggerInterface } from '@pkg/logger';
import { generateAcceptKey } from './accept-key';
import { abandonConnection, acceptConnection, connectionOf } from './accept';
import type { ConnectionOwner, WsConnectListener, WsDisconnectListener } from './accept';
import { assertCloseFrame, WsCloseCode } from './close-codes';
import { heartbeatExpired } from './connection-events';
import type { WsClient } from './connection';
import { Buffer } from 'node:buffer';
import { isBinaryFrame } from '@pkg/wire';
import { prepareMessage } from './envelope';
import type { Envelope, EventData, RequestId } from './envelope';
import { describe } from './describe';
import { createWsError } from './errors';
import { FairScheduler } from './fairness';
import { HeartbeatSweep } from './heartbeat';
import type { HandshakeHook } from './handshake';
import { compileOriginPolicy } from './origin';
import type { OriginPredicate } from './origin';
import { resolveWsHandlerOptions } from './options';
import type { ResolvedWebSocketHandlerOptions, WebSocketHandlerOptions } from './options';
import { ClientTable } from './client-table';
import { createWsServer, performHandshake } from './handshake-flow';
import type { HandshakeParts } from './handshake-flow';
import { Inbound } from './inbound';
import type { MessageListenerEntry, WsInboundListener, WsMessageListener } from './inbound';
import { Outbound } from './outbound';

export type { WsInboundListener, WsMessageListener } from './inbound';
export type { WsConnectListener, WsDisconnectListener } from './accept';

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
  #allowedOrigins: readonly string[];
  #originAllowed: OriginPredicate;
  readonly #hooks: HandshakeHook[] = [];
  readonly #connectListeners: WsConnectListener[] = [];
  readonly #messageListeners: MessageListenerEntry[] = [];
  readonly #disconnectListeners: WsDisconnectListener[] = [];
  readonly #table = new ClientTable();
  #closing = false;
  #skippedBinary = 0;
  readonly #owner: ConnectionOwner;
  readonly #inbound: Inbound;
  readonly #handshake: HandshakeParts;

  constructor(options: WebSocketHandlerOptions = {}) {
    const o = resolveWsHandlerOptions(options);
    this.#options = o;
    this.#log = o.logger;
    const outbound = new Outbound(o, o.logger, this.#table);
    const inbound = new Inbound({
      options: o,
      log: o.logger,
      table: this.#table,
      outbound,
      listeners: this.#messageListeners,
      closing: () => this.#closing,
    });
    this.#inbound = inbound;
    this.#owner = {
      options: o,
      log: o.logger,
      table: this.#table,
      outbound,
      fair: new FairScheduler(o.maxMessagesPerTurn, (conn, raw, isBinary) =>
        inbound.receive(conn, raw, isBinary),
      ),
      heartbeat: new HeartbeatSweep({
        interval: o.heartbeatInterval,
        timeout: o.heartbeatTimeout,
        ping: (conn) => outbound.ping(conn),
        onTimeout: (conn) => heartbeatExpired(conn, o.logger, o),
      }),
      connectListeners: this.#connectListeners,
      disconnectListeners: this.#disconnectListeners,
    };
    this.#allowedOrigins = Object.freeze([...o.allowedOrigins]);
    this.#originAllowed = compileOriginPolicy(this.#allowedOrigins, o.allowMissingOrigin);
    this.#handshake = {
      options: o,
      log: o.logger,
      wss: createWsServer(o),
      table: this.#table,
      hooks: this.#hooks,
      originAllowed: () => this.#originAllowed,
      closing: () => this.#closing,
      accept: (ws, request, rawSocket, id, ip, data) =>
        acceptConnection(this.#owner, ws, request, rawSocket, id, ip, data),
      abandon: (ws, id) => abandonConnection(this.#owner, ws, id),
    };
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

  /**
   * Called with every valid envelope a client sends. With `{ binary: true }` the listener
   * also gets the binary messages of the connections that take them (the `binaryFrames`
   * option): envelopes whose `data` is a `Uint8Array`, in order with the text ones. A
   * listener without it never sees one.
   */
  onMessage(fn: WsMessageListener): this;
  onMessage(fn: WsInboundListener, options: { binary: true }): this;
  onMessage(fn: WsMessageListener | WsInboundListener, options?: { binary?: boolean }): this {
    assertFunction(fn, 'onMessage');
    // Binary envelopes reach only a listener registered with `binary: true`.
    const binary = options?.binary === true;
    this.#messageListeners.push({ fn: fn as WsInboundListener, binary });
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
  performHandshake(
    req: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    clientId?: string,
  ): Promise<boolean> {
    return performHandshake(this.#handshake, req, socket, head, clientId);
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
    const conn = this.#table.get(client.id);
    if (conn !== undefined && conn.client === client) {
      return this.#inbound.receive(conn, raw, isBinary);
    }
    return this.#inbound.process(client, raw, isBinary);
  }

  /**
   * Sends the `error` event `{code, message, ...extra}` to one client through the handler's
   * one door for errors: how the code is spaced and counted comes from `@pkg/wire`'s error
   * table. A protocol-error code counts against the client's budget (closing it with 1008
   * once it has made too many); a throttled code is answered at most once per
   * `errorReplyInterval`. With `id` (the refused message was a request) the reply answers it
   * (`{"event": "error", "id", "data"}`) and is always sent, since the requester waits for
   * it; the protocol-error cap still bounds how many such replies a client can earn. A code
   * the table does not know (the application's own) is sent every time and not counted.
   * Returns true when the reply was sent.
   */
  refuse(
    clientId: string,
    code: string,
    message: string,
    extra: Readonly<Record<string, unknown>> = {},
    id?: RequestId,
  ): boolean {
    const conn = this.#table.get(clientId);
    if (conn === undefined) return false;
    return this.#inbound.fail(conn, code, message, extra, id);
  }

  /** Decodes the text payload of a frame (already unmasked by `ws`) into the envelope. */
  decodeWebSocketFrame(raw: RawData | string): Envelope {
    return this.#inbound.decode(raw);
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
    const conn = connectionOf(socket);
    const own = conn !== undefined && conn.owner === this.#owner ? conn : undefined;
    this.#owner.outbound.pong(socket, own, data);
  }

  /** Sends one event to one client. False when the client is unknown, closing or dropped. */
  send(clientId: string, event: string, data: EventData): boolean {
    return this.sendRaw(clientId, prepareMessage(event, data));
  }

  /** Sends an already serialised envelope (see prepareMessage) to one client. */
  sendRaw(clientId: string, text: string): boolean {
    return this.#owner.outbound.toClient(clientId, text);
  }

  /**
   * True when the client takes binary frames (the `binaryFrames` option): a version 1
   * connection, as the option says. False for an unknown client.
   */
  takesBinary(clientId: string): boolean {
    const conn = this.#table.get(clientId);
    return conn !== undefined && this.#inbound.takesBinary(conn.client);
  }

  /**
   * How many binary frames were not sent because their client does not take them (a
   * version 0 connection): {@link sendBinary} and {@link sendBinaryToMany} skip such a
   * client and count it here, for metrics.
   */
  get skippedBinary(): number {
    return this.#skippedBinary;
  }

  /**
   * Sends one binary frame to one client: a frame built by `@pkg/wire`'s
   * `encodeBinaryFrame`, or `[header, payload]` (a header of `encodeBinaryHeader`, with a
   * per-receiver `seq` or `rid` appended, and the payload bytes it was built for). The pair
   * goes out as one WebSocket message in two fragments, so the payload is never copied: a
   * broadcast that numbers every receiver shares one payload (two more bytes on the wire).
   * False when the client is unknown, closing, over its send limit, or does not take binary
   * frames (then nothing is sent and the skip is counted in {@link skippedBinary}). Throws a
   * TypeError (`PKG_ERR_WS_INVALID_DATA`) when the bytes do not start like a binary frame.
   */
  sendBinary(
    clientId: string,
    frame: Uint8Array | readonly [header: Uint8Array, payload: Uint8Array],
  ): boolean {
    const parts = binaryParts(frame, 'sendBinary');
    const conn = this.#table.get(clientId);
    if (conn === undefined) return false;
    if (!this.#inbound.takesBinary(conn.client)) {
      this.#skippedBinary += 1;
      return false;
    }
    const outbound = this.#owner.outbound;
    return parts.length === 1
      ? outbound.deliver(conn, parts[0], true)
      : outbound.deliverFragments(conn, parts[0], parts[1]);
  }

  /**
   * Sends one binary frame to many clients: the same bytes for every one, as
   * {@link sendToMany} does for text. Clients that do not take binary frames are skipped
   * and counted in {@link skippedBinary}. Returns how many clients it was handed to.
   */
  sendBinaryToMany(
    clientIds: Iterable<string>,
    frame: Uint8Array | readonly [header: Uint8Array, payload: Uint8Array],
  ): number {
    const parts = binaryParts(frame, 'sendBinaryToMany');
    // One Buffer for every receiver: the pair is joined once, not once per client.
    const bytes = parts.length === 1 ? parts[0] : Buffer.concat(parts);
    return this.#owner.outbound.toManyBytes(clientIds, bytes, true, (conn) => {
      if (this.#inbound.takesBinary(conn.client)) return false;
      this.#skippedBinary += 1;
      return true;
    });
  }

  /**
   * Sends one already serialised envelope to many clients; it is converted to bytes once.
   * Returns how many clients it was handed to.
   */
  sendToMany(clientIds: Iterable<string>, text: string): number {
    return this.#owner.outbound.toMany(clientIds, text);
  }

  /**
   * Sends the `error` event `{code, message}` to one client; with `id`, the error answers
   * that client request (`{"event": "error", "id", "data"}`). The same door as
   * {@link refuse}, without extra fields.
   */
  sendError(clientId: string, code: string, message: string, id?: RequestId): boolean {
    return this.refuse(clientId, code, message, {}, id);
  }

  // ---------------------------------------------------------------- clients

  getClient(id: string): WsClient | undefined {
    return this.#table.get(id)?.client;
  }

  getClients(): IterableIterator<WsClient> {
    return this.#table.clients();
  }

  /**
   * Gives a connected client another id, for a server that resumes a session under the id
   * the client had before. Returns the client under its new id, or undefined (nothing
   * changed) when `currentId` is not connected or `newId` is in use.
   */
  renameClient(currentId: string, newId: string): WsClient | undefined {
    return this.#table.rename(currentId, newId);
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
    return this.#table.size;
  }

  /**
   * Starts the close handshake with one client (default 1000); it is terminated if the
   * handshake does not complete within closeTimeout. False when the client is unknown.
   */
  disconnect(clientId: string, code: number = WsCloseCode.NORMAL, reason = ''): boolean {
    assertCloseFrame(code, reason, 'disconnect');
    const conn = this.#table.get(clientId);
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
    const conns = [...this.#table.connections()];
    for (const conn of conns) conn.close(code, reason, timeoutMs, this.#log);
    await Promise.all(conns.map((c) => c.closed));
  }
}

/** A Uint8Array as a Buffer over the same memory (no copy). */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * The bytes of a binary frame: the frame, or its header and payload, as Buffers over the
 * same memory. Throws a TypeError when they do not start like a binary frame.
 */
function binaryParts(
  frame: Uint8Array | readonly [header: Uint8Array, payload: Uint8Array],
  method: string,
): [Buffer] | [Buffer, Buffer] {
  let parts: [Buffer] | [Buffer, Buffer] | undefined;
  if (frame instanceof Uint8Array) parts = [asBuffer(frame)];
  else if (
    Array.isArray(frame) &&
    frame.length === 2 &&
    frame[0] instanceof Uint8Array &&
    frame[1] instanceof Uint8Array
  ) {
    parts = [asBuffer(frame[0]), asBuffer(frame[1])];
  }
  if (parts === undefined || !isBinaryFrame(parts[0])) {
    throw createWsError(
      TypeError,
      'PKG_ERR_WS_INVALID_DATA',
      `${method} expects a binary frame of @pkg/wire (encodeBinaryFrame, or [header, payload]), got ${describe(frame)}.`,
    );
  }
  return parts;
}
