/**
 * Presence (protocol version 1): for a room whose server tracks presence, who is in it.
 * Entries are keyed by a presence key (by default the identity the auth handlers gave, else
 * the client id) and hold one meta per connection. A member gets `$presence` (the state)
 * when it joins, then `$presence_diff` batches of joins and leaves.
 */

/** What the server knows of one connection in a room. */
export interface PresenceMeta {
  clientId: string;
  /** When the connection joined the room, ms since the epoch. */
  joinedAt: number;
  /** Application members, set by the server's presence hook or `updatePresence`. */
  [key: string]: unknown;
}

/** One key's entry: one meta per connection of that key in the room. */
export interface PresenceEntry {
  metas: PresenceMeta[];
}

/** Entries by presence key. */
export type PresenceState = Record<string, PresenceEntry>;

/** Counts of a room: connections and distinct keys. */
export interface PresenceStats {
  connections: number;
  keys: number;
}

/**
 * `$presence.data` (server to client): the whole state of a room, sent when the client
 * joins it (and again after a reconnect). A room with more keys than the server's list
 * bound sends `stats` instead of `state` (and then no diffs).
 */
export interface PresenceStateData {
  room: string;
  namespace: string;
  state?: PresenceState;
  stats?: PresenceStats;
}

/**
 * `$presence_diff.data` (server to client): what changed since the last `$presence` or
 * `$presence_diff` of the room. A meta that joined and left within one batch appears in
 * neither. A meta updated by `updatePresence` is a leave of the old meta and a join of the
 * new one, as in Phoenix.
 */
export interface PresenceDiffData {
  room: string;
  namespace: string;
  joins: PresenceState;
  leaves: PresenceState;
}
