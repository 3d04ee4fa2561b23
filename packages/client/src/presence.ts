/**
 * Presence on the client: `client.presence(room)` returns a live view of who is in a room
 * whose server tracks presence, kept from `$presence` and `$presence_diff` (see
 * presence-state.ts), with `sync`, `join` and `leave` events in the manner of Phoenix's
 * JavaScript client. The registry keeps every room's presence from the first message on,
 * so a view asked for after `joinRoom` resolved is complete even when the state arrived
 * first.
 */
import {
  ControlEvent,
  readPresenceData,
  readPresenceDiff,
  roomKey,
  type PresenceMeta,
  type PresenceStats,
} from '@pkg/wire';
import { createClientError } from './errors';
import { reportAsync } from './listeners';
import { RoomPresence, type RoomChange } from './presence-state';

/**
 * The application members of a meta, read from the map of what the server sends: its
 * `$presence` member (`$presence: (meta: { name: string }) => void`). Without one, any
 * members, `unknown`.
 */
export type PresenceMetaType<Listen> = Listen extends { $presence: (meta: infer M) => unknown }
  ? M
  : Record<string, unknown>;

/** One connection in the room: `clientId`, `joinedAt` and the application's members. */
export type PresenceMetaOf<M> = PresenceMeta & M;

/** One key's entry: a meta per connection of that key. */
export interface PresenceEntryOf<M> {
  metas: Array<PresenceMetaOf<M>>;
}

/** What `list()` returns: one item per key. */
export interface PresenceListItem<M> extends PresenceEntryOf<M> {
  key: string;
}

/** The events of a presence view. */
export interface PresenceEvents<M> {
  /** The view changed (a state, stats or a diff was applied): read `list()` or `stats()`. */
  sync: () => void;
  /** Metas joined under `key`; `current` is the entry before (undefined for a new key). */
  join: (key: string, current: PresenceEntryOf<M> | undefined, joined: PresenceEntryOf<M>) => void;
  /** Metas left `key`; `current` is what remains (`metas` empty when the key left). */
  leave: (key: string, current: PresenceEntryOf<M>, left: PresenceEntryOf<M>) => void;
}

export type PresenceEventName = keyof PresenceEvents<unknown>;

const EVENTS: ReadonlySet<string> = new Set(['sync', 'join', 'leave']);

type AnyHandler = (...args: unknown[]) => void;

/** A room's key in the tables below: `@pkg/wire`'s one encoding of the pair. */
function keyOf(room: string, namespace: string): string {
  return roomKey(namespace, room);
}

/** The live presence of one room, from `client.presence(room, namespace)`. */
export class Presence<M = Record<string, unknown>> {
  readonly room: string;
  readonly namespace: string;
  readonly #state: RoomPresence;
  readonly #handlers = new Map<string, AnyHandler[]>();
  readonly #detach: (view: Presence<M>) => void;
  #closed = false;

  /** @internal Built by the client; use `client.presence(room, namespace)`. */
  constructor(
    room: string,
    namespace: string,
    state: RoomPresence,
    detach: (view: Presence<M>) => void,
  ) {
    this.room = room;
    this.namespace = namespace;
    this.#state = state;
    this.#detach = detach;
  }

  /** True once the room's state (or stats) arrived on the current connection. */
  get synced(): boolean {
    return this.#state.synced;
  }

  /** True when the server sent counts only: the room has more keys than it lists. */
  get statsOnly(): boolean {
    return this.#state.serverStats !== undefined;
  }

  /** True after `close()`. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Every key with its metas, in the order the keys appeared. */
  list(): Array<PresenceListItem<M>>;
  /** Every key mapped by `by(key, entry)`, as Phoenix's `list(by)` (e.g. the first meta). */
  list<T>(by: (key: string, entry: PresenceEntryOf<M>) => T): T[];
  list<T>(by?: (key: string, entry: PresenceEntryOf<M>) => T): Array<T | PresenceListItem<M>> {
    const out: Array<T | PresenceListItem<M>> = [];
    for (const [key, metas] of this.#state.entries) {
      const entry = { metas: [...metas] as Array<PresenceMetaOf<M>> };
      out.push(by ? by(key, entry) : { key, ...entry });
    }
    return out;
  }

  /** One key's entry, or undefined when that key is not in the room. */
  get(key: string): PresenceEntryOf<M> | undefined {
    const metas = this.#state.entries.get(key);
    return metas ? { metas: [...metas] as Array<PresenceMetaOf<M>> } : undefined;
  }

