/**
 * Room history kept in this process: per room a ring of the last `size` message texts with
 * their offsets and times, dropped after `ttl` ms. The epoch of a room's stream is a random
 * id made when the stream starts (first publication, after a restart, after the room was
 * forgotten), so a position of an older stream is never taken for one of this stream.
 *
 * Reading never makes a room: a room that keeps nothing answers a quiet position (offset 0
 * of the epoch `~<time of the read>`), stored nowhere. A recovery from it is complete when
 * no message can have come since: the room is still empty and the position is younger than
 * its ttl (a message would have kept it that long), or the room's stream started from
 * nothing after the position was read (then it is replayed from its first message).
 *
 * Bounded: a room keeps at most `size` texts; a room with no publication for its `ttl` is
 * forgotten (checked on every publish and read, and by a timer every `sweepInterval` ms
 * that does not keep the process alive).
 */
import { randomBytes } from 'node:crypto';
import { roomKey, type RecoveryFailureReason } from '@pkg/wire';
import type { BroadcastTarget } from '../ws/broadcast-target';
import type { SerializedMessage } from '../ws/serialized-message';
import { fillTemplate, keptExcept } from './history';
import type {
  HistoryPolicy,
  KeptExcept,
  HistoryQuery,
  HistoryRead,
  HistoryStore,
  KeptMessage,
  KeptTarget,
  MessageTemplate,
  PublishedMessage,
} from './history';

/**
 * One room's stream: the kept texts are `texts[start..]` with their times, oldest first,
 * and their offsets are consecutive, ending at `last`. Dropped entries are skipped by
 * moving `start`, and cut off in one go once they are half of the arrays (amortised O(1)).
 */
interface RoomStream {
  readonly epoch: string;
  /** The offset of the last publication (0: none yet). */
  last: number;
  /** Texts, and binary frames as their bytes. */
  readonly texts: SerializedMessage[];
  readonly times: number[];
  /** The clients each text's broadcast left out (see {@link KeptExcept}). */
  readonly excepts: KeptExcept[];
  start: number;
  /** When the room is forgotten: the last publication plus its ttl. */
  expires: number;
  /**
   * Since when this stream holds every message of the room: a quiet position read at or
   * after this time continues into it (see {@link quietEpoch}).
   */
  readonly since: number;
}

export interface MemoryHistoryStoreOptions {
  /**
   * Delivers a kept message to the target's clients (the server passes its adapter's
   * `broadcast`); returns how many clients of this process it was written to.
   */
  readonly deliver: (message: SerializedMessage, target: BroadcastTarget) => number;
  /** Milliseconds between two sweeps of forgotten rooms. Default 1000. */
  readonly sweepInterval?: number;
  /** The clock, in ms (tests pass their own). Default `Date.now`. */
  readonly now?: () => number;
}

/** A new epoch: 12 characters of randomness (72 bits). */
export function newEpoch(): string {
  return randomBytes(9).toString('base64url');
}

/**
 * The epoch of a quiet position: what a read of a room that keeps nothing answers, at
 * offset 0, without storing anything (so reading never makes a room). `~` and the time of
 * the read in ms; a random epoch never starts with `~`.
 */
export function quietEpoch(time: number): string {
  return `~${Math.floor(time)}`;
}

/** The time of a quiet position's epoch, or undefined for any other epoch. */
export function quietTime(epoch: string): number | undefined {
  if (!/^~\d{1,16}$/.test(epoch)) return undefined;
  return Number(epoch.slice(1));
}

