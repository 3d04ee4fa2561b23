/**
 * The contract between the server's presence tracker (presence.ts) and a cluster adapter
 * that shares presence between instances. Each instance owns the entries of its own
 * connections: it reports their joins, updates and leaves to the replicator, and the
 * replicator reports the entries of the other instances back through a {@link PresenceSink}.
 * The tracker merges both into one view per room and one batched `$presence_diff` stream.
 *
 * A cluster adapter exposes its replicator as `Adapter.presence`; without one, presence is
 * the presence of this process.
 */
import type { PresenceMeta } from '@pkg/wire';

/** One connection in one room with presence, as instances exchange it. */
export interface PresenceRecord {
  readonly namespace: string;
  readonly room: string;
  /** The presence key (the identity the auth handlers gave, else the client id). */
  readonly key: string;
  /** `{clientId, joinedAt, ...application members}`. */
  readonly meta: PresenceMeta;
}

/** Where a replicator reports what other instances hold. */
export interface PresenceSink {
  /** A connection of another instance joined a room, or its meta changed. */
  join(record: PresenceRecord): void;
  /** A connection of another instance left a room (or its instance is gone). */
  leave(namespace: string, room: string, clientId: string): void;
  /** Every entry this instance owns now (for a resync after the link came back). */
  local(): Iterable<PresenceRecord>;
}

/** The presence part of a cluster adapter. */
export interface PresenceReplicator {
  /**
   * Called once by the server when presence is configured, before any other method. From
   * then on the replicator reports remote entries to `sink` and keeps this instance's
   * entries visible to the others (heartbeat, resync).
   */
  start(sink: PresenceSink, options: PresenceReplicatorOptions): void;
  /** A connection of this instance joined a room with presence, or its meta changed. */
  joined(record: PresenceRecord): void;
  /** A connection of this instance left a room with presence. */
  left(namespace: string, room: string, clientId: string): void;
}

/** What the server tells a replicator when it starts it. */
export interface PresenceReplicatorOptions {
  /** `presence_node_timeout`: an instance unheard of for this long is gone, with its entries. */
  readonly nodeTimeout: number;
}
