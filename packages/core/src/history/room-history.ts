/**
 * Which rooms keep history and how their broadcasts are published: a broadcast to such a
 * room is serialised once around the hole for its position and handed to the history store
 * (the adapter's `history` when it has one, else the in-memory store of this process),
 * which numbers it, keeps it and delivers it. Reads go through the same store.
 */
import type { LoggerInterface } from '@pkg/logger';
import {
  positionTemplate,
  readPositionMember,
  roomKey,
  type HistoryAnswerData,
  type HistoryIncompleteReason,
  type HistoryMessage,
  type LostRange,
  type RoomPosition,
  type StreamPosition,
} from '@pkg/wire';
import { prepareMessage } from '@pkg/ws-protocol';
import type { BroadcastTarget } from '../ws/broadcast-target';
import {
  messageBytes,
  readFrame,
  type OutboundData,
  type SerializedMessage,
} from '../ws/serialized-message';
import type {
  HistoryPolicy,
  HistoryRead,
  HistoryStore,
  KeptTarget,
  MessageTemplate,
} from './history';
import { MemoryHistoryStore } from './memory-history';
import type { HistoryPattern } from '../config/options';
import { createCoreError } from '../errors';

type MaybePromise<T> = T | Promise<T>;

/** What `onPublished` listeners get: one broadcast to a room that keeps history. */
export interface PublishedEvent {
  readonly event: string;
  readonly room: string;
  readonly namespace: string;
  readonly position: StreamPosition;
  /** Clients of this process it was written to. */
  readonly delivered: number;
}

/** Options of `server.keepHistory(room, options)`. */
export interface KeepHistoryOptions {
  /** Default `/`. */
  readonly namespace?: string;
  readonly size: number;
  readonly ttl: number;
}

/** Options of `server.history(room, options)`. */
export interface HistoryOptions {
  /** Default `/`. */
  readonly namespace?: string;
  /** The messages after this position; without it, the last `limit`. */
  readonly since?: StreamPosition;
  /** At most this many (default and cap: `history_max_replay`). */
  readonly limit?: number;
}

interface CompiledPattern {
  readonly test: (room: string) => boolean;
  readonly namespace: string | undefined;
  readonly policy: HistoryPolicy;
}

function compile(pattern: HistoryPattern): CompiledPattern {
  const { match, namespace, size, ttl } = pattern;
  let test: (room: string) => boolean;
  if (!match.includes('*')) {
    test = (room) => room === match;
  } else {
    const source = match
      .split('*')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*');
    const re = new RegExp(`^${source}$`, 's');
    test = (room) => re.test(room);
  }
  return { test, namespace, policy: { size, ttl } };
}

export interface RoomHistoryOptions {
  readonly patterns: readonly HistoryPattern[];
  readonly maxReplay: number;
  readonly maxReplayBytes: number;
  readonly logger: LoggerInterface;
  /** The current adapter (its `history`, and its `broadcast` for the in-memory store). */
  readonly adapter: () => HistoryAdapter;
}

export class RoomHistory {
  readonly #o: RoomHistoryOptions;
  readonly #patterns: CompiledPattern[];
  readonly #rooms = new Map<string, HistoryPolicy>();
  readonly #listeners: Array<(published: PublishedEvent) => void> = [];
  readonly memory: MemoryHistoryStore;

  constructor(options: RoomHistoryOptions) {
    this.#o = options;
    this.#patterns = options.patterns.map(compile);
    this.memory = new MemoryHistoryStore({
      deliver: (text, target) => this.#broadcast(text, target),
    });
  }

  /** Whether some room keeps history (a pattern, or a `keepHistory` call). */
  get enabled(): boolean {
    return this.#patterns.length > 0 || this.#rooms.size > 0;
  }

  get maxReplay(): number {
    return this.#o.maxReplay;
  }

  get maxReplayBytes(): number {
    return this.#o.maxReplayBytes;
  }

  /** The store in use: the adapter's when it has one, else this process's memory. */
  get store(): HistoryStore {
    return this.#o.adapter().history ?? this.memory;
  }

  /** The policy of a room, or undefined when it keeps no history. */
  policyFor(namespace: string, room: string): HistoryPolicy | undefined {
    const exact = this.#rooms.get(roomKey(namespace, room));
    if (exact !== undefined) return exact;
    for (const p of this.#patterns) {
      if ((p.namespace === undefined || p.namespace === namespace) && p.test(room)) {
        return p.policy;
      }
    }
    return undefined;
  }

