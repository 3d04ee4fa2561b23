/**
 * What one instance answers for itself to the admin's cluster query (topic
 * {@link ADMIN_TOPIC}): its load, its page of connections, its page of rooms, its refusals
 * and limits, its traces and its part of a disconnect. Every answer is one page or a few
 * numbers, whatever the number of connections: the asker merges the pages (merge.ts).
 */
import { performance } from 'node:perf_hooks';
import type { ConnectionCursor, ConnectionPage, ConnectionSort, Server } from '@pkg/core';
import type { ResolvedAdminOptions } from './options';
import type { ConnectionTraces, TraceSnapshot } from './trace';

/** The cluster query topic the admin registers on every instance. */
export const ADMIN_TOPIC = 'pkg.admin';

/** The questions of the admin's cluster query. */
export type AdminQuery =
  | { readonly view: 'nodes' }
  | {
      readonly view: 'connections';
      readonly search: string;
      readonly sort: ConnectionSort;
      readonly after: ConnectionCursor | null;
      readonly limit: number;
    }
  | {
      readonly view: 'rooms';
      readonly search: string;
      readonly after: RoomKey | null;
      readonly limit: number;
    }
  | { readonly view: 'refusals' }
  | {
      readonly view: 'trace';
      readonly op: 'start' | 'stop' | 'read';
      readonly id: string;
      readonly since: number;
    }
  | { readonly view: 'disconnect'; readonly id: string };

/** A room's place in the rooms listing: by namespace, then name. */
export type RoomKey = readonly [namespace: string, room: string];

/** One instance's load. */
export interface NodeLoad {
  readonly connections: number;
  readonly openClients: number;
  readonly sessions: number;
  readonly awaySessions: number;
  readonly rooms: number;
  readonly historyRooms: number;
  readonly pendingHandlers: number;
  /** Share of time the event loop was busy since the last ask (0 to 1). */
  readonly eventLoopUtilization: number;
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  readonly uptimeSeconds: number;
  readonly adapter: string;
  readonly pid: number;
}

/** One instance's page of rooms. */
export interface LocalRoomPage {
  readonly rows: ReadonlyArray<{ namespace: string; room: string; members: number }>;
  /** Rooms here matching the search (before the cursor too). */
  readonly total: number;
  /** More rows follow the page here. */
  readonly more: boolean;
}

/** One instance's refusals and the limits they come from. */
export interface LocalRefusals {
  readonly refusals: Record<string, number>;
  readonly limits: Record<string, unknown>;
  readonly connections: number;
}

/** The part of a trace or disconnect of the instance that holds the connection. */
export type LocalTrace =
  | { readonly found: false }
  | { readonly found: true; readonly full?: boolean; readonly trace?: TraceSnapshot };

/** The limits shown beside the refusals (the settings the budgets come from). */
export const LIMIT_KEYS = [
  'max_connections',
  'max_connections_per_ip',
  'ws_max_messages_per_second',
  'ws_max_bytes_per_second',
  'ws_max_protocol_errors',
  'ws_max_pending',
  'max_pending_requests',
  'max_rooms_per_client',
  'max_away_sessions',
  'history_max_requests_per_second',
  'history_max_bytes_per_second',
] as const;

/** Compares two room keys (namespace first). */
export function compareRooms(a: RoomKey, b: RoomKey): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  if (a[1] === b[1]) return 0;
  return a[1] < b[1] ? -1 : 1;
}

/** Answers the admin's questions on this instance. */
export class LocalViews {
  readonly #server: Server;
  readonly #options: ResolvedAdminOptions;
  readonly #traces: ConnectionTraces;
  #elu = performance.eventLoopUtilization();

  constructor(server: Server, options: ResolvedAdminOptions, traces: ConnectionTraces) {
    this.#server = server;
    this.#options = options;
    this.#traces = traces;
  }

