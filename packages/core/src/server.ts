import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { HttpMiddleware, WsMiddleware } from '@pkg/decorators';
import {
  HttpError,
  HttpHandler,
  MemoryRateLimitStore,
  RateLimiter,
  Response,
  compileTrustProxy,
  resolveClientAddress,
  type RateLimitStore,
  type Request,
  type TrustPredicate,
} from '@pkg/http';
import { Logger, type LoggerInterface } from '@pkg/logger';
import {
  WebSocketHandler,
  createClientIdGenerator,
  prepareMessage,
  type ClientIdGenerator,
  type EventData,
  type HandshakeHook,
  type WsClient,
} from '@pkg/ws-protocol';
import { LocalAdapter, type Adapter, type AdapterHost, type CountTarget } from './adapter';
import { ClientRegistry, type ClientType } from './client-registry';
import { createCoreError } from './errors';
import { buildHealthDocument, type HealthDocument } from './health';
import { Middleware } from './middleware';
import { DEFAULT_NAMESPACE, NamespaceManager } from './namespace-manager';
import { createNodeServer, delay, listen, waitAtMost, type NodeServer } from './node-server';
import { Router, type RouterHost } from './router';
import { ServerConfig, type ServerCorsOptions, type UnknownEventPolicy } from './server-config';
import type { SocketController } from './socket-controller';

export type { ClientType } from './client-registry';

/** Options of `broadcast` beyond the spec's arguments. */
export interface BroadcastOptions {
  /** Client id(s) that do not receive the message, typically the sender. */
  except?: string | readonly string[];
}

/** Lifecycle of a Server. */
export type ServerState = 'idle' | 'starting' | 'running' | 'draining' | 'closed';

/** The request attribute under which the server stores the connection's client id. */
export const CLIENT_ID_ATTRIBUTE = 'clientId';

const GOING_AWAY = 1001;

function isLogger(value: unknown): value is LoggerInterface {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return ['debug', 'info', 'warning', 'error', 'log', 'exception'].every(
    (m) => typeof v[m] === 'function',
  );
}

function trimTrailingSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/**
 * One server on one port: HTTP requests and WebSocket connections routed to the decorated
 * methods of registered controllers, with namespaces, rooms, broadcast, middleware, CORS,
 * trust proxy, rate limits and a health check.
 *
 * ```ts
 * const server = new Server(new ServerConfig({ port: 6001, health_check_path: '/health' }));
 * server.registerController(new ChatController());
 * await server.run();
 * // ...
 * await server.close();
 * ```
 */
export class Server implements RouterHost {
  readonly #config: ServerConfig;
  readonly #logger: LoggerInterface;
  readonly #router = new Router();
  readonly #middleware = new Middleware();
  readonly #namespaces = new NamespaceManager();
  readonly #httpHandler: HttpHandler;
  readonly #wsHandler: WebSocketHandler;
  readonly #trust: TrustPredicate;
  readonly #nextId: ClientIdGenerator;
  #adapter: Adapter = new LocalAdapter();
  #rateLimiter = new RateLimiter(new MemoryRateLimitStore());
  #socket: NodeServer | null = null;
  #state: ServerState = 'idle';
  #startedAt = 0;
  #boundPort: number | null = null;
  #closing: Promise<void> | null = null;
  /** Settles when a run() in progress has bound the port (or failed to). */
  #listening: Promise<void> | null = null;

