/**
 * `RedisHistoryStore`: room history in Redis Streams, shared by every instance, so a client
 * can recover a room on any instance (the adapter's `history`). See history-scripts.ts for
 * the keys and the scripts.
 *
 * Publishing is one EVALSHA that assigns the position, keeps the text and publishes it on
 * the room's channel. The instance's own clients get it when Redis hands it back on that
 * channel (in stream order, like every other instance), or, when the channel is not
 * subscribed yet, from the reply. While Redis cannot be reached, broadcasts still reach
 * this instance's clients, numbered in a local epoch of their own; the failed writes are
 * counted and logged once per outage, and the room's next kept message starts a new epoch,
 * so clients holding positions from before are told `epoch_changed`.
 */
import { randomBytes } from 'node:crypto';
import { Buffer } from 'node:buffer';
import { MAX_KEPT_EXCEPT, fillTemplate, isBinaryTemplate, type LoggerInterface } from '@pkg/core';
import { encodeBinaryHeader, type RecoveryFailureReason, type StreamPosition } from '@pkg/wire';
import { RESP_TYPES } from 'redis';
import type { RedisClient } from './connection';
import {
  PUBLISH_SCRIPT,
  PUBLISH_SHA,
  READ_SCRIPT,
  READ_SHA,
  parsePublishReply,
  parseReadReply,
} from './history-scripts';
import type {
  HistoryPolicy,
  HistoryQuery,
  HistoryRead,
  HistoryStore,
  KeptMessage,
  KeptTarget,
  MessageTemplate,
  PublishedMessage,
  SerializedMessage,
} from '@pkg/core';
import { encodeBroadcast, type Channels } from './wire';

/** How long a room's epoch and last offset outlive its last message, ms (1 day). */
export const HISTORY_META_GRACE = 86_400_000;
/** Rooms whose broadcasts went out locally during one outage that are remembered (oldest forgotten first). */
export const HISTORY_OUTAGE_ROOMS = 10_000;

/** What the store needs from the adapter. */
export interface HistoryLink {
  readonly nodeId: string;
  readonly channels: Channels;
  /** How long a read waits for Redis, ms. */
  readonly readTimeout: number;
  /** The publishing connection, or null before attach / after close. */
  client(): RedisClient | null;
  /**
   * Whether a script may be sent now (absent: when the connection is ready). On a Redis
   * Cluster it is also while one master fails over and the others answer: the script then
   * waits for the slot's new master, within the command timeout.
   */
  writable?(): boolean;
  /** Whether a message published on that channel now will come back to this instance. */
  echoes(channel: string): boolean;
  /** Writes to this instance's clients of the target; how many. */
  deliverLocal(text: SerializedMessage, target: KeptTarget): number;
  /**
   * Whether binary messages are kept in Redis (single Redis). False on a Redis Cluster:
   * a binary broadcast to a room that keeps history reaches this instance's clients only.
   */
  readonly binary?: boolean;
  log(): LoggerInterface;
}

/** Counters of the history store, part of the adapter's `stats()`. */
export interface RedisHistoryStats {
  /** Broadcasts kept in Redis. */
  readonly historyWrites: number;
  /** Broadcasts that could not be kept because Redis failed (delivered locally all the same). */
  readonly historyWriteFailures: number;
  /** Reads that could not be served because Redis failed (answered `complete: false`). */
  readonly historyReadFailures: number;
}

interface OutageRoom {
  readonly epoch: string;
  offset: number;
}

function newEpoch(): string {
  return randomBytes(8).toString('hex');
}

function buildText(
  template: MessageTemplate,
  target: KeptTarget,
  position: StreamPosition,
): SerializedMessage {
  return fillTemplate(template, target, position.epoch, position.offset);
}

/** Bytes of a binary frame's `pos` after its epoch: the epoch's u8 length, one byte, the u64 offset. */
const POS_TAIL = 1 + 1 + 8;

/**
 * The head and tail the publish script puts a position between: for a text, the template's;
 * for a binary message, its frame up to the epoch of `pos` (built with a one-byte epoch,
 * cut before its length byte) and its payload.
 */
function scriptParts(
  template: MessageTemplate,
  target: KeptTarget,
): [string | Buffer, string | Buffer] {
  if (!isBinaryTemplate(template)) return [template.head, template.tail];
  const { room, namespace } = target;
  const pos = { room, namespace, epoch: 'e', offset: 1 };
  const header = encodeBinaryHeader({ event: template.event, pos }, template.data.length);
  const head = Buffer.from(header.buffer, header.byteOffset, header.length - POS_TAIL);
  const { data } = template;
  return [head, Buffer.from(data.buffer, data.byteOffset, data.length)];
}

