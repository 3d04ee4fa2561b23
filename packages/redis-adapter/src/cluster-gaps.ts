/**
 * Kept messages of a room, as a Redis Cluster delivers them: in order, each once, none
 * missing. While a room's slot migrates, or while its channel is being subscribed again
 * after a topology change, the room's messages are kept in its stream (the publish script
 * writes and publishes in one step) but the subscriber may not receive them: the keys
 * answer on the new master before the subscription has moved there. Each kept message
 * arrives with its position (a first line `#<epoch>:<offset>`, cluster-scripts.ts); when one
 * arrives after a hole in its epoch, the missing ones are read from the room's history and
 * handed on first (messages that arrive meanwhile wait), and a message already handed on is
 * dropped. A message of a new epoch starts the room's count again.
 *
 * Messages are read as strings or as the bytes a buffer-mode subscription delivers (a binary
 * message stays bytes: the position line is read from its first bytes and the rest is handed
 * on as a view of them, never copied or decoded).
 */
import type { Buffer } from 'node:buffer';
import { encodeBroadcast } from './wire';

/** A message as a sharded channel delivers it: a string, or bytes in buffer mode. */
export type RawMessage = string | Buffer;

type Listener = (message: RawMessage, channel: string) => void;

/**
 * Reads the kept messages of a room channel after `since` and before offset `before`, as
 * delivered texts or binary frames, oldest first; null when they cannot be read.
 */
export type MissedReader = (
  channel: string,
  since: { epoch: string; offset: number },
  before: number,
) => Promise<Array<string | Uint8Array> | null>;

/** Rooms remembered at most (the oldest forgotten first); the adapter forgets rooms it leaves. */
const MAX_ROOMS = 100_000;

/** The origin named on a message filled in from history: never an instance's id, never its own echo. */
const FILLED_ORIGIN = '~history';

interface RoomState {
  epoch: string;
  offset: number;
  /** The listener of the room's last message (a catch-up hands its messages to it). */
  listener: Listener;
  /** Messages waiting while the missing ones are read. */
  waiting: Array<{ raw: RawMessage; listener: Listener }> | null;
}

/** A message split at its position line: `position` null when it has none or it is unreadable. */
interface Split {
  readonly position: { epoch: string; offset: number } | null;
  /** The message without its position line (the whole message when it has none). */
  readonly message: RawMessage;
}

/** Reads the first line `#<epoch>:<offset>` of a kept message, from a string or from bytes. */
function split(raw: RawMessage): Split | null {
  let line: string;
  let newline: number;
  let message: RawMessage;
  if (typeof raw === 'string') {
    if (!raw.startsWith('#')) return null;
    newline = raw.indexOf('\n');
    line = raw.slice(1, Math.max(1, newline));
    message = raw.slice(newline + 1);
  } else {
    if (raw[0] !== 0x23) return null; // '#'
    newline = raw.indexOf(0x0a);
    line = raw.toString('utf8', 1, Math.max(1, newline));
    message = raw.subarray(newline + 1);
  }
  const colon = line.lastIndexOf(':');
  const offset = Number(line.slice(colon + 1));
  if (newline < 0 || colon < 0 || !Number.isSafeInteger(offset)) return { position: null, message };
  return { position: { epoch: line.slice(0, colon), offset }, message };
}

/** The offset of a raw kept message (`#<epoch>:<offset>` first line), 0 when unreadable. */
function offsetOf(raw: RawMessage): number {
  return split(raw)?.position?.offset ?? 0;
}

export class RoomSequence {
  readonly #rooms = new Map<string, RoomState>();
  readonly #missed: MissedReader;
  readonly #onError: (err: Error) => void;
  /** Messages read from history because the channel missed them. */
  filled = 0;
  /** Holes that could not be filled (the history was gone or could not be read). */
  unfilled = 0;

  constructor(missed: MissedReader, onError: (err: Error) => void) {
    this.#missed = missed;
    this.#onError = onError;
  }

  forget(channel: string): void {
    this.#rooms.delete(channel);
  }

  /** The position of the last kept message of the channel handed on (or being filled up to). */
  position(channel: string): { epoch: string; offset: number } | undefined {
    const room = this.#rooms.get(channel);
    if (room === undefined) return undefined;
    const waiting = room.waiting?.at(-1)?.raw;
    const offset = waiting === undefined ? room.offset : Math.max(room.offset, offsetOf(waiting));
    return { epoch: room.epoch, offset };
  }

  /** A message from a sharded channel: handed to `listener` in order, without its position line. */
  receive(raw: RawMessage, channel: string, listener: Listener): void {
    const parts = split(raw);
    if (parts === null) {
      listener(raw, channel);
      return;
    }
    const { position, message } = parts;
    if (position === null) {
      listener(message, channel); // the adapter drops what it cannot read, and counts it
      return;
    }
    const { epoch, offset } = position;
    const room = this.#rooms.get(channel);
    if (room?.waiting) {
      room.waiting.push({ raw, listener });
      return;
    }
    if (room === undefined || room.epoch !== epoch) {
      this.#remember(channel, { epoch, offset, listener, waiting: null });
      listener(message, channel);
      return;
    }
    if (offset <= room.offset) return; // handed on already
    room.listener = listener;
    if (offset === room.offset + 1) {
      room.offset = offset;
      listener(message, channel);
      return;
    }
    room.waiting = [{ raw, listener }];
    void this.#fill(channel, room, offset, listener);
  }

  /**
   * Reads what the channel may have missed since its last message, with no later message to
   * show the hole: after the channel was subscribed again (a failover, a migration), the
   * messages kept meanwhile are handed on at once instead of with the room's next message.
   */
  catchUp(channel: string): void {
    const room = this.#rooms.get(channel);
    if (room === undefined || room.waiting !== null) return;
    room.waiting = [];
    void this.#fill(channel, room, null, room.listener);
  }

  /** Fills the hole before offset `before` (null: everything kept after the room's offset). */
  async #fill(
    channel: string,
    room: RoomState,
    before: number | null,
    listener: Listener,
  ): Promise<void> {
    let texts: Array<string | Uint8Array> | null = null;
    try {
      texts = await this.#missed(
        channel,
        { epoch: room.epoch, offset: room.offset },
        before ?? Number.MAX_SAFE_INTEGER,
      );
    } catch (err) {
      this.#onError(err instanceof Error ? err : new Error(String(err)));
    }
    if (before !== null && (texts === null || texts.length !== before - room.offset - 1)) {
      this.unfilled += 1;
    }
    for (const text of texts ?? []) {
      this.filled += 1;
      listener(encodeBroadcast(FILLED_ORIGIN, [], text), channel);
    }
    // The hole is behind: what waited goes on in order (a later hole starts another fill).
    // A catch-up read the messages right after the room's offset, one offset each.
    room.offset = before === null ? room.offset + (texts?.length ?? 0) : before - 1;
    const waiting = room.waiting ?? [];
    room.waiting = null;
    for (const w of waiting) this.receive(w.raw, channel, w.listener);
  }

  #remember(channel: string, state: RoomState): void {
    this.#rooms.delete(channel);
    if (this.#rooms.size >= MAX_ROOMS) {
      const oldest = this.#rooms.keys().next().value;
      if (oldest !== undefined) this.#rooms.delete(oldest);
    }
    this.#rooms.set(channel, state);
  }
}
