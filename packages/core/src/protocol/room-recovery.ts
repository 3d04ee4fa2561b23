/**
 * Recovery of a room (docs/protocol.md, "Room history and recovery"): a protocol version 1
 * client that joins a room with the last position it saw (`join_room.since`, or a
 * `$hello.positions` entry when the application joins it) gets the messages it missed, in
 * order, then one `$recovered`. Live messages of that room that reach the client while the
 * history is read are held here and sent after `$recovered`, each once: those the replay
 * already carried (same epoch, offset not after the room's position) are dropped.
 *
 * A live copy can also reach this process after the read answered (a Redis pub/sub copy of
 * a message the read already returned, from this instance or another): after a recovery
 * that replayed up to offset N, the client's record (its session when it has one, which
 * outlives the connection across resumes) remembers N for that room, and every live copy
 * of the room at or before N in that epoch is dropped on its way to the client, whenever it
 * comes ({@link wasReplayed}). One position per room the client recovered and is still in:
 * forgotten when it leaves the room, and with the record or session.
 *
 * Bounded: at most one recovery per client and room at a time, at most `history_max_replay`
 * messages and `history_max_replay_bytes` bytes replayed (beyond: `too_far_behind` and
 * nothing replayed, the application reloads), and at most `history_max_replay` live
 * messages held per recovery (beyond: the recovery reports `too_far_behind`).
 */
import type { LoggerInterface } from '@pkg/logger';
import {
  encodeEnvelope,
  ControlEvent,
  roomKey,
  type RecoveredData,
  type RecoveryFailureReason,
  type RoomPosition,
  type StreamPosition,
} from '@pkg/wire';
import type { HistoryRead } from '../history/history';
import { positionOf, type RoomHistory } from '../history/room-history';
import { ConnectionState, type Connection } from './connection';
import { messageBytes, type SerializedMessage } from '../ws/serialized-message';

/** Live messages of one room held for one client while its history is read. */
export interface RecoveryHold {
  /** The held messages (texts, and binary frames of version 1), in arrival order. */
  readonly messages: SerializedMessage[];
  overflow: boolean;
  /** Where the client's replay marks are kept (see {@link marksOf}). */
  readonly marks: ReplayMarks;
}

export interface RoomRecoveryOptions {
  readonly history: RoomHistory;
  readonly logger: LoggerInterface;
  /** Writes a text to the client as it is (`$recovered`). */
  readonly sendRaw: (clientId: string, text: string) => boolean;
  /**
   * Delivers a replayed or held message as a broadcast would have (with `seq`, kept in a
   * session); false when the client is no longer there.
   */
  readonly deliver: (clientId: string, message: SerializedMessage) => boolean;
  /** Told the outcome of each recovery: `recovered`, or the reason it failed (metrics). */
  readonly outcome?: (outcome: string) => void;
  /** Whether the client is in the room now (a mark is kept only for a room it is still in). */
  readonly isMember?: (clientId: string, room: string, namespace: string) => boolean;
}

const holdKey = roomKey;

/**
 * Where a client's recovered rooms stand: per room (its hold key), the position its last
 * recovery replayed up to. Kept on the session when the client has one (so it survives a
 * resume and a takeover), else on the connection's record; undefined while none.
 */
export interface ReplayMarks {
  replayed: Map<string, StreamPosition> | undefined;
}

/** Where a connection's replay marks are kept: its session when it has one, else itself. */
export function marksOf(conn: Connection): ReplayMarks {
  return conn.session ?? conn.marks;
}

/**
 * True when a live copy of a room message at `pos` was already sent to the client by a
 * recovery of that room (same epoch, offset not after the position the replay reached).
 */
export function wasReplayed(
  replayed: ReadonlyMap<string, StreamPosition>,
  pos: RoomPosition,
): boolean {
  const at = replayed.get(holdKey(pos.namespace, pos.room));
  return at !== undefined && pos.offset <= at.offset && pos.epoch === at.epoch;
}

/**
 * Where a client stands after a failed recovery: the position read, or just before the
 * first held message of that epoch at or before it (that message is sent after `$recovered`).
 */
function beforeHeld(
  read: StreamPosition | null,
  held: readonly SerializedMessage[],
): StreamPosition | null {
  if (read === null) return null;
  let first = read.offset + 1;
  for (const message of held) {
    const pos = positionOf(message);
    if (pos !== undefined && pos.epoch === read.epoch && pos.offset < first) first = pos.offset;
  }
  return first > read.offset ? read : { epoch: read.epoch, offset: first - 1 };
}

export class RoomRecovery {
  readonly #o: RoomRecoveryOptions;

  constructor(options: RoomRecoveryOptions) {
    this.#o = options;
  }