/** The in-memory {@link HistoryStore} of one process (the default). */
export class MemoryHistoryStore implements HistoryStore {
  readonly #deliver: MemoryHistoryStoreOptions['deliver'];
  readonly #now: () => number;
  readonly #sweepInterval: number;
  /** Rooms by key, in the order of their last publication (re-inserted on each). */
  readonly #rooms = new Map<string, RoomStream>();
  /** When this store started: nothing is known of the rooms before. */
  readonly #born: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: MemoryHistoryStoreOptions) {
    this.#deliver = options.deliver;
    this.#now = options.now ?? Date.now;
    this.#sweepInterval = options.sweepInterval ?? 1000;
    this.#born = this.#now();
  }

  /** Rooms whose history is kept now. */
  get size(): number {
    return this.#rooms.size;
  }

  publish(target: KeptTarget, template: MessageTemplate, policy: HistoryPolicy): PublishedMessage {
    const now = this.#now();
    this.#sweepFront(now);
    const key = roomKey(target.namespace, target.room);
    let stream = this.#rooms.get(key);
    if (stream !== undefined && stream.expires <= now) stream = undefined;
    if (stream === undefined) {
      // A room is forgotten `ttl` after its last message, so none came in the `ttl` before
      // now (nor before this store started): a quiet position read since then misses nothing.
      const since = Math.max(now - policy.ttl + 1, this.#born);
      stream = {
        epoch: newEpoch(),
        last: 0,
        texts: [],
        times: [],
        excepts: [],
        start: 0,
        expires: 0,
        since,
      };
    }
    this.#rooms.delete(key);
    this.#rooms.set(key, stream);
    stream.last += 1;
    stream.expires = now + policy.ttl;
    const offset = stream.last;
    const text = fillTemplate(template, target, stream.epoch, offset);
    stream.texts.push(text);
    stream.times.push(now);
    stream.excepts.push(keptExcept(target.except));
    trim(stream, policy, now);
    this.#arm();
    const delivered = this.#deliver(text, {
      namespace: target.namespace,
      room: target.room,
      ...(target.except === undefined ? {} : { except: target.except }),
    });
    return { position: { offset, epoch: stream.epoch }, text, delivered };
  }

  read(namespace: string, room: string, query: HistoryQuery): HistoryRead {
    const now = this.#now();
    this.#sweepFront(now);
    const key = roomKey(namespace, room);
    let stream = this.#rooms.get(key);
    if (stream !== undefined && stream.expires <= now) {
      this.#rooms.delete(key);
      stream = undefined;
    }
    const { since } = query;
    const quiet = since === undefined ? undefined : quietTime(since.epoch);
    if (stream === undefined) return this.#readQuiet(now, query, quiet);
    if (since !== undefined && quiet !== undefined) {
      // A quiet position continues into this stream when the stream holds every message
      // since it was read; else the client missed a stream in between.
      if (since.offset !== 0) return this.#answer(stream, 'invalid_position');
      if (quiet < stream.since) return this.#answer(stream, 'epoch_changed');
      query = { ...query, since: { offset: 0, epoch: stream.epoch } };
    }
    trim(stream, query.policy, now);
    const limit = Math.max(0, Math.floor(query.limit));
    const position = { offset: stream.last, epoch: stream.epoch };
    const after = query.since;
    const { reader } = query;
    if (after === undefined) {
      const from = Math.max(0, kept(stream) - limit);
      const { messages, hidden } = slice(stream, from, reader);
      // Older messages kept (more than `limit`): incomplete without a reason. A message hidden
      // from every reader (its exclusion too long to keep) is missed: too_far_behind.
      if (hidden) return { position, messages, complete: false, reason: 'too_far_behind' };
      return { position, messages, complete: from === 0 };
    }
    if (after.epoch !== stream.epoch) return this.#answer(stream, 'epoch_changed');
    if (after.offset > stream.last) return this.#answer(stream, 'invalid_position');
    const count = kept(stream);
    const oldest = stream.last - count + 1;
    // The kept offsets are consecutive: the first after `after` is at this index.
    const first = Math.max(0, after.offset + 1 - oldest);
    const missing = after.offset + 1 < oldest;
    const wanted = count - first;
    const from = wanted > limit ? count - limit : first;
    const { messages, hidden } = slice(stream, from, reader);
    const complete = !missing && wanted <= limit && !hidden;
    return {
      position,
      messages,
      complete,
      ...(complete ? {} : { reason: 'too_far_behind' as const }),
    };
  }

  /**
   * A read of a room that keeps nothing: a quiet position (offset 0, {@link quietEpoch}),
   * nothing stored. From a quiet position read at `quiet`, nothing was missed when the room
   * would still be kept had a message come since (within its ttl, and since this store started).
   */
  #readQuiet(now: number, query: HistoryQuery, quiet: number | undefined): HistoryRead {
    const position = { offset: 0, epoch: quietEpoch(now) };
    const { since } = query;
    if (since === undefined) return { position, messages: [], complete: true };
    if (quiet === undefined)
      return { position, messages: [], complete: false, reason: 'epoch_changed' };
    if (since.offset !== 0) {
      return { position, messages: [], complete: false, reason: 'invalid_position' };
    }
    if (quiet < this.#born) {
      return { position, messages: [], complete: false, reason: 'epoch_changed' };
    }
    if (now - quiet >= query.policy.ttl) {
      return { position, messages: [], complete: false, reason: 'too_far_behind' };
    }
    return { position, messages: [], complete: true };
  }

  #answer(stream: RoomStream, reason: RecoveryFailureReason): HistoryRead {
    return {
      position: { offset: stream.last, epoch: stream.epoch },
      messages: [],
      complete: false,
      reason,
    };
  }

  /** Forgets every room whose ttl passed; returns how many. */
  sweep(): number {
    const now = this.#now();
    let n = 0;
    for (const [key, stream] of this.#rooms) {
      if (stream.expires <= now) {
        this.#rooms.delete(key);
        n += 1;
      }
    }
    if (this.#rooms.size === 0) this.#disarm();
    return n;
  }

  /** Forgets everything and stops the sweep timer. */
  close(): void {
    this.#rooms.clear();
    this.#disarm();
  }

  /** Forgets expired rooms at the front (least recently published); stops at a live one. */
  #sweepFront(now: number): void {
    for (const [key, stream] of this.#rooms) {
      if (stream.expires > now) return;
      this.#rooms.delete(key);
    }
  }

  #arm(): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => this.sweep(), this.#sweepInterval);
    this.#timer.unref?.();
  }

  #disarm(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/** Drops texts beyond `size` and older than `ttl`. */
