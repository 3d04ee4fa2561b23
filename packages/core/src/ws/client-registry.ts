import type { Socket } from 'node:net';
import { createCoreError } from '../errors';

/** How a connection is classified. */
export type ClientType = 'ws' | 'http';

/**
 * The WebSocket clients, as the application sees them: kept by the protocol layer's one
 * table of connections (protocol/connections.ts), read here through this view.
 */
export interface WebSocketClients {
  /** From its upgrade until it is gone for good (an away session is still connected). */
  isConnected(clientId: string): boolean;
  /** One value of its data, or all of them as a new object (undefined: unknown client). */
  getData(clientId: string, key?: string | null): unknown;
  /** False when the client is unknown. */
  setData(clientId: string, key: string, value: unknown): boolean;
  connectedIds(): Iterable<string>;
  /** Every client whose data can still be read, with a copy of it. */
  dataEntries(): Iterable<readonly [string, Record<string, unknown>]>;
}

/**
 * Every open connection of a server by client id: its type (`http` from the moment the TCP
 * connection is accepted, `ws` after a successful upgrade), its socket and its custom data.
 * This table keeps the HTTP connections (forgotten when their socket closes) and their
 * sockets; a WebSocket client is read from the protocol layer's connections
 * ({@link WebSocketClients}), which keep its data until its `OnDisconnect` handlers are done.
 */
export class ClientRegistry {
  readonly #ws: WebSocketClients;
  /** HTTP connections (not upgraded): id -> their data (null: none yet). */
  readonly #http = new Map<string, Map<string, unknown> | null>();
  readonly #sockets = new Map<string, Socket>();
  /**
   * Where a tracked socket keeps its client id: a property under this registry's own symbol
   * (cheaper to set, read and collect than a WeakMap entry per connection).
   */
  readonly #idKey = Symbol('client id');
  constructor(ws: WebSocketClients) {
    this.#ws = ws;
  }

  /** Client id -> type, for every open connection (a copy). */
  get types(): ReadonlyMap<string, ClientType> {
    const types = new Map<string, ClientType>();
    for (const id of this.#http.keys()) types.set(id, 'http');
    for (const id of this.#ws.connectedIds()) types.set(id, 'ws');
    return types;
  }

  /**
   * Records a new TCP (or TLS) connection as `http`, until {@link forget} is called for its
   * socket (the server's one 'close' listener per connection does: lifecycle.ts).
   */
  trackConnection(socket: Socket, id: string): void {
    (socket as unknown as Record<symbol, string>)[this.#idKey] = id;
    this.#sockets.set(id, socket);
    this.#http.set(id, null);
  }

  /** The socket of a tracked connection closed: its entry goes (a WebSocket client's stays). */
  forget(socket: object): void {
    const id = (socket as Record<symbol, string | undefined>)[this.#idKey];
    if (id === undefined) return;
    this.#sockets.delete(id);
    this.#http.delete(id);
  }

  /** The id given to the connection a request or upgrade arrived on. */
  idOf(socket: object): string | undefined {
    return (socket as Record<symbol, string | undefined>)[this.#idKey];
  }

  /** The connection was upgraded: from now on the WebSocket clients answer for it. */
  upgraded(id: string): void {
    this.#http.delete(id);
  }

  getType(id: string): ClientType | undefined {
    if (this.#http.has(id)) return 'http';
    return this.#ws.isConnected(id) ? 'ws' : undefined;
  }

  isConnected(id: string): boolean {
    return this.#http.has(id) || this.#ws.isConnected(id);
  }

  /** Sets one value; false when the client is unknown. The key must be a string. */
  setData(id: string, key: string, value: unknown): boolean {
    if (typeof key !== 'string') {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        'setClientData: the key must be a string.',
      );
    }
    const data = this.#http.get(id);
    if (data === undefined) return this.#ws.setData(id, key, value);
    if (data === null) this.#http.set(id, new Map([[key, value]]));
    else data.set(key, value);
    return true;
  }

  /** One value, or all of them as a new object when no key is given. */
  getData(id: string, key?: string | null): unknown {
    const data = this.#http.get(id);
    if (data === undefined) return this.#ws.getData(id, key);
    if (key === undefined || key === null) return Object.fromEntries(data ?? []);
    return data?.get(key);
  }

  /** Client id -> a copy of its data. */
  snapshotData(): Map<string, Record<string, unknown>> {
    const all = new Map<string, Record<string, unknown>>();
    for (const [id, data] of this.#http) all.set(id, Object.fromEntries(data ?? []));
    for (const [id, data] of this.#ws.dataEntries()) all.set(id, data);
    return all;
  }

  /** Closes the TCP connection of a client. */
  destroy(id: string): void {
    this.#sockets.get(id)?.destroy();
  }

  /** Closes every TCP connection still open. */
  destroyAll(): void {
    for (const socket of this.#sockets.values()) socket.destroy();
  }
}
