/**
 * What the server sends through the protocol layer: answers to client requests (`id`,
 * exactly one each), refusals, direct sends and broadcast deliveries. Deliveries reach only
 * `open` connections (and away sessions, which keep the message for a resume); a
 * connection still handshaking, waiting for `$hello`, authenticating or closing gets none.
 */
import type { LoggerInterface } from '@pkg/logger';
import {
  WireErrorCode,
  appendBinarySeq,
  encodeBinaryHeader,
  type RequestId,
  type RoomPosition,
} from '@pkg/wire';
import { prepareAnswer, type Envelope, type WebSocketHandler } from '@pkg/ws-protocol';
import { ConnectionState, type Connection } from './connection';
import type { ConnectionTable } from './connections';
import type { SessionStore } from './session';
import { wasReplayed, type RoomRecovery } from './room-recovery';
import { positionOf } from '../history/room-history';
import {
  sendTo,
  serialize,
  splitFrame,
  withSeqOf,
  type BinaryParts,
  type OutboundData,
  type SerializedMessage,
} from '../ws/serialized-message';

/** Why an authentication ended without opening the connection: the `error` it answers. */
export interface Refusal {
  readonly code: string;
  readonly message: string;
  /** Fields beside `code` and `message` (`status` of an auth refusal). */
  readonly fields?: Readonly<Record<string, unknown>>;
}

export interface OutboundOptions {
  readonly ws: WebSocketHandler;
  readonly logger: LoggerInterface;
  readonly conns: ConnectionTable;
  readonly sessions: SessionStore | undefined;
  readonly maxPendingRequests: number;
  /** Room recoveries: live room messages of a client in recovery are held there. */
  readonly recovery?: RoomRecovery;
}

export class Outbound {
  readonly #o: OutboundOptions;

  constructor(options: OutboundOptions) {
    this.#o = options;
  }

  /**
   * Admits a request of an open connection: false (and answered `too_many_pending`) when it
   * already has `max_pending_requests` unanswered. A message without `id` is always admitted.
   */
  admit(conn: Connection, envelope: Envelope): boolean {
    const { id } = envelope;
    if (id === undefined) return true;
    const max = this.#o.maxPendingRequests;
    if (conn.admit(max)) return true;
    const message = `Too many unanswered requests: at most ${max} at once; wait for answers first.`;
    // Not admitted, so not counted as pending: sent without the answer bookkeeping.
    this.#o.ws.refuse(conn.client.id, WireErrorCode.TOO_MANY_PENDING, message, {}, id);
    return false;
  }

