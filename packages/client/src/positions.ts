/**
 * Room history positions: the last position the client saw in each room that keeps history
 * (from each message's `pos` and from `$recovered`), what it sends to recover after a
 * reconnect (`join_room.since`, `$hello.positions`), and the rule that drops a message seen
 * twice across a recovery: same epoch and an offset not above the last one.
 */
import {
  HISTORY_LIMITS,
  roomKey,
  type RecoveredData,
  type RoomPosition,
  type StreamPosition,
} from '@pkg/wire';

/**
 * Most rooms whose position is remembered; past it the least recently updated room is
 * forgotten (a client in that many rooms at once is far outside what the wire bounds, 128
 * positions in `$hello`, can recover anyway).
 */
export const MAX_REMEMBERED_POSITIONS = 1024;

/**
 * The epoch sent for a room whose position the client does not know (it joined the room but
 * the position read did not come back, or the room had no message yet): no stream has it
 * (epochs are random ids), so the server answers `recovered: false` (`epoch_changed`) and
 * the application learns that it may have missed messages, instead of missing them
 * silently.
 */
export const UNKNOWN_EPOCH = '-';

/** A room's key in the tables below: `@pkg/wire`'s one encoding of the pair. */
function key(room: string, namespace: string): string {
  return roomKey(namespace, room);
}

interface Entry {
  room: string;
  namespace: string;
  epoch: string;
  /** The last offset delivered (0: none yet); a message at or below it is dropped. */
  offset: number;
  /**
   * The room's position when the application last read its history (`history()`), or when
   * the client joined it: nothing at or below it needs recovering, though a live message at
   * or below it is still delivered (the application may not have shown it).
   */
  floor: number;
}

export class RoomPositions {
  /** By room, least recently updated first (a Map keeps insertion order). */
  readonly #last = new Map<string, Entry>();

  /**
   * A message of a room arrived with this position. False when the client has already seen
   * it (same epoch, offset at or below the last): drop it. Otherwise the position is
   * remembered (a new epoch replaces the old one: offsets of two epochs are not compared).
   */
  accept(pos: RoomPosition): boolean {
    const k = key(pos.room, pos.namespace);
    const last = this.#last.get(k);
    if (last !== undefined && last.epoch === pos.epoch) {
      if (pos.offset <= last.offset) return false;
      this.#set(k, { ...last, offset: pos.offset });
      return true;
    }
    this.#set(k, { ...pos, floor: 0 });
    return true;
  }

  /**
   * The room's position at a history read: where a recovery may start even before a message
   * arrived (a client that joined a quiet room and moved to another instance would
   * otherwise have nothing to send and miss what was published meanwhile).
   */
  floor(room: string, namespace: string, position: StreamPosition): void {
    const k = key(room, namespace);
    const last = this.#last.get(k);
    if (last !== undefined && last.epoch === position.epoch) {
      if (position.offset > last.floor) this.#set(k, { ...last, floor: position.offset });
      return;
    }
    this.#set(k, { room, namespace, epoch: position.epoch, offset: 0, floor: position.offset });
  }

  /**
   * The client is in a room that keeps (or may keep) history but knows no position in it
   * yet: a recovery asks from {@link UNKNOWN_EPOCH}. A known position is left alone.
   */
  unknown(room: string, namespace: string): void {
    const k = key(room, namespace);
    if (this.#last.has(k)) return;
    this.#set(k, { room, namespace, epoch: UNKNOWN_EPOCH, offset: 0, floor: 0 });
  }

  /**
   * `$recovered` arrived: the client now stands at the room's current position. After a
   * failed recovery that position replaces the one kept (a new epoch, or a stream behind the
   * client's position); after a successful one it only moves forward. A failure without a
   * position (a room that keeps no history) forgets the room.
   */
  recovered(data: RecoveredData): void {
    const k = key(data.room, data.namespace);
    if (data.position === undefined) {
      // Nothing to stand at: after a failure the old position is worth nothing either.
      if (!data.recovered) this.#last.delete(k);
      return;
    }
    const next: RoomPosition = { room: data.room, namespace: data.namespace, ...data.position };
    // messages_lost replayed every kept message: the client stands where the room does.
    if (data.recovered || data.reason === 'messages_lost') this.accept(next);
    else this.#set(k, { ...next, floor: 0 });
  }

  /** Where a recovery of the room starts: the last offset delivered or the floor, the higher. */
  get(room: string, namespace: string): RoomPosition | undefined {
    const last = this.#last.get(key(room, namespace));
    return last === undefined ? undefined : since(last);
  }

  forget(room: string, namespace: string): void {
    this.#last.delete(key(room, namespace));
  }

  clear(): void {
    this.#last.clear();
  }

  /**
   * The positions for `$hello.positions`: the most recently updated rooms first, without the
   * rooms `skip` names (those recover through `join_room.since`), at most
   * `HISTORY_LIMITS.maxHelloPositions`.
   */
  forHello(skip: (room: string, namespace: string) => boolean): RoomPosition[] {
    const out: RoomPosition[] = [];
    const all = [...this.#last.values()];
    for (let i = all.length - 1; i >= 0 && out.length < HISTORY_LIMITS.maxHelloPositions; i--) {
      const p = all[i]!;
      if (!skip(p.room, p.namespace)) out.push(since(p));
    }
    return out;
  }

  #set(k: string, entry: Entry): void {
    this.#last.delete(k);
    this.#last.set(k, {
      room: entry.room,
      namespace: entry.namespace,
      epoch: entry.epoch,
      offset: entry.offset,
      floor: entry.floor,
    });
    if (this.#last.size > MAX_REMEMBERED_POSITIONS) {
      this.#last.delete(this.#last.keys().next().value as string);
    }
  }
}

function since(entry: Entry): RoomPosition {
  const { room, namespace, epoch } = entry;
  return { room, namespace, epoch, offset: Math.max(entry.offset, entry.floor) };
}
