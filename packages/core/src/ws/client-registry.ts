import type { Socket } from 'node:net';
import { createCoreError } from '../errors';

/** How a connection is classified. */
export type ClientType = 'ws' | 'http';

/**
 * Every open connection of a server by client id: its type (`http` from the moment the TCP
 * connection is accepted, `ws` after a successful upgrade), its socket and its custom data.
 * An HTTP connection is forgotten when its socket closes; a WebSocket client in two steps
 * (no longer connected, then its data), so `OnDisconnect` handlers can still read its data.
 */
/** Shared by every client without data (most of them): a Map is made on the first `setData`. */
const NO_DATA: ReadonlyMap<string, unknown> = new Map<string, unknown>();

export class ClientRegistry {
  readonly #types = new Map<string, ClientType>();
  readonly #data = new Map<string, ReadonlyMap<string, unknown>>();
  readonly #sockets = new Map<string, Socket>();
  /**
   * Where a tracked socket keeps its client id: a property under this registry's own symbol
   * (cheaper to set, read and collect than a WeakMap entry per connection).
   */
  readonly #idKey = Symbol('client id');
  /** The one 'close' listener of every tracked socket (no closure per connection). */
  readonly #socketClosed: (this: object) => void;

  constructor() {
    const idKey = this.#idKey;
    const sockets = this.#sockets;
    const types = this.#types;
    const data = this.#data;
    this.#socketClosed = function (this: object): void {
      const id = (this as Record<symbol, string | undefined>)[idKey];
      if (id === undefined) return;
      sockets.delete(id);
      if (types.get(id) === 'http') {
        types.delete(id);
        data.delete(id);
      }
    };
  }

  /** Client id -> type, for every open connection (read-only view). */
  get types(): ReadonlyMap<string, ClientType> {
    return this.#types;
  }

  /** Records a new TCP (or TLS) connection as `http`. */
  trackConnection(socket: Socket, id: string): void {
    (socket as unknown as Record<symbol, string>)[this.#idKey] = id;
    this.#sockets.set(id, socket);
    this.#types.set(id, 'http');
    this.#data.set(id, NO_DATA);
    // `on`, not `once`: a socket closes once, and `once` would wrap the listener per socket.
    socket.on('close', this.#socketClosed);
  }

  /** The id given to the connection a request or upgrade arrived on. */
  idOf(socket: object): string | undefined {
    return (socket as Record<symbol, string | undefined>)[this.#idKey];
  }

  /** Reclassifies a connection as `ws`, with the data its handshake collected. */
  markWebSocket(id: string, initialData: Record<string, unknown>): void {
    this.#types.set(id, 'ws');
    const entries = Object.entries(initialData);
    this.#data.set(id, entries.length === 0 ? NO_DATA : new Map(entries));
  }

  /** The WebSocket client is gone: not connected any more, data kept until `forgetData`. */
  markDisconnected(id: string): void {
    if (this.#types.get(id) === 'ws') this.#types.delete(id);
  }

  /** Drops the data of a client that is no longer connected. */
  forgetData(id: string): void {
    if (!this.#types.has(id)) this.#data.delete(id);
  }

  getType(id: string): ClientType | undefined {
    return this.#types.get(id);
  }

  isConnected(id: string): boolean {
    return this.#types.has(id);
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
    const data = this.#data.get(id);
    if (!data) return false;
    if (data === NO_DATA) this.#data.set(id, new Map([[key, value]]));
    else (data as Map<string, unknown>).set(key, value);
    return true;
  }

  /** One value, or all of them as a new object when no key is given. */
  getData(id: string, key?: string | null): unknown {
    const data = this.#data.get(id);
    if (!data) return undefined;
    if (key === undefined || key === null) return Object.fromEntries(data);
    return data.get(key);
  }

  /** Client id -> a copy of its data. */
  snapshotData(): Map<string, Record<string, unknown>> {
    return new Map([...this.#data].map(([id, data]) => [id, Object.fromEntries(data)]));
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