  /**
   * Connections and distinct keys: the server's counts for a room it reports by counts,
   * else counted from the list. Undefined until the first state arrived.
   */
  stats(): PresenceStats | undefined {
    if (this.#state.serverStats) return { ...this.#state.serverStats };
    if (!this.#state.synced && this.#state.entries.size === 0) return undefined;
    let connections = 0;
    for (const metas of this.#state.entries.values()) connections += metas.length;
    return { connections, keys: this.#state.entries.size };
  }

  on<E extends PresenceEventName>(event: E, handler: PresenceEvents<M>[E]): this {
    if (!EVENTS.has(event) || typeof handler !== 'function') {
      throw createClientError(
        TypeError,
        'PKG_ERR_CLIENT_INVALID_ARGUMENT',
        `presence.on(${JSON.stringify(event)}): the event must be "sync", "join" or "leave" and the listener a function.`,
      );
    }
    if (this.#closed) return this;
    const list = this.#handlers.get(event) ?? [];
    list.push(handler as AnyHandler);
    this.#handlers.set(event, list);
    return this;
  }

  /** Removes one listener, or every listener of the event when none is given. */
  off<E extends PresenceEventName>(event: E, handler?: PresenceEvents<M>[E]): this {
    if (handler === undefined) this.#handlers.delete(event);
    else {
      const list = (this.#handlers.get(event) ?? []).filter((h) => h !== handler);
      if (list.length) this.#handlers.set(event, list);
      else this.#handlers.delete(event);
    }
    return this;
  }

  /**
   * Stops listening: every listener is removed and the next `client.presence()` of this
   * room returns a new view. The room is not left (that is `leaveRoom`).
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#handlers.clear();
    this.#detach(this);
  }

  /** @internal */
  notify(change: RoomChange): void {
    const handlers = this.#handlers.get(change.kind);
    if (!handlers) return;
    const entry = (metas: PresenceMeta[]): PresenceEntryOf<M> => ({
      metas: metas as Array<PresenceMetaOf<M>>,
    });
    let args: unknown[] = [];
    if (change.kind === 'join') {
      args = [change.key, change.current && entry(change.current), entry(change.joined)];
    } else if (change.kind === 'leave') {
      args = [change.key, entry(change.current), entry(change.left)];
    }
    for (const handler of [...handlers]) {
      try {
        handler(...args);
      } catch (err) {
        reportAsync(err);
      }
    }
  }
}

/** Every room's presence on one client, and the view handed out for each. */
export class PresenceRegistry {
  readonly #rooms = new Map<string, RoomPresence>();
  readonly #views = new Map<string, Presence<never>>();

  #room(room: string, namespace: string): RoomPresence {
    const k = keyOf(room, namespace);
    let state = this.#rooms.get(k);
    if (!state) {
      state = new RoomPresence((change) => this.#views.get(k)?.notify(change));
      this.#rooms.set(k, state);
    }
    return state;
  }

  /** The view of a room: the same object until it is closed. */
  view<M>(room: string, namespace: string): Presence<M> {
    const k = keyOf(room, namespace);
    const existing = this.#views.get(k);
    if (existing) return existing as unknown as Presence<M>;
    const view = new Presence<M>(room, namespace, this.#room(room, namespace), (closed) => {
      if (this.#views.get(k) === (closed as unknown)) this.#views.delete(k);
    });
    this.#views.set(k, view as unknown as Presence<never>);
    return view;
  }

  /** Handles `$presence` and `$presence_diff`; false for any other event. */
  receive(event: string, data: unknown): boolean {
    if (event === ControlEvent.PRESENCE) {
      const read = readPresenceData(data);
      if (!read) return true;
      const room = this.#room(read.room, read.namespace);
      if (read.state) room.state(read.state);
      else if (read.stats) room.stats(read.stats);
      return true;
    }
    if (event === ControlEvent.PRESENCE_DIFF) {
      const read = readPresenceDiff(data);
      if (read) this.#room(read.room, read.namespace).diff(read.joins, read.leaves);
      return true;
    }
    return false;
  }

  /** A connection was established: a fresh session gets every state again. */
  connected(resumed: boolean): void {
    if (resumed) return;
    for (const room of this.#rooms.values()) room.unsync();
  }

  /** `room_left`: the room's presence is emptied; it is forgotten unless someone views it. */
  left(room: string, namespace: string): void {
    this.#leave(keyOf(room, namespace));
  }

  /** disconnect(): every room is left. */
  clear(): void {
    for (const k of [...this.#rooms.keys()]) this.#leave(k);
  }

  #leave(k: string): void {
    const state = this.#rooms.get(k);
    if (!state) return;
    state.clear();
    if (!this.#views.has(k)) this.#rooms.delete(k);
  }
}
