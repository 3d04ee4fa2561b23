/**
 * The states of one WebSocket connection and its record (docs/protocol.md has the diagram).
 *
 * handshaken -> awaiting_hello -> authenticating -> open -> closing -> closed, plus away
 * (the connection is gone, its session waits for a resume). A version 0 connection (no
 * `pkg.v1`) skips awaiting_hello. Only `open` connections get handlers, messages,
 * broadcasts and room deliveries, and only they count as clients. Every state but `open`
 * has a deadline: `hello_wait` (awaiting_hello), `auth_timeout` (authenticating, and
 * awaiting_hello after a refusal), the close timeout of `ws` (closing).
 *
 * The record has a fixed shape (every field set in the constructor) and `state` is changed
 * in one place only, `ProtocolV1#transition`, which checks the move against {@link MOVES}.
 */
import type { RequestId, RoomPosition, StreamPosition } from '@pkg/wire';
import type { Envelope, WsClient } from '@pkg/ws-protocol';
import type { AuthRefusal } from './auth';
import type { HistoryBudget } from '../history/history-budget';
import type { Refusal } from './outbound';
import type { Session } from './session';

export const ConnectionState = {
  /** Upgraded; the protocol layer has not decided anything yet. */
  HANDSHAKEN: 'handshaken',
  /** Waiting for `$hello` (a `pkg.v1` connection, or one refused without credentials). */
  AWAITING_HELLO: 'awaiting_hello',
  /** The auth handlers run; messages are held (at most `max_pending_requests`). */
  AUTHENTICATING: 'authenticating',
  /** Accepted: `OnConnect` ran (or the session was resumed); messages are dispatched. */
  OPEN: 'open',
  /** The server started the close; nothing is dispatched or delivered any more. */
  CLOSING: 'closing',
  /** Gone for good. */
  CLOSED: 'closed',
  /** Gone, its session kept for a resume within `recovery_window`. */
  AWAY: 'away',
} as const;

export type ConnectionStateName = (typeof ConnectionState)[keyof typeof ConnectionState];

/** The moves allowed from each state. */
const MOVES: Readonly<Record<ConnectionStateName, readonly ConnectionStateName[]>> = {
  handshaken: ['awaiting_hello', 'authenticating', 'open', 'closing', 'closed'],
  awaiting_hello: ['authenticating', 'open', 'closing', 'closed'],
  authenticating: ['awaiting_hello', 'open', 'closing', 'closed'],
  open: ['closing', 'closed', 'away'],
  closing: ['closed'],
  closed: [],
  away: [],
};

/** True when a connection in `from` may move to `to`. */
export function canMove(from: ConnectionStateName, to: ConnectionStateName): boolean {
  return MOVES[from].includes(to);
}

/** One connection, as the protocol layer keeps it. */
export class ConnectionRecord {
  client: WsClient;
  state: ConnectionStateName = ConnectionState.HANDSHAKEN;
  /** Negotiated the subprotocol `pkg.v1` in its handshake. */
  readonly v1: boolean;
  /** Said `$hello` (protocol version 1 features: `rid`, sessions). */
  hello = false;
  /** The identity its auth handlers gave (`{ identity }`), if any. */
  identity: string | undefined = undefined;
  /** The refusal of an authentication without credentials, kept while `$hello` may come. */
  refusal: AuthRefusal | undefined = undefined;
  /** When authentication started (ms since the epoch; 0: not yet): `auth_timeout` counts from it. */
  authStarted = 0;
  /** Bumped by every authentication, so that a late result of an earlier one is ignored. */
  authRound = 0;
  /**
   * The `error` that ended its authentication (refusal or `auth_timeout`): a request that
   * arrives while the close runs is answered with it and its `id`, never dispatched.
   */
  refused: Refusal | undefined = undefined;
  /** Messages held while the auth handlers run, at most `max_pending_requests`. */
  held: Envelope[] = [];
  /** Client requests whose answer is not sent yet. */
  pending = 0;
  /**
   * Requests already answered `handler_timeout` whose handler may still finish: its late
   * result is dropped, so each request gets exactly one answer. At most
   * `max_pending_requests` are remembered (the oldest is forgotten first).
   */
  expired: Set<RequestId> | undefined = undefined;
  session: Session | undefined = undefined;
  /** The deadline of the current state. */
  timer: NodeJS.Timeout | undefined = undefined;
  /** Was `open` once (`OnConnect` ran, or it resumed): its end runs `OnDisconnect`. */
  opened = false;
  /** Its session ends with the connection (`disconnectClient`, OnConnect timeout). */
  final = false;
  /** A resume took its session (and its id) over: its close ends nothing. */
  takenOver = false;
  /**
   * `$hello.positions` not used yet (at most `HISTORY_LIMITS.maxHelloPositions`): one is
   * taken out when the client is put in its room, and recovers that room.
   */
  positions: RoomPosition[] | undefined = undefined;
  /** Its `$history` budget, made on its first `$history`. */
  historyBudget: HistoryBudget | undefined = undefined;
  /** `$history` requests waiting for the one being answered (undefined: none running). */
  historyQueue: Envelope[] | undefined = undefined;
  /**
   * Without a session: per room it recovered and is still in, the position the replay
   * reached, so a live copy at or before it is not delivered again (with a session this is
   * kept on the session, see room-recovery.ts).
   */
  replayed: Map<string, StreamPosition> | undefined = undefined;

  constructor(client: WsClient, v1: boolean) {
    this.client = client;
    this.v1 = v1;
  }
}
