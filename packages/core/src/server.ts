/**
 * The spec's `Server`, kept whole although it is over 400 lines: it is the public surface
 * of the package, one documented method per operation, each a delegation of a few lines to
 * a part that `buildPipeline` (pipeline.ts) built. The doc comments are most of the file;
 * cutting the class would scatter the API without separating any logic.
 */
import type {
  AnySchema,
  HttpInput,
  HttpMethod,
  HttpMiddleware,
  HttpSchemas,
  WsMiddleware,
} from '@pkg/decorators';
import type { HttpHandler, RateLimiter, RateLimitStore } from '@pkg/http';
import type { LoggerInterface } from '@pkg/logger';
import {
  guardLogger,
  type EventData,
  type HandshakeHook,
  type WebSocketHandler,
  type WsClient,
} from '@pkg/ws-protocol';
import type { EmitWithAckOptions } from './protocol/acks';
import type { Adapter, CountTarget } from './cluster/adapter';
import { readStreamPosition, type HistoryAnswerData } from '@pkg/wire';
import type { HistoryOptions, KeepHistoryOptions, PublishedEvent } from './history/room-history';
import type { ClientType } from './ws/client-registry';
import { createCoreError } from './errors';
import type {
  ApiDocumentOptions,
  JsonSchemaConverter,
  ServerEventDeclaration,
} from './docs/api-docs';
import type { HealthDocument } from './lifecycle/health';
import { connectInMemory, handshakeOnly, type ConnectOptions } from './testing/in-memory-client';
import { injectRequest, type InjectRequest, type InjectResponse } from './testing/inject';
import type { ServerState } from './lifecycle/lifecycle';
import type { PresenceState, PresenceStats } from '@pkg/wire';
import type { PresenceHook } from './presence/presence';
import type { Middleware } from './routing/middleware';
import { DEFAULT_NAMESPACE, type NamespaceManager } from './ws/namespace-manager';
import {
  eventController,
  lifecycleController,
  routeController,
  type EventDataOf,
  type EventHandler,
  type LifecycleHandler,
  type OnOptions,
  type HttpRouteHandler,
  type RouteHandlerOptions,
} from './routing/programmatic';
import type { NodeServer } from './lifecycle/node-server';
import {
  listConnections,
  type ConnectionPage,
  type ConnectionQuery,
} from './protocol/connection-list';
import type {
  ClusterQueryHandler,
  ClusterQueryOptions,
  ClusterQueryResult,
} from './cluster/cluster-query';
import { resolveServerArguments } from './config/server-arguments';
import { buildPipeline, type Pipeline } from './pipeline';
import type { AuthHandler } from './protocol/protocol-v1';
import type { Router } from './routing/router';
import {
  ServerConfig,
  type ServerCorsOptions,
  type UnknownEventPolicy,
} from './config/server-config';
import {
  resolveBroadcastArgs,
  type BroadcastOptions,
  type BroadcastTargetOptions,
  type ClientCredentials,
  type ControllerHost,
  type JoinRoomOptions,
  type SocketController,
} from './routing/socket-controller';

export type { ClientType } from './ws/client-registry';
export type { ServerState } from './lifecycle/lifecycle';
export { CLIENT_ID_ATTRIBUTE } from './lifecycle/lifecycle';
export type { BroadcastOptions, BroadcastTargetOptions } from './routing/socket-controller';

/** Where a presence call looks: the room's namespace (default `/`). */
export interface PresenceOptions {
  readonly namespace?: string;
}

/** What {@link Server.getLoad} returns. */
export interface ServerLoad {
  readonly connections: number;
  readonly webSocketClients: number;
  readonly pendingHandlers: number;
  readonly clientsWithPendingHandlers: number;
  readonly addresses: number;
  /** WebSocket clients in state `open` (accepted; the ones `getClientCount` counts). */
  readonly openClients: number;
  /** Recovery sessions (protocol version 1), with or without a connection. */
  readonly sessions: number;
  /** Sessions without a connection, waiting for a resume (bounded by `max_away_sessions`). */
  readonly awaySessions: number;
  /** Approximate bytes the sessions hold, not counting message texts shared with others. */
  readonly sessionBytes: number;
  /** Rooms whose history this process keeps in memory (rooms idle for their ttl are dropped). */
  readonly historyRooms: number;
  /** Room recoveries waiting for their history read. */
  readonly recoveries: number;
}