  readonly #clients = new ClientRegistry();
  /** Completion of each WebSocket client's OnConnect handlers; messages wait for it. */
  readonly #connectPhase = new Map<string, Promise<void>>();
  /** Work that close() waits for: disconnect handlers, message dispatches. */
  readonly #pendingWork = new Set<Promise<void>>();
  #inflightHttp = 0;
  #httpIdle: (() => void) | null = null;

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
        throw createCoreError(
          TypeError,
          'PKG_ERR_CORE_INVALID_ARGUMENT',
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
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        'new Server(...): the fifth argument must be a LoggerInterface (debug, info, error, log, exception, ...).',
      );
    }
    const config = this.#config;
    this.#logger = logger ?? new Logger(config.isDebug() ? 'debug' : 'info', true, false);
    this.#nextId = createClientIdGenerator();
    this.#trust = compileTrustProxy(config.getTrustProxy());

    this.#httpHandler = new HttpHandler({
      cors: config.getCors(),
      trustProxy: this.#trust,
      maxBodySize: config.getMaxBodySize(),
      logger: this.#logger,
      debug: config.isDebug(),
      dispatch: (request) => this.#dispatchHttp(request),
    });

    this.#wsHandler = new WebSocketHandler({
      allowedOrigins: config.getWebSocketAllowedOrigins(),
      allowMissingOrigin: config.getAllowMissingOrigin(),
      maxPayload: config.getMaxMessageSize(),
      heartbeatInterval: config.getHeartbeatInterval(),
      heartbeatTimeout: config.getHeartbeatTimeout(),
      maxBufferedAmount: config.getMaxBufferedAmount(),
      perMessageDeflate: config.getPerMessageDeflate(),
      handshakeTimeout: config.getHandshakeTimeout(),
      logger: this.#logger,
      clientIp: (req) => this.#clientIp(req),
      generateId: this.#nextId,
    });
    this.#wsHandler.onConnect((client) => this.#onWsConnect(client));
    this.#wsHandler.onMessage((client, envelope) =>
      this.#onWsMessage(client.id, envelope.event, envelope.data),
    );
    this.#wsHandler.onDisconnect((client) => this.#onWsDisconnect(client.id));

    this.#router.setServer(this);
    this.#adapter.attach(this.#adapterHost());
    config.lock('Server');
  }

  // ------------------------------------------------------------ spec properties (read-only)

  /** The listening `node:http` / `node:https` server, or null before `run()`. */
  get socket(): NodeServer | null {
    return this.#socket;
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
    return this.#state;
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
    return this.#boundPort ?? this.#config.getPort();
  }

  /**
   * Replaces the broadcast adapter (e.g. a Redis adapter for several processes). Only
   * before `run()`.
   */
  setAdapter(adapter: Adapter): this {
    this.#assertIdle('setAdapter');
    const required = [
      'attach',
      'joinRoom',
      'leaveRoom',
      'broadcast',
      'removeClient',
      'clientCount',
    ];
    if (
      typeof adapter !== 'object' ||
      adapter === null ||
      required.some((m) => typeof (adapter as unknown as Record<string, unknown>)[m] !== 'function')
    ) {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        `setAdapter: expected an object implementing Adapter (${required.join(', ')}, ...).`,
      );
    }
    this.#adapter = adapter;
    this.#settle(adapter.attach(this.#adapterHost()), 'adapter.attach');
    return this;
  }

  /** Replaces the rate-limit counter store (e.g. a Redis store for several processes). Only before `run()`. */
  setRateLimitStore(store: RateLimitStore): this {
    this.#assertIdle('setRateLimitStore');
    this.#rateLimiter = new RateLimiter(store);
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
  async run(): Promise<void> {
    if (this.#state !== 'idle') {
      throw createCoreError(
        Error,
        'PKG_ERR_CORE_ALREADY_RUNNING',
        `run() was called on a server that is ${this.#state}; a server runs once, create a new Server to listen again.`,
      );
    }
    this.#state = 'starting';
    const config = this.#config;
    const tls = config.getTls();
    const server = createNodeServer(config);
    server.on(tls ? 'secureConnection' : 'connection', (socket: Socket) =>
      this.#clients.trackConnection(socket, this.#nextId()),
    );
    server.on('request', (req: IncomingMessage, res: ServerResponse) => this.#onRequest(req, res));
    // `Expect: 100-continue`: invite the body only when its declared size fits; otherwise the
    // handler answers 413 at once and the client never sends it.
    server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
      const declared = Number(req.headers['content-length']);
      if (!(declared > this.#httpHandler.getMaxBodySize())) res.writeContinue();
      this.#onRequest(req, res);
    });
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.#onUpgrade(req, socket, head),
    );
    if (tls) {
      server.on('tlsClientError', (err: Error) => {
        this.#logger.debug('TLS handshake failed', { error: err.message });
      });
    }

    this.#socket = server;
    const listening = listen(server, config.getHost(), config.getPort());
    this.#listening = listening.then(
      () => undefined,
      () => undefined,
    );
    try {
      this.#boundPort = await listening;
    } catch (err) {
      this.#state = 'closed';
      this.#socket = null;
      throw err;
    }
    server.on('error', (err) => this.#logger.exception(err, { phase: 'listening socket' }));
    this.#startedAt = Date.now();
    this.#state = 'running';
    this.#logger.info(
      `Server listening on ${tls ? 'https' : 'http'}://${config.getHost()}:${this.#boundPort}`,
      {
        host: config.getHost(),
        port: this.#boundPort,
        tls: tls !== null,
      },
    );
  }

  /**
   * Starts draining without closing: the health check answers 503 `draining` (so a load
   * balancer takes this instance out of rotation), new WebSocket upgrades are refused with
   * 503, and HTTP answers carry `Connection: close`. The server keeps listening and serving
   * HTTP until `close()`. Does nothing unless the server is running.
   */
  drain(): void {
    if (this.#state !== 'running') return;
    this.#state = 'draining';
    this.#logger.info('Server draining', { clients: this.getClientCount() });
  }

  /**
   * Graceful shutdown: `drain()`, then after `shutdown_delay` stops accepting connections;
   * WebSocket clients are closed with 1001 and their `OnDisconnect` handlers run; in-flight
   * HTTP requests finish (answered with `Connection: close`) up to `shutdown_timeout`, after
   * which remaining connections are cut. Resolves when everything is closed. Calling it
   * again returns the same promise.
   */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    if (this.#state === 'starting') await this.#listening;
    const server = this.#socket;
    if (this.#state === 'idle' || !server) {
      this.#state = 'closed';
      await this.#adapter.close();
      return;
    }
    this.drain();
    const delayMs = this.#config.getShutdownDelay();
    if (delayMs > 0) await delay(delayMs).promise;
    const timeout = this.#config.getShutdownTimeout();
    this.#logger.info('Server shutting down', { clients: this.getClientCount() });

    // Stop accepting. Node also closes idle keep-alive connections here; the others end
    // after their response, which carries Connection: close.
    const listenerClosed = new Promise<void>((resolve) => server.close(() => resolve()));
    await this.#wsHandler.closeAll(GOING_AWAY, 'Server shutting down', timeout);
    await waitAtMost(Promise.allSettled([...this.#pendingWork]), timeout);
    if (this.#inflightHttp > 0) {
      await waitAtMost(
        new Promise<void>((resolve) => {
          this.#httpIdle = resolve;
        }),
        timeout,
      );
    }
    server.closeIdleConnections();
    if (this.#inflightHttp > 0) {
      this.#logger.warning('Shutdown timeout: cutting HTTP requests still in flight', {
        requests: this.#inflightHttp,
        shutdownTimeout: timeout,
      });
    }
    server.closeAllConnections();
    this.#clients.destroyAll();
    await listenerClosed;
    await this.#adapter.close();
    this.#state = 'closed';
    this.#logger.info('Server closed');
  }

  // ------------------------------------------------------------ clients

  /**
   * Disconnects a client: a WebSocket client gets a close frame (1000) and its
   * `OnDisconnect` handlers run; an HTTP connection is closed. Unknown ids are ignored.
   */
  disconnectClient(clientId: string): void {
    const type = this.#clients.getType(clientId);
    if (type === 'ws') {
      this.#wsHandler.disconnect(clientId, 1000, 'Disconnected by the server');
    } else if (type === 'http') {
      this.#clients.destroy(clientId);
    }
  }

  /** Stores a value for a connected client; forgotten on disconnect. False for an unknown client. */
  setClientData(clientId: string, key: string, value: unknown): boolean {
    if (typeof key !== 'string') {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        'setClientData: the key must be a string.',
      );
    }
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
      this.#state === 'draining' || this.#state === 'closed' ? 'draining' : 'healthy',
      this.getClientCount(),
      this.#startedAt || Date.now(),
    );
  }

  // ------------------------------------------------------------ internals: connections

  #onRequest(req: IncomingMessage, res: ServerResponse): void {
    const id = this.#clients.idOf(req.socket) ?? this.#nextId();
    this.#inflightHttp += 1;
    const done = (): void => {
      this.#inflightHttp -= 1;
      if (this.#inflightHttp === 0 && this.#httpIdle) {
        const resolve = this.#httpIdle;
        this.#httpIdle = null;
        resolve();
      }
    };
    if (this.#state === 'draining') res.setHeader('Connection', 'close');
    // The client id travels as a request attribute (no AsyncLocalStorage: its promise hooks
    // would slow every promise in the process).
    this.#httpHandler
      .handle(req, res, { [CLIENT_ID_ATTRIBUTE]: id })
      .catch((err: unknown) => this.#logger.exception(err, { phase: 'http request' }))
      .finally(done);
  }

  #onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const id = this.#clients.idOf(socket) ?? this.#nextId();
    if (this.#state !== 'running') {
      this.#logger.debug('WebSocket upgrade refused while draining', {
        code: 'PKG_ERR_CORE_DRAINING',
        clientId: id,
      });
      socket.on('error', () => socket.destroy());
      socket.end(
        'HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n',
      );
      return;
    }
    this.#wsHandler.performHandshake(req, socket, head, id).catch((err: unknown) => {
      this.#logger.exception(err, { phase: 'websocket handshake', clientId: id });
    });
  }

  #clientIp(req: IncomingMessage): string {
    return resolveClientAddress(req.socket.remoteAddress ?? '', req.headers, this.#trust);
  }

  #onWsConnect(client: WsClient): void {
    const id = client.id;
    this.#clients.markWebSocket(id, client.data);
    this.#settle(this.#adapter.joinNamespace(id, DEFAULT_NAMESPACE), 'adapter.joinNamespace');
    const phase = this.#router.dispatchSpecialEvent(id, 'connect');
    this.#connectPhase.set(id, phase);
    // Once OnConnect has finished, messages go straight to the router. Messages that came
    // meanwhile are queued on the phase; this reaction runs before theirs, so order holds.
    void phase.then(() => {
      if (this.#connectPhase.get(id) === phase) this.#connectPhase.delete(id);
    });
    this.#track(phase);
  }

  #onWsMessage(clientId: string, event: string, data: EventData): void {
    const phase = this.#connectPhase.get(clientId);
    const work = phase
      ? phase.then(() => this.#router.dispatch(clientId, event, data))
      : this.#router.dispatch(clientId, event, data);
    this.#track(work);
  }

  #onWsDisconnect(clientId: string): void {
    this.#clients.markDisconnected(clientId);
    this.#settle(this.#adapter.removeClient(clientId), 'adapter.removeClient');
    const phase = this.#connectPhase.get(clientId) ?? Promise.resolve();
    const work = phase
      .then(() => this.#router.dispatchSpecialEvent(clientId, 'disconnect'))
      .finally(() => {
        this.#connectPhase.delete(clientId);
        this.#clients.forgetData(clientId);
      });
    this.#track(work);
  }

  // ------------------------------------------------------------ internals: HTTP

  async #dispatchHttp(request: Request): Promise<Response> {
    const draining = this.#state === 'draining';
    const response = await this.#route(request);
    if (draining || this.#state === 'draining') response.setHeader('Connection', 'close');
    return response;
  }

  async #route(request: Request): Promise<Response> {
    const healthPath = this.#config.getHealthCheckPath();
    const method = request.getMethod().toUpperCase();
    if (
      healthPath !== null &&
      (method === 'GET' || method === 'HEAD') &&
      trimTrailingSlash(request.getPath()) === trimTrailingSlash(healthPath)
    ) {
      const doc = this.getHealth();
      const response = Response.json(doc, doc.status === 'healthy' ? 200 : 503, {
        'Cache-Control': 'no-store',
      });
      return response;
    }
    try {
      return await this.#router.dispatchHttp(request);
    } catch (err) {
      // Problems with the request itself (a malformed JSON body read by the handler, ...)
      // keep their own status: HttpHandler answers them (400, 413, ...).
      if (err instanceof HttpError) throw err;
      this.#logger.exception(err, {
        method,
        path: request.getPath(),
        code: 'PKG_ERR_CORE_HANDLER_FAILED',
      });
      const body: Record<string, unknown> = { error: 'Internal Server Error' };
      if (this.#config.isDebug() && err instanceof Error) {
        body['message'] = err.message;
        if (err.stack) body['stack'] = err.stack;
      }
      return Response.json(body, 500);
    }
  }

  // ------------------------------------------------------------ internals: misc

  #adapterHost(): AdapterHost {
    return {
      namespaces: this.#namespaces,
      localClientIds: () => {
        const handler = this.#wsHandler;
        return (function* () {
          for (const client of handler.getClients()) yield client.id;
        })();
      },
      deliver: (clientIds, text) => this.#wsHandler.sendToMany(clientIds, text),
    };
  }

  #track(work: Promise<void>): void {
    const tracked: Promise<void> = work.then(
      () => {
        this.#pendingWork.delete(tracked);
      },
      (err: unknown) => {
        this.#pendingWork.delete(tracked);
        this.#logger.exception(err, { phase: 'dispatch' });
      },
    );
    this.#pendingWork.add(tracked);
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
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        `${method}: room and namespace must be non-empty strings, got ${typeof room} and ${typeof namespace}.`,
      );
    }
  }

  #assertIdle(method: string): void {
    if (this.#state !== 'idle') {
      throw createCoreError(
        Error,
        'PKG_ERR_CORE_ALREADY_RUNNING',
        `${method} must be called before run(); the server is ${this.#state}.`,
      );
    }
  }
}