  /** `server.keepHistory`: one room keeps history (before and above the patterns). */
  keep(room: string, options: KeepHistoryOptions): void {
    const { namespace = '/', size, ttl } = options ?? ({} as KeepHistoryOptions);
    const bad =
      typeof room !== 'string' || room === ''
        ? 'room must be a non-empty string'
        : typeof namespace !== 'string' || !namespace.startsWith('/')
          ? 'namespace must start with "/"'
          : !Number.isSafeInteger(size) || size < 1
            ? 'size must be a positive whole number of messages'
            : !Number.isSafeInteger(ttl) || ttl < 1 || ttl > 2 ** 31 - 1
              ? 'ttl must be a number of milliseconds from 1 to 2147483647'
              : null;
    if (bad !== null) {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        `keepHistory(room, { namespace?, size, ttl }): ${bad}.`,
      );
    }
    this.#rooms.set(roomKey(namespace, room), { size, ttl });
  }

  onPublished(listener: (published: PublishedEvent) => void): void {
    if (typeof listener !== 'function') {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        'onPublished expects a function ({ event, room, namespace, position, delivered }) => void.',
      );
    }
    this.#listeners.push(listener);
  }

  /**
   * Publishes a broadcast to a room that keeps history: serialised once with the `pos`
   * hole (bytes: kept as bytes, made a binary frame with its `pos`), numbered, kept and
   * delivered by the store. Returns the local deliveries when the
   * store answers at once, else 0 (its promise is settled here; a failure is logged).
   */
  publish(
    event: string,
    data: OutboundData,
    target: KeptTarget,
    policy: HistoryPolicy,
  ): MaybePromise<{ delivered: number; position: StreamPosition }> {
    const template: MessageTemplate =
      data instanceof Uint8Array
        ? { event, data }
        : positionTemplate(prepareMessage(event, data), target.room, target.namespace);
    const published = this.store.publish(target, template, policy);
    const done = (p: { position: StreamPosition; delivered: number }) => {
      this.#announce(event, target, p.position, p.delivered);
      return { delivered: p.delivered, position: p.position };
    };
    if (isPromise(published)) return published.then(done);
    return done(published);
  }

  /**
   * Reads a room's history through the store (never throws for a bad position); for a
   * client (`reader`), without the messages whose broadcast left it out.
   */
  read(
    namespace: string,
    room: string,
    policy: HistoryPolicy,
    since: StreamPosition | undefined,
    limit: number,
    reader?: string,
  ): MaybePromise<HistoryRead> {
    return this.store.read(namespace, room, {
      ...(since === undefined ? {} : { since }),
      ...(reader === undefined ? {} : { reader }),
      limit,
      policy,
    });
  }

  /**
   * `server.history` and `$history`: decoded messages, within `limit` and the replay bounds.
   * The store is read up to the replay bound, so that an answer cut by `limit` or by the
   * byte bound (`truncated`: more is kept, nothing is lost) is told apart from one the store
   * could not serve (`too_far_behind` and the other reasons of a recovery). Without `since`
   * the newest messages are kept, with `since` the oldest after it (the next request starts
   * from the last one's `pos`).
   * For a client (`reader`, `$history`), without the messages whose broadcast left it out.
   */
  async answer(
    namespace: string,
    room: string,
    since: StreamPosition | undefined,
    limit: number | undefined,
    reader?: string,
  ): Promise<HistoryAnswerData> {
    const policy = this.policyFor(namespace, room);
    if (policy === undefined) return { messages: [], complete: false, reason: 'not_kept' };
    const { maxReplay, maxReplayBytes } = this.#o;
    const read = await this.read(namespace, room, policy, since, maxReplay, reader);
    const cap = Math.min(limit ?? maxReplay, maxReplay);
    const newest = since === undefined;
    let messages = read.messages;
    let cut = !read.complete && read.reason === undefined && newest;
    if (messages.length > cap) {
      messages = newest ? messages.slice(-cap) : messages.slice(0, cap);
      cut = true;
    }
    // Within the byte bound: the newest (or, after `since`, the oldest) messages that fit.
    let bytes = 0;
    let fit = 0;
    while (fit < messages.length) {
      const next = messages[newest ? messages.length - 1 - fit : fit]!;
      const size = messageBytes(next.text);
      if (bytes + size > maxReplayBytes) break;
      bytes += size;
      fit += 1;
    }
    const overBytes = fit < messages.length;
    if (overBytes) {
      messages = newest ? messages.slice(messages.length - fit) : messages.slice(0, fit);
      cut = true;
    }
    let reason: HistoryAnswerData['reason'];
    if (!read.complete && !(newest && read.reason === undefined)) {
      // A store reports why a read fell short; `already_joined` is never one of its reasons.
      reason = (read.reason as HistoryIncompleteReason | undefined) ?? 'too_far_behind';
    } else if (cut) {
      // One message after `since` larger than the byte bound can never be served.
      reason = !newest && fit === 0 ? 'too_far_behind' : 'truncated';
    }
    const answer: HistoryAnswerData = {
      messages: messages.map((m) => decodeKept(m.text)),
      complete: reason === undefined,
    };
    if (read.position !== null) answer.position = read.position;
    if (reason !== undefined) answer.reason = reason;
    if (reason === 'messages_lost') {
      // Only the lost offsets within the span the answer covers (it may have been cut).
      const lost = lostWithin(read.lost ?? [], since, answer.messages, newest, cut);
      if (lost.length > 0) answer.lost = lost;
      else answer.reason = cut ? 'truncated' : undefined;
      if (answer.reason === undefined) {
        delete answer.reason;
        answer.complete = true;
      }
    }
    return answer;
  }

  close(): void {
    this.memory.close();
  }

  #announce(event: string, target: KeptTarget, position: StreamPosition, delivered: number): void {
    for (const listener of this.#listeners) {
      try {
        listener({ event, room: target.room, namespace: target.namespace, position, delivered });
      } catch (err) {
        this.#o.logger.exception(err, { phase: 'onPublished', room: target.room });
      }
    }
  }

  /** The in-memory store delivers through the adapter (cluster-wide with a cluster adapter). */
  #broadcast(text: SerializedMessage, target: BroadcastTarget): number {
    const delivered = this.#o.adapter().broadcast(text, target);
    if (typeof delivered === 'number') return delivered;
    delivered.catch((err: unknown) =>
      this.#o.logger.exception(err, { phase: 'adapter.broadcast' }),
    );
    return 0;
  }
}

