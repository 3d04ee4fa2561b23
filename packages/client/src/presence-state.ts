/**
 * The presence of one room as the client knows it: entries by key, one meta per
 * connection, kept from `$presence` (the whole state) and `$presence_diff` (joins and
 * leaves). Diffs that arrive before the first state are buffered and applied after it; a
 * state that replaces an older one (after a reconnect) is turned into the joins and leaves
 * of the difference, so listeners see the same events either way.
 */
import type { PresenceMeta, PresenceState, PresenceStats } from '@pkg/wire';

/** Diffs kept while waiting for a state; beyond this the oldest are dropped (the state is newer). */
export const MAX_PENDING_DIFFS = 1000;

export type Metas = PresenceMeta[];

/** What the room reports to its listeners, in order. */
export type RoomChange =
  | { kind: 'join'; key: string; current: Metas | undefined; joined: Metas }
  | { kind: 'leave'; key: string; current: Metas; left: Metas }
  | { kind: 'sync' };

function sameMeta(a: PresenceMeta, b: PresenceMeta): boolean {
  return a.clientId === b.clientId && JSON.stringify(a) === JSON.stringify(b);
}

export class RoomPresence {
  /** Entries by key, in the order the keys first appeared. */
  readonly entries = new Map<string, Metas>();
  /** The server's counts when it sent `stats` instead of a list. */
  serverStats: PresenceStats | undefined;
  /** A state (or stats) arrived since the last (fresh) connection. */
  synced = false;
  #pending: Array<{ joins: PresenceState; leaves: PresenceState }> = [];
  readonly #report: (change: RoomChange) => void;

  constructor(report: (change: RoomChange) => void) {
    this.#report = report;
  }

  /** `$presence` with a state: replace, report the difference, apply what waited, sync. */
  state(state: PresenceState): void {
    const joins: PresenceState = Object.create(null) as PresenceState;
    const leaves: PresenceState = Object.create(null) as PresenceState;
    for (const [key, metas] of this.entries) {
      const next = state[key]?.metas ?? [];
      const gone = metas.filter((m) => !next.some((n) => sameMeta(m, n)));
      if (gone.length) leaves[key] = { metas: gone };
    }
    for (const [key, entry] of Object.entries(state)) {
      const before = this.entries.get(key) ?? [];
      const added = entry.metas.filter((n) => !before.some((m) => sameMeta(m, n)));
      if (added.length) joins[key] = { metas: added };
    }
    this.serverStats = undefined;
    this.synced = true;
    this.#apply(joins, leaves);
    const pending = this.#pending;
    this.#pending = [];
    for (const diff of pending) this.#apply(diff.joins, diff.leaves);
    this.#report({ kind: 'sync' });
  }

  /** `$presence` with stats only: the room is too large for a list. */
  stats(stats: PresenceStats): void {
    this.entries.clear();
    this.#pending = [];
    this.serverStats = stats;
    this.synced = true;
    this.#report({ kind: 'sync' });
  }

  /** `$presence_diff`: applied at once when synced, else kept for the state. */
  diff(joins: PresenceState, leaves: PresenceState): void {
    if (!this.synced) {
      this.#pending.push({ joins, leaves });
      if (this.#pending.length > MAX_PENDING_DIFFS) this.#pending.shift();
      return;
    }
    // A room reported by counts gets no diffs; one that comes anyway changes nothing.
    if (this.serverStats) return;
    this.#apply(joins, leaves);
    this.#report({ kind: 'sync' });
  }

  /** A fresh connection: the next state replaces this one; diffs until then wait for it. */
  unsync(): void {
    this.synced = false;
    this.#pending = [];
  }

  /** The room was left: everyone leaves the client's view, which then syncs empty. */
  clear(): void {
    const leaves: PresenceState = Object.create(null) as PresenceState;
    for (const [key, metas] of this.entries) leaves[key] = { metas };
    this.#apply(Object.create(null) as PresenceState, leaves);
    this.serverStats = undefined;
    this.unsync();
    this.#report({ kind: 'sync' });
  }

  /**
   * Joins first, then leaves, as Phoenix does. A meta is one connection (its `clientId`):
   * a join replaces that connection's meta under the key, and a leave of a connection that
   * joined again in the same diff (an update: leave of the old meta, join of the new one)
   * is reported without removing the new meta, so the key never disappears in between.
   */
  #apply(joins: PresenceState, leaves: PresenceState): void {
    const rejoined = new Map<string, Set<string>>();
    for (const [key, entry] of Object.entries(joins)) {
      if (entry.metas.length === 0) continue;
      const before = this.entries.get(key);
      const ids = new Set(entry.metas.map((m) => m.clientId));
      rejoined.set(key, ids);
      // A join of a meta the view already holds as it is (a repeated message) is no news.
      const joined = entry.metas.filter((n) => !before?.some((m) => sameMeta(m, n)));
      if (joined.length === 0) continue;
      const kept = (before ?? []).filter((m) => !ids.has(m.clientId));
      this.entries.set(key, [...kept, ...entry.metas]);
      this.#report({ kind: 'join', key, current: before ? [...before] : undefined, joined });
    }
    for (const [key, entry] of Object.entries(leaves)) {
      const before = this.entries.get(key);
      if (!before) continue;
      const again = rejoined.get(key);
      const left = entry.metas.filter(
        (l) => again?.has(l.clientId) || before.some((m) => m.clientId === l.clientId),
      );
      if (left.length === 0) continue;
      const ids = new Set(left.filter((l) => !again?.has(l.clientId)).map((l) => l.clientId));
      const remaining = before.filter((m) => !ids.has(m.clientId));
      if (remaining.length) this.entries.set(key, remaining);
      else this.entries.delete(key);
      this.#report({ kind: 'leave', key, current: [...remaining], left: [...left] });
    }
  }
}
