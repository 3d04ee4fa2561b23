import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { PresenceMeta, PresenceState } from '@pkg/wire';
import { MAX_PENDING_DIFFS, RoomPresence, type Metas, type RoomChange } from './presence-state';

const metaArb = fc.record({
  clientId: fc.constantFrom('c1', 'c2', 'c3', 'c4'),
  joinedAt: fc.constant(1),
  mood: fc.constantFrom('x', 'y'),
});
const stateArb: fc.Arbitrary<PresenceState> = fc
  .dictionary(
    fc.constantFrom('ada', 'bob', 'cy'),
    fc.array(metaArb, { minLength: 1, maxLength: 3 }),
  )
  .map((entries) => {
    const state: PresenceState = {};
    for (const [key, metas] of Object.entries(entries)) {
      // One meta per connection within a key, as the server sends.
      state[key] = { metas: [...new Map(metas.map((m) => [m.clientId, m])).values()] };
    }
    return state;
  });

function snapshot(room: RoomPresence): Record<string, Metas> {
  return Object.fromEntries(room.entries);
}

/** Replays join/leave events on a copy of a view, as an application's listener would. */
function replay(view: Record<string, Metas>, changes: RoomChange[]): Record<string, Metas> {
  const out: Record<string, Metas> = { ...view };
  for (const change of changes) {
    if (change.kind === 'join') {
      const ids = new Set(change.joined.map((m) => m.clientId));
      out[change.key] = [
        ...(change.current ?? []).filter((m) => !ids.has(m.clientId)),
        ...change.joined,
      ];
    } else if (change.kind === 'leave') {
      if (change.current.length) out[change.key] = change.current;
      else delete out[change.key];
    }
  }
  return out;
}

describe('RoomPresence', () => {
  it('after any history, a state replaces a synced view, and the events always turn the old view into the new', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            stateArb.map((s) => ({ s })),
            fc.tuple(stateArb, stateArb),
          ),
        ),
        stateArb,
        fc.boolean(),
        (history, last, synced) => {
          const changes: RoomChange[] = [];
          const room = new RoomPresence((c) => changes.push(c));
          // Unsynced, the diffs of the history wait and are applied after `last`.
          if (synced) room.state({});
          for (const step of history) {
            if ('s' in step) room.state(step.s);
            else room.diff(step[0], step[1]);
          }
          const before = snapshot(room);
          changes.length = 0;
          room.state(last);
          const expected = Object.fromEntries(Object.entries(last).map(([k, e]) => [k, e.metas]));
          const sort = (v: Record<string, Metas>): Record<string, PresenceMeta[]> =>
            Object.fromEntries(
              Object.entries(v).map(([k, metas]) => [
                k,
                [...metas].sort((a, b) => a.clientId.localeCompare(b.clientId)),
              ]),
            );
          if (synced) expect(sort(snapshot(room))).toEqual(sort(expected));
          expect(sort(replay(before, changes))).toEqual(sort(snapshot(room)));
          expect(changes.at(-1)).toEqual({ kind: 'sync' });
          // Every key the events report has something in them; no empty entry is kept.
          for (const metas of room.entries.values()) expect(metas.length).toBeGreaterThan(0);
        },
      ),
    );
  });

  it('keeps at most MAX_PENDING_DIFFS diffs before the state, dropping the oldest', () => {
    const room = new RoomPresence(() => undefined);
    const join = (id: string): PresenceState => ({
      [id]: { metas: [{ clientId: id, joinedAt: 1 }] },
    });
    for (let i = 0; i <= MAX_PENDING_DIFFS; i += 1) room.diff(join(`k${i}`), {});
    room.state({});
    expect(room.entries.size).toBe(MAX_PENDING_DIFFS);
    expect(room.entries.has('k0')).toBe(false);
    expect(room.entries.has(`k${MAX_PENDING_DIFFS}`)).toBe(true);
  });
});
