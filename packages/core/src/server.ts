import type { HttpMiddleware, WsMiddleware } from '@pkg/decorators';
import {
  HttpHandler,
  MemoryRateLimitStore,
  RateLimiter,
  resolveClientAddress,
  type RateLimitStore,
} from '@pkg/http';
import { Logger, type LoggerInterface } from '@pkg/logger';
import {
  WebSocketHandler,
  createClientIdGenerator,
  prepareMessage,
  type EventData,
  type HandshakeHook,
  type WsClient,
} from '@pkg/ws-protocol';
import { LocalAdapter, type Adapter, type AdapterHost, type CountTarget } from './adapter';
import { ClientRegistry, type ClientType } from './client-registry';
import { ControllerRegistry } from './controller-registry';
import { createCoreError } from './errors';
import { buildHealthDocument, withHealthCheck, type HealthDocument } from './health';
import { HttpDispatcher } from './http-dispatch';
import { Lifecycle, type ServerState } from './lifecycle';
import { Middleware } from './middleware';
import { DEFAULT_NAMESPACE, NamespaceManager } from './namespace-manager';
import type { NodeServer } from './node-server';
import { Router, type RouterDependencies } from './router';
import { ServerConfig, type ServerCorsOptions, type UnknownEventPolicy } from './server-config';
import type { BroadcastOptions, ControllerHost, SocketController } from './socket-controller';
import { WsDispatcher } from './ws-dispatch';

export type { ClientType } from './client-registry';
export type { ServerState } from './lifecycle';
export { CLIENT_ID_ATTRIBUTE } from './lifecycle';
export type { BroadcastOptions } from './socket-controller';

const ADAPTER_METHODS = [
  'attach',
  'joinRoom',
  'leaveRoom',
  'broadcast',
  'removeClient',
  'clientCount',
];

function isLogger(value: unknown): value is LoggerInterface {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return ['debug', 'info', 'warning', 'error', 'log', 'exception'].every(
    (m) => typeof v[m] === 'function',
  );
}

function invalidArgument(message: string): TypeError {
  return createCoreError(TypeError, 'PKG_ERR_CORE_INVALID_ARGUMENT', message);
}

/** A rate-limit store whose backing store can be replaced before the server runs. */
class ReplaceableStore implements RateLimitStore {
  constructor(public store: RateLimitStore) {}
  increment(key: string, windowMs: number): ReturnType<RateLimitStore['increment']> {
    return this.store.increment(key, windowMs);
  }
}