  /** A message past the held bound during authentication: a request is answered `busy`. */
  overHeld(conn: Connection, envelope: Envelope): void {
    const clientId = conn.client.id;
    if (envelope.id === undefined) {
      this.#o.logger.debug('WebSocket message dropped: too many held during authentication', {
        code: 'PKG_ERR_CORE_BUSY',
        clientId,
      });
      return;
    }
    const message = `Too many messages while authentication runs: at most ${this.#o.maxPendingRequests} are held; wait for $welcome.`;
    const extra = { event: envelope.event };
    this.#o.ws.refuse(clientId, WireErrorCode.BUSY, message, extra, envelope.id);
  }

  /**
   * The end of an authentication that did not open the connection: the refusal is kept (a
   * request still on its way gets it too, see {@link lateRequest}), sent once without `id`,
   * then once per held request with its `id`; held messages are dropped, never dispatched.
   */
  refused(conn: Connection, refusal: Refusal): void {
    const held = conn.refuse(refusal);
    const clientId = conn.client.id;
    this.#o.ws.refuse(clientId, refusal.code, refusal.message, refusal.fields);
    for (const e of held) if (e.id !== undefined) this.lateRequest(conn, e);
  }

  /** A request of a refused connection: answered with the refusal and its `id`, once. */
  lateRequest(conn: Connection, envelope: Envelope): void {
    const { refused } = conn;
    if (refused === undefined || envelope.id === undefined) return;
    this.#o.ws.refuse(conn.client.id, refused.code, refused.message, refused.fields, envelope.id);
  }

  /**
   * Answers a client request with the handler's result (`null` for nothing). Returns the
   * length of the answer sent (0 when none was: it was answered `handler_timeout` already,
   * or the client is gone).
   */
  answerTo(conn: Connection, event: string, id: RequestId, result: unknown): number {
    if (!conn.settle(id)) return 0;
    const clientId = conn.id;
    if (result instanceof Uint8Array) return this.#answerBytes(conn, event, id, result);
    let text: string;
    try {
      text = prepareAnswer(event, id, result);
    } catch (err) {
      this.#o.logger.exception(err, { code: 'PKG_ERR_CORE_HANDLER_FAILED', clientId, event });
      const message = `The result of "${event}" cannot be sent as JSON.`;
      this.#o.ws.refuse(clientId, WireErrorCode.INTERNAL_ERROR, message, {}, id);
      return 0;
    }
    return this.#o.ws.sendRaw(clientId, text) ? text.length : 0;
  }

  /** A handler's bytes answer its request in one binary frame (docs/protocol.md, "Binary frames"). */
  #answerBytes(conn: Connection, event: string, id: RequestId, bytes: Uint8Array): number {
    const { ws, logger } = this.#o;
    if (!ws.takesBinary(conn.id)) {
      logger.warning('A handler answered with bytes a client that does not take binary frames', {
        code: 'PKG_ERR_CORE_HANDLER_FAILED',
        clientId: conn.id,
        event,
      });
      const message = `The result of "${event}" is binary, and this connection takes text only (protocol version 0).`;
      ws.refuse(conn.id, WireErrorCode.INTERNAL_ERROR, message, {}, id);
      return 0;
    }
    let header: Uint8Array;
    try {
      header = encodeBinaryHeader({ event, id }, bytes.length);
    } catch (err) {
      logger.exception(err, { code: 'PKG_ERR_CORE_HANDLER_FAILED', clientId: conn.id, event });
      ws.refuse(conn.id, WireErrorCode.INTERNAL_ERROR, `The result of "${event}" cannot be sent as a binary frame.`, {}, id); // prettier-ignore
      return 0;
    }
    return ws.sendBinary(conn.id, [header, bytes]) ? header.length + bytes.length : 0;
  }

  /**
   * A binary part of an answer (`$history`): one binary frame with the request's `id` and
   * a kept message's `pos`, sent before the answer itself. Returns its length (0: not sent,
   * e.g. the connection takes no binary frames; the skip is counted).
   */
  answerPart(
    conn: Connection,
    event: string,
    id: RequestId,
    pos: RoomPosition,
    bytes: Uint8Array,
  ): number {
    const header = encodeBinaryHeader({ event, id, pos }, bytes.length);
    return this.#o.ws.sendBinary(conn.id, [header, bytes]) ? header.length + bytes.length : 0;
  }

  /**
   * The connection's door for errors: an `error` event `{code, message, ...extra}`, through
   * the WebSocket handler's one door (`@pkg/wire`'s error table decides whether it is
   * throttled and whether it counts as a protocol error). With `id` it answers that request,
   * once: a request already answered `handler_timeout` gets nothing more.
   */
  failTo(
    conn: Connection,
    code: string,
    message: string,
    extra: Readonly<Record<string, unknown>> = {},
    id?: RequestId,
  ): void {
    if (id !== undefined && !conn.settle(id)) return;
    this.#o.ws.refuse(conn.id, code, message, extra, id);
  }

  /** {@link failTo} by client id (`sendEventError`): nothing for a client not connected here. */
  readonly fail = (
    clientId: string,
    code: string,
    message: string,
    extra: Readonly<Record<string, unknown>> = {},
    id?: RequestId,
  ): void => {
    const conn = this.#o.conns.get(clientId);
    if (conn !== undefined) this.failTo(conn, code, message, extra, id);
  };

  /**
   * A request whose handler ran past `ws_handler_timeout`: answered `handler_timeout` now;
   * whatever its handler produces later is dropped.
   */
  expire(conn: Connection, id: RequestId | undefined, message: string): void {
    this.failTo(conn, WireErrorCode.HANDLER_TIMEOUT, message, {}, id);
    if (id !== undefined) conn.expire(id, this.#o.maxPendingRequests);
  }

  /**
   * Sends an event to one client: numbered and kept for replay when it has a session
   * (also while it is away, then true). False when the client is unknown or not `open`.
   * Bytes (`data` a Uint8Array) go out as one binary frame; a client that does not take
   * binary frames (version 0) is skipped, counted, and false.
   */
  send(clientId: string, event: string, data: OutboundData): boolean {
    return this.sendMessage(clientId, serialize(event, data));
  }

  /** {@link send} of a message serialised already (a text, or a binary frame's bytes). */
  sendMessage(clientId: string, message: SerializedMessage): boolean {
    const conn = this.#o.conns.get(clientId);
    if (conn === undefined) return false;
    const { ws } = this.#o;
    const open = conn.state === ConnectionState.OPEN;
    const { session } = conn;
    if (session === undefined) return open && sendTo(ws, clientId, message);
    if (session.connected && !open) return false;
    // Never kept for a connection that cannot take it: sendBinary skips it and counts.
    if (session.connected && typeof message !== 'string' && !ws.takesBinary(clientId)) {
      return ws.sendBinary(clientId, message);
    }
    const seq = this.#o.sessions!.keep(session, message);
    return session.connected ? sendTo(ws, clientId, withSeqOf(message, seq)) : true;
  }

  /**
   * Delivers one serialised broadcast to those of the given clients that are `open` or
   * away: as it is to clients without a session (one buffer for all of them); with its
   * `seq` in each session, and kept, for those with one. A binary frame reaches only the
   * clients that take binary frames (version 1): the others are skipped and counted, and
   * not in the number returned.
   */
  readonly deliver = (clientIds: Iterable<string>, message: SerializedMessage): number =>
    this.#deliver(clientIds, message, this.#o.recovery);

  /**
   * Delivers a replayed message, or a live one held during a recovery, as a broadcast is
   * (with its `seq` and kept in a session, so a session resume covers it); never held.
   */
  deliverHeld(clientId: string, message: SerializedMessage): boolean {
    return this.#deliver([clientId], message, undefined) > 0;
  }

  /**
   * Delivers to each client; `recovery` is given for live copies (held while the client's
   * recovery of the room runs, dropped when a finished recovery already replayed them) and
   * left out for the recovery's own replay and held messages.
   */
  #deliver(
    clientIds: Iterable<string>,
    text: SerializedMessage,
    recovery: RoomRecovery | undefined,
  ): number {
    const { sessions, ws, conns } = this.#o;
    const binary = typeof text !== 'string';
    // A binary frame's header and payload, split once for every receiver with a session.
    let split: readonly [Uint8Array, Uint8Array] | undefined;
    const plain: string[] = [];
    let n = 0;
    // The text's room position, read once and only for a receiver that recovered a room.
    let pos: RoomPosition | undefined;
    let posRead = false;
    for (const id of clientIds) {
      const conn = conns.get(id);
      if (recovery !== undefined && conn !== undefined && recovery.hold(conn, text)) {
        n += 1;
        continue;
      }
      const session = conn?.session;
      const replayed = session === undefined ? conn?.marks.replayed : session.replayed;
      if (recovery !== undefined && replayed !== undefined) {
        if (!posRead) {
          pos = positionOf(text);
          posRead = true;
        }
        if (pos !== undefined && wasReplayed(replayed, pos)) {
          n += 1; // the client has it already
          continue;
        }
      }
      if (session === undefined) {
        if (conn?.state === ConnectionState.OPEN) plain.push(id);
        continue;
      }
      if (!session.connected) {
        sessions!.keep(session, text);
        n += 1;
      } else if (conn?.state === ConnectionState.OPEN) {
        // A connection that does not take binary frames: skipped and counted, never kept.
        if (binary && !ws.takesBinary(id)) ws.sendBinary(id, text);
        else {
          const seq = sessions!.keep(session, text);
          if (binary) split ??= splitFrame(text);
          const message: string | BinaryParts =
            split === undefined ? withSeqOf(text, seq) : [appendBinarySeq(split[0], seq), split[1]];
          if (sendTo(ws, id, message)) n += 1;
        }
      }
    }
    if (plain.length > 0) {
      n += binary ? ws.sendBinaryToMany(plain, text) : ws.sendToMany(plain, text);
    }
    return n;
  }
}
