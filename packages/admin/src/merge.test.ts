// The merge's promise, as a property: paging through merged keyset pages, each made of one
// page per instance, lists every row of every instance exactly once, in the global order,
// whatever the rows, the split over instances and the page size.
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { ClusterQueryResult, ConnectionCursor, ConnectionInfo, ConnectionSort } from '@pkg/core'; // prettier-ignore
import { compareRooms, type LocalRoomPage, type RoomKey } from './local-views';
import { mergeConnections, mergeRooms } from './merge';

function row(id: string, key: number): ConnectionInfo {
  return {
    id,
    identity: null,
    address: '127.0.0.1',
    state: 'open',
    version: 1,
    connectedAt: key,
    bytesIn: key,
    bytesOut: 0,
    rooms: [],
    roomCount: 0,
    key,
  };
}

function before(
  sort: ConnectionSort,
  a: { key: number; id: string },
  b: { key: number; id: string },
): boolean {
  // prettier-ignore
  if (a.key !== b.key) return sort === 'age' ? a.key < b.key : a.key > b.key;
  return a.id < b.id;
}

/** What one instance answers (core's listConnections, over its own rows). */
function localPage(
  rows: ConnectionInfo[],
  sort: ConnectionSort,
  after: ConnectionCursor | null,
  limit: number,
) {
  // prettier-ignore
  const found = rows
    .filter((r) => after === null || before(sort, after, r))
    .sort((a, b) => (before(sort, a, b) ? -1 : 1));
  const page = found.slice(0, limit);
  const last = page[page.length - 1];
  return {
    rows: page,
    total: rows.length,
    next: found.length > limit && last ? { key: last.key, id: last.id } : null,
  };
}

describe('mergeConnections', () => {
  it('pages through every instance once, in the global order', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.record({ id: fc.string({ minLength: 1, maxLength: 4 }), key: fc.integer({ min: 0, max: 20 }), node: fc.integer({ min: 0, max: 3 }) }), { selector: (r) => r.id, maxLength: 60 }), // prettier-ignore
        fc.integer({ min: 1, max: 7 }),
        fc.constantFrom<ConnectionSort>('age', 'traffic'),
        (specs, limit, sort) => {
          const byNode = [0, 1, 2, 3].map((n) => specs.filter((s) => s.node === n).map((s) => row(s.id, s.key))); // prettier-ignore
          const expected = specs
            .map((s) => row(s.id, s.key))
            .sort((a, b) => (before(sort, a, b) ? -1 : 1))
            .map((r) => r.id);
          const seen: string[] = [];
          let after: ConnectionCursor | null = null;
          for (let pages = 0; pages <= specs.length + 1; pages += 1) {
            const result: ClusterQueryResult = {
              answers: byNode.map((rows, n) => ({ node: `n${n}`, data: localPage(rows, sort, after, limit) })), // prettier-ignore
              missing: 0,
            };
            const merged = mergeConnections(result, sort, limit);
            expect(merged.total).toBe(specs.length);
            expect(merged.rows.length).toBeLessThanOrEqual(limit);
            seen.push(...merged.rows.map((r) => r.id));
            after = merged.next;
            if (after === null) break;
          }
          expect(seen).toEqual(expected);
        },
      ),
    );
  });

  it('reports instances that failed or did not answer', () => {
    const merged = mergeConnections(
      { answers: [{ node: 'a', error: 'broken' }], missing: 2 },
      'age',
      10,
    );
    expect(merged).toMatchObject({ rows: [], total: 0, next: null, nodes: 1, missing: 2 });
    expect(merged.errors).toEqual([{ node: 'a', error: 'broken' }]);
  });
});

describe('mergeRooms', () => {
  it('pages through the union of the instances’ rooms once, by name, summing members', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ room: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'), ns: fc.constantFrom('/', '/x'), node: fc.integer({ min: 0, max: 2 }), members: fc.integer({ min: 1, max: 5 }) }), { maxLength: 40 }), // prettier-ignore
        fc.integer({ min: 1, max: 5 }),
        (specs, limit) => {
          // One entry per room and instance.
          const local = [0, 1, 2].map((n) => {
            const rooms = new Map<string, { namespace: string; room: string; members: number }>();
            for (const s of specs.filter((x) => x.node === n)) rooms.set(`${s.ns} ${s.room}`, { namespace: s.ns, room: s.room, members: s.members }); // prettier-ignore
            return [...rooms.values()];
          });
          const totals = new Map<string, number>();
          for (const rows of local) for (const r of rows) totals.set(JSON.stringify([r.namespace, r.room]), (totals.get(JSON.stringify([r.namespace, r.room])) ?? 0) + r.members); // prettier-ignore
          const expected = [...totals.keys()].sort((a, b) => compareRooms(JSON.parse(a) as RoomKey, JSON.parse(b) as RoomKey)); // prettier-ignore
          const seen: string[] = [];
          let after: RoomKey | null = null;
          for (let pages = 0; pages <= expected.length + 1; pages += 1) {
            const answers = local.map((rows, n) => {
              const found = rows
                .filter((r) => after === null || compareRooms([r.namespace, r.room], after) > 0)
                .sort((a, b) => compareRooms([a.namespace, a.room], [b.namespace, b.room]));
              const data: LocalRoomPage = { rows: found.slice(0, limit), total: rows.length, more: found.length > limit }; // prettier-ignore
              return { node: `n${n}`, data };
            });
            const merged = mergeRooms({ answers, missing: 0 }, limit);
            for (const r of merged.rows) {
              const key = JSON.stringify([r.namespace, r.room]);
              expect(r.members).toBe(totals.get(key));
              seen.push(key);
            }
            after = merged.next;
            if (after === null) break;
          }
          expect(seen).toEqual(expected);
        },
      ),
    );
  });
});