function trim(stream: RoomStream, policy: HistoryPolicy, now: number): void {
  const { texts, times } = stream;
  let start = Math.max(stream.start, texts.length - policy.size);
  const oldestKept = now - policy.ttl;
  while (start < times.length && times[start]! <= oldestKept) start += 1;
  if (start === stream.start) return;
  // Released for the garbage collector at once; the slots are cut off in one go later.
  for (let i = stream.start; i < start; i += 1) {
    texts[i] = '';
    stream.excepts[i] = undefined;
  }
  stream.start = start;
  if (start >= 32 && start * 2 >= texts.length) {
    texts.splice(0, start);
    times.splice(0, start);
    stream.excepts.splice(0, start);
    stream.start = 0;
  }
}

/** How many texts the stream keeps now. */
function kept(stream: RoomStream): number {
  return stream.texts.length - stream.start;
}

/**
 * The kept messages from the `from`-th kept one on, without those left out for `reader`;
 * `hidden` when one was left out because its exclusion was too long to keep.
 */
function slice(
  stream: RoomStream,
  from: number,
  reader: string | undefined,
): { messages: KeptMessage[]; hidden: boolean } {
  const messages: KeptMessage[] = [];
  let hidden = false;
  const { texts, excepts, start, last } = stream;
  for (let i = start + from; i < texts.length; i += 1) {
    const except = excepts[i];
    if (reader !== undefined && except !== undefined) {
      if (except === true) {
        hidden = true;
        continue;
      }
      if (except.includes(reader)) continue;
    }
    messages.push({ offset: last - (texts.length - 1 - i), text: texts[i]! });
  }
  return { messages, hidden };
}
