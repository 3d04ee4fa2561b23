/**
 * `$history` (client request, protocol version 1): `{room, namespace?, limit?, since?}` with
 * an `id`, answered `{event: "$history", id, data: HistoryAnswerData}`. Only for a room the
 * client is a member of (else `forbidden`); a malformed request, or one without `id`, is
 * `invalid_payload`. It is a request like any other: `max_pending_requests` bounds it.
 */
import {
  ControlEvent,
  WireErrorCode,
  isWellFormedName,
  readStreamPosition,
  type HistoryRequestData,
  type StreamPosition,
} from '@pkg/wire';
import type { Envelope } from '@pkg/ws-protocol';
import type { RoomHistory } from '../cluster/room-history';
import type { Outbound } from './outbound';

export interface HistoryRequestHost {
  readonly history: RoomHistory;
  readonly outbound: Outbound;
  readonly maxNameLength: number;
  /** Whether the client is a member of the room now. */
  readonly isMember: (clientId: string, room: string, namespace: string) => boolean;
  readonly logger: { exception(err: unknown, context?: Record<string, unknown>): void };
}

const SHAPE = '{"room": "lobby", "namespace"?: "/", "limit"?: n, "since"?: {"offset", "epoch"}}';

/** The request's fields, or what is wrong with them. */
export function readHistoryRequest(
  data: unknown,
  maxNameLength: number,
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
      return '"limit" must be a positive whole number of messages';
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

/** Answers one `$history` (the caller admitted it when it has an `id`). */
export function answerHistory(
  host: HistoryRequestHost,
  clientId: string,
  envelope: Envelope,
): void {
  const { outbound } = host;
  const { id } = envelope;
  if (id === undefined) {
    outbound.refuse(
      clientId,
      WireErrorCode.INVALID_PAYLOAD,
      '$history is a request: send it with an "id" to get the answer.',
      { event: ControlEvent.HISTORY },
      true,
    );
    return;
  }
  const request = readHistoryRequest(envelope.data, host.maxNameLength);
  if (typeof request === 'string') {
    outbound.sendErrorAnswer(clientId, id, WireErrorCode.INVALID_PAYLOAD, `$history: ${request}.`, {
      event: ControlEvent.HISTORY,
    });
    return;
  }
  const { room, namespace, since, limit } = request;
  if (!host.isMember(clientId, room, namespace)) {
    outbound.sendErrorAnswer(
      clientId,
      id,
      WireErrorCode.FORBIDDEN,
      `$history: you are not a member of room ${JSON.stringify(room)} in namespace ${JSON.stringify(namespace)}; join it first.`,
      { event: ControlEvent.HISTORY, room, namespace },
    );
    return;
  }
  host.history.answer(namespace, room, since, limit, clientId).then(
    (answer) => outbound.answer(clientId, ControlEvent.HISTORY, id, answer),
    (err: unknown) => {
      host.logger.exception(err, { phase: '$history', clientId, room });
      outbound.sendErrorAnswer(
        clientId,
        id,
        WireErrorCode.INTERNAL_ERROR,
        '$history: the history could not be read; try again later.',
        { event: ControlEvent.HISTORY, room, namespace },
      );
    },
  );
}