/**
 * One server on one port: HTTP requests and WebSocket connections routed to the decorated
 * methods of registered controllers, with namespaces, rooms, broadcast, middleware, CORS,
 * trust proxy, rate limits and a health check. A facade: the controller registry, the
 * WebSocket and HTTP dispatchers, the lifecycle and the adapter bridge do the work; they
 * are built and wired once, in `buildPipeline`.
 *
 * ```ts
 * const server = new Server(new ServerConfig({ port: 6001, health_check_path: '/health' }));
 * server.registerController(new ChatController());
 * await server.run();
 * // ...
 * await server.close();
 * ```
 */
export class Server implements ControllerHost {
  readonly #config: ServerConfig;
  readonly #logger: LoggerInterface;
  /** The same logger for the server's own lines: a logger that throws loses a line, nothing more. */
  readonly #log: LoggerInterface;
  /** The server's parts, built and wired once by `buildPipeline`. */
  readonly #parts: Pipeline;

  /**
   * `new Server(host = '0.0.0.0', port = 6001, debug = false, corsConfig = {}, logger?)`, or
   * `new Server(config: ServerConfig, undefined, undefined, undefined, logger?)`.
   * Without a logger, a console `Logger` at `debug` (debug mode) or `info` level is used.
   */
  constructor(
    host: string | ServerConfig = '0.0.0.0',
    port?: number,
    debug?: boolean,
    corsConfig?: ServerCorsOptions,
    logger?: LoggerInterface,
  ) {
    const resolved = resolveServerArguments(host, port, debug, corsConfig, logger);
    this.#config = resolved.config;
    this.#logger = resolved.logger;
    this.#log = guardLogger(resolved.logger);
    this.#parts = buildPipeline({
      config: this.#config,
      logger: this.#logger,
      health: () => this.getHealth(),
    });
    this.#config.lock('Server');
  }

  /**
   * The listening `node:http` / `node:https` server, or null before `run()`. Named after the
   * spec's `$socket` property (the listening socket resource).
   */
  get socket(): NodeServer | null {
    return this.#parts.lifecycle.socket;
  }
  /** Active WebSocket clients by id. */
  get clients(): ReadonlyMap<string, WsClient> {
    return new Map([...this.#parts.wsHandler.getClients()].map((c) => [c.id, c]));
  }
  /** Client id -> `'ws'` or `'http'`, for every open connection. */
  get clientTypes(): ReadonlyMap<string, ClientType> {
    return this.#parts.clients.types;
  }
  /** Client id -> custom data (a copy). */
  get clientData(): ReadonlyMap<string, Readonly<Record<string, unknown>>> {
    return this.#parts.clients.snapshotData();
  }
  /** The spec's `$router` property: the same object as {@link getRouter}. */
  get router(): Router {
    return this.#parts.router;
  }
  get wsHandler(): WebSocketHandler {
    return this.#parts.wsHandler;
  }
  get httpHandler(): HttpHandler {
    return this.#parts.httpHandler;
  }
  get namespaceManager(): NamespaceManager {
    return this.#parts.namespaces;
  }
  get middleware(): Middleware {
    return this.#parts.middleware;
  }
  get isDebugMode(): boolean {
    return this.#config.isDebug();
  }
  get logger(): LoggerInterface {
    return this.#logger;
  }
  /** Where the server is in its lifecycle. */
  get state(): ServerState {
    return this.#parts.lifecycle.state;
  }

  getRouter(): Router {
    return this.#parts.router;
  }
  getNamespaceManager(): NamespaceManager {
    return this.#parts.namespaces;
  }
  getHttpHandler(): HttpHandler {
    return this.#parts.httpHandler;
  }
  getWebSocketHandler(): WebSocketHandler {
    return this.#parts.wsHandler;
  }
  getMiddleware(): Middleware {
    return this.#parts.middleware;
  }
  getLogger(): LoggerInterface {
    return this.#logger;
  }
  getConfig(): ServerConfig {
    return this.#config;
  }
  getAdapter(): Adapter {
    return this.#parts.adapter.adapter;
  }
  getRateLimiter(): RateLimiter {
    return this.#parts.rateLimiter;
  }
  isDebug(): boolean {
    return this.#config.isDebug();
  }
  getUnknownEventPolicy(): UnknownEventPolicy {
    return this.#config.getUnknownEventPolicy();
  }
  /** The configured host. */
  getHost(): string {
    return this.#config.getHost();
  }
  /** The bound port once `run()` resolved (useful with port 0), else the configured port. */
  getPort(): number {
    return this.#parts.lifecycle.boundPort ?? this.#config.getPort();
  }

  /**
   * Replaces the broadcast adapter (e.g. a Redis adapter for several processes). Only
   * before `run()`.
   */
  setAdapter(adapter: Adapter): this {
    this.#parts.lifecycle.assertIdle('setAdapter');
    this.#parts.adapter.setAdapter(adapter);
    return this;
  }

  /** Replaces the rate-limit counter store (e.g. a Redis store for several processes). Only before `run()`. */
  setRateLimitStore(store: RateLimitStore): this {
    this.#parts.lifecycle.assertIdle('setRateLimitStore');
    if (store === null || typeof store !== 'object' || typeof store.increment !== 'function') {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        'setRateLimitStore: expected a store with an increment(key, windowMs) method.',
      );
    }
    this.#parts.rateLimitStore.store = store;
    return this;
  }

  /** Registers a controller: sets its server and registers its routes. */
  registerController(controller: SocketController): void {
    this.#parts.router.register(controller);
    controller.setServer(this);
  }

  /**
   * Handles the WebSocket event `event` without decorators: the same as a `@SocketOn(event,
   * options)` method (plus `options.rateLimit` for `@RateLimit`), registered in the same
   * router. `handler(clientId, data, context)` gets the schema's output when `schema` is
   * given; `this` is a controller registered with this server (`this.emit`, `this.broadcast`).
   */
  on<S extends AnySchema | undefined = undefined>(
    event: string,
    handler: EventHandler<EventDataOf<S>>,
    options?: OnOptions<S>,
  ): this {
    this.registerController(eventController(event, handler, options as OnOptions));
    return this;
  }

  /**
   * Declares an HTTP route without decorators: the same as an `@HttpRoute(method, path,
   * options)` method (plus `options.rateLimit`), registered in the same router.
   * `handler(request, input)` returns what a route method may return.
   */
  route<S extends HttpSchemas = Record<never, never>>(
    method: HttpMethod | Lowercase<HttpMethod>,
    path: string,
    handler: HttpRouteHandler<HttpInput<S>>,
    options?: RouteHandlerOptions<S>,
  ): this {
    this.registerController(
      routeController(method, path, handler, options as RouteHandlerOptions | undefined),
    );
    return this;
  }

  /** Runs `handler(clientId)` when a WebSocket client has connected, like an `@OnConnect()` method. */
  onConnect(handler: LifecycleHandler): this {
    this.registerController(lifecycleController('connect', handler));
    return this;
  }

  /** Runs `handler(clientId)` when a WebSocket client has gone, like an `@OnDisconnect()` method. */
  onDisconnect(handler: LifecycleHandler): this {
    this.registerController(lifecycleController('disconnect', handler));
    return this;
  }

  addWebSocketMiddleware(middleware: WsMiddleware): this {
    this.#parts.middleware.addWebSocketMiddleware(middleware);
    return this;
  }

  addHttpMiddleware(middleware: HttpMiddleware): this {
    this.#parts.middleware.addHttpMiddleware(middleware);
    return this;
  }

  /**
   * Adds a hook that runs on every WebSocket upgrade request before it is accepted (for
   * authentication). It may refuse with `{status, message}`; values it puts in `ctx.data`
   * become the client's data (`getClientData`).
   */
  addHandshakeMiddleware(hook: HandshakeHook): this {
    this.#parts.wsHandler.addHandshakeHook(hook);
    return this;
  }

  /**
   * Starts listening on the configured host and port. Resolves once the port is bound
   * (`getPort()` then gives the real port, also with port 0); rejects when it cannot be
   * bound (e.g. EADDRINUSE). A server runs once: after `close()` create a new one.
   */
  run(): Promise<void> {
    return this.#parts.lifecycle.run();
  }

  /**
   * Starts draining without closing: the health check answers 503 `draining` (so a load
   * balancer takes this instance out of rotation), new WebSocket upgrades are refused with
   * 503, and HTTP answers carry `Connection: close`. The server keeps listening and serving
   * HTTP until `close()`. Does nothing unless the server is running.
   */
  drain(): void {
    this.#parts.lifecycle.drain();
  }

  /**
   * Graceful shutdown: `drain()`, then after `shutdown_delay` stops accepting connections;
   * WebSocket clients are closed with 1001 and their `OnDisconnect` handlers run; in-flight
   * HTTP requests finish (answered with `Connection: close`) up to `shutdown_timeout`, after
   * which remaining connections are cut. Resolves when everything is closed. Calling it
   * again returns the same promise.
   */
  close(): Promise<void> {
    return this.#parts.lifecycle.close();
  }

  /**
   * Disconnects a client: a WebSocket client gets a close frame (1000) and its
   * `OnDisconnect` handlers run; an HTTP connection is closed. An id not connected here goes
   * to a cluster adapter (the instance holding it disconnects it); otherwise it is ignored.
   */
  disconnectClient(clientId: string): void {
    // A protocol version 1 session ends too (at once when its client is away).
    if (this.#parts.protocol.endSession(clientId)) return;
    this.#parts.adapter.disconnectClient(clientId);
  }

  /** Stores a value for a connected client; forgotten on disconnect. False for an unknown client. */
  setClientData(clientId: string, key: string, value: unknown): boolean {
    if (this.#parts.clients.setData(clientId, key, value)) return true;
    this.#log.debug('setClientData for a client that is not connected', { clientId, key });
    return false;
  }

  /**
   * One value of a client's data, or all of it as a new object when no key is given.
   * Includes what handshake middleware put in `ctx.data`. Undefined for an unknown client.
   */
  getClientData(clientId: string, key?: string | null): unknown {
    return this.#parts.clients.getData(clientId, key);
  }

  /**
   * Number of WebSocket clients of this process that are `open`: accepted by the auth
   * handlers (if any) and served. A connection still waiting for `$hello`, authenticating or
   * refused does not count.
   */
  getClientCount(): number {
    return this.#parts.protocol.load().openClients;
  }

  /** Number of clients a target selects, through the adapter (cluster-wide with a cluster adapter). */
  countClients(target: CountTarget = {}): Promise<number> {
    return this.#parts.adapter.clientCount(target);
  }

  /** Ids of the clients a target selects, through the adapter (cluster-wide with a cluster adapter). */
  fetchClientIds(target: CountTarget = {}): Promise<string[]> {
    return this.#parts.adapter.clientIds(target);
  }

  /** Ids of the `open` WebSocket clients of this process (as {@link getClientCount} counts). */
  getAllClients(): string[] {
    return [...this.#parts.protocol.openClientIds()];
  }

  /** `'ws'`, `'http'`, or undefined when no such connection is open. */
  getClientType(clientId: string): ClientType | undefined {
    return this.#parts.clients.getType(clientId);
  }

  /** Whether a connection with that id is open (either type). */
  isConnected(clientId: string): boolean {
    return this.#parts.clients.isConnected(clientId);
  }

  /**
   * Sends an event to one WebSocket client; false when it is not connected. To a client with
   * a recovery session (protocol version 1) the message carries `seq` and is kept for
   * replay, also while the client is away (then true). With a cluster adapter, a client of
   * another instance is reached through it (true once handed over). `data` a Uint8Array (a
   * Buffer is one): the bytes go out as one binary frame (docs/protocol.md, "Binary
   * frames"); a version 0 client never gets one: it is skipped, counted
   * (`pkg_ws_binary_skipped_total`), and `send` returns false.
   */
  send(clientId: string, event: string, data: EventData | Uint8Array): boolean {
    return this.#parts.adapter.send(clientId, event, data);
  }

  /**
   * Sends a request to a protocol version 1 client and resolves with its answer (`$ack`).
   * Rejects with `PKG_ERR_CORE_ACK_TIMEOUT` after `options.timeout` (default `ack_timeout`),
   * `PKG_ERR_CORE_ACK_REFUSED` on `$nack`, `PKG_ERR_CORE_CLIENT_GONE` when the client is not
   * connected or disconnects first, `PKG_ERR_CORE_PROTOCOL_UNSUPPORTED` for a client that did
   * not say `$hello`, and a RangeError `PKG_ERR_CORE_TOO_MANY_PENDING` past
   * `max_pending_server_requests` (nothing is sent then). Bytes (`data` a Uint8Array) go as
   * one binary frame; a client that does not take binary frames is refused at send
   * (`PKG_ERR_CORE_PROTOCOL_UNSUPPORTED`). The answer is a Uint8Array when the client
   * answers with bytes.
   */
  emitWithAck(
    clientId: string,
    event: string,
    data: EventData | Uint8Array,
    options: EmitWithAckOptions = {},
  ): Promise<unknown> {
    return this.#parts.protocol.emitWithAck(clientId, event, data, options);
  }

  /**
   * Adds an authentication handler (protocol version 1). With one or more, a client passes
   * them all before its `OnConnect` handlers run: with `$hello.auth` as `context.auth`, or,
   * for a client without it (a version 0 client), with `auth` undefined, so a client already
   * authenticated by handshake middleware can be accepted from `context.data`. Return `true`
   * (or nothing) to accept, `{identity}` to accept with an identity (a session remembers it;
   * a resume under another identity starts fresh with `reason: "identity"`), `false` or
   * `{status: 401 | 403, message}` to refuse: the client gets an `error` event and close
   * 4401 / 4403. `context.resume` names the session a `$hello.resume` asks for. The whole
   * authentication is bounded by `auth_timeout` (then close 4401). Only before `run()`.
   *
   * Credentials that expire: return `{identity?, expiresAt}` (ms since the epoch) or
   * `{identity?, ttl}` (ms) to accept until then; `$welcome.expiresAt` tells the client, which
   * sends `$refresh {auth}` with new credentials before then. The same handlers check them
   * (`context.refresh` true, `context.identity` the connection's identity, which the new
   * credentials must keep). Past the expiry and `auth_refresh_grace` without an accepted
   * refresh: `error` `token_expired`, close 4419 (docs/protocol.md, "Credentials that expire").
   */
  addAuthHandler(handler: AuthHandler): this {
    this.#parts.lifecycle.assertIdle('addAuthHandler');
    this.#parts.protocol.addAuthHandler(handler);
    return this;
  }

  /**
   * Revokes an identity (what its auth handlers gave, `{identity}`) on every instance: with
   * a room, each of its connections leaves the room and gets `$revoked` `{room, namespace,
   * reason: "revoked"}`; without one, each gets the `error` `revoked` and close 4403, and its
   * away sessions end. Through a cluster adapter the other instances do the same. Resolves
   * with how many connections it reached.
   */
  revoke(identity: string, room?: string | null, namespace?: string | null): Promise<number> {
    if (typeof identity !== 'string' || identity === '') {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        'revoke: identity must be the non-empty string an auth handler gave ({ identity }).',
      );
    }
    if (room !== undefined && room !== null && (typeof room !== 'string' || room === '')) {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        'revoke: room must be a non-empty string, or left out to revoke the identity from the server.',
      );
    }
    return this.#parts.adapter.revoke(
      identity,
      room ?? null,
      room == null ? null : (namespace ?? '/'),
    );
  }

  /** Who a connected client is and until when, as its auth handlers said; undefined when unknown here. */
  getCredentials(clientId: string): ClientCredentials | undefined {
    return this.#parts.protocol.credentialsOf(clientId);
  }

  /**
   * Grants a joined room until `expiresAt` (ms since the epoch; null: for good): then the
   * client leaves it and gets `$revoked` `{room, namespace, reason: "expired"}`.
   * `RoomsController` calls it for a `canJoin` that answers `{ expiresAt }` or `{ ttl }`.
   */
  grantRoom(clientId: string, room: string, namespace: string, expiresAt: number | null): void {
    this.#parts.protocol.grantRoom(clientId, room, namespace, expiresAt);
  }

  /** Sends the `error` event `{code, message, ...extra}` to one WebSocket client. */
  sendEventError(
    clientId: string,
    code: string,
    message: string,
    extra: Record<string, unknown> = {},
  ): void {
    this.#parts.protocol.outbound.fail(clientId, code, message, extra);
  }

  /**
   * Broadcasts an event: with no namespace and no room to every WebSocket client, with a
   * namespace to its members, with a room to that room's members (in `namespace`, `/` when
   * null). `options.except` leaves clients out. The envelope is serialised once. The same
   * target can be given as one object: `broadcast(event, data, { namespace, room, except })`.
   * Returns the number of clients of this process it was handed to (0 for an adapter that
   * delivers asynchronously, and while the server shuts down). `data` a Uint8Array: one
   * binary frame per receiver, the header built once and the bytes never copied per
   * receiver; version 0 clients are skipped, counted, and not in the number returned.
   */
  broadcast(
    event: string,
    data: EventData | Uint8Array,
    namespace: string | null | BroadcastTargetOptions = null,
    room?: string | null,
    options?: BroadcastOptions,
  ): number {
    return this.#parts.adapter.broadcast(
      event,
      data,
      ...resolveBroadcastArgs(namespace, room, options),
    );
  }

  /**
   * Puts a WebSocket client in a room; false for an unknown id no cluster adapter takes.
   * For a protocol version 1 client that was not in the room yet, a room that keeps
   * history is recovered from `options.since` (or from the position its `$hello.positions`
   * gave for that room): the messages it missed, then `$recovered`.
   */
  joinRoom(
    clientId: string,
    room: string,
    namespace: string = DEFAULT_NAMESPACE,
    options: JoinRoomOptions = {},
  ): boolean {
    return this.#parts.adapter.joinRoom(clientId, room, namespace, options.since);
  }

  /**
   * The kept messages of a room (cluster-wide through an adapter with `history`): the last
   * `limit` (default and cap `history_max_replay`), or those after `since`; decoded as
   * `{event, data, pos}`, oldest first, with the room's `position`; `complete` false (and
   * `reason`) when older messages exist or `since` cannot be served. A room without history
   * answers `complete: false, reason: "not_kept"`.
   */
  history(room: string, options: HistoryOptions = {}): Promise<HistoryAnswerData> {
    const { namespace = DEFAULT_NAMESPACE, since, limit } = options;
    if (typeof room !== 'string' || room === '' || typeof namespace !== 'string') {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        'history(room, { namespace?, since?, limit? }): room must be a non-empty string.',
      );
    }
    if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 1)) {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        'history: limit must be a positive whole number of messages.',
      );
    }
    const position = since === undefined ? undefined : readStreamPosition(since);
    if (typeof position === 'string') {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        `history: since must be a position {offset, epoch} as in a message's pos: ${position}.`,
      );
    }
    return this.#parts.history.answer(namespace, room, position, limit);
  }

  /**
   * Keeps the history of one room (beside the `history` patterns, and before them):
   * `{namespace = "/", size, ttl}`.
   */
  keepHistory(room: string, options: KeepHistoryOptions): this {
    this.#parts.history.keep(room, options);
    return this;
  }

  /**
   * Runs `listener({event, room, namespace, position, delivered})` after each broadcast to
   * a room that keeps history, with the position it got (`broadcast` still returns the
   * number of local deliveries). A listener that throws is logged.
   */
  onPublished(listener: (published: PublishedEvent) => void): this {
    this.#parts.history.onPublished(listener);
    return this;
  }

  /** Takes a client out of a room. */
  leaveRoom(clientId: string, room: string, namespace: string = DEFAULT_NAMESPACE): void {
    this.#parts.adapter.leaveRoom(clientId, room, namespace);
  }

  /** Takes a client out of every room (it stays in its namespaces). */
  leaveAllRooms(clientId: string): void {
    this.#parts.adapter.leaveAllRooms(clientId);
  }

  /** Makes a connected WebSocket client a member of a namespace. */
  joinNamespace(clientId: string, namespace: string): boolean {
    return this.#parts.adapter.joinNamespace(clientId, namespace);
  }

  /** Takes a client out of a namespace and its rooms (all of them without a namespace). */
  leaveNamespace(clientId: string, namespace?: string): void {
    this.#parts.adapter.leaveNamespace(clientId, namespace);
  }

  /** Logs a message at debug level, only in debug mode. */
  log(message: string): void {
    if (this.#config.isDebug()) this.#log.debug(message);
  }

  /**
   * The OpenAPI 3.1 document of every HTTP route: paths with `{params}`, parameters and
   * bodies as JSON Schema where the schema library can export it, rate limits as
   * `x-rate-limit`, and the answers the server gives on its own. Served on `openapi_path`
   * when that is set.
   */
  openapi(options?: ApiDocumentOptions): Record<string, unknown> {
    return this.#parts.docs.openapi(options);
  }

  /**
   * The AsyncAPI 3.0 document of every WebSocket event: inbound from the `SocketOn`
   * routes, outbound from `declareEvent`, the envelope with its optional `id`, and the
   * `error` event. Served on `asyncapi_path` when that is set.
   */
  asyncapi(options?: ApiDocumentOptions): Record<string, unknown> {
    return this.#parts.docs.asyncapi(options);
  }

  /** Declares an event the server sends, for the AsyncAPI document. */
  declareEvent(event: string, declaration?: ServerEventDeclaration): this {
    this.#parts.docs.declareEvent(event, declaration);
    return this;
  }

  /**
   * Converts schemas that do not export JSON Schema themselves (valibot through
   * `@valibot/to-json-schema`, ...) for the generated documents; return undefined to leave
   * a schema to the built-in conversion.
   */
  setJsonSchemaConverter(converter: JsonSchemaConverter | undefined): this {
    this.#parts.docs.setJsonSchemaConverter(converter);
    return this;
  }

  /**
   * Answers a request in memory, as the listening server would: the same admission
   * (503 while shutting down, `allowed_hosts` with a trusted proxy's forwarded host,
   * `max_connections`: the request counts as one connection while it is answered), then
   * CORS, limits, health check, routing, middleware, rate limits and error answers; no port
   * is opened, works before `run()`. `skipAdmission: true` hands the request to the HTTP
   * handler directly. For tests: `await server.inject({ method: 'POST', url: '/items', body })`.
   */
  inject(request: InjectRequest): Promise<InjectResponse> {
    return injectRequest(this.#parts.httpHandler, request, this.#parts.lifecycle.injectRequest);
  }

  /**
   * Opens a WebSocket connection in memory: a real `ws` client whose connection is an
   * in-memory stream pair, accepted as a listener's socket is (`max_connections`, Node's
   * parser, 503 while draining, `allowed_hosts`, a `max_connections_per_ip` slot held until
   * it closes), then this server's handshake (origin policy, handshake middleware),
   * `OnConnect`, envelopes, rooms and `OnDisconnect` as over TCP. No port is opened; works
   * before `run()`. `skipAdmission: true` goes straight to the handshake and takes no slot.
   * Close it with `client.close()`.
   */
  connect(options?: ConnectOptions): Promise<import('ws').WebSocket> {
    const accept = options?.skipAdmission
      ? handshakeOnly(this.#parts.wsHandler)
      : this.#parts.lifecycle.acceptInProcess;
    return connectInMemory(accept, options);
  }

  /**
   * The sizes of the server's own tables, for metrics and leak checks: open TCP connections,
   * WebSocket clients, unfinished WebSocket handlers (and the clients they belong to), and
   * client addresses with WebSocket clients, open clients, and recovery sessions (all, away,
   * and their approximate bytes).
   */
  getLoad(): ServerLoad {
    const p = this.#parts;
    const protocol = p.protocol.load();
    return {
      connections: p.gate.open,
      webSocketClients: p.wsHandler.size,
      pendingHandlers: p.pendingHandlers.size,
      clientsWithPendingHandlers: p.pendingHandlers.clients,
      addresses: p.gate.addresses,
      openClients: protocol.openClients,
      sessions: protocol.sessions,
      awaySessions: protocol.awaySessions,
      sessionBytes: protocol.sessionBytes,
      historyRooms: p.history.memory.size,
      recoveries: p.protocol.recoveries,
    };
  }

  /**
   * The Prometheus text of every metric (docs/observability.md lists them), as `metrics_path`
   * serves it. Needs the optional package `prom-client`: without it the promise rejects with
   * `PKG_ERR_CORE_METRICS_UNAVAILABLE`. Metrics are recorded from the first call on, or from
   * the start when `metrics_path` is set.
   */
  metrics(): Promise<string> {
    return this.#parts.observability.text();
  }

  // ------------------------------------------------------------ operators' views

  /**
   * One page of this process's WebSocket connections (every state, away sessions included),
   * filtered by `search` (a part of the id, identity or address), sorted by `age` (oldest
   * first) or `traffic` (most bytes first), `limit` rows (default 50, at most 500) after the
   * cursor `after` (the `next` of the page before). One pass over the connection table.
   * Throws a TypeError `PKG_ERR_CORE_INVALID_ARGUMENT` for a query it cannot read.
   */
  listConnections(query: ConnectionQuery = {}): ConnectionPage {
    return listConnections(this.#parts.connections, this.#parts.namespaces, query);
  }

  /**
   * Refusals by code since the server started, whether or not metrics are on: connections
   * over a cap (`too_many_connections`, ...), messages over an inbound budget
   * (`rate_limited`, ...), with the codes of the `refusals_total` metric. Refused
   * authentications are not among them: they end in a close code (4401, 4403).
   */
  getRefusals(): Record<string, number> {
    return this.#parts.refusals.snapshot();
  }

  /**
   * Answers the cluster query `topic` for this instance: `handler(payload)` returns (or
   * resolves to) a JSON value; `undefined` removes the handler. See {@link queryCluster}.
   */
  answerClusterQuery(topic: string, handler: ClusterQueryHandler | undefined): this {
    this.#parts.queries.handle(topic, handler);
    return this;
  }

  /**
   * Asks every instance (through a cluster adapter with `query`, such as
   * `@pkg/redis-adapter`; only this one otherwise) for its answer to `topic`, and resolves
   * with the answers that came within `options.timeout` ms (default 1000) and the number of
   * instances that did not answer. An instance without a handler for the topic answers
   * with `error`. Rejects when the adapter cannot ask (Redis unreachable).
   */
  queryCluster(
    topic: string,
    payload: unknown = null,
    options: ClusterQueryOptions = {},
  ): Promise<ClusterQueryResult> {
    return this.#parts.queries.ask(this.#parts.adapter.adapter, topic, payload, options);
  }

  // ------------------------------------------------------------ presence

  /**
   * Sets the hook that gives a connection's presence meta when it joins a room with presence
   * (the `presence` setting): `hook({clientId, room, namespace, key})` returns the
   * application members (e.g. `{ name }` from `getClientData`), at most
   * `presence_max_meta_bytes` as JSON; `clientId` and `joinedAt` are always set by the
   * server. A hook that throws or returns too much is logged and the meta has no members of
   * its own. `undefined` removes the hook.
   */
  onPresence(hook: PresenceHook | undefined): this {
    if (hook !== undefined && typeof hook !== 'function') {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        'onPresence expects a function ({clientId, room, namespace, key}) => meta, or undefined.',
      );
    }
    this.#parts.presence.setHook(hook);
    return this;
  }

  /**
   * Replaces the application members of a local connection's meta in a room with presence;
   * members see a leave of the old meta and a join of the new one. False when the client is
   * not in that room on this instance. Throws a RangeError
   * `PKG_ERR_CORE_PRESENCE_META_TOO_LARGE` over `presence_max_meta_bytes` (nothing changes).
   */
  updatePresence(
    clientId: string,
    room: string,
    meta: Record<string, unknown>,
    options: PresenceOptions = {},
  ): boolean {
    const namespace = options.namespace ?? DEFAULT_NAMESPACE;
    this.#parts.presence.check('updatePresence', room, namespace);
    return this.#parts.presence.update(clientId, room, namespace, meta);
  }

  /**
   * Who is in a room with presence, by presence key, one meta per connection: every
   * instance's connections with a cluster adapter that shares presence (`@pkg/redis-adapter`),
   * as this instance sees them now. Rejects with a TypeError `PKG_ERR_CORE_INVALID_ARGUMENT`
   * for a room no `presence` pattern matches.
   */
  async presence(room: string, options: PresenceOptions = {}): Promise<PresenceState> {
    const namespace = options.namespace ?? DEFAULT_NAMESPACE;
    this.#parts.presence.check('presence', room, namespace);
    return this.#parts.presence.state(room, namespace);
  }

  /** Connections and distinct keys of a room with presence (cluster-wide, as {@link presence}). */
  async presenceStats(room: string, options: PresenceOptions = {}): Promise<PresenceStats> {
    const namespace = options.namespace ?? DEFAULT_NAMESPACE;
    this.#parts.presence.check('presenceStats', room, namespace);
    return this.#parts.presence.stats(room, namespace);
  }

  /** The health document as the health-check path answers it now. */
  getHealth(): HealthDocument {
    return this.#parts.lifecycle.health();
  }
}
