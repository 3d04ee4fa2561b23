/**
 * The JSON endpoints the page polls, under `<path>/api/`. Each answers one page or a few
 * numbers, asked of every instance through one cluster query and merged here; nothing is
 * pushed. Actions (`disconnect`, `revoke`) answer 403 unless `actions` enables them, and each
 * use is audited.
 */
import { Response, type Request, type Server } from '@pkg/core';
import type { AuditLog } from './audit';
import { AdminRequestError } from './errors';
import { ADMIN_TOPIC, type AdminQuery, type LocalTrace } from './local-views';
import {
  mergeConnections,
  mergeNodes,
  mergeRefusals,
  mergeRooms,
  split,
  type MergedRooms,
  type RoomRow,
} from './merge';
import type { ResolvedAdminOptions } from './options';
import {
  SORTS,
  connectionCursor,
  encodeCursor,
  field,
  oneOf,
  roomCursor,
  text,
  whole,
} from './query-params';

/** Presence entries listed for one room (the rest is counted). */
export const MAX_PRESENCE_KEYS = 200;
/** Merged pages of rooms read at most to fill one page of rooms with presence or history. */
const MAX_ROOM_SCAN_PAGES = 10;

/** A room row with what the asking instance reads of it. */
export interface DecoratedRoom extends RoomRow {
  /** Connections and keys when the room tracks presence; null otherwise. */
  readonly presence: { connections: number; keys: number } | null;
  /** Kept messages (up to `history_max_replay`) and their bytes; null when none are kept. */
  readonly history: { kept: number; bytes: number; complete: boolean } | null;
}

/** What the endpoints are built from. */
export interface EndpointContext {
  readonly server: Server;
  readonly options: ResolvedAdminOptions;
  readonly audit: AuditLog;
}

export type Handler = (request: Request, who: string) => Promise<Response>;

function json(data: unknown): Response {
  return Response.json(data, 200, { 'Cache-Control': 'no-store' });
}

export function failure(err: unknown): Response {
  if (err instanceof AdminRequestError) {
    return Response.error(err.status, { code: err.code, message: err.message });
  }
  if (err instanceof Error && /Redis|adapter/i.test(err.message)) {
    return Response.error(503, { code: 'PKG_ERR_ADMIN_UNAVAILABLE', message: err.message });
  }
  throw err;
}

