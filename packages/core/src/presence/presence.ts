/**
 * Presence: who is in each room that tracks it (the `presence` setting), across instances
 * when the adapter replicates it. One entry per connection (`{key, meta}`), grouped by
 * presence key on the wire. Room membership is the source of truth: the namespace manager
 * reports every room join and leave of a local client (whatever path made it), and the
 * adapter's replicator reports those of the other instances.
 *
 * Changes accumulate per room and are flushed together by one timer, armed only while some
 * room has unsent changes, at most every `presence_interval` ms: members that already have
 * the room's state get one `$presence_diff` (serialised once per room and flush), members
 * that joined since the last flush get one `$presence` with the state (serialised once,
 * shared by all of them), so a new member never sees a change twice. A meta that joined and
 * left within one batch appears in neither. Rooms with more keys than `presence_max_list`
 * send `$presence` with stats instead of the list, and no diffs. Only protocol version 1
 * clients get these events; version 0 clients are listed but get nothing.
 */
import type { LoggerInterface } from '@pkg/logger';
import {
  encodeEnvelope,
  ControlEvent,
  roomKey,
  type PresenceDiffData,
  type PresenceMeta,
  type PresenceState,
  type PresenceStateData,
  type PresenceStats,
} from '@pkg/wire';
import type { PresenceRecord, PresenceReplicator, PresenceSink } from './cluster-presence';
import { createCoreError } from '../errors';
import { buildMeta, type PresenceRooms } from './presence-rooms';

/** What the application's presence hook is told about a join. */
export interface PresenceJoin {
  readonly clientId: string;
  readonly room: string;
  readonly namespace: string;
  /** The presence key: the identity the auth handlers gave, else the client id. */
  readonly key: string;
}

/**
 * Returns the application members of a connection's meta when it joins a room with presence
 * (e.g. `{ name }` from the client's data), or nothing for `{clientId, joinedAt}` alone.
 */
export type PresenceHook = (join: PresenceJoin) => Record<string, unknown> | undefined | void;

/** What the tracker knows of a local client: its protocol and identity. */
export interface PresenceClientInfo {
  /** Said `$hello` (protocol version 1): gets `$presence` events. */
  readonly v1: boolean;
  readonly identity: string | undefined;
  /** Its connection dropped and its session waits for a resume. */
  readonly away: boolean;
}

export interface PresenceTrackerOptions {
  readonly rooms: PresenceRooms;
  readonly interval: number;
  readonly maxList: number;
  readonly maxMetaBytes: number;
  readonly nodeTimeout: number;
  readonly logger: LoggerInterface;
  /** Undefined for an id that is no local WebSocket client. */
  readonly clientInfo: (clientId: string) => PresenceClientInfo | undefined;
  /** The rooms a local client is in, by namespace. */
  readonly memberships: (
    clientId: string,
  ) => Iterable<{ readonly namespace: string; readonly rooms: readonly string[] }>;
  /** Delivers one serialised envelope to local clients (numbered for sessions). */
  readonly deliver: (clientIds: Iterable<string>, text: string) => number;
}

interface Entry {
  readonly key: string;
  readonly meta: PresenceMeta;
  readonly local: boolean;
}

/** One room with presence: its entries by client id and the changes not yet sent. */
class RoomRecord {
  readonly entries = new Map<string, Entry>();
  /** Metas per presence key. */
  readonly keys = new Map<string, number>();
  joins = new Set<Entry>();
  leaves = new Set<Entry>();
  /** Local clients that joined since the last flush: they get the state, not the diff. */
  newcomers = new Set<string>();
  /** Local members (entries with `local`). */
  readonly local = new Set<string>();
  /** The last flush sent stats (the room was over `presence_max_list`). */
  overLimit = false;

  constructor(
    readonly namespace: string,
    readonly room: string,
  ) {}
}

const roomId = roomKey;

function group(entries: Iterable<Entry>): PresenceState {
  const state: PresenceState = {};
  for (const e of entries) {
    const entry = Object.hasOwn(state, e.key) ? state[e.key] : undefined;
    if (entry) entry.metas.push(e.meta);
    else state[e.key] = { metas: [e.meta] };
  }
  return state;
}

export class PresenceTracker {
  readonly #o: PresenceTrackerOptions;
  readonly #rooms = new Map<string, RoomRecord>();
  readonly #dirty = new Set<RoomRecord>();
  #timer: NodeJS.Timeout | undefined = undefined;
  #hook: PresenceHook | undefined = undefined;
  #replicator: PresenceReplicator | undefined = undefined;
  #flushes = 0;

  constructor(options: PresenceTrackerOptions) {
    this.#o = options;
  }

  /** False when no room pattern is configured: nothing is tracked. */
  get enabled(): boolean {
    return !this.#o.rooms.empty;
  }

  /** Flushes so far (for tests and metrics). */
  get flushes(): number {
    return this.#flushes;
  }

  /** Whether a room tracks presence. */
  tracks(room: string, namespace: string): boolean {
    return this.#o.rooms.matches(room, namespace);
  }