  /** The handler of {@link ADMIN_TOPIC}; a payload it cannot read is an error. */
  readonly answer = (payload: unknown): unknown => {
    const q = payload as AdminQuery;
    switch (q?.view) {
      case 'nodes':
        return this.nodes();
      case 'connections':
        return this.connections(q);
      case 'rooms':
        return this.rooms(q);
      case 'refusals':
        return this.refusals();
      case 'trace':
        return this.trace(q);
      case 'disconnect':
        return this.disconnect(q.id);
      default:
        throw new Error('not an admin query');
    }
  };

  nodes(): NodeLoad {
    const load = this.#server.getLoad();
    const now = performance.eventLoopUtilization();
    const elu = performance.eventLoopUtilization(now, this.#elu).utilization;
    this.#elu = now;
    const memory = process.memoryUsage();
    let rooms = 0;
    for (const byRoom of this.#server.namespaceManager.rooms.values()) rooms += byRoom.size;
    return {
      connections: load.webSocketClients,
      openClients: load.openClients,
      sessions: load.sessions,
      awaySessions: load.awaySessions,
      rooms,
      historyRooms: load.historyRooms,
      pendingHandlers: load.pendingHandlers,
      eventLoopUtilization: Number.isFinite(elu) ? elu : 0,
      rssBytes: memory.rss,
      heapUsedBytes: memory.heapUsed,
      uptimeSeconds: Math.round(process.uptime()),
      adapter: this.#server.getHealth().adapter ?? 'local',
      pid: process.pid,
    };
  }

  connections(q: Extract<AdminQuery, { view: 'connections' }>): ConnectionPage {
    return this.#server.listConnections({
      search: q.search,
      sort: q.sort,
      after: q.after,
      limit: Math.min(q.limit, this.#options.maxPageSize),
    });
  }

  /** One pass over the rooms keeping the first `limit` after the cursor (by insertion). */
  rooms(q: Extract<AdminQuery, { view: 'rooms' }>): LocalRoomPage {
    const search = q.search.toLowerCase();
    const limit = Math.min(q.limit, this.#options.maxPageSize);
    const best: Array<{ namespace: string; room: string; members: number }> = [];
    let total = 0;
    let following = 0;
    for (const [namespace, byRoom] of this.#server.namespaceManager.rooms) {
      for (const [room, members] of byRoom) {
        if (search !== '' && !room.toLowerCase().includes(search)) continue;
        total += 1;
        const key: RoomKey = [namespace, room];
        if (q.after !== null && compareRooms(key, q.after) <= 0) continue;
        following += 1;
        const worst = best[best.length - 1];
        if (best.length === limit && worst !== undefined && compareRooms(key, [worst.namespace, worst.room]) >= 0) continue; // prettier-ignore
        let lo = 0;
        let hi = best.length;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (compareRooms([best[mid]!.namespace, best[mid]!.room], key) < 0) lo = mid + 1;
          else hi = mid;
        }
        best.splice(lo, 0, { namespace, room, members: members.size });
        if (best.length > limit) best.pop();
      }
    }
    return { rows: best, total, more: following > limit };
  }

  refusals(): LocalRefusals {
    const config = this.#server.getConfig();
    const limits: Record<string, unknown> = {};
    for (const key of LIMIT_KEYS) limits[key] = config.get(key);
    return {
      refusals: this.#server.getRefusals(),
      limits,
      connections: this.#server.getLoad().webSocketClients,
    };
  }

  trace(q: Extract<AdminQuery, { view: 'trace' }>): LocalTrace {
    if (q.op === 'read' || q.op === 'stop') {
      const trace = this.#traces.read(q.id, q.since);
      if (trace === undefined) return { found: false };
      if (q.op === 'stop') this.#traces.stop(q.id);
      return { found: true, trace: { ...trace, active: q.op === 'stop' ? false : trace.active } };
    }
    const client = this.#server.getWebSocketHandler().getClient(q.id);
    if (client === undefined) return { found: false };
    const started = this.#traces.start(client);
    return started === 'full' ? { found: true, full: true } : { found: true, trace: started };
  }

  disconnect(id: string): LocalTrace {
    if (!this.#options.actions.disconnect) throw new Error('disconnect is not enabled here');
    if (this.#server.getWebSocketHandler().getClient(id) === undefined) return { found: false };
    this.#server.disconnectClient(id);
    return { found: true };
  }
}
