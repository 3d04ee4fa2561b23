/**
 * The one table of WebSocket clients in core: client id -> {@link Connection}.
 *
 * A connection is in it from its upgrade until its `OnDisconnect` handlers are done, under
 * the id the client has now (a resume renames it), and while it is `away` (its session
 * waits for a resume; the connection keeps the session and the client's data). Every other
 * part of core reads a client through this table or holds its `Connection`.
 */
import type { WebSocketClients } from '../ws/client-registry';
import type { Connection } from './connection';

export class ConnectionTable implements WebSocketClients {
  readonly #byId = new Map<string, Connection>();

  get(clientId: string): Connection | undefined {
    return this.#byId.get(clientId);
  }

  /** Puts a connection under its current id (replacing what was there: a resumed session). */
  set(conn: Connection): void {
    this.#byId.set(conn.id, conn);
  }

  /** Takes `conn` out of the table; nothing when another connection holds its id now. */
  remove(conn: Connection, clientId: string = conn.id): void {
    if (this.#byId.get(clientId) === conn) this.#byId.delete(clientId);
  }

  /** A connection was renamed from `from` (a resume or a takeover gave it another id). */
  moved(conn: Connection, from: string): void {
    this.remove(conn, from);
    this.#byId.set(conn.id, conn);
  }

  values(): IterableIterator<Connection> {
    return this.#byId.values();
  }

  get size(): number {
    return this.#byId.size;
  }

  // ------------------------------------------------------------------ WebSocketClients

  isConnected(clientId: string): boolean {
    return this.#byId.get(clientId)?.connected === true;
  }

  getData(clientId: string, key?: string | null): unknown {
    return this.#byId.get(clientId)?.getData(key);
  }

  setData(clientId: string, key: string, value: unknown): boolean {
    const conn = this.#byId.get(clientId);
    if (conn === undefined) return false;
    conn.setData(key, value);
    return true;
  }

  *connectedIds(): IterableIterator<string> {
    for (const [id, conn] of this.#byId) if (conn.connected) yield id;
  }

  *dataEntries(): IterableIterator<readonly [string, Record<string, unknown>]> {
    for (const [id, conn] of this.#byId) yield [id, conn.getData() as Record<string, unknown>];
  }
}
