/**
 * The contract between the server and where room history is kept: in this process (the
 * default) or in a shared store such as Redis Streams (a cluster adapter's `history`).
 *
 * A broadcast to a room that keeps history is serialised once, around a hole for its
 * position: the text delivered and kept is
 * `head + JSON.stringify(epoch) + ',"offset":' + offset + tail`, so a store that assigns the
 * position elsewhere (a Redis script) can build the text without running JavaScript.
 */
import { encodeBinaryFrame, fillPosition } from '@pkg/wire';
import type { LostRange, RecoveryFailureReason, StreamPosition } from '@pkg/wire';
import type { SerializedMessage } from '../ws/serialized-message';

type MaybePromise<T> = T | Promise<T>;

/** How much of a room is kept: the last `size` messages, each for `ttl` ms. */
export interface HistoryPolicy {
  readonly size: number;
  readonly ttl: number;
}

/** A serialised envelope with the hole for its position (see the file's comment). */
export interface PositionTemplate {
  readonly head: string;
  readonly tail: string;
}

/**
 * A binary message to keep (protocol version 1): its event and its bytes. The store makes
 * the binary frame with the position in its header (`{event, pos, data}`, see
 * {@link fillTemplate}); the bytes are kept as bytes, never as a text.
 */
export interface BinaryTemplate {
  readonly event: string;
  readonly data: Uint8Array;
}

/** What a store keeps: a text with the hole for its position, or a binary message. */
export type MessageTemplate = PositionTemplate | BinaryTemplate;

/** True for the template of a binary message. */
export function isBinaryTemplate(template: MessageTemplate): template is BinaryTemplate {
  return (template as Partial<BinaryTemplate>).data instanceof Uint8Array;
}

/**
 * The message a template becomes at a position of its room: the text with `pos` filled in,
 * or the binary frame `{event, pos, data}`.
 */
export function fillTemplate(
  template: MessageTemplate,
  target: KeptTarget,
  epoch: string,
  offset: number,
): SerializedMessage {
  if (!isBinaryTemplate(template)) return fillPosition(template, epoch, offset);
  const { room, namespace } = target;
  return encodeBinaryFrame({
    event: template.event,
    pos: { room, namespace, epoch, offset },
    data: template.data,
  });
}

/**
 * Where a kept broadcast goes: one room of one namespace, minus `except`. The store keeps
 * `except` with the message, so a read for a client it left out leaves it out too.
 */
export interface KeptTarget {
  readonly namespace: string;
  readonly room: string;
  readonly except?: string | readonly string[];
}

/** What a kept broadcast became. */
export interface PublishedMessage {
  readonly position: StreamPosition;
  /** The message as delivered: a text, or a binary frame's bytes. */
  readonly text: SerializedMessage;
  /** Clients of this process it was written to (as `Adapter.broadcast` counts). */
  readonly delivered: number;
}

/**
 * One kept message: its offset in the current epoch and the message as delivered (a text,
 * or the bytes of a binary frame, which a store keeps as bytes).
 */
export interface KeptMessage {
  readonly offset: number;
  readonly text: SerializedMessage;
}

/** A read of a room's history. */
export interface HistoryQuery {
  /** Messages after this position; without it, the last `limit`. */
  readonly since?: StreamPosition;
  /** At most this many messages (the server passes its replay bound). */
  readonly limit: number;
  readonly policy: HistoryPolicy;
  /**
   * The client the read is for (recovery, `$history`): messages whose broadcast left it out
   * (`except`) are left out of the read too. Without it (`server.history`), every message.
   */
  readonly reader?: string;
}

/**
 * Most client ids kept with one message for its broadcast's `except`. A message whose
 * `except` is longer is kept for no client's read: a read for a client that would reach
 * it leaves it out and answers `complete: false` (`too_far_behind`).
 */
export const MAX_KEPT_EXCEPT = 256;

/**
 * The exclusion kept with a message: undefined (nobody), the ids left out, or `true` when
 * they were more than {@link MAX_KEPT_EXCEPT}.
 */
export type KeptExcept = readonly string[] | true | undefined;

/** The exclusion to keep for a broadcast's `except`. */
export function keptExcept(except: KeptTarget['except']): KeptExcept {
  if (except === undefined) return undefined;
  if (typeof except === 'string') return [except];
  if (except.length === 0) return undefined;
  return except.length > MAX_KEPT_EXCEPT ? true : [...except];
}

/**
 * The answer to a read: the room's current position (null only when the store could not be
 * read; a room that keeps nothing answers offset 0 of a quiet epoch, `~<time of the read>`,
 * and stores nothing: reading never makes a room, and a later read from that position
 * tells whether a message can have come since),
 * the messages oldest first, and whether they are everything asked for; when not, `reason`.
 * With `messages_lost` the messages are every kept one asked for, and `lost` names the
 * offsets among them that were handed out but are kept nowhere (a store that can lose its
 * last writes in a failover), oldest first.
 */
export interface HistoryRead {
  readonly position: StreamPosition | null;
  readonly messages: readonly KeptMessage[];
  readonly complete: boolean;
  readonly reason?: RecoveryFailureReason;
  readonly lost?: readonly LostRange[];
}

/**
 * Keeps and replays room history. `publish` assigns the next position of the room, builds
 * the text from the template, keeps it under the policy, and delivers it to the target's
 * clients on every instance (as `Adapter.broadcast` would), in one step so that positions
 * follow delivery order. `read` never throws for a position that does not exist: it answers
 * `complete: false` with a reason.
 */
export interface HistoryStore {
  publish(
    target: KeptTarget,
    template: MessageTemplate,
    policy: HistoryPolicy,
  ): MaybePromise<PublishedMessage>;
  read(namespace: string, room: string, query: HistoryQuery): MaybePromise<HistoryRead>;
}