/**
 * One server on one port: HTTP requests and WebSocket connections routed to the decorated
 * methods of registered controllers, with namespaces, rooms, broadcast, middleware, CORS,
 * trust proxy, rate limits and a health check. A facade: the work is done by the controller
 * registry, the WebSocket and HTTP dispatchers and the lifecycle, wired here once.
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
  readonly #middleware = new Middleware();
  readonly #namespaces = new NamespaceManager();
  readonly #clients = new ClientRegistry();
  readonly #router: Router;
  readonly #httpHandler: HttpHandler;
  readonly #wsHandler: WebSocketHandler;
  readonly #lifecycle: Lifecycle;
  readonly #rateLimitStore = new ReplaceableStore(new MemoryRateLimitStore());
  readonly #rateLimiter = new RateLimiter(this.#rateLimitStore);
  #adapter: Adapter = new LocalAdapter();

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
    if (host instanceof ServerConfig) {
      if (port !== undefined || debug !== undefined || corsConfig !== undefined) {
        throw invalidArgument(
          'new Server(config, ...): with a ServerConfig, put port, debug and cors in the configuration and pass undefined for them (the logger is the fifth argument).',
        );
      }
      this.#config = host;
    } else {
      this.#config = new ServerConfig({
        host,
        port: port ?? 6001,
        debug: debug ?? false,
        cors: corsConfig ?? {},
      });
    }
    if (logger !== undefined && !isLogger(logger)) {
      throw invalidArgument(
        'new Server(...): the fifth argument must be a LoggerInterface (debug, info, error, log, exception, ...).',
      );
    }
    const config = this.#config;
    const log = (this.#logger =
      logger ?? new Logger(config.isDebug() ? 'debug' : 'info', true, false));
    const nextId = createClientIdGenerator();
    const trust = config.getTrustPredicate();

    const ws = (this.#wsHandler = new WebSocketHandler({
      allowedOrigins: config.getWebSocketAllowedOrigins(),
      allowMissingOrigin: config.getAllowMissingOrigin(),
      maxPayload: config.getMaxMessageSize(),
      heartbeatInterval: config.getHeartbeatInterval(),
      heartbeatTimeout: config.getHeartbeatTimeout(),
      maxBufferedAmount: config.getMaxBufferedAmount(),
      perMessageDeflate: config.getPerMessageDeflate(),
      handshakeTimeout: config.getHandshakeTimeout(),
      closeTimeout: config.getWebSocketCloseTimeout(),
      binaryMessages: config.getWebSocketBinaryMessages(),
      logger: log,
      clientIp: (req) => resolveClientAddress(req.socket.remoteAddress ?? '', req.headers, trust),
      generateId: nextId,
    }));
    const http = (this.#httpHandler = new HttpHandler({
      cors: config.getCors(),
      trustProxy: trust,
      maxBodySize: config.getMaxBodySize(),
      logger: log,
      debug: config.isDebug(),
    }));
    const lifecycle = (this.#lifecycle = new Lifecycle({
      config,
      logger: log,
      clients: this.#clients,
      httpHandler: http,
      wsHandler: ws,
      nextId,
      closeAdapter: async () => this.#adapter.close(),
    }));

    const deps: RouterDependencies = {
      middleware: this.#middleware,
      rateLimiter: this.#rateLimiter,
      logger: log,
      debug: config.isDebug(),
      unknownEvent: config.getUnknownEventPolicy(),
      sendEventError: (id, code, message, extra) => this.sendEventError(id, code, message, extra),
      track: lifecycle.track,
    };
    const registry = new ControllerRegistry();
    const wsDispatch = new WsDispatcher(registry, deps);
    const httpDispatch = new HttpDispatcher(registry, deps);
    this.#router = new Router(registry, { ws: wsDispatch, http: httpDispatch });

    http.setDispatcher(
      lifecycle.closeWhileDraining(
        withHealthCheck(config.getHealthCheckPath(), () => this.getHealth(), httpDispatch.dispatch),
      ),
    );
    ws.onConnect((client) => {
      this.#clients.markWebSocket(client.id, client.data);
      this.#settle(
        this.#adapter.joinNamespace(client.id, DEFAULT_NAMESPACE),
        'adapter.joinNamespace',
      );
      wsDispatch.connected(client.id);
    });
    ws.onMessage(wsDispatch.onMessage);
    ws.onDisconnect((client) => {
      this.#clients.markDisconnected(client.id);
      this.#settle(this.#adapter.removeClient(client.id), 'adapter.removeClient');
      wsDispatch.disconnected(client.id, () => this.#clients.forgetData(client.id));
    });
    this.#adapter.attach(this.#adapterHost());
    config.lock('Server');
  }

  // ------------------------------------------------------------ spec properties (read-only)

  /** The listening `node:http` / `node:https` server, or null before `run()`. */
  get socket(): NodeServer | null {
    return this.#lifecycle.socket;
  }
  /** Active WebSocket clients by id. */
  get clients(): ReadonlyMap<string, WsClient> {
    return new Map([...this.#wsHandler.getClients()].map((c) => [c.id, c]));
  }
  /** Client id -> `'ws'` or `'http'`, for every open connection. */
  get clientTypes(): ReadonlyMap<string, ClientType> {
    return this.#clients.types;
  }
  /** Client id -> custom data (a copy). */
  get clientData(): ReadonlyMap<string, Readonly<Record<string, unknown>>> {
    return this.#clients.snapshotData();
  }
  get router(): Router {
    return this.#router;
  }
  get wsHandler(): WebSocketHandler {
    return this.#wsHandler;
  }
  get httpHandler(): HttpHandler {
    return this.#httpHandler;
  }
  get namespaceManager(): NamespaceManager {
    return this.#namespaces;
  }
  get middleware(): Middleware {
    return this.#middleware;
  }
  get isDebugMode(): boolean {
    return this.#config.isDebug();
  }
  get logger(): LoggerInterface {
    return this.#logger;
  }
  /** Where the server is in its lifecycle. */
  get state(): ServerState {
    return this.#lifecycle.state;
  }

  // ------------------------------------------------------------ accessors

  getRouter(): Router {
    return this.#router;
  }
  getNamespaceManager(): NamespaceManager {
    return this.#namespaces;
  }
  getHttpHandler(): HttpHandler {
    return this.#httpHandler;
  }
  getWebSocketHandler(): WebSocketHandler {
    return this.#wsHandler;
  }
  getMiddleware(): Middleware {
    return this.#middleware;
  }
  getLogger(): LoggerInterface {
    return this.#logger;
  }
  getConfig(): ServerConfig {
    return this.#config;
  }
  getAdapter(): Adapter {
    return this.#adapter;
  }
  getRateLimiter(): RateLimiter {
    return this.#rateLimiter;
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
    return this.#lifecycle.boundPort ?? this.#config.getPort();
  }

  /**
   * Replaces the broadcast adapter (e.g. a Redis adapter for several processes). Only
   * before `run()`.
   */
  setAdapter(adapter: Adapter): this {
    this.#lifecycle.assertIdle('setAdapter');
    if (
      typeof adapter !== 'object' ||
      adapter === null ||
      ADAPTER_METHODS.some(
        (m) => typeof (adapter as unknown as Record<string, unknown>)[m] !== 'function',
      )
    ) {
      throw invalidArgument(
        `setAdapter: expected an object implementing Adapter (${ADAPTER_METHODS.join(', ')}, ...).`,
      );
    }
    this.#adapter = adapter;
    this.#settle(adapter.attach(this.#adapterHost()), 'adapter.attach');
    return this;
  }

  /** Replaces the rate-limit counter store (e.g. a Redis store for several processes). Only before `run()`. */
  setRateLimitStore(store: RateLimitStore): this {
    this.#lifecycle.assertIdle('setRateLimitStore');
    if (store === null || typeof store !== 'object' || typeof store.increment !== 'function') {
      throw invalidArgument(
        'setRateLimitStore: expected a store with an increment(key, windowMs) method.',
      );
    }
    this.#rateLimitStore.store = store;
    return this;
  }

  // ------------------------------------------------------------ registration

  /** Registers a controller: sets its server and registers its routes. */
  registerController(controller: SocketController): void {
    this.#router.register(controller);
    controller.setServer(this);
  }

  addWebSocketMiddleware(middleware: WsMiddleware): this {
    this.#middleware.addWebSocketMiddleware(middleware);
    return this;
  }

  addHttpMiddleware(middleware: HttpMiddleware): this {
    this.#middleware.addHttpMiddleware(middleware);
    return this;
  }

  /**
   * Adds a hook that runs on every WebSocket upgrade request before it is accepted (for
   * authentication). It may refuse with `{status, message}`; values it puts in `ctx.data`
   * become the client's data (`getClientData`).
   */
  addHandshakeMiddleware(hook: HandshakeHook): this {
    this.#wsHandler.addHandshakeHook(hook);
    return this;
  }

  // ------------------------------------------------------------ lifecycle

  /**
   * Starts listening on the configured host and port. Resolves once the port is bound
   * (`getPort()` then gives the real port, also with port 0); rejects when it cannot be
   * bound (e.g. EADDRINUSE). A server runs once: after `close()` create a new one.
   */
  run(): Promise<void> {
    return this.#lifecycle.run();
  }

  /**
   * Starts draining without closing: the health check answers 503 `draining` (so a load
   * balancer takes this instance out of rotation), new WebSocket upgrades are refused with
   * 503, and HTTP answers carry `Connection: close`. The server keeps listening and serving
   * HTTP until `close()`. Does nothing unless the server is running.
   */
  drain(): void {
    this.#lifecycle.drain();
  }

  /**
   * Graceful shutdown: `drain()`, then after `shutdown_delay` stops accepting connections;
   * WebSocket clients are closed with 1001 and their `OnDisconnect` handlers run; in-flight
   * HTTP requests finish (answered with `Connection: close`) up to `shutdown_timeout`, after
   * which remaining connections are cut. Resolves when everything is closed. Calling it
   * again returns the same promise.
   */
  close(): Promise<void> {
    return this.#lifecycle.close();
  }

  // ------------------------------------------------------------ clients

  /**
   * Disconnects a client: a WebSocket client gets a close frame (1000) and its
   * `OnDisconnect` handlers run; an HTTP connection is closed. Unknown ids are ignored.
   */
  disconnectClient(clientId: string): void {
    const type = this.#clients.getType(clientId);
    if (type === 'ws') this.#wsHandler.disconnect(clientId, 1000, 'Disconnected by the server');
    else if (type === 'http') this.#clients.destroy(clientId);
  }

  /** Stores a value for a connected client; forgotten on disconnect. False for an unknown client. */
  setClientData(clientId: string, key: string, value: unknown): boolean {
    if (typeof key !== 'string') throw invalidArgument('setClientData: the key must be a string.');
    if (this.#clients.setData(clientId, key, value)) return true;
    this.#logger.debug('setClientData for a client that is not connected', { clientId, key });
    return false;
  }

  /**
   * One value of a client's data, or all of it as a new object when no key is given.
   * Includes what handshake middleware put in `ctx.data`. Undefined for an unknown client.
   */
  getClientData(clientId: string, key?: string | null): unknown {
    return this.#clients.getData(clientId, key);
  }

  /** Number of WebSocket clients connected to this process. */
  getClientCount(): number {
    return this.#wsHandler.size;
  }

  /** Number of clients a target selects, through the adapter (cluster-wide with a cluster adapter). */
  async countClients(target: CountTarget = {}): Promise<number> {
    return this.#adapter.clientCount(target);
  }

  /** Ids of the WebSocket clients connected to this process. */
  getAllClients(): string[] {
    return [...this.#wsHandler.getClients()].map((c) => c.id);
  }

  /** `'ws'`, `'http'`, or undefined when no such connection is open. */
  getClientType(clientId: string): ClientType | undefined {
    return this.#clients.getType(clientId);
  }

  /** Whether a connection with that id is open (either type). */
  isConnected(clientId: string): boolean {
    return this.#clients.isConnected(clientId);
  }

  // ------------------------------------------------------------ messaging

  /** Sends an event to one WebSocket client. False when it is not connected. */
  send(clientId: string, event: string, data: EventData): boolean {
    return this.#wsHandler.send(clientId, event, data);
  }

  /** Sends the `error` event `{code, message, ...extra}` to one WebSocket client. */
  sendEventError(
    clientId: string,
    code: string,
    message: string,
    extra: Record<string, unknown> = {},
  ): void {
    this.#wsHandler.send(clientId, 'error', { ...extra, code, message });
  }

  /**
   * Broadcasts an event: with no namespace and no room to every WebSocket client, with a
   * namespace to its members, with a room to that room's members (in `namespace`, `/` when
   * null). `options.except` leaves clients out. The envelope is serialised once.
   */
  broadcast(
    event: string,
    data: EventData,
    namespace: string | null = null,
    room: string | null = null,
    options: BroadcastOptions = {},
  ): void {
    const text = prepareMessage(event, data);
    const target = {
      namespace,
      room,
      ...(options.except === undefined ? {} : { except: options.except }),
    };
    this.#settle(this.#adapter.broadcast(text, target), 'adapter.broadcast');
  }

  /** Puts a connected WebSocket client in a room. False (and nothing done) for an unknown client. */
  joinRoom(clientId: string, room: string, namespace: string = DEFAULT_NAMESPACE): boolean {
    this.#checkRoomArgs('joinRoom', room, namespace);
    if (this.#clients.getType(clientId) !== 'ws') {
      this.#logger.debug('joinRoom for a client that is not connected', {
        clientId,
        room,
        namespace,
      });
      return false;
    }
    this.#settle(this.#adapter.joinRoom(clientId, room, namespace), 'adapter.joinRoom');
    return true;
  }

  /** Takes a client out of a room. */
  leaveRoom(clientId: string, room: string, namespace: string = DEFAULT_NAMESPACE): void {
    this.#checkRoomArgs('leaveRoom', room, namespace);
    this.#settle(this.#adapter.leaveRoom(clientId, room, namespace), 'adapter.leaveRoom');
  }

  /** Takes a client out of every room (it stays in its namespaces). */
  leaveAllRooms(clientId: string): void {
    this.#settle(this.#adapter.leaveAllRooms(clientId), 'adapter.leaveAllRooms');
  }

  /** Makes a connected WebSocket client a member of a namespace. */
  joinNamespace(clientId: string, namespace: string): boolean {
    this.#checkRoomArgs('joinNamespace', 'x', namespace);
    if (this.#clients.getType(clientId) !== 'ws') return false;
    this.#settle(this.#adapter.joinNamespace(clientId, namespace), 'adapter.joinNamespace');
    return true;
  }

  /** Takes a client out of a namespace and its rooms (all of them without a namespace). */
  leaveNamespace(clientId: string, namespace?: string): void {
    this.#settle(this.#adapter.leaveNamespace(clientId, namespace), 'adapter.leaveNamespace');
  }

  /** Logs a message at debug level, only in debug mode. */
  log(message: string): void {
    if (this.#config.isDebug()) this.#logger.debug(message);
  }

  /** The health document as the health-check path answers it now. */
  getHealth(): HealthDocument {
    return buildHealthDocument(
      this.#lifecycle.isDraining() ? 'draining' : 'healthy',
      this.getClientCount(),
      this.#lifecycle.startedAt || Date.now(),
    );
  }

  // ------------------------------------------------------------ internals

  #adapterHost(): AdapterHost {
    const handler = this.#wsHandler;
    return {
      namespaces: this.#namespaces,
      localClientIds: () =>
        (function* () {
          for (const client of handler.getClients()) yield client.id;
        })(),
      deliver: (clientIds, text) => handler.sendToMany(clientIds, text),
    };
  }

  /** Handles the result of an adapter call: a rejected promise is logged, never unhandled. */
  #settle(result: unknown, what: string): void {
    if (typeof (result as { then?: unknown } | null)?.then === 'function') {
      Promise.resolve(result).catch((err: unknown) => this.#logger.exception(err, { phase: what }));
    }
  }

  #checkRoomArgs(method: string, room: unknown, namespace: unknown): void {
    if (
      typeof room !== 'string' ||
      room === '' ||
      typeof namespace !== 'string' ||
      namespace === ''
    ) {
      throw invalidArgument(
        `${method}: room and namespace must be non-empty strings, got ${typeof room} and ${typeof namespace}.`,
      );
    }
  }
}