/** The endpoints by method and path below `<path>/api/`. */
export function buildEndpoints(ctx: EndpointContext): Map<string, Handler> {
  const { server, options, audit } = ctx;
  const ask = (query: AdminQuery) =>
    server.queryCluster(ADMIN_TOPIC, query, { timeout: options.queryTimeout });
  const limitOf = (request: Request): number =>
    whole(request, 'limit', options.pageSize, 1, options.maxPageSize);

  async function roomsPage(request: Request, only: 'all' | 'presence' | 'history') {
    const search = text(request, 'search') ?? '';
    const limit = limitOf(request);
    let after = roomCursor(request);
    const rows: DecoratedRoom[] = [];
    let merged: MergedRooms | undefined;
    for (let pages = 0; pages < (only === 'all' ? 1 : MAX_ROOM_SCAN_PAGES); pages += 1) {
      merged = mergeRooms(await ask({ view: 'rooms', search, after, limit }), limit);
      for (const row of merged.rows) {
        const decorated = await decorate(row, only === 'history');
        if (only === 'presence' && decorated.presence === null) continue;
        if (only === 'history' && decorated.history === null) continue;
        rows.push(decorated);
      }
      after = merged.next;
      if (after === null || rows.length >= limit) break;
    }
    const { next: _next, rows: _rows, ...meta } = merged!;
    return { ...meta, rows, next: after === null ? null : encodeCursor(after) };
  }

  async function decorate(row: RoomRow, withHistory: boolean): Promise<DecoratedRoom> {
    const at = { namespace: row.namespace };
    const presence = await server.presenceStats(row.room, at).catch(() => null);
    let history: DecoratedRoom['history'] = null;
    if (withHistory) {
      const answer = await server.history(row.room, at).catch(() => null);
      if (answer !== null && answer.reason !== 'not_kept') {
        let bytes = 0;
        for (const m of answer.messages) bytes += JSON.stringify(m).length;
        history = { kept: answer.messages.length, bytes, complete: answer.complete };
      }
    }
    return { ...row, presence, history };
  }

  /** The instance that holds a connection answers; the others say they do not have it. */
  async function holder(query: AdminQuery): Promise<{ node: string; data: LocalTrace }> {
    const { answers, meta } = split<LocalTrace>(await ask(query));
    const found = answers.find((a) => a.data.found);
    if (found !== undefined) return found;
    // An instance that does not enable the action says so; that is the answer to give.
    const disabled = meta.errors.find((e) => e.error.includes('not enabled'));
    if (disabled !== undefined) throw new AdminRequestError('PKG_ERR_ADMIN_ACTION_DISABLED', `${disabled.node}: ${disabled.error}`); // prettier-ignore
    const others = [
      ...(meta.missing > 0 ? [`${meta.missing} did not answer`] : []),
      ...meta.errors.map((e) => `${e.node}: ${e.error}`),
    ];
    throw new AdminRequestError(
      'PKG_ERR_ADMIN_NOT_FOUND',
      `No instance has a connection with id ${JSON.stringify((query as { id: string }).id)}${others.length > 0 ? ` (${others.join('; ')})` : ''}.`,
    );
  }

  function enabled(action: 'disconnect' | 'revoke'): void {
    if (!options.actions[action]) {
      throw new AdminRequestError(
        'PKG_ERR_ADMIN_ACTION_DISABLED',
        `The ${action} action is off: mount the admin with { actions: { ${action}: true } } to enable it.`,
      );
    }
  }

  const endpoints = new Map<string, Handler>();
  endpoints.set(
    'GET session',
    async (_request, who) =>
    json({ who, actions: options.actions, pageSize: options.pageSize, maxPageSize: options.maxPageSize, trace: options.trace }), // prettier-ignore
  );
  endpoints.set('GET nodes', async () => json(mergeNodes(await ask({ view: 'nodes' }))));
  endpoints.set('GET connections', async (request) => {
    const search = text(request, 'search') ?? '';
    const sort = oneOf(request, 'sort', SORTS, 'age');
    const limit = limitOf(request);
    const after = connectionCursor(request);
    const merged = mergeConnections(
      await ask({ view: 'connections', search, sort, after, limit }),
      sort,
      limit,
    );
    return json({ ...merged, next: merged.next === null ? null : encodeCursor(merged.next) });
  });
  endpoints.set(
    'GET rooms',
    async (request) =>
    json(await roomsPage(request, oneOf(request, 'only', ['all', 'presence', 'history'] as const, 'all'))), // prettier-ignore
  );
  endpoints.set('GET presence', async (request) => {
    const room = text(request, 'room');
    if (room === undefined || room === '') throw new AdminRequestError('PKG_ERR_ADMIN_BAD_QUERY', 'room is required.'); // prettier-ignore
    const namespace = text(request, 'namespace') ?? '/';
    let state;
    try {
      state = await server.presence(room, { namespace });
    } catch (err) {
      throw new AdminRequestError('PKG_ERR_ADMIN_BAD_QUERY', err instanceof Error ? err.message : String(err)); // prettier-ignore
    }
    const keys = Object.keys(state).sort();
    const entries = keys.slice(0, MAX_PRESENCE_KEYS).map((key) => ({ key, metas: state[key]!.metas })); // prettier-ignore
    return json({ room, namespace, keys: keys.length, entries });
  });
  endpoints.set('GET refusals', async () => json(mergeRefusals(await ask({ view: 'refusals' }))));
  endpoints.set('GET audit', async () => json({ entries: audit.list() }));
  endpoints.set('GET trace', async (request) => {
    const id = text(request, 'id');
    if (id === undefined || id === '') throw new AdminRequestError('PKG_ERR_ADMIN_BAD_QUERY', 'id is required.'); // prettier-ignore
    const since = whole(request, 'since', 0, 0, Number.MAX_SAFE_INTEGER);
    const { node, data } = await holder({ view: 'trace', op: 'read', id, since });
    return json({ node, ...(data.found ? data.trace : {}) });
  });
  endpoints.set('POST trace', async (request, who) => {
    const body = request.getBody();
    const id = field(body, 'id')!;
    const op = field(body, 'op')!;
    if (op !== 'start' && op !== 'stop') throw new AdminRequestError('PKG_ERR_ADMIN_BAD_QUERY', '"op" must be "start" or "stop".'); // prettier-ignore
    const { node, data } = await holder({ view: 'trace', op, id, since: 0 });
    if (data.found && data.full === true) {
      throw new AdminRequestError('PKG_ERR_ADMIN_TOO_MANY_TRACES', `${node} traces ${options.trace.maxTraced} connections already (trace.maxTraced); stop one first.`); // prettier-ignore
    }
    audit.record({ at: Date.now(), who, action: 'trace', target: id, outcome: `${op} on ${node}` }); // prettier-ignore
    return json({ node, ...(data.found ? data.trace : {}) });
  });
  endpoints.set('POST disconnect', async (request, who) => {
    enabled('disconnect');
    const id = field(request.getBody(), 'id')!;
    try {
      const { node } = await holder({ view: 'disconnect', id });
      audit.record({ at: Date.now(), who, action: 'disconnect', target: id, outcome: `ok on ${node}` }); // prettier-ignore
      return json({ node, disconnected: id });
    } catch (err) {
      const outcome = err instanceof Error ? err.message : String(err);
      audit.record({ at: Date.now(), who, action: 'disconnect', target: id, outcome });
      throw err;
    }
  });
  endpoints.set('POST revoke', async (request, who) => {
    enabled('revoke');
    const body = request.getBody();
    const identity = field(body, 'identity')!;
    const room = field(body, 'room', false);
    const namespace = field(body, 'namespace', false) ?? '/';
    const target = room === undefined ? identity : `${identity} from ${namespace} ${room}`;
    try {
      const reached = await server.revoke(identity, room ?? null, room === undefined ? null : namespace); // prettier-ignore
      audit.record({ at: Date.now(), who, action: 'revoke', target, outcome: `${reached} connection(s)` }); // prettier-ignore
      return json({ revoked: identity, reached });
    } catch (err) {
      const outcome = err instanceof Error ? err.message : String(err);
      audit.record({ at: Date.now(), who, action: 'revoke', target, outcome });
      throw err;
    }
  });
  return endpoints;
}
