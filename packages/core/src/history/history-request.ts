/**
 * `$history` (client request, protocol version 1): `{room, namespace?, limit?, since?}` with
 * an `id`, answered `{event: "$history", id, data: HistoryAnswerData}`. Only for a room the
 * client is a member of (else `forbidden`); a malformed request (`limit` not a whole number
 * from 1, a bad name or `since`), or one without `id`, is `invalid_payload`. A `limit` above
 * `history_max_replay` is read as it. It is a request like any other: `max_pending_requests`
 * bounds it, and the connection's `$history` budget (history-budget.ts) bounds how many are
 * answered and how many bytes their answers take; over it, the request is answered
 * `rate_limited` with `retryAfter` (seconds).
 */
import {
  ControlEvent,
  WireErrorCode,
  isWellFormedName,
  readStreamPosition,
  type HistoryAnswerData,
  type HistoryMessage,
  type HistoryRequestData,
  type RequestId,
  type RoomPosition,
  type StreamPosition,
} from '@pkg/wire';
import type { Envelope } from '@pkg/ws-protocol';
import type { RoomHistory } from './room-history';
import { HistoryBudget, type HistoryBudgetLimits } from './history-budget';

/** What `$history` keeps on a connection (protocol/connection.ts): its budget and its queue. */
export interface HistoryClient {
  readonly id: string;
  /** Its `$history` budget, made on first use. */
  historyBudget(make: () => HistoryBudget): HistoryBudget;
  /** A request: true to answer it now, false when queued behind the running one. */
  startHistory(envelope: Envelope): boolean;
  /** The next queued request; undefined (and none running) when none waits. */
  nextHistory(): Envelope | undefined;
}

/** The connection's door (protocol/outbound.ts): answers and `error` events. */
export interface HistoryDoor {
  answerTo(conn: HistoryClient, event: string, id: RequestId, result: unknown): number;
  /**
   * A binary part of an answer: one binary frame `{event, id, pos}` and the bytes, sent
   * before the answer. Returns its length, 0 when it was not sent.
   */
  answerPart(
    conn: HistoryClient,
    event: string,
    id: RequestId,
    pos: RoomPosition,
    bytes: Uint8Array,
  ): number;
  failTo(
    conn: HistoryClient,
    code: string,
    message: string,
    extra?: Readonly<Record<string, unknown>>,
    id?: RequestId,
  ): void;
}

export interface HistoryRequestHost {
  readonly history: RoomHistory;
  readonly outbound: HistoryDoor;
  readonly maxNameLength: number;
  /** Whether the client is a member of the room now. */
  readonly isMember: (clientId: string, room: string, namespace: string) => boolean;
  readonly logger: {
    exception(err: unknown, context?: Record<string, unknown>): void;
    debug(message: string, context?: Record<string, unknown>): void;
  };
  /** Every connection's `$history` budget. */
  readonly budget: HistoryBudgetLimits;
}

const SHAPE = '{"room": "lobby", "namespace"?: "/", "limit"?: n, "since"?: {"offset", "epoch"}}';

/** The request's fields, or what is wrong with them. */
export function readHistoryRequest(
  data: unknown,
  maxNameLength: number,
  maxReplay: number,
): (HistoryRequestData & { namespace: string }) | string {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return `the data of $history must be an object ${SHAPE}`;
  }
  const { room, namespace = '/', limit, since } = data as Record<string, unknown>;
  if (!isWellFormedName(room, maxNameLength)) {
    return `"room" must be a well-formed string of 1 to ${maxNameLength} characters`;
  }
  if (!isWellFormedName(namespace, maxNameLength) || !namespace.startsWith('/')) {
    return `"namespace" must be a well-formed name starting with "/"`;
  }
  const out: HistoryRequestData & { namespace: string } = { room, namespace };
  if (limit !== undefined) {
    if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1) {
      return `"limit" must be a whole number of messages from 1 (a larger one than ${maxReplay}, history_max_replay, is read as ${maxReplay}), or left out`;
    }
    out.limit = limit;
  }
  if (since !== undefined) {
    const position = readStreamPosition(since);
    if (typeof position === 'string') return `"since": ${position}`;
    out.since = position as StreamPosition;
  }
  return out;
}

/**
 * Answers one `$history` (the caller admitted it when it has an `id`). One connection's
 * requests are answered one after another, so the budget sees the bytes of every earlier
 * answer before it admits the next; the queue is bounded by `max_pending_requests`.
 */