function exceptList(except: KeptTarget['except']): string[] {
  if (except === undefined) return [];
  return typeof except === 'string' ? [except] : [...except];
}

/**
 * The exclusion an entry keeps (`x`): '' for nobody, a JSON array of client ids, or `*` when
 * they are more than MAX_KEPT_EXCEPT (then no client's read gets the message).
 */
function keptExcept(except: KeptTarget['except']): string {
  const ids = exceptList(except);
  if (ids.length === 0) return '';
  return ids.length > MAX_KEPT_EXCEPT ? '*' : JSON.stringify(ids);
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}

const REASONS = new Set<string>([
  'epoch_changed',
  'too_far_behind',
  'not_kept',
  'invalid_position',
  'messages_lost',
]);

export class RedisHistoryStore implements HistoryStore {
  readonly #link: HistoryLink;
  /** The epoch the next new stream gets; replaced once used. */
  #candidate = newEpoch();
  /** Rooms that delivered locally while Redis failed: their local numbering, and a new epoch is due. */
  readonly #outage = new Map<string, OutageRoom>();
  #failing = false;
  #stats = { historyWrites: 0, historyWriteFailures: 0, historyReadFailures: 0 };

  constructor(link: HistoryLink) {
    this.#link = link;
  }

  stats(): RedisHistoryStats {
    return { ...this.#stats };
  }

  async publish(
    target: KeptTarget,
    template: MessageTemplate,
    policy: HistoryPolicy,
  ): Promise<PublishedMessage> {
    const { namespace, room } = target;
    const channel = this.#link.channels.room(namespace, room);
    const keys = this.#link.channels.history(namespace, room);
    const client = this.#link.client();
    const binary = isBinaryTemplate(template);
    if (binary && this.#link.binary === false) {
      const why = new Error('binary messages are not kept on a Redis Cluster');
      return this.#publishLocally(keys.meta, target, template, why);
    }
    if (!this.#writable(client)) return this.#publishLocally(keys.meta, target, template, null);
    const echoes = this.#link.echoes(channel);
    const header = encodeBroadcast(this.#link.nodeId, exceptList(target.except), '', {
      self: echoes,
      sentAt: Date.now(),
      binary,
    });
    const candidate = this.#candidate;
    const [head, tail] = scriptParts(template, target);
    const args: Array<string | Buffer> = [
      String(policy.size),
      String(Math.max(1, Math.round(policy.ttl))),
      candidate,
      this.#outage.has(keys.meta) ? '1' : '0',
      channel,
      header,
      head,
      tail,
      String(Math.max(1, Math.round(policy.ttl)) + HISTORY_META_GRACE),
      keptExcept(target.except),
      binary ? 'b' : '',
    ];
    let reply;
    try {
      reply = parsePublishReply(await this.#eval(client, PUBLISH_SHA, PUBLISH_SCRIPT, keys, args));
    } catch (err) {
      return this.#publishLocally(keys.meta, target, template, err);
    }
    if (reply.fresh && candidate === this.#candidate) this.#candidate = newEpoch();
    this.#outage.delete(keys.meta);
    this.#recovered();
    this.#stats.historyWrites += 1;
    const position = { offset: reply.offset, epoch: reply.epoch };
    const text = buildText(template, target, position);
    // With an echo, this instance delivers when Redis hands the message back, in stream
    // order with the other instances' messages (see the adapter's receiving side).
    const delivered = echoes ? 0 : this.#link.deliverLocal(text, target);
    return { position, text, delivered };
  }

  async read(namespace: string, room: string, query: HistoryQuery): Promise<HistoryRead> {
    const keys = this.#link.channels.history(namespace, room);
    const since = query.since;
    if (since !== undefined && !this.#validSince(since)) {
      return { position: null, messages: [], complete: false, reason: 'invalid_position' };
    }
    if (since !== undefined && this.#outage.has(keys.meta)) {
      // Messages went out here without being kept: whatever Redis has misses them.
      return this.#failedRead('epoch_changed');
    }
    const client = this.#link.client();
    if (!this.#writable(client)) return this.#failedRead('epoch_changed', 'Redis is unreachable');
    const limit = Math.max(0, Math.floor(query.limit));
    if (limit === 0 && since === undefined) {
      return { position: null, messages: [], complete: false };
    }
    const args = [
      since === undefined ? '' : String(since.offset),
      since === undefined ? '' : since.epoch,
      String(Math.max(1, limit)),
      String(query.policy.size),
      String(Math.max(1, Math.round(query.policy.ttl))),
      String(Math.max(1, Math.round(query.policy.ttl)) + HISTORY_META_GRACE),
      query.reader ?? '',
    ];
    let timer: NodeJS.Timeout | undefined;
    try {
      const raw = await Promise.race([
        this.#eval(this.#bytes(client), READ_SHA, READ_SCRIPT, keys, args),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no answer within ${this.#link.readTimeout} ms`)),
            this.#link.readTimeout,
          );
        }),
      ]);
      const reply = parseReadReply(raw);
      const position = { offset: reply.offset, epoch: reply.epoch };
      const messages: KeptMessage[] = reply.messages;
      if (reply.reason === '') return { position, messages, complete: true };
      if (reply.reason === 'incomplete') return { position, messages, complete: false };
      const reason = REASONS.has(reply.reason)
        ? (reply.reason as RecoveryFailureReason)
        : 'too_far_behind';
      if (reason === 'messages_lost') {
        return { position, messages, complete: false, reason, lost: reply.lost };
      }
      return { position, messages, complete: false, reason };
    } catch (err) {
      return this.#failedRead('epoch_changed', errorText(err));
    } finally {
      clearTimeout(timer);
    }
  }

  #writable(client: RedisClient | null): client is RedisClient {
    if (client === null) return false;
    return this.#link.writable?.() ?? client.isReady;
  }

