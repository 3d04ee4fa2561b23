// Shared helpers of the client's integration tests: the real @pkg/core Server on 127.0.0.1
// (port 0, restartable on the same port), clients that are always disconnected at the end,
// and a promise for the next occurrence of an event.
import {
  NullLogger,
  Server,
  ServerConfig,
  type HandshakeHook,
  type SocketController,
} from '@pkg/core';
import { Client, type ClientOptions, type EventsMap, type ListenName } from '../src/index';

const cleanups: Array<() => Promise<void> | void> = [];

/** Stops every server and client the helpers created, newest first. */
export async function cleanup(): Promise<void> {
  for (const fn of cleanups.splice(0).reverse()) await fn();
}

export interface CoreServer {
  server: Server;
  port: number;
  url: string;
  /**
   * Closes the server (clients see 1001: these servers turn the 1012 restart hint off
   * unless `config` sets restart_spread) and starts a new one on the same port.
   */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** A real @pkg/core Server with fresh controllers from `make` (called again on restart). */
export async function startCoreServer(
  make: () => SocketController[],
  hook?: HandshakeHook,
  config: Record<string, unknown> = {},
): Promise<CoreServer> {
  const start = async (port: number): Promise<Server> => {
    const server = new Server(
      new ServerConfig({
        host: '127.0.0.1',
        port,
        heartbeat_interval: 0,
        shutdown_delay: 0,
        restart_spread: 0,
        ...config,
      }),
      undefined,
      undefined,
      undefined,
      new NullLogger(),
    );
    for (const c of make()) server.registerController(c);
    if (hook) server.addHandshakeMiddleware(hook);
    await server.run();
    return server;
  };
  const first = await start(0);
  const handle: CoreServer = {
    server: first,
    port: first.getPort(),
    url: `ws://127.0.0.1:${first.getPort()}`,
    async restart() {
      await handle.server.close();
      handle.server = await start(handle.port);
    },
    async stop() {
      await handle.server.close();
    },
  };
  cleanups.push(() => handle.stop());
  return handle;
}

/** A client that the clean-up disconnects. */
export function makeClient<
  Emit extends EventsMap<Emit> = Record<string, (data: unknown) => unknown>,
  Listen extends EventsMap<Listen> = Record<string, (data: unknown) => unknown>,
>(url: string, options: ClientOptions = {}): Client<Emit, Listen> {
  const client = new Client<Emit, Listen>(url, {
    reconnectionDelay: 10,
    reconnectionDelayMax: 50,
    network: null,
    ...options,
  });
  cleanups.push(() => client.disconnect());
  return client;
}

/** Resolves with the payload of the next occurrence of `event`. */
export function next<T = unknown>(client: object, event: string): Promise<T> {
  return new Promise((resolve) => {
    (client as Client).once(
      event as ListenName<Record<string, never>>,
      ((payload: T) => resolve(payload)) as never,
    );
  });
}

/** A list that records values and lets a test wait until it has n of them. */
export class Recorder<T> {
  readonly items: T[] = [];
  #waiters: Array<{ n: number; resolve: () => void }> = [];

  push = (item: T): void => {
    this.items.push(item);
    this.#waiters = this.#waiters.filter((w) => {
      if (this.items.length < w.n) return true;
      w.resolve();
      return false;
    });
  };

  async waitFor(n: number): Promise<T[]> {
    if (this.items.length < n) {
      await new Promise<void>((resolve) => this.#waiters.push({ n, resolve }));
    }
    return this.items;
  }
}
