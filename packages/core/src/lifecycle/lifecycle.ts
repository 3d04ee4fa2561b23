import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { Response, type HttpHandler, type Request, type TrustPredicate } from '@pkg/http';
import type { LoggerInterface } from '@pkg/logger';
import type { ClientIdGenerator, WebSocketHandler } from '@pkg/ws-protocol';
import type { AdapterState } from '../cluster/adapter';
import type { ClientRegistry } from '../ws/client-registry';
import type { PendingHandlers } from '../protocol/pending-handlers';
import { RETRY_AFTER_SECONDS, type ConnectionGate } from './connection-gate';
import type { HostCheckResult } from './host-check';
import { refuseRequest } from './refusals';
import { Admission } from './admission';
import { connectBackends, type Backend } from './backends';
import { attachListeners, inProcessServer, type ListenerHandlers } from './listener';
import { until } from '../http/timeouts';
import { createCoreError } from '../errors';
import { buildHealthDocument, type HealthDocument } from './health';
import { isThenable } from '../routing/middleware';
import { createNodeServer, listen, type NodeServer } from './node-server';
import { announceRestart, shutdownClose } from './restart';
import type { createServer } from 'node:http';
import type { ServerConfig } from '../config/server-config';

/** Lifecycle of a Server. */
export type ServerState = 'idle' | 'starting' | 'running' | 'draining' | 'closed';

/** The request attribute under which the server stores the connection's client id. */
export const CLIENT_ID_ATTRIBUTE = 'clientId';

/** What the lifecycle needs, handed over once. */
export interface LifecycleOptions {
  /** Told the code of every request or upgrade refused before a handler (metrics). */
  readonly onRefusal?: (code: string) => void;
  readonly config: ServerConfig;
  readonly logger: LoggerInterface;
  readonly clients: ClientRegistry;
  readonly httpHandler: HttpHandler;
  readonly wsHandler: WebSocketHandler;
  readonly nextId: ClientIdGenerator;
  /** Closes the broadcast adapter, last. */
  readonly closeAdapter: () => Promise<void>;
  /** The adapter's link to other instances, for the health document (undefined: local). */
  readonly adapterState: () => AdapterState | undefined;
  /** WebSocket clients in state `open` (the protocol layer's count), for health and logs. */
  readonly openClients: () => number;
  /** Connection caps (max_connections, its reserve, max_connections_per_ip). */
  readonly gate?: ConnectionGate;
  /** The Host check of allowed_hosts, when set. */
  readonly hostCheck?: ((host: string | undefined) => HostCheckResult) | null;
  /** Unfinished WebSocket handlers, per client; close() waits for them too. */
  readonly clientWork?: PendingHandlers;
  /** The client address of an upgrade request (trust_proxy applied). */
  readonly clientAddress?: (req: IncomingMessage) => string;
  /** trust_proxy: a trusted proxy's forwarded host is checked against allowed_hosts too. */
  readonly trust?: TrustPredicate;
  /** What run() connects before it listens (the adapter, the rate-limit store). */
  readonly backends?: () => readonly Backend[];
  /** Work run() does first, before the backends: loading `@opentelemetry/api` for tracing. */
  readonly prepare?: () => Promise<void>;
}

/** What close() may take beyond shutdown_delay + shutdown_timeout: closing the listener
 * after its connections were cut, then the adapter. */
const CLOSE_MARGIN_MS = 1_000;
const noop = (): void => undefined;

/**
 * The server's lifecycle: listening (`run`), draining, graceful close, and the work close()
 * waits for (in-flight HTTP requests, message dispatches, disconnect handlers). It owns the
 * `node:http` server's listeners: a request goes straight to HttpHandler, an upgrade to
 * WebSocketHandler (or 503 while draining).
 */