  /**
   * A live delivery to a client in recovery: true when it is held (a message of a room
   * being recovered), false when it goes out now.
   */
  hold(conn: Connection, message: SerializedMessage): boolean {
    if (conn.recovering === 0) return false;
    const pos = positionOf(message);
    if (pos === undefined) return false;
    const held = conn.recoveryOf(holdKey(pos.namespace, pos.room));
    if (held === undefined) return false;
    if (held.messages.length < this.#o.history.maxReplay) held.messages.push(message);
    else held.overflow = true;
    return true;
  }

  /**
   * A client was put in a room it was not in: with `since`, or with its `$hello.positions`
   * entry for that room (taken out: a position is used once), the room is recovered. Only
   * for an open connection that said `$hello`. A join with `since` of a room the client is
   * in already (`already`) replays nothing: it is answered `$recovered` with `recovered:
   * false`, `already_joined`, unless a recovery of that room runs (its `$recovered` follows).
   */
  joined(
    conn: Connection,
    room: string,
    namespace: string,
    since: StreamPosition | undefined,
    already = false,
  ): void {
    if (already) {
      if (since === undefined || conn.state !== ConnectionState.OPEN || !conn.hello) return;
      if (conn.recoveryOf(holdKey(namespace, room)) !== undefined) return;
      this.#recovered(conn.id, {
        room,
        namespace,
        recovered: false,
        reason: 'already_joined',
        replayed: 0,
      });
      return;
    }
    const taken = conn.takePosition(room, namespace);
    const position = since ?? taken;
    if (position === undefined || conn.state !== ConnectionState.OPEN || !conn.hello) return;
    const { offset, epoch } = position;
    this.start(conn, room, namespace, { offset, epoch });
  }

  /**
   * The client left a room: the position its recovery of that room reached is forgotten
   * (a later join with `since` recovers it again; one without gets only newer messages).
   */
  left(marks: ReplayMarks, room: string, namespace: string): void {
    const { replayed } = marks;
    if (replayed === undefined) return;
    replayed.delete(holdKey(namespace, room));
    if (replayed.size === 0) marks.replayed = undefined;
  }

  /** Recovers one room for a client that was just put in it. */
  start(conn: Connection, room: string, namespace: string, since: StreamPosition): void {
    const clientId = conn.client.id;
    const { history } = this.#o;
    const policy = history.policyFor(namespace, room);
    if (policy === undefined) {
      this.#recovered(clientId, {
        room,
        namespace,
        recovered: false,
        reason: 'not_kept',
        replayed: 0,
      });
      return;
    }
    const key = holdKey(namespace, room);
    if (conn.recoveryOf(key) !== undefined) return;
    const hold: RecoveryHold = { messages: [], overflow: false, marks: marksOf(conn) };
    conn.startRecovery(key, hold);
    let read: HistoryRead | Promise<HistoryRead>;
    try {
      read = history.read(namespace, room, policy, since, history.maxReplay, clientId);
    } catch (err) {
      read = Promise.reject(err);
    }
    if (read instanceof Promise || typeof (read as { then?: unknown }).then === 'function') {
      Promise.resolve(read).then(
        (r) => this.#finish(conn, room, namespace, hold, r),
        (err: unknown) => {
          this.#o.logger.exception(err, { phase: 'history.read (recovery)', clientId, room });
          // The history could not be read: the client cannot be told it missed nothing.
          this.#finish(conn, room, namespace, hold, {
            position: null,
            messages: [],
            complete: false,
            reason: 'epoch_changed',
          });
        },
      );
      return;
    }
    this.#finish(conn, room, namespace, hold, read as HistoryRead);
  }

  #finish(
    conn: Connection,
    room: string,
    namespace: string,
    hold: RecoveryHold,
    read: HistoryRead,
  ): void {
    // The client left (or a newer recovery replaced this one): nothing to send.
    if (!conn.finishRecovery(holdKey(namespace, room), hold)) return;
    const clientId = conn.id;
    let reason: RecoveryFailureReason | undefined = read.complete
      ? undefined
      : (read.reason ?? 'too_far_behind');
    // Lost messages (a failover) are told as such; every kept one is replayed around them.
    let lost = reason === 'messages_lost' && read.lost?.length ? read.lost : undefined;
    if (reason === 'messages_lost' && lost === undefined) reason = 'too_far_behind';
    let bytes = 0;
    for (const m of read.messages) bytes += messageBytes(m.text);
    const replays = reason === undefined || lost !== undefined;
    if (replays && (bytes > this.#o.history.maxReplayBytes || hold.overflow)) {
      reason = 'too_far_behind';
      lost = undefined;
    }
    let replayed = 0;
    if (reason === undefined || lost !== undefined) {
      for (const m of read.messages) {
        if (!this.#o.deliver(clientId, m.text)) break;
        replayed += 1;
      }
      // A live copy of a replayed message may still be on its way (a pub/sub copy that
      // reaches this process after the read answered): it is dropped when it comes.
      if (
        read.position !== null &&
        replayed === read.messages.length &&
        (this.#o.isMember?.(clientId, room, namespace) ?? true)
      ) {
        const { offset, epoch } = read.position;
        (hold.marks.replayed ??= new Map()).set(holdKey(namespace, room), { offset, epoch });
      }
    }
    const data: RecoveredData = { room, namespace, recovered: reason === undefined, replayed };
    if (reason !== undefined) data.reason = reason;
    if (lost !== undefined) data.lost = lost.map(({ from, to }) => ({ from, to }));
    // A failed recovery replayed nothing, so every held message still goes out once, even one
    // at or before the position read after it was kept; the position the client is told it
    // stands at is then just before the first of those, or a client that drops what it has
    // seen by position (@pkg/client) would drop them.
    const done = reason === undefined || lost !== undefined;
    const position = done ? read.position : beforeHeld(read.position, hold.messages);
    if (position !== null) data.position = position;
    this.#recovered(clientId, data);
    const at = done ? read.position : null;
    for (const message of hold.messages) {
      if (at !== null) {
        const pos = positionOf(message);
        // Already in the replay.
        if (pos !== undefined && pos.epoch === at.epoch && pos.offset <= at.offset) continue;
      }
      this.#o.deliver(clientId, message);
    }
  }

  #recovered(clientId: string, data: RecoveredData): void {
    this.#o.outcome?.(data.recovered ? 'recovered' : (data.reason ?? 'not_kept'));
    this.#o.sendRaw(clientId, encodeEnvelope(ControlEvent.RECOVERED, data));
  }
}
