/**
 * `server.listConnections`: one page of the connection table, filtered and sorted, for an
 * operator's view (`@pkg/admin`). One pass over the table per call; nothing is kept between
 * calls, so a listing costs nothing while nobody asks.
 *
 * Pages are keyset pages: a page ends with a `next` cursor (the sort key and the id of its
 * last row), and the next page is what sorts after it. Cursors of several instances' pages
 * merge: the first `limit` rows after a cursor, over every instance, are among the first
 * `limit` rows after it on each instance.
 */
import { socketBytes } from '../observability/observability';
import type { NamespaceManager } from '../ws/namespace-manager';
import { createCoreError } from '../errors';
import type { Connection, ConnectionStateName } from './connection';
import type { ConnectionTable } from './connections';

/** `age`: oldest first (by connect time); `traffic`: most bytes (in + out) first. */
export type ConnectionSort = 'age' | 'traffic';

/** Where a page starts: after the row with this sort key and id. */
export interface ConnectionCursor {
  readonly key: number;
  readonly id: string;
}

/** What {@link listConnections} is asked. */
export interface ConnectionQuery {
  /** Keeps the rows whose id, identity or address contains this text (case-insensitive). */
  readonly search?: string;
  /** Default `age`. */
  readonly sort?: ConnectionSort;
  /** Rows after this cursor (the `next` of the page before). */
  readonly after?: ConnectionCursor | null;
  /** Rows per page: 1 to {@link MAX_CONNECTION_PAGE}, default {@link DEFAULT_CONNECTION_PAGE}. */
  readonly limit?: number;
}

/** A room a connection is in. */
export interface ConnectionRoom {
  readonly namespace: string;
  readonly room: string;
}

/** One row of the listing. */
export interface ConnectionInfo {
  readonly id: string;
  /** What its auth handlers gave, or null. */
  readonly identity: string | null;
  /** The client address (after `trust_proxy`). */
  readonly address: string;
  readonly state: ConnectionStateName;
  /** 1 when it said `$hello` (protocol version 1), else 0. */
  readonly version: 0 | 1;
  /** When it connected, ms since the epoch. */
  readonly connectedAt: number;
  /** Bytes its socket read and wrote (frames and headers included). */
  readonly bytesIn: number;
  readonly bytesOut: number;
  /** Its rooms, at most {@link MAX_LISTED_ROOMS} of them; `roomCount` says how many in all. */
  readonly rooms: readonly ConnectionRoom[];
  readonly roomCount: number;
  /** The key it sorts by in this listing (connect time, or bytes in + out). */
  readonly key: number;
}

/** One page. */
export interface ConnectionPage {
  readonly rows: readonly ConnectionInfo[];
  /** Connections matching `search` in the whole table (not only after the cursor). */
  readonly total: number;
  /** The cursor of the next page; null on the last page. */
  readonly next: ConnectionCursor | null;
}

export const DEFAULT_CONNECTION_PAGE = 50;
export const MAX_CONNECTION_PAGE = 500;
/** Rooms listed per connection (the rest is counted). */
export const MAX_LISTED_ROOMS = 20;

const SORTS: readonly ConnectionSort[] = ['age', 'traffic'];

function invalid(message: string): Error {
  return createCoreError(TypeError, 'PKG_ERR_CORE_INVALID_ARGUMENT', `listConnections: ${message}`);
}

/** Checks a query once; throws a TypeError that says what to fix. */
export function checkConnectionQuery(query: ConnectionQuery): Required<ConnectionQuery> {
  if (typeof query !== 'object' || query === null) throw invalid('expected a query object.');
  const { search = '', sort = 'age', after = null, limit = DEFAULT_CONNECTION_PAGE } = query;
  if (typeof search !== 'string') throw invalid('search must be a string.');
  if (!SORTS.includes(sort)) throw invalid(`sort must be one of ${SORTS.join(', ')}.`);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_CONNECTION_PAGE) {
    throw invalid(`limit must be a whole number from 1 to ${MAX_CONNECTION_PAGE}.`);
  }
  if (
    after !== null &&
    (typeof after !== 'object' ||
      typeof after.id !== 'string' ||
      typeof after.key !== 'number' ||
      !Number.isFinite(after.key))
  ) {
    throw invalid('after must be the { key, id } cursor of a page (its `next`).');
  }
  return { search: search.toLowerCase(), sort, after, limit };
}

/**
 * True when row a sorts before row b. `age`: smaller connect time first; `traffic`: larger
 * byte count first; ties by id, so that every row has one place.
 */
export function sortsBefore(
  sort: ConnectionSort,
  a: { key: number; id: string },
  b: { key: number; id: string },
): boolean {
  if (a.key !== b.key) return sort === 'age' ? a.key < b.key : a.key > b.key;
  return a.id < b.id;
}

function matches(conn: Connection, address: string, search: string): boolean {
  if (search === '') return true;
  return (
    conn.id.toLowerCase().includes(search) ||
    (conn.identity?.toLowerCase().includes(search) ?? false) ||
    address.toLowerCase().includes(search)
  );
}

function roomsOf(namespaces: NamespaceManager, id: string): [ConnectionRoom[], number] {
  const byNamespace = namespaces.clientRooms.get(id);
  const rooms: ConnectionRoom[] = [];
  let count = 0;
  if (byNamespace === undefined) return [rooms, 0];
  for (const [namespace, names] of byNamespace) {
    for (const room of names) {
      count += 1;
      if (rooms.length < MAX_LISTED_ROOMS) rooms.push({ namespace, room });
    }
  }
  return [rooms, count];
}

/**
 * One page of the connections of `table` that match the query; see the module comment. One
 * pass that keeps only the best `limit` rows so far (sorted, by insertion), so a page of a
 * large table costs a comparison per connection and no array of the whole table.
 */
export function listConnections(
  table: ConnectionTable,
  namespaces: NamespaceManager,
  query: ConnectionQuery = {},
): ConnectionPage {
  const { search, sort, after, limit } = checkConnectionQuery(query);
  const best: { key: number; id: string; conn: Connection }[] = [];
  let total = 0;
  let following = 0;
  for (const conn of table.values()) {
    if (!matches(conn, conn.client.ip, search)) continue;
    total += 1;
    let key = conn.connectedAt;
    if (sort === 'traffic') {
      const bytes = socketBytes(conn.client);
      key = bytes.received + bytes.sent;
    }
    const row = { key, id: conn.id };
    if (after !== null && !sortsBefore(sort, after, row)) continue;
    following += 1;
    const worst = best[best.length - 1];
    if (best.length === limit && worst !== undefined && !sortsBefore(sort, row, worst)) continue;
    // Binary search for its place among the kept rows.
    let lo = 0;
    let hi = best.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sortsBefore(sort, best[mid]!, row)) lo = mid + 1;
      else hi = mid;
    }
    best.splice(lo, 0, { key, id: conn.id, conn });
    if (best.length > limit) best.pop();
  }
  const rows = best.map(({ key, conn }): ConnectionInfo => {
    const bytes = socketBytes(conn.client);
    const [rooms, roomCount] = roomsOf(namespaces, conn.id);
    return {
      id: conn.id,
      identity: conn.identity ?? null,
      address: conn.client.ip,
      state: conn.state,
      version: conn.hello ? 1 : 0,
      connectedAt: conn.connectedAt,
      bytesIn: bytes.received,
      bytesOut: bytes.sent,
      rooms,
      roomCount,
      key,
    };
  });
  const last = best[best.length - 1];
  const next = following > limit && last !== undefined ? { key: last.key, id: last.id } : null;
  return { rows, total, next };
}
