import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { Response, type HttpHandler, type Request } from '@pkg/http';
import type { LoggerInterface } from '@pkg/logger';
import type { ClientIdGenerator, WebSocketHandler } from '@pkg/ws-protocol';
import type { AdapterState } from './adapter';
import type { ClientRegistry } from './client-registry';
import { createCoreError } from './errors';
import { buildHealthDocument, type HealthDocument } from './health';
import { isThenable } from './middleware';
import { createNodeServer, delay, listen, waitAtMost, type NodeServer } from './node-server';
import type { ServerConfig } from './server-config';

/** Lifecycle of a Server. */
export type ServerState = 'idle' | 'starting' | 'running' | 'draining' | 'closed';

/** The request attribute under which the server stores the connection's client id. */
export const CLIENT_ID_ATTRIBUTE = 'clientId';

const GOING_AWAY = 1001;

/** What the lifecycle needs, handed over once. */
export interface LifecycleOptions {
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
}

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

  constructor(options: LifecycleOptions) {
    this.#o = options;
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
      this.#o.wsHandler.size,
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
    const { config, logger, clients, nextId } = this.#o;
    const maxBodySize = this.#o.httpHandler.getMaxBodySize();
    const tls = config.getTls();
    const server = createNodeServer(config);
    server.on(tls ? 'secureConnection' : 'connection', (socket: Socket) =>
      clients.trackConnection(socket, nextId()),
    );
    server.on('request', this.#onRequest);
    // `Expect: 100-continue`: invite the body only when its declared size fits; otherwise the
    // handler answers 413 at once and the client never sends it.
    server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
      const declared = Number(req.headers['content-length']);
      if (!(declared > maxBodySize)) res.writeContinue();
      this.#onRequest(req, res);
    });
    server.on('upgrade', this.#onUpgrade);
    if (tls) {
      server.on('tlsClientError', (err: Error) => {
        logger.debug('TLS handshake failed', { error: err.message });
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
    this.#o.logger.info('Server draining', { clients: this.#o.wsHandler.size });
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
    const delayMs = config.getShutdownDelay();
    if (delayMs > 0) await delay(delayMs).promise;
    const timeout = config.getShutdownTimeout();
    logger.info('Server shutting down', { clients: wsHandler.size });

    // Stop accepting. Node also closes idle keep-alive connections here; the others end
    // after their response, which carries Connection: close.
    const listenerClosed = new Promise<void>((resolve) => server.close(() => resolve()));
    await wsHandler.closeAll(GOING_AWAY, 'Server shutting down', timeout);
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
      logger.warning('Shutdown timeout: cutting HTTP requests still in flight', {
        requests: this.#inflightHttp,
        shutdownTimeout: timeout,
      });
    }
    server.closeAllConnections();
    clients.destroyAll();
    await listenerClosed;
    await this.#o.closeAdapter();
    this.#state = 'closed';
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

  readonly #onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const id = this.#o.clients.idOf(req.socket) ?? this.#o.nextId();
    this.#inflightHttp += 1;
    if (this.#state === 'draining') res.setHeader('Connection', 'close');
    // The client id travels as a request attribute (no AsyncLocalStorage: its promise hooks
    // would slow every promise in the process).
    const work: unknown = this.#o.httpHandler.handle(req, res, { [CLIENT_ID_ATTRIBUTE]: id });
    if (isThenable(work)) work.then(this.#requestDone, this.#requestFailed);
    else this.#requestDone();
  };

  readonly #onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const id = this.#o.clients.idOf(socket) ?? this.#o.nextId();
    if (this.#state !== 'running') {
      this.#o.logger.debug('WebSocket upgrade refused while draining', {
        code: 'PKG_ERR_CORE_DRAINING',
        clientId: id,
      });
      socket.on('error', () => socket.destroy());
      socket.end(
        'HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n',
      );
      return;
    }
    this.#o.wsHandler.performHandshake(req, socket, head, id).catch((err: unknown) => {
      this.#o.logger.exception(err, { phase: 'websocket handshake', clientId: id });
    });
  };
}