  /**
   * Throws a TypeError `PKG_ERR_CORE_INVALID_ARGUMENT` naming the method when the room does
   * not track presence (no pattern of the `presence` setting matches it).
   */
  check(method: string, room: unknown, namespace: unknown): void {
    if (typeof room !== 'string' || room === '' || typeof namespace !== 'string') {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        `${method}: room must be a non-empty string and namespace a string, got ${typeof room} and ${typeof namespace}.`,
      );
    }
    if (!this.#o.rooms.matches(room, namespace)) {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        `${method}: room "${room}" in namespace "${namespace}" does not track presence; add a pattern that matches it to the presence setting, e.g. presence: [{ match: "${room}" }].`,
      );
    }
  }

  setHook(hook: PresenceHook | undefined): void {
    this.#hook = hook;
  }

  /** Starts a cluster adapter's replicator (once; nothing when presence is off). */
  replicate(replicator: PresenceReplicator | undefined): void {
    if (replicator === undefined || !this.enabled || this.#replicator !== undefined) return;
    this.#replicator = replicator;
    replicator.start(this.#sink, { nodeTimeout: this.#o.nodeTimeout });
  }

  /** The namespace manager's report: a local client entered or left a room. */
  readonly roomChanged = (joined: boolean, clientId: string, room: string, ns: string): void => {
    if (!this.enabled || !this.#o.rooms.matches(room, ns)) return;
    try {
      if (joined) this.#localJoin(clientId, room, ns);
      else this.#localLeave(clientId, room, ns);
    } catch (err) {
      this.#o.logger.exception(err, { phase: 'presence', clientId, room, namespace: ns });
    }
  };

  /**
   * A session's connection dropped (`away`): its entries leave at once, so members never
   * list a connection that may not come back. Resumed: they join again (the hook runs
   * again) and the client gets each room's state anew.
   */
  readonly awayChanged = (clientId: string, away: boolean): void => {
    if (!this.enabled) return;
    try {
      for (const { namespace, rooms } of this.#o.memberships(clientId)) {
        for (const room of rooms) {
          if (!this.#o.rooms.matches(room, namespace)) continue;
          const r = this.#rooms.get(roomId(namespace, room));
          if (away) this.#localLeave(clientId, room, namespace);
          else if (r?.entries.get(clientId)?.local === true) {
            r.newcomers.add(clientId);
            this.#touch(r);
          } else this.#localJoin(clientId, room, namespace);
        }
      }
    } catch (err) {
      this.#o.logger.exception(err, { phase: 'presence (away or resumed)', clientId });
    }
  };

  /** Replaces the meta of a local connection; false when it is not in that room here. */
  update(clientId: string, room: string, namespace: string, extra: unknown): boolean {
    // Checked first, so a bad meta is refused whether or not the client is in the room.
    const meta = buildMeta(clientId, 0, extra, this.#o.maxMetaBytes, 'updatePresence');
    const r = this.#rooms.get(roomId(namespace, room));
    const old = r?.entries.get(clientId);
    if (r === undefined || old === undefined || !old.local) return false;
    meta.joinedAt = old.meta.joinedAt;
    this.#put(r, clientId, { key: old.key, meta, local: true });
    this.#replicator?.joined({ namespace, room, key: old.key, meta });
    return true;
  }

  /** The room's entries by key (every instance's, with a replicating adapter). */
  state(room: string, namespace: string): PresenceState {
    const r = this.#rooms.get(roomId(namespace, room));
    return r === undefined ? {} : group(r.entries.values());
  }

  stats(room: string, namespace: string): PresenceStats {
    const r = this.#rooms.get(roomId(namespace, room));
    return { connections: r?.entries.size ?? 0, keys: r?.keys.size ?? 0 };
  }

  /** Stops the flush timer (server close); what was not sent is dropped. */
  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#dirty.clear();
  }

  // ------------------------------------------------------------ changes

  #localJoin(clientId: string, room: string, namespace: string): void {
    const info = this.#o.clientInfo(clientId);
    if (info?.away === true) return; // joins when it resumes
    const key = info?.identity ?? clientId;
    const joinedAt = Date.now();
    let meta: PresenceMeta;
    try {
      const extra = this.#hook?.({ clientId, room, namespace, key });
      meta = buildMeta(clientId, joinedAt, extra, this.#o.maxMetaBytes, 'presence hook');
    } catch (err) {
      this.#o.logger.warning('presence hook failed; the meta has clientId and joinedAt only', {
        code: (err as { code?: unknown }).code ?? 'PKG_ERR_CORE_HANDLER_FAILED',
        clientId,
        room,
        error: err instanceof Error ? err.message : String(err),
      });
      meta = { clientId, joinedAt };
    }
    const r = this.#room(namespace, room);
    this.#put(r, clientId, { key, meta, local: true });
    r.local.add(clientId);
    r.newcomers.add(clientId);
    this.#replicator?.joined({ namespace, room, key, meta });
  }

  #localLeave(clientId: string, room: string, namespace: string): void {
    const r = this.#rooms.get(roomId(namespace, room));
    if (r === undefined || r.entries.get(clientId)?.local !== true) return;
    this.#drop(r, clientId);
    this.#replicator?.left(namespace, room, clientId);
  }

  /** What the replicator reports of the other instances. */
  readonly #sink: PresenceSink = {
    join: (record) => {
      if (!this.#o.rooms.matches(record.room, record.namespace)) return;
      const r = this.#room(record.namespace, record.room);
      const clientId = record.meta.clientId;
      if (r.entries.get(clientId)?.local === true) return; // ours; never overwritten
      this.#put(r, clientId, { key: record.key, meta: record.meta, local: false });
    },
    leave: (namespace, room, clientId) => {
      const r = this.#rooms.get(roomId(namespace, room));
      if (r === undefined || r.entries.get(clientId)?.local !== false) return;
      this.#drop(r, clientId);
    },
    local: () => this.#localRecords(),
  };

  *#localRecords(): Generator<PresenceRecord> {
    for (const r of this.#rooms.values()) {
      for (const clientId of r.local) {
        const e = r.entries.get(clientId);
        if (e) yield { namespace: r.namespace, room: r.room, key: e.key, meta: e.meta };
      }
    }
  }

  #room(namespace: string, room: string): RoomRecord {
    const id = roomId(namespace, room);
    let r = this.#rooms.get(id);
    if (r === undefined) {
      r = new RoomRecord(namespace, room);
      this.#rooms.set(id, r);
    }
    return r;
  }

  #put(r: RoomRecord, clientId: string, entry: Entry): void {
    if (r.entries.has(clientId)) this.#remove(r, clientId);
    r.entries.set(clientId, entry);
    r.keys.set(entry.key, (r.keys.get(entry.key) ?? 0) + 1);
    r.joins.add(entry);
    this.#touch(r);
  }

  #drop(r: RoomRecord, clientId: string): void {
    if (!this.#remove(r, clientId)) return;
    r.local.delete(clientId);
    r.newcomers.delete(clientId);
    this.#touch(r);
  }

  /** Takes an entry out; a leave unless it joined in the current batch. */
  #remove(r: RoomRecord, clientId: string): boolean {
    const old = r.entries.get(clientId);
    if (old === undefined) return false;
    r.entries.delete(clientId);
    const n = (r.keys.get(old.key) ?? 1) - 1;
    if (n === 0) r.keys.delete(old.key);
    else r.keys.set(old.key, n);
    if (!r.joins.delete(old)) r.leaves.add(old);
    return true;
  }

  #touch(r: RoomRecord): void {
    this.#dirty.add(r);
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(this.#flush, this.#o.interval);
    this.#timer.unref?.();
  }

  // ------------------------------------------------------------ flush

  readonly #flush = (): void => {
    this.#timer = undefined;
    this.#flushes += 1;
    const rooms = [...this.#dirty];
    this.#dirty.clear();
    for (const r of rooms) {
      try {
        this.#flushRoom(r);
      } catch (err) {
        this.#o.logger.exception(err, { phase: 'presence flush', room: r.room });
      }
      if (r.entries.size === 0 && !this.#dirty.has(r)) {
        this.#rooms.delete(roomId(r.namespace, r.room));
      }
    }
  };

  #flushRoom(r: RoomRecord): void {
    const { joins, leaves, newcomers } = r;
    r.joins = new Set();
    r.leaves = new Set();
    r.newcomers = new Set();
    const fresh: string[] = [];
    const known: string[] = [];
    for (const id of r.local) {
      if (this.#o.clientInfo(id)?.v1 !== true) continue;
      (newcomers.has(id) ? fresh : known).push(id);
    }
    const over = r.keys.size > this.#o.maxList;
    const wasOver = r.overLimit;
    r.overLimit = over;
    const base = { room: r.room, namespace: r.namespace };
    if (over || wasOver) {
      // Crossing the bound either way: everyone gets the new form; otherwise newcomers only.
      const to = over === wasOver ? fresh : [...known, ...fresh];
      if (to.length === 0) return;
      const data: PresenceStateData = over
        ? { ...base, stats: { connections: r.entries.size, keys: r.keys.size } }
        : { ...base, state: group(r.entries.values()) };
      this.#o.deliver(to, encodeEnvelope(ControlEvent.PRESENCE, data));
      return;
    }
    if (known.length > 0 && (joins.size > 0 || leaves.size > 0)) {
      const data: PresenceDiffData = { ...base, joins: group(joins), leaves: group(leaves) };
      this.#o.deliver(known, encodeEnvelope(ControlEvent.PRESENCE_DIFF, data));
    }
    if (fresh.length > 0) {
      const data: PresenceStateData = { ...base, state: group(r.entries.values()) };
      this.#o.deliver(fresh, encodeEnvelope(ControlEvent.PRESENCE, data));
    }
  }
}