  #validSince(since: StreamPosition): boolean {
    return (
      Number.isSafeInteger(since.offset) &&
      since.offset >= 0 &&
      typeof since.epoch === 'string' &&
      since.epoch.length > 0 &&
      since.epoch.length <= 64
    );
  }

  /** A read that cannot be served; one that failed answers `epoch_changed`, as docs/protocol.md says. */
  #failedRead(reason: RecoveryFailureReason, error?: string): HistoryRead {
    if (error !== undefined) {
      this.#stats.historyReadFailures += 1;
      this.#failed('a history read failed', error);
    }
    return { position: null, messages: [], complete: false, reason };
  }

  /** Redis failed: deliver here with a local epoch for the room; a new epoch is due in Redis. */
  #publishLocally(
    key: string,
    target: KeptTarget,
    template: MessageTemplate,
    err: unknown,
  ): PublishedMessage {
    this.#stats.historyWriteFailures += 1;
    this.#failed(
      'history writes are failing',
      err === null ? 'Redis is unreachable' : errorText(err),
    );
    let state = this.#outage.get(key);
    if (state === undefined) {
      if (this.#outage.size >= HISTORY_OUTAGE_ROOMS) {
        const oldest = this.#outage.keys().next().value;
        if (oldest !== undefined) this.#outage.delete(oldest);
      }
      state = { epoch: newEpoch(), offset: 0 };
      this.#outage.set(key, state);
    }
    state.offset += 1;
    const position = { offset: state.offset, epoch: state.epoch };
    const text = buildText(template, target, position);
    return { position, text, delivered: this.#link.deliverLocal(text, target) };
  }

  #failed(what: string, error: string): void {
    if (this.#failing) return;
    this.#failing = true;
    this.#link
      .log()
      .warning(
        `RedisAdapter: ${what}; broadcasts still reach this instance's clients, and rooms that miss messages start a new epoch when Redis answers again`,
        { error, ...this.#stats },
      );
  }

  #recovered(): void {
    if (!this.#failing) return;
    this.#failing = false;
    this.#link.log().info('RedisAdapter: history writes work again', { ...this.#stats });
  }

  /**
   * The client that reads replies as bytes (single Redis), so that a kept binary frame comes
   * back byte for byte; a Redis Cluster link reads strings (it keeps no binary message).
   */
  #bytes(client: RedisClient): RedisClient {
    if (this.#link.binary === false || typeof client.withTypeMapping !== 'function') return client;
    return client.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer }) as unknown as RedisClient;
  }

  async #eval(
    client: RedisClient,
    sha: string,
    script: string,
    keys: { meta: string; stream: string },
    args: Array<string | Buffer>,
  ): Promise<unknown> {
    const options = { keys: [keys.meta, keys.stream], arguments: args };
    try {
      return await client.evalSha(sha, options);
    } catch (err) {
      if (!isNoScript(err)) throw err;
      return client.eval(script, options); // loads it for the next EVALSHA
    }
  }
}
