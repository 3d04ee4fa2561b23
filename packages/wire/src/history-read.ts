/**
 * Lenient readers of the history messages a client receives (see history.ts): the envelope
 * member `pos`, `$recovered.data` and the answer to `$history`. As with `readWelcome`,
 * members they do not know are ignored; a malformed value reads as undefined (a message
 * without a usable position is delivered as any other), never as an exception.
 */
import {
  HISTORY_LIMITS,
  type HistoryAnswerData,
  type HistoryIncompleteReason,
  type HistoryMessage,
  type LostRange,
  type RecoveredData,
  type RecoveryFailureReason,
  type RoomPosition,
  type StreamPosition,
} from './history';

const REASONS: ReadonlySet<string> = new Set<RecoveryFailureReason>([
  'epoch_changed',
  'too_far_behind',
  'not_kept',
  'invalid_position',
  'already_joined',
  'messages_lost',
]);

const ANSWER_REASONS: ReadonlySet<string> = new Set<HistoryIncompleteReason>([
  'epoch_changed',
  'too_far_behind',
  'not_kept',
  'invalid_position',
  'truncated',
  'messages_lost',
]);

/** Most ranges `readLost` keeps: a server records a few per failover, never this many. */
const MAX_LOST_RANGES = 1024;

/**
 * Reads `lost`: the ranges that are whole numbers from 1 with `from <= to`, oldest first and
 * not overlapping; a range out of order or malformed is left out, and at most 1,024 are read.
 */
function readLost(value: unknown): LostRange[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const ranges: LostRange[] = [];
  let after = 0;
  for (const entry of value as unknown[]) {
    if (ranges.length === MAX_LOST_RANGES) break;
    if (!isRecord(entry)) continue;
    const { from, to } = entry;
    if (typeof from !== 'number' || typeof to !== 'number') continue;
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to)) continue;
    if (from <= after || to < from) continue;
    ranges.push({ from, to });
    after = to;
  }
  return ranges.length > 0 ? ranges : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads a received `{offset, epoch}`: an offset from `min` to 2^53-1 (messages are numbered
 * from 1; a room's current position is 0 while it has kept nothing) and an epoch of 1 to
 * `HISTORY_LIMITS.maxEpochLength` characters; undefined otherwise. (`readStreamPosition` of
 * control.ts is the strict reader of a position a client sends.)
 */
function readReceivedPosition(value: unknown, min = 1): StreamPosition | undefined {
  if (!isRecord(value)) return undefined;
  const { offset, epoch } = value;
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < min) {
    return undefined;
  }
  if (typeof epoch !== 'string' || epoch.length === 0) return undefined;
  if (epoch.length > HISTORY_LIMITS.maxEpochLength) return undefined;
  return { offset, epoch };
}

/** Reads a position with its room: `pos` of an envelope, an entry of `$hello.positions`. */
export function readRoomPosition(value: unknown): RoomPosition | undefined {
  const position = readReceivedPosition(value);
  if (!position || !isRecord(value)) return undefined;
  const { room, namespace } = value;
  if (typeof room !== 'string' || room.length === 0) return undefined;
  if (typeof namespace !== 'string' || !namespace.startsWith('/')) return undefined;
  return { room, namespace, offset: position.offset, epoch: position.epoch };
}

/**
 * Reads `$recovered.data`: undefined without a room, a namespace and a boolean `recovered`.
 * A reason this version does not know (from a newer server) is left out: `recovered: false`
 * alone already says that the room's state must be reloaded.
 */
export function readRecovered(data: unknown): RecoveredData | undefined {
  if (!isRecord(data)) return undefined;
  const { room, namespace, recovered, reason, replayed } = data;
  if (typeof room !== 'string' || room.length === 0) return undefined;
  if (typeof namespace !== 'string' || !namespace.startsWith('/')) return undefined;
  if (typeof recovered !== 'boolean') return undefined;
  const read: RecoveredData = {
    room,
    namespace,
    recovered,
    replayed:
      typeof replayed === 'number' && Number.isSafeInteger(replayed) && replayed > 0 ? replayed : 0,
  };
  if (typeof reason === 'string' && REASONS.has(reason)) {
    read.reason = reason as RecoveryFailureReason;
  }
  const position = readReceivedPosition(data['position'], 0);
  if (position) read.position = position;
  const lost = reason === 'messages_lost' ? readLost(data['lost']) : undefined;
  if (lost) read.lost = lost;
  return read;
}

/** One message of a `$history` answer: an envelope object, or its text. */
function readHistoryMessage(value: unknown): HistoryMessage | undefined {
  let envelope = value;
  if (typeof value === 'string') {
    try {
      envelope = JSON.parse(value) as unknown;
    } catch {
      return undefined;
    }
  }
  if (!isRecord(envelope)) return undefined;
  const { event, data } = envelope;
  const pos = readRoomPosition(envelope['pos']);
  if (typeof event !== 'string' || event.length === 0 || !pos) return undefined;
  return { event, data: data ?? null, pos };
}

/**
 * Reads the answer to `$history`: undefined unless it has a `messages` array. Messages
 * without an event or a valid `pos` are left out; `complete` is false unless the server said
 * true.
 */
export function readHistoryAnswer(data: unknown): HistoryAnswerData | undefined {
  if (!isRecord(data) || !Array.isArray(data['messages'])) return undefined;
  const messages: HistoryMessage[] = [];
  for (const entry of data['messages'] as unknown[]) {
    const message = readHistoryMessage(entry);
    if (message) messages.push(message);
  }
  const answer: HistoryAnswerData = { messages, complete: data['complete'] === true };
  const position = readReceivedPosition(data['position'], 0);
  if (position) answer.position = position;
  const reason = data['reason'];
  if (typeof reason === 'string' && ANSWER_REASONS.has(reason)) {
    answer.reason = reason as HistoryIncompleteReason;
  }
  const lost = reason === 'messages_lost' ? readLost(data['lost']) : undefined;
  if (lost) answer.lost = lost;
  return answer;
}