export class Lifecycle {
  readonly #o: LifecycleOptions;
  #state: ServerState = 'idle';
  #socket: NodeServer | null = null;
  #startedAt = 0;
  #boundPort: number | null = null;
  #closing: Promise<void> | null = null;
  /** Settles when a run() in progress has bound the port (or failed to). */
  #listening: Promise<void> | null = null;
  /** Work that close() waits for: disconnect handlers, message dispatches. */
  readonly #pendingWork = new Set<Promise<void>>();
  #inflightHttp = 0;
  #httpIdle: (() => void) | null = null;
  readonly #admission: Admission;
  readonly #handlers: ListenerHandlers;
  /** The parser of in-process connections, made on first use. */
  #inProcess: ReturnType<typeof createServer> | null = null;
  /**
   * The one 'close' listener of every connection, shared (called with the socket as `this`):
   * the registry and the gate forget it. One listener, not one per table: a socket's third
   * 'close' listener (with `ws`'s after an upgrade) grows its listener list to 19 slots.
   */
  readonly #socketClosed: (this: Duplex) => void;

  constructor(options: LifecycleOptions) {
    this.#o = options;
    this.#admission = new Admission({
      logger: options.logger,
      healthCheckPath: options.config.getHealthCheckPath(),
      ...(options.gate ? { gate: options.gate } : {}),
      hostCheck: options.hostCheck ?? null,
      ...(options.trust ? { trust: options.trust } : {}),
      ...(options.clientAddress ? { clientAddress: options.clientAddress } : {}),
      ...(options.onRefusal ? { onRefusal: options.onRefusal } : {}),
    });
    const { clients, gate } = options;
    this.#socketClosed = function (this: Duplex): void {
      clients.forget(this);
      gate?.closed(this);
    };
    this.#handlers = {
      onConnection: this.#onConnection,
      onRequest: this.#onRequest,
      onUpgrade: this.#onUpgrade,
      maxBodySize: options.httpHandler.getMaxBodySize(),
    };
  }

  get state(): ServerState {
    return this.#state;
  }
  get socket(): NodeServer | null {
    return this.#socket;
  }
  /** Epoch ms when the port was bound (0 before). */
  get startedAt(): number {
    return this.#startedAt;
  }
  get boundPort(): number | null {
    return this.#boundPort;
  }
  /** Draining or closed: the health check answers 503 and answers carry `Connection: close`. */
  isDraining(): boolean {
    return this.#state === 'draining' || this.#state === 'closed';
  }

  /** The health document as the health-check path answers it now. */
  health(): HealthDocument {
    return buildHealthDocument(
      this.isDraining() ? 'draining' : 'healthy',
      this.#o.openClients(),
      this.#startedAt || Date.now(),
      Date.now(),
      this.#o.adapterState(),
    );
  }

  /** Throws unless the server has not started yet. */
  assertIdle(method: string): void {
    if (this.#state !== 'idle') {
      throw createCoreError(
        Error,
        'PKG_ERR_CORE_ALREADY_RUNNING',
        `${method} must be called before run(); the server is ${this.#state}.`,
      );
    }
  }

  /**
   * Wraps the HTTP dispatch so that an answer given while draining carries
   * `Connection: close` (also for a request that began before draining did).
   */
  closeWhileDraining(
    next: (request: Request) => Response | Promise<Response>,
  ): (request: Request) => Response | Promise<Response> {
    const mark = (response: Response): Response => {
      if (this.#state === 'draining') response.setHeader('Connection', 'close');
      return response;
    };
    return (request) => {
      const result = next(request);
      return result instanceof Response ? mark(result) : result.then(mark);
    };
  }

  /** Keeps `work` until it settles, for close() to wait for; a rejection is logged. */
  readonly track = (work: Promise<void>): void => {
    const tracked: Promise<void> = work.then(
      () => {
        this.#pendingWork.delete(tracked);
      },
      (err: unknown) => {
        this.#pendingWork.delete(tracked);
        this.#o.logger.exception(err, { phase: 'dispatch' });
      },
    );
    this.#pendingWork.add(tracked);
  };

  async run(): Promise<void> {
    if (this.#state !== 'idle') {
      throw createCoreError(
        Error,
        'PKG_ERR_CORE_ALREADY_RUNNING',
        `run() was called on a server that is ${this.#state}; a server runs once, create a new Server to listen again.`,
      );
    }
    this.#state = 'starting';
    // close() during the start waits for all of it (backends and the bind), then closes.
    const started = this.#start();
    this.#listening = started.then(
      () => undefined,
      () => undefined,
    );
    await started;
  }

  async #start(): Promise<void> {
    const { config, logger } = this.#o;
    if (this.#o.prepare !== undefined) {
      try {
        await this.#o.prepare();
      } catch (err) {
        this.#state = 'closed';
        throw err;
      }
    }
    // Before the port is bound: a Redis rate-limit store that connected on its first hit
    // let the first hits of every fresh instance through ("The client is offline").
    await connectBackends(
      this.#o.backends?.() ?? [],
      config.get('backend_connect_timeout'),
      logger,
    );
    const tls = config.getTls();
    const server = createNodeServer(config);
    attachListeners(server, this.#handlers, tls !== null, logger);
    this.#socket = server;
    try {
      this.#boundPort = await listen(server, config.getHost(), config.getPort());
    } catch (err) {
      this.#state = 'closed';
      this.#socket = null;
      throw err;
    }
    server.on('error', (err) => logger.exception(err, { phase: 'listening socket' }));
    this.#startedAt = Date.now();
    this.#state = 'running';
    logger.info(
      `Server listening on ${tls ? 'https' : 'http'}://${config.getHost()}:${this.#boundPort}`,
      { host: config.getHost(), port: this.#boundPort, tls: tls !== null },
    );
  }

  drain(): void {
    if (this.#state !== 'running') return;
    this.#state = 'draining';
    this.#o.logger.info('Server draining', { clients: this.#o.openClients() });
  }

  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async #shutdown(): Promise<void> {
    const { config, logger, clients, wsHandler } = this.#o;
    if (this.#state === 'starting') await this.#listening;
    const server = this.#socket;
    if (this.#state === 'idle' || !server) {
      this.#state = 'closed';
      await this.#o.closeAdapter();
      return;
    }
    this.drain();
    // Every wait below uses timers that keep the process alive, and this one covers the
    // gaps: Node must not exit halfway through close() because the sockets are gone, which
    // would skip the remaining steps and the application's code after `await close()`.
    const keepAlive = setInterval(noop, 60_000);
    try {
      const delayMs = config.getShutdownDelay();
      if (delayMs > 0) await until(new Promise(noop), Date.now() + delayMs);
      const timeout = config.getShutdownTimeout();
      const deadline = Date.now() + timeout;
      logger.info('Server shutting down', { clients: this.#o.openClients() });

      // From here new requests get 503 and messages `shutting_down`, instead of being
      // accepted and then dropped. Node also closes idle keep-alive connections here; the
      // others end after their response, which carries Connection: close.
      this.#admission.refusing = true;
      wsHandler.stopAccepting();
      const listenerClosed = new Promise<void>((resolve) => server.close(() => resolve()));
      // A restart (restart_spread > 0) tells each client when to come back: 1012 with a
      // delay hint spread over the window; otherwise 1001.
      const spread = config.getRestartSpread();
      if (spread > 0) announceRestart(wsHandler, spread);
      const { code, reason } = shutdownClose(spread);
      await until(wsHandler.closeAll(code, reason, timeout), deadline);
      await until(
        Promise.allSettled([...this.#pendingWork, this.#o.clientWork?.settled()]),
        deadline,
      );
      if (this.#inflightHttp > 0) {
        await until(
          new Promise<void>((resolve) => {
            this.#httpIdle = resolve;
          }),
          deadline,
        );
      }
      server.closeIdleConnections();
      if (this.#inflightHttp > 0) {
        logger.warning('Shutdown timeout: cutting HTTP requests still in flight', {
          requests: this.#inflightHttp,
          shutdownTimeout: timeout,
        });
      }
      server.closeAllConnections();
      clients.destroyAll();
      await until(listenerClosed, Date.now() + CLOSE_MARGIN_MS);
      await until(this.#o.closeAdapter(), Math.max(deadline, Date.now() + CLOSE_MARGIN_MS));
    } finally {
      clearInterval(keepAlive);
      this.#state = 'closed';
    }
    logger.info('Server closed');
  }

  readonly #requestDone = (): void => {
    this.#inflightHttp -= 1;
    if (this.#inflightHttp === 0 && this.#httpIdle) {
      const resolve = this.#httpIdle;
      this.#httpIdle = null;
      resolve();
    }
  };

  readonly #requestFailed = (err: unknown): void => {
    this.#o.logger.exception(err, { phase: 'http request' });
    this.#requestDone();
  };

  /** A new connection of the listener or an in-process one: tracked and counted. */
  readonly #onConnection = (socket: Duplex): void => {
    this.#o.clients.trackConnection(socket as Socket, this.#o.nextId());
    this.#o.gate?.accept(socket);
    // `on`, not `once`: a socket closes once, and `once` would wrap the listener per socket.
    socket.on('close', this.#socketClosed);
  };

  readonly #onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    if (this.#admission.refuseRequest(req, res)) return;
    const id = this.#o.clients.idOf(req.socket) ?? this.#o.nextId();
    this.#inflightHttp += 1;
    if (this.#state === 'draining') res.setHeader('Connection', 'close');
    // The client id travels as a request attribute (no AsyncLocalStorage: its promise hooks
    // would slow every promise in the process).
    // A literal with a fixed key (CLIENT_ID_ATTRIBUTE's value) is built from V8's
    // boilerplate; a computed key is not.
    const attributes = { clientId: id } satisfies Record<typeof CLIENT_ID_ATTRIBUTE, string>;
    const work: unknown = this.#o.httpHandler.handle(req, res, attributes);
    // An answer handed to Node before `handle` returned (a synchronous handler, a refusal)
    // ends the request now: waiting for the settled promise would cost a microtask each time.
    if (res.writableEnded || !isThenable(work)) this.#requestDone();
    else work.then(this.#requestDone, this.#requestFailed);
  };

  readonly #onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const id = this.#o.clients.idOf(socket) ?? this.#o.nextId();
    // Draining or closed: no new WebSocket clients (HTTP is still served while draining).
    if (!this.#admission.admitUpgrade(req, socket, id, this.isDraining())) return;
    // A per-address slot taken above is given back when the socket closes, whatever the
    // handshake's outcome.
    this.#o.wsHandler.performHandshake(req, socket, head, id).catch((err: unknown) => {
      this.#o.logger.exception(err, { phase: 'websocket handshake', clientId: id });
    });
  };

  /**
   * Answers a request made in process (`server.inject()`) as the listener would: it counts
   * as one connection against max_connections while it is answered, then passes the same
   * admission (draining, allowed_hosts, the reserve) and handler.
   */
  readonly injectRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const gate = this.#o.gate;
    if (gate !== undefined) {
      const { verdict, release } = gate.admit(req.socket);
      res.once('finish', release);
      res.once('close', release);
      if (verdict === 'over') {
        this.#o.logger.debug('HTTP request refused', {
          code: 'PKG_ERR_CORE_TOO_MANY_CONNECTIONS',
          status: 503,
        });
        refuseRequest(res, 503, 'PKG_ERR_CORE_TOO_MANY_CONNECTIONS', RETRY_AFTER_SECONDS);
        return;
      }
    }
    this.#onRequest(req, res);
  };

  /**
   * Takes the server end of an in-process connection (`server.connect()`) through the same
   * path as an accepted socket: Node's parser, connection caps, admission, the handshake.
   */
  readonly acceptInProcess = (socket: Duplex): void => {
    this.#inProcess ??= inProcessServer(this.#handlers, this.#o.logger);
    this.#inProcess.emit('connection', socket);
  };
}
