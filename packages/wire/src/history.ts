/**
 * Room history and recovery (protocol version 1): a room whose server keeps history numbers
 * every broadcast to it with a position `{offset, epoch}` in the room's stream. The envelope
 * of such a message carries `pos`; a client that comes back sends the last position it saw
 * (in `join_room.since`, or in `$hello.positions` for rooms the server joins it to) and gets
 * the messages it missed, in order, then one `$recovered` for the room.
 */

/**
 * A position in one room's stream. `offset` counts publications from 1 within an `epoch`;
 * the `epoch` is an opaque id that changes when the stream is lost (a restart of the only
 * instance, a Redis stream that was deleted or expired), so offsets of two epochs are never
 * compared.
 */
export interface StreamPosition {
  offset: number;
  epoch: string;
}

/** A position together with the room it belongs to. */
export interface RoomPosition extends StreamPosition {
  room: string;
  namespace: string;
}

/**
 * The envelope member `pos` of a message delivered from a room that keeps history (server to
 * client only). A broadcast to such a room is serialised once with it, for every receiver.
 */
export type EnvelopePosition = RoomPosition;

/**
 * Why a recovery did not return everything since the position: the stream was lost or
 * replaced (`epoch_changed`); more than the kept `size` or the replay bound was missed, or the
 * position is older than the kept `ttl` (`too_far_behind`); the room keeps no history
 * (`not_kept`); the position is not one the stream ever had, such as an offset past its
 * end (`invalid_position`); the client was in the room already, so its position was not
 * used and nothing was replayed (`already_joined`, only in `$recovered`); some of the
 * messages after the position were delivered but are kept nowhere any more (a Redis failover
 * lost the last writes of a master): every other message was replayed, and `lost` names the
 * offsets that were not (`messages_lost`).
 */
export type RecoveryFailureReason =
  | 'epoch_changed'
  | 'too_far_behind'
  | 'not_kept'
  | 'invalid_position'
  | 'already_joined'
  | 'messages_lost';

/**
 * Offsets `from` to `to` (both included) of one epoch that were handed out and delivered but
 * are kept nowhere (`messages_lost`): a replay skips them, and the messages on either side
 * are in it.
 */
export interface LostRange {
  from: number;
  to: number;
}

/**
 * Why a `$history` answer is not complete: a reason of a recovery (`since` could not be
 * served), or `truncated`: the answer stops at the request's `limit` or the server's replay
 * bounds, and more kept messages exist (nothing is lost; ask again to page).
 */
export type HistoryIncompleteReason =
  Exclude<RecoveryFailureReason, 'already_joined'> | 'truncated';

/**
 * `$recovered.data` (server to client), sent once per room a client asked to recover, after
 * the replayed messages and before live traffic of that room: `recovered` true when every
 * message after the client's position was replayed, false with a `reason` otherwise (the
 * application should reload that room's state, for example with `$history`). `position` is
 * the room's current position (where the client now stands), absent when the room keeps no
 * history.
 */
export interface RecoveredData {
  room: string;
  namespace: string;
  recovered: boolean;
  reason?: RecoveryFailureReason;
  /** How many messages were replayed before this `$recovered`. */
  replayed: number;
  position?: StreamPosition;
  /** With `reason: "messages_lost"`: the offsets after the client's position that the replay skipped, oldest first. */
  lost?: LostRange[];
}

/**
 * `$history` (client request, with an `id`): the last messages of a room the client is a
 * member of. `limit` defaults to, and is capped by, the server's replay bound; `since` asks
 * for the messages after a position instead of the last ones.
 */
export interface HistoryRequestData {
  room: string;
  namespace?: string;
  limit?: number;
  since?: StreamPosition;
}

/** One kept message as `$history` returns it: the envelope as it was delivered. */
export interface HistoryMessage {
  event: string;
  data: unknown;
  pos: EnvelopePosition;
}

/**
 * The answer to `$history`: the messages, oldest first, and the room's current position
 * (offset 0 of a new epoch for a room that kept nothing yet; absent when the store could not
 * be read). `complete` is false when the answer is not everything asked for, and `reason`
 * says why: `truncated` when it stopped at `limit` or the replay bounds (without `since` the
 * newest messages are returned, with `since` the oldest after it, so the next request can
 * start from the last message's `pos`); otherwise `since` could not be served.
 */
export interface HistoryAnswerData {
  messages: HistoryMessage[];
  position?: StreamPosition;
  complete: boolean;
  reason?: HistoryIncompleteReason;
  /** With `reason: "messages_lost"`: the offsets within the answer's span that are kept nowhere, oldest first. */
  lost?: LostRange[];
}

/** Bounds both ends know: a client never sends more positions than this in `$hello`. */
export const HISTORY_LIMITS = {
  /** Most entries in `$hello.positions`. */
  maxHelloPositions: 128,
  /** Longest epoch, in characters. */
  maxEpochLength: 64,
} as const;
