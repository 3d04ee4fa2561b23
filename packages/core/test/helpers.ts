// Shared helpers of the integration tests: a real Server on 127.0.0.1 port 0, `ws` clients
// that queue what they receive, a logger that records, and clean-up of everything opened.
import { connect as netConnect, type Socket } from 'node:net';
import WebSocket, { type ClientOptions } from 'ws';
import { NullLogger, type LogContext } from '@pkg/logger';
import {
  OnConnect,
  OnDisconnect,
  Server,
  ServerConfig,
  SocketController,
  type ServerConfigOptions,
} from '../src/index';

export interface Envelope {
  event: string;
  data: Record<string, unknown>;
}

/** A logger that keeps every line, so tests can check what was logged. */
export class MemoryLogger extends NullLogger {
  readonly lines: Array<{ level: string; message: string; context?: LogContext }> = [];
  readonly exceptions: Array<{ error: unknown; context?: LogContext }> = [];

  override log(level: string, message: string, context?: LogContext): void {
    super.log(level, message, context);
    this.lines.push({ level, message, ...(context ? { context } : {}) });
  }

  override exception(error: unknown, context?: LogContext): void {
    this.exceptions.push({ error, ...(context ? { context } : {}) });
  }
}

const opened = new Set<{ close(): Promise<void> | void }>();

/** Closes every server, client and socket opened through these helpers. */
export async function cleanup(): Promise<void> {
  const all = [...opened];
  opened.clear();
  for (const item of all.reverse()) await item.close();
}

export interface TestServer {
  server: Server;
  logger: MemoryLogger;
  port: number;
  base: string;
  wsUrl: string;
}

/** Starts a server on 127.0.0.1 port 0 with the given config and controllers. */
export async function startServer(
  controllers: SocketController[] = [],
  config: ServerConfigOptions = {},
  setup?: (server: Server) => void,
): Promise<TestServer> {
  const logger = new MemoryLogger();
  const server = new Server(
    new ServerConfig({ host: '127.0.0.1', port: 0, heartbeat_interval: 0, ...config }),
    undefined,
    undefined,
    undefined,
    logger,
  );
  for (const c of controllers) server.registerController(c);
  setup?.(server);
  await server.run();
  opened.add({ close: () => server.close() });
  const port = server.getPort();
  return {
    server,
    logger,
    port,
    base: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
  };
}

/** A `ws` client that queues the envelopes it receives. */
export class TestClient {
  readonly ws: WebSocket;
  readonly received: Envelope[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  readonly #waiters: Array<{ match: (e: Envelope) => boolean; resolve: (e: Envelope) => void }> =
    [];
  #queue: Envelope[] = [];

  private constructor(ws: WebSocket) {
    this.ws = ws;
    this.closed = new Promise((resolve) =>
      ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    ws.on('message', (raw) => {
      const envelope = JSON.parse(String(raw)) as Envelope;
      this.received.push(envelope);
      const index = this.#waiters.findIndex((w) => w.match(envelope));
      if (index >= 0) {
        const [waiter] = this.#waiters.splice(index, 1);
        waiter!.resolve(envelope);
      } else {
        this.#queue.push(envelope);
      }
    });
  }

  /** Opens a connection (offering `protocols`, if any) and resolves once it is open. */
  static async connect(
    url: string,
    options: ClientOptions = {},
    protocols: string[] = [],
  ): Promise<TestClient> {
    const ws = new WebSocket(url, protocols, options);
    const client = new TestClient(ws);
    opened.add(client);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return client;
  }

  /** The next envelope (of an event name, if given) not consumed yet. */
  next(event?: string): Promise<Envelope> {
    const match = (e: Envelope): boolean => event === undefined || e.event === event;
    const index = this.#queue.findIndex(match);
    if (index >= 0) return Promise.resolve(this.#queue.splice(index, 1)[0]!);
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }

  /** Envelopes received but not consumed by `next`, in order. */
  pending(): Envelope[] {
    return [...this.#queue];
  }

  send(event: string, data: unknown = {}): void {
    this.ws.send(JSON.stringify({ event, data }));
  }

  sendRaw(text: string): void {
    this.ws.send(text);
  }

  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    this.ws.close();
    await this.closed;
  }
}

/** Resolves with the status and headers when a WebSocket upgrade is refused. */
export function expectRefusedUpgrade(
  url: string,
  options: ClientOptions = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, options);
    ws.once('open', () => {
      ws.terminate();
      reject(new Error('the upgrade was accepted'));
    });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        ws.terminate();
      });
    });
    ws.once('error', () => undefined);
  });
}

/** A raw TCP connection, for exact HTTP bytes (pipelining, HEAD). */
export class RawConnection {
  readonly socket: Socket;
  #data = '';
  #listeners: Array<() => void> = [];
  readonly ended: Promise<void>;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.#data += chunk;
      for (const fn of this.#listeners.splice(0)) fn();
    });
    this.ended = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
  }

  static async open(port: number): Promise<RawConnection> {
    const socket = netConnect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const conn = new RawConnection(socket);
    opened.add(conn);
    return conn;
  }

  write(text: string): void {
    this.socket.write(text);
  }

  /** Everything received so far. */
  get data(): string {
    return this.#data;
  }

  /** Resolves once the received text satisfies the predicate. */
  async waitFor(predicate: (data: string) => boolean): Promise<string> {
    while (!predicate(this.#data)) {
      await new Promise<void>((resolve) => this.#listeners.push(resolve));
    }
    return this.#data;
  }

  close(): void {
    this.socket.destroy();
  }
}

/** A promise with its resolve function, to hold a handler until the test releases it. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A controller that records the client ids its OnConnect and OnDisconnect handlers saw. */
export class ConnectionRecorder extends SocketController {
  readonly connects: string[] = [];
  readonly disconnects: string[] = [];

  @OnConnect()
  hello(clientId: string): void {
    this.connects.push(clientId);
  }

  @OnDisconnect()
  bye(clientId: string): void {
    this.disconnects.push(clientId);
  }
}
