/**
 * The client table of a WebSocketHandler: connected clients by id, and the ids of handshakes
 * still under way, so that an id is never given out twice.
 */
import type { OwnedConnection } from './accept';
import type { WsClient } from './connection';

/** A connection as the handler keeps it. */
export type HandlerConnection = OwnedConnection;

export class ClientTable {
  readonly #clients = new Map<string, HandlerConnection>();
  /** Ids of handshakes under way. */
  readonly #pending = new Set<string>();

  /** The connection of a connected client. */
  get(id: string): HandlerConnection | undefined {
    return this.#clients.get(id);
  }

  /** True when the id is connected or held by a handshake under way. */
  taken(id: string): boolean {
    return this.#clients.has(id) || this.#pending.has(id);
  }

  /** Holds an id while its handshake runs (hooks may be slow). */
  hold(id: string): void {
    this.#pending.add(id);
  }

  /** Gives back an id held by {@link hold}. */
  unhold(id: string): void {
    this.#pending.delete(id);
  }

  add(conn: HandlerConnection): void {
    this.#clients.set(conn.client.id, conn);
  }

  /** Forgets a connection, unless its id now belongs to another one. */
  remove(conn: HandlerConnection): void {
    if (this.#clients.get(conn.client.id) === conn) this.#clients.delete(conn.client.id);
  }

  /** Forgets whatever is under the id (a connection that failed while being accepted). */
  delete(id: string): void {
    this.#clients.delete(id);
  }

  /**
   * Gives a connected client another id. Returns the client under its new id, or undefined
   * (nothing changed) when `currentId` is not connected or `newId` is empty or taken.
   */
  rename(currentId: string, newId: string): WsClient | undefined {
    const conn = this.#clients.get(currentId);
    if (conn === undefined || typeof newId !== 'string' || newId === '') return undefined;
    if (this.taken(newId)) return undefined;
    conn.client = Object.freeze({ ...conn.client, id: newId });
    this.#clients.delete(currentId);
    this.#clients.set(newId, conn);
    return conn.client;
  }

  connections(): IterableIterator<HandlerConnection> {
    return this.#clients.values();
  }

  *clients(): IterableIterator<WsClient> {
    for (const conn of this.#clients.values()) yield conn.client;
  }

  get size(): number {
    return this.#clients.size;
  }
}