export function answerHistory(
  host: HistoryRequestHost,
  conn: HistoryClient,
  envelope: Envelope,
): void {
  const { outbound } = host;
  const { id } = envelope;
  if (id === undefined) {
    outbound.failTo(
      conn,
      WireErrorCode.INVALID_PAYLOAD,
      '$history is a request: send it with an "id" to get the answer.',
      { event: ControlEvent.HISTORY },
    );
    return;
  }
  if (conn.startHistory(envelope)) serve(host, conn, envelope, id);
}

/** The next queued request of the connection, or the end of its queue. */
function next(host: HistoryRequestHost, conn: HistoryClient): void {
  const envelope = conn.nextHistory();
  if (envelope !== undefined) serve(host, conn, envelope, envelope.id!);
}

function serve(
  host: HistoryRequestHost,
  conn: HistoryClient,
  envelope: Envelope,
  id: RequestId,
): void {
  const { outbound } = host;
  const clientId = conn.id;
  const budget = conn.historyBudget(() => new HistoryBudget(host.budget, Date.now()));
  const retryAfter = budget.take(Date.now());
  if (retryAfter > 0) {
    host.logger.debug("$history refused: over the connection's $history budget", {
      code: 'PKG_ERR_CORE_RATE_LIMITED',
      clientId,
    });
    const { requestsPerSecond, bytesPerSecond } = host.budget;
    outbound.failTo(
      conn,
      WireErrorCode.RATE_LIMITED,
      `Too many $history requests: at most ${requestsPerSecond} per second and ${bytesPerSecond} answer bytes per second (history_max_requests_per_second, history_max_bytes_per_second). Retry in ${retryAfter} s.`,
      { event: ControlEvent.HISTORY, retryAfter },
      id,
    );
    return next(host, conn);
  }
  const request = readHistoryRequest(envelope.data, host.maxNameLength, host.history.maxReplay);
  if (typeof request === 'string') {
    outbound.failTo(
      conn,
      WireErrorCode.INVALID_PAYLOAD,
      `$history: ${request}.`,
      {
        event: ControlEvent.HISTORY,
      },
      id,
    );
    return next(host, conn);
  }
  const { room, namespace, since, limit } = request;
  if (!host.isMember(clientId, room, namespace)) {
    outbound.failTo(
      conn,
      WireErrorCode.FORBIDDEN,
      `$history: you are not a member of room ${JSON.stringify(room)} in namespace ${JSON.stringify(namespace)}; join it first.`,
      { event: ControlEvent.HISTORY, room, namespace },
      id,
    );
    return next(host, conn);
  }
  host.history.answer(namespace, room, since, limit, clientId).then(
    (answer) => {
      const { text, partBytes } = withBinaryParts(outbound, conn, id, answer);
      const answered = outbound.answerTo(conn, ControlEvent.HISTORY, id, text);
      budget.spend(partBytes + answered, Date.now());
      next(host, conn);
    },
    (err: unknown) => {
      host.logger.exception(err, { phase: '$history', clientId, room });
      outbound.failTo(
        conn,
        WireErrorCode.INTERNAL_ERROR,
        '$history: the history could not be read; try again later.',
        { event: ControlEvent.HISTORY, room, namespace },
        id,
      );
      next(host, conn);
    },
  );
}

/**
 * Sends the bytes of the answer's binary messages as its parts (docs/protocol.md, "Binary
 * messages in requests, answers, sessions and history"): the k-th binary frame carrying
 * the request's `id` and the message's `pos`, before the answer, where that message is
 * `{event, pos, binary: k}` without `data`. A part that could not be sent (the connection
 * takes no binary frames) leaves its message out of the answer.
 */
function withBinaryParts(
  outbound: HistoryDoor,
  conn: HistoryClient,
  id: RequestId,
  answer: HistoryAnswerData,
): { text: HistoryAnswerData; partBytes: number } {
  if (!answer.messages.some((m) => m.data instanceof Uint8Array)) {
    return { text: answer, partBytes: 0 };
  }
  const messages: HistoryMessage[] = [];
  let partBytes = 0;
  let k = 0;
  for (const m of answer.messages) {
    if (!(m.data instanceof Uint8Array)) {
      messages.push(m);
      continue;
    }
    const sent = outbound.answerPart(conn, m.event, id, m.pos, m.data);
    if (sent === 0) continue;
    partBytes += sent;
    messages.push({ event: m.event, pos: m.pos, binary: k } as unknown as HistoryMessage);
    k += 1;
  }
  return { text: { ...answer, messages }, partBytes };
}