/** What room history needs of the server's adapter (cluster/adapter.ts). */
export interface HistoryAdapter {
  /** A shared history store (the Redis adapter's); without it, this process's memory. */
  readonly history?: HistoryStore;
  broadcast(message: SerializedMessage, target: BroadcastTarget): MaybePromise<number>;
}

/**
 * The lost ranges within what an answer covers: after `since` (or from its first message,
 * for the newest messages) up to its last message when it was cut, or to the room's end.
 */
function lostWithin(
  lost: readonly LostRange[],
  since: StreamPosition | undefined,
  messages: readonly HistoryMessage[],
  newest: boolean,
  cut: boolean,
): LostRange[] {
  const first = newest ? (messages[0]?.pos.offset ?? Infinity) : (since?.offset ?? 0) + 1;
  const last = !newest && cut ? (messages.at(-1)?.pos.offset ?? 0) : Infinity;
  const within: LostRange[] = [];
  for (const { from, to } of lost) {
    if (to < first || from > last) continue;
    within.push({ from: Math.max(from, first), to: Math.min(to, last) });
  }
  return within;
}

function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/**
 * A kept message as `server.history` returns it: `{event, data, pos}`, `data` the bytes (a
 * view of the kept frame) for a binary message.
 */
export function decodeKept(text: SerializedMessage): HistoryMessage {
  if (typeof text !== 'string') {
    const frame = readFrame(text);
    return { event: frame?.event ?? '', data: frame?.data, pos: frame?.pos as RoomPosition };
  }
  const envelope = JSON.parse(text) as HistoryMessage;
  return { event: envelope.event, data: envelope.data, pos: envelope.pos };
}

/**
 * The `pos` of a kept message: read from the end of a text (where the template puts it), or
 * from a binary frame's header.
 */
export function positionOf(text: SerializedMessage): RoomPosition | undefined {
  if (typeof text !== 'string') return readFrame(text)?.pos;
  const pos = readPositionMember(text);
  if (typeof pos !== 'object' || pos === null) return undefined;
  const { room, namespace, epoch, offset } = pos as Partial<Record<string, unknown>>;
  if (
    typeof room === 'string' &&
    typeof namespace === 'string' &&
    typeof epoch === 'string' &&
    typeof offset === 'number'
  ) {
    return { room, namespace, epoch, offset };
  }
  return undefined;
}
