/**
 * Merges the instances' pages into the page the asker answers. Pages are keyset pages: the
 * first `limit` rows after a cursor over every instance are among the first `limit` rows
 * after it on each instance, so one page from each is enough, whatever the total.
 */
import type {
  ClusterQueryResult,
  ConnectionCursor,
  ConnectionInfo,
  ConnectionPage,
  ConnectionSort,
} from '@pkg/core';
import {
  compareRooms,
  type LocalRefusals,
  type LocalRoomPage,
  type NodeLoad,
  type RoomKey,
} from './local-views';

/** An instance that answered with an error. */
export interface NodeError {
  readonly node: string;
  readonly error: string;
}

/** What every merged answer says of the instances. */
export interface ClusterMeta {
  /** Instances that answered. */
  readonly nodes: number;
  /** Instances that did not answer within `queryTimeout`. */
  readonly missing: number;
  readonly errors: readonly NodeError[];
}

/** A connection row, with the instance that holds it. */
export type ConnectionRow = ConnectionInfo & { readonly node: string };

export interface MergedConnections extends ClusterMeta {
  readonly rows: readonly ConnectionRow[];
  readonly total: number;
  readonly next: ConnectionCursor | null;
}

export interface RoomRow {
  readonly namespace: string;
  readonly room: string;
  /** Members over every instance. */
  readonly members: number;
  /** Instances with members in it. */
  readonly instances: number;
}

export interface MergedRooms extends ClusterMeta {
  readonly rows: readonly RoomRow[];
  /** Sum of the instances' counts (a room on two instances counts twice). */
  readonly total: number;
  readonly next: RoomKey | null;
}

export interface MergedNodes extends ClusterMeta {
  readonly rows: ReadonlyArray<NodeLoad & { readonly node: string }>;
}

export interface MergedRefusals extends ClusterMeta {
  /** Code -> refusals over every instance. */
  readonly total: Record<string, number>;
  readonly rows: ReadonlyArray<LocalRefusals & { readonly node: string }>;
}

/** The answers with data, and the meta of the others. */
export function split<T>(result: ClusterQueryResult): {
  answers: Array<{ node: string; data: T }>;
  meta: ClusterMeta;
} {
  const answers: Array<{ node: string; data: T }> = [];
  const errors: NodeError[] = [];
  for (const a of result.answers) {
    if (a.error !== undefined) errors.push({ node: a.node, error: a.error });
    else answers.push({ node: a.node, data: a.data as T });
  }
  answers.sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  return { answers, meta: { nodes: result.answers.length, missing: result.missing, errors } };
}

function before(sort: ConnectionSort, a: ConnectionInfo, b: ConnectionInfo): number {
  if (a.key !== b.key) return (sort === 'age' ? a.key < b.key : a.key > b.key) ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export function mergeConnections(
  result: ClusterQueryResult,
  sort: ConnectionSort,
  limit: number,
): MergedConnections {
  const { answers, meta } = split<ConnectionPage>(result);
  const rows: ConnectionRow[] = [];
  let total = 0;
  let more = false;
  for (const { node, data } of answers) {
    total += data.total;
    if (data.next !== null) more = true;
    for (const row of data.rows) rows.push({ ...row, node });
  }
  rows.sort((a, b) => before(sort, a, b));
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const next =
    (more || rows.length > limit) && last !== undefined ? { key: last.key, id: last.id } : null;
  return { ...meta, rows: page, total, next };
}

export function mergeRooms(result: ClusterQueryResult, limit: number): MergedRooms {
  const { answers, meta } = split<LocalRoomPage>(result);
  const byKey = new Map<string, { namespace: string; room: string; members: number; instances: number }>(); // prettier-ignore
  let total = 0;
  let more = false;
  for (const { data } of answers) {
    total += data.total;
    if (data.more) more = true;
    for (const row of data.rows) {
      const key = JSON.stringify([row.namespace, row.room]);
      const seen = byKey.get(key);
      if (seen === undefined) byKey.set(key, { ...row, instances: 1 });
      else {
        seen.members += row.members;
        seen.instances += 1;
      }
    }
  }
  const rows = [...byKey.values()].sort((a, b) =>
    compareRooms([a.namespace, a.room], [b.namespace, b.room]),
  );
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const next: RoomKey | null =
    (more || rows.length > limit) && last !== undefined ? [last.namespace, last.room] : null;
  return { ...meta, rows: page, total, next };
}

export function mergeNodes(result: ClusterQueryResult): MergedNodes {
  const { answers, meta } = split<NodeLoad>(result);
  return { ...meta, rows: answers.map(({ node, data }) => ({ ...data, node })) };
}

export function mergeRefusals(result: ClusterQueryResult): MergedRefusals {
  const { answers, meta } = split<LocalRefusals>(result);
  const total: Record<string, number> = {};
  for (const { data } of answers) {
    for (const [code, n] of Object.entries(data.refusals)) total[code] = (total[code] ?? 0) + n;
  }
  return { ...meta, total, rows: answers.map(({ node, data }) => ({ ...data, node })) };
}
