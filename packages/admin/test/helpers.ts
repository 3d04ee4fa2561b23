// What the admin's tests share: servers on 127.0.0.1 port 0 with the admin mounted, `ws`
// clients that say $hello with an identity, a logger that keeps its lines, and one place
// that closes everything they opened.
import WebSocket from 'ws';
import {
  NullLogger,
  Server,
  ServerConfig,
  type LogContext,
  type ServerConfigOptions,
} from '@pkg/core';
import { mountAdmin, type AdminHandle, type AdminOptions } from '../src/index';

/** A logger that keeps every line. */
export class MemoryLogger extends NullLogger {
  readonly lines: Array<{ level: string; message: string; context?: LogContext }> = [];

  override log(level: string, message: string, context?: LogContext): void {
    this.lines.push({ level, message, ...(context ? { context } : {}) });
  }
}

const opened: Array<() => Promise<void> | void> = [];

/** Closes every server and client the helpers opened, newest first. */
export async function closeAll(): Promise<void> {
  for (const close of opened.splice(0).reverse()) await close();
}

export interface Instance {
  readonly server: Server;
  readonly admin: AdminHandle;
  readonly logger: MemoryLogger;
  readonly base: string;
  readonly wsUrl: string;
}

/** A server with the admin mounted; `setup` runs before `run()` (an adapter, routes). */
export async function startInstance(
  admin: AdminOptions = {},
  config: ServerConfigOptions = {},
  setup?: (server: Server) => unknown,
): Promise<Instance> {
  const logger = new MemoryLogger();
  const server = new Server(
    new ServerConfig({ host: '127.0.0.1', port: 0, heartbeat_interval: 0, ...config }),
    undefined,
    undefined,
    undefined,
    logger,
  );
  server.addAuthHandler((ctx) => (typeof ctx.auth === 'string' ? { identity: ctx.auth } : false));
  await setup?.(server);
  const handle = mountAdmin(server, admin);
  await server.run();
  opened.push(async () => {
    handle.close();
    await server.close();
  });
  const port = server.getPort();
  return {
    server,
    admin: handle,
    logger,
    base: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}/`,
  };
}

/** A protocol version 1 client that said $hello with `identity`; it queues what it gets. */
export class Client {
  readonly received: Array<{ event: string; data: unknown; id?: unknown }> = [];
  readonly closed: Promise<number>;
  #waiters: Array<() => void> = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (raw) => {
      this.received.push(JSON.parse(String(raw)) as { event: string; data: unknown });
      for (const wake of this.#waiters.splice(0)) wake();
    });
    this.closed = new Promise((resolve) => ws.once('close', (code) => resolve(code)));
  }

  static async open(url: string, identity: string): Promise<Client> {
    const ws = new WebSocket(url, ['pkg.v1']);
    const client = new Client(ws);
    opened.push(() => {
      if (ws.readyState !== WebSocket.CLOSED) ws.terminate();
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.send(JSON.stringify({ event: '$hello', data: { v: 1, auth: identity } }));
    await client.next((m) => m.event === '$welcome');
    return client;
  }

  send(event: string, data: unknown, id?: string): void {
    this.ws.send(JSON.stringify({ event, data, ...(id === undefined ? {} : { id }) }));
  }

  /** The first message (received so far or next) that `match` accepts. */
  async next(
    match: (m: { event: string; data: unknown; id?: unknown }) => boolean,
  ): Promise<{ event: string; data: unknown; id?: unknown }> {
    for (;;) {
      const found = this.received.find(match);
      if (found !== undefined) return found;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }
}

/** GET (or POST with a JSON body) an admin endpoint; the status and the parsed body. */
export async function call(
  url: string,
  init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const res = await fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...init.headers,
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { text };
  }
  return { status: res.status, body, headers: res.headers };
}
