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
 * A `Connection` owns everything core keeps of one client while its socket lives; its fields
 * change only through its own methods. `state` changes in {@link Connection.move} only,
 * which checks the move against {@link MOVES}; {@link Connection.end} is the one cleanup.
 */
import type { RequestId, RoomPosition, StreamPosition } from '@pkg/wire';
import type { Envelope, WsClient } from '@pkg/ws-protocol';
import { PendingRequests } from './acks';
import type { AuthRefusal } from './auth';
import type { HistoryBudget } from '../history/history-budget';
import type { Refusal } from './outbound';
import type { RecoveryHold } from './room-recovery';
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
export const MOVES: Readonly<Record<ConnectionStateName, readonly ConnectionStateName[]>> = {
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

/** What a connection keeps of its `$history` requests: the budget and the waiting queue. */
interface HistoryState {
  budget: HistoryBudget | undefined;
  /** Requests waiting for the one being answered (undefined: none running). */
  queue: Envelope[] | undefined;
}

/**
 * One WebSocket client in core, from upgrade to `OnDisconnect`: the only writer of its
 * fields. The deadline of the current state is armed by the caller through {@link arm}
 * and always cleared by the next {@link move} or by {@link end}.
 */
export class Connection {
  #client: WsClient;
  #state: ConnectionStateName = ConnectionState.HANDSHAKEN;
  /** Negotiated the subprotocol `pkg.v1` in its handshake. */
  readonly v1: boolean;
  /** When its upgrade was accepted (ms since the epoch): the admin's age column and sort. */
  readonly connectedAt: number = Date.now();
  #hello = false;
  #identity: string | undefined = undefined;
  /** When its credentials stop being accepted (ms since the epoch); undefined: never. */
  #expiresAt: number | undefined = undefined;
  /** A `$refresh` is being checked (one at a time). */
  #refreshing = false;
  #refusal: AuthRefusal | undefined = undefined;
  #authStarted = 0;
  #authRound = 0;
  #refused: Refusal | undefined = undefined;
  #held: Envelope[] = [];
  #pending = 0;
  #expired: Set<RequestId> | undefined = undefined;
  #session: Session | undefined = undefined;
  #timer: NodeJS.Timeout | undefined = undefined;
  #opened = false;
  #final = false;
  #takenOver = false;
  #positions: RoomPosition[] | undefined = undefined;
  readonly #history: HistoryState = { budget: undefined, queue: undefined };
  /** Room key -> what is held while that room's recovery reads its history. */
  #recoveries: Map<string, RecoveryHold> | undefined = undefined;
  /** Its server requests (`emitWithAck`) waiting for `$ack` / `$nack`. */
  readonly serverRequests = new PendingRequests();
  /**
   * Without a session: per room it recovered and is still in, the position the replay
   * reached, so a live copy at or before it is not delivered again (with a session this is
   * kept on the session, see room-recovery.ts).
   */
  readonly marks: { replayed: Map<string, StreamPosition> | undefined } = { replayed: undefined };
  /** The application's data of the client (`setClientData`), made on first use. */
  #data: Map<string, unknown> | undefined;
  /** No longer a connected client (its `OnDisconnect` runs or ran); its data is still read. */
  #gone = false;
  /** Its message handlers not finished yet (made on first use). */
  #work: Set<Promise<void>> | undefined = undefined;
  /** Completion of its `OnConnect` handlers, while they run: its messages wait for it. */
  #connectPhase: Promise<unknown> | undefined = undefined;
  /** Room key -> the deadline of a room granted until a time (made on first use). */
  #grants: Map<string, NodeJS.Timeout> | undefined = undefined;

  constructor(client: WsClient, v1: boolean) {
    this.#client = client;
    this.v1 = v1;
    const entries = Object.entries(client.data);
    if (entries.length > 0) this.#data = new Map(entries);
  }

  /** The socket's client (replaced when a resume or a takeover renames the connection). */
  get client(): WsClient {
    return this.#client;
  }
  get id(): string {
    return this.#client.id;
  }
  get state(): ConnectionStateName {
    return this.#state;
  }
  /** Said `$hello` (protocol version 1 features: `rid`, sessions). */
  get hello(): boolean {
    return this.#hello;
  }
  /** The identity its auth handlers gave (`{ identity }`), if any. */
  get identity(): string | undefined {
    return this.#identity;
  }
  /** When its credentials expire (ms since the epoch); undefined when they do not. */
  get expiresAt(): number | undefined {
    return this.#expiresAt;
  }
  /** A `$refresh` is being checked. */
  get refreshing(): boolean {
    return this.#refreshing;
  }
  /** The refusal of an authentication without credentials, kept while `$hello` may come. */
  get refusal(): AuthRefusal | undefined {
    return this.#refusal;
  }
  /** When authentication started (ms since the epoch; 0: not yet): `auth_timeout` counts from it. */
  get authStarted(): number {
    return this.#authStarted;
  }
  /**
   * The `error` that ended its authentication (refusal or `auth_timeout`): a request that
   * arrives while the close runs is answered with it and its `id`, never dispatched.
   */
  get refused(): Refusal | undefined {
    return this.#refused;
  }
  /** Messages held while the auth handlers run. */
  get heldCount(): number {
    return this.#held.length;
  }
  /** Client requests whose answer is not sent yet. */
  get pending(): number {
    return this.#pending;
  }
  get session(): Session | undefined {
    return this.#session;
  }
  /** A deadline is armed. */
  get timed(): boolean {
    return this.#timer !== undefined;
  }
  /** Was `open` once (`OnConnect` ran, or it resumed): its end runs `OnDisconnect`. */
  get opened(): boolean {
    return this.#opened;
  }
  /** Its session ends with the connection (`disconnectClient`, OnConnect timeout). */
  get final(): boolean {
    return this.#final;
  }
  /** A resume took its session (and its id) over: its close ends nothing. */
  get takenOver(): boolean {
    return this.#takenOver;
  }
  /** Requests already answered `handler_timeout` whose late result is still to drop. */
  get expiredCount(): number {
    return this.#expired?.size ?? 0;
  }
  /** `$hello.positions` not used yet. */
  get positionsLeft(): number {
    return this.#positions?.length ?? 0;
  }

  // ------------------------------------------------------------------ the state table

  /**
   * The one place the state changes: checks the move against {@link MOVES}, clears the
   * deadline, and returns the state left. Entering `closing`, `closed` or `away` drops
   * what was held; entering `open` marks it opened; `authenticating` starts the auth clock.
   */
  move(to: ConnectionStateName, now: number): ConnectionStateName {
    const from = this.#state;
    if (!canMove(from, to)) {
      throw new Error(`Connection ${this.id}: no move from ${from} to ${to}.`);
    }
    this.#state = to;
    this.#disarm();
    if (to === ConnectionState.OPEN) this.#opened = true;
    else if (to === ConnectionState.AUTHENTICATING) {
      if (this.#authStarted === 0) this.#authStarted = now;
    } else if (to !== ConnectionState.AWAITING_HELLO) this.#held = [];
    return from;
  }

  /** Arms the deadline of the current state (one at a time; it never keeps the process up). */
  arm(ms: number, fire: () => void): void {
    this.#disarm();
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      fire();
    }, ms);
    this.#timer.unref?.();
  }

  /** Clears the armed deadline (an open connection whose credentials no longer expire). */
  disarm(): void {
    this.#disarm();
  }

  #disarm(): void {
    if (this.#timer === undefined) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  // ------------------------------------------------------------------ hello and auth

  /** Records `$hello` (and its positions, kept until the client is put in those rooms). */
  saidHello(positions: readonly RoomPosition[] | undefined): void {
    this.#hello = true;
    if (positions !== undefined && positions.length > 0) this.#positions = [...positions];
  }

  /** What its auth handlers accepted: who it is, and until when (undefined: no expiry). */
  identify(identity: string | undefined, expiresAt?: number): void {
    this.#identity = identity;
    this.#expiresAt = expiresAt;
  }

  /** A `$refresh` starts: false when one is being checked already. */
  startRefresh(): boolean {
    if (this.#refreshing) return false;
    this.#refreshing = true;
    return true;
  }

  /** The `$refresh` ended: accepted with a new expiry (or none), or refused (`accepted` false). */
  endRefresh(accepted: boolean, expiresAt: number | undefined): void {
    this.#refreshing = false;
    if (accepted) this.#expiresAt = expiresAt;
  }

  /** Keeps the refusal of an authentication without credentials while `$hello` may come. */
  awaitCredentials(refusal: AuthRefusal): void {
    this.#refusal = refusal;
  }

  /** Starts an authentication round; only an outcome of the current round counts. */
  beginAuth(): number {
    this.#authRound += 1;
    return this.#authRound;
  }

  /** True when `round` is the current round and the connection still authenticates. */
  isCurrentAuth(round: number): boolean {
    return this.#authRound === round && this.#state === ConnectionState.AUTHENTICATING;
  }

  /** Ends its authentication with a refusal: kept, and the held messages are handed back. */
  refuse(refusal: Refusal): Envelope[] {
    this.#refused = refusal;
    return this.takeHeld();
  }

  // ------------------------------------------------------------------ held messages

  /** Holds a message while authentication runs; false when `max` are held already. */
  hold(envelope: Envelope, max = Infinity): boolean {
    if (this.#held.length >= max) return false;
    this.#held.push(envelope);
    return true;
  }

  /** The held messages, in order; none are held afterwards. */
  takeHeld(): Envelope[] {
    const held = this.#held;
    this.#held = [];
    return held;
  }

  /** The first held message, taken out. */
  takeFirstHeld(): Envelope | undefined {
    return this.#held.shift();
  }

  // ------------------------------------------------------------------ requests

  /** Counts a request as pending; false (not counted) when `max` are pending already. */
  admit(max: number): boolean {
    if (this.#pending >= max) return false;
    this.#pending += 1;
    return true;
  }

  /** A request was answered. */
  answered(): void {
    if (this.#pending > 0) this.#pending -= 1;
  }

  /** A request answered `handler_timeout`: its late result is dropped (at most `max` kept). */
  expire(id: RequestId, max: number): void {
    this.#expired ??= new Set();
    this.#expired.add(id);
    if (this.#expired.size > max) {
      const oldest = this.#expired.values().next();
      if (oldest.done !== true) this.#expired.delete(oldest.value);
    }
  }

  /**
   * The answer to request `id` is about to go out: false when it was already answered
   * `handler_timeout` (the late answer is dropped, and the id forgotten), else true and the
   * request no longer counts as pending.
   */
  settle(id: RequestId): boolean {
    if (this.wasExpired(id)) return false;
    this.answered();
    return true;
  }

  /** True (and forgotten) when the request was already answered `handler_timeout`. */
  wasExpired(id: RequestId): boolean {
    return this.#expired !== undefined && this.#expired.delete(id);
  }

  // ------------------------------------------------------------------ sessions

  attach(session: Session | undefined): void {
    this.#session = session;
  }

  /** `disconnectClient`: its session ends with it. */
  finalise(): void {
    this.#final = true;
  }

  /** A resume took its session over: it gives its session up, and its id when renamed. */
  takeOver(renamed: WsClient | undefined): void {
    this.serverRequests.rejectAll(this.id);
    this.#session = undefined;
    this.#takenOver = true;
    if (renamed !== undefined) this.#client = renamed;
  }

  /** A resume: the connection takes the session's client id and the session itself. */
  resume(renamed: WsClient, session: Session): void {
    this.#client = renamed;
    this.#session = session;
  }

  // ------------------------------------------------------------------ rooms and history

  /** Takes out the `$hello.positions` entry of a room (a position is used once). */
  takePosition(room: string, namespace: string): RoomPosition | undefined {
    const positions = this.#positions;
    if (positions === undefined) return undefined;
    const i = positions.findIndex((p) => p.room === room && p.namespace === namespace);
    if (i < 0) return undefined;
    const [taken] = positions.splice(i, 1);
    if (positions.length === 0) this.#positions = undefined;
    return taken;
  }

  /** Its `$history` budget, made on first use. */
  historyBudget(make: () => HistoryBudget): HistoryBudget {
    return (this.#history.budget ??= make());
  }

  /** A `$history` request: true to answer it now, false when queued behind the running one. */
  startHistory(envelope: Envelope): boolean {
    if (this.#history.queue !== undefined) {
      this.#history.queue.push(envelope);
      return false;
    }
    this.#history.queue = [];
    return true;
  }

  /** The next queued `$history` request; undefined (and none running) when none waits. */
  nextHistory(): Envelope | undefined {
    const envelope = this.#history.queue?.shift();
    if (envelope === undefined) this.#history.queue = undefined;
    return envelope;
  }

  /** `$history` requests waiting behind the running one (-1: none running). */
  get historyQueued(): number {
    return this.#history.queue?.length ?? -1;
  }

  /** Recoveries of its rooms running now (its room deliveries are then held). */
  get recovering(): number {
    return this.#recoveries?.size ?? 0;
  }

  /** What the running recovery of a room (by room key) holds; undefined: none runs. */
  recoveryOf(key: string): RecoveryHold | undefined {
    return this.#recoveries?.get(key);
  }

  /** A recovery of a room starts (one per room at a time: false when one runs). */
  startRecovery(key: string, hold: RecoveryHold): boolean {
    this.#recoveries ??= new Map();
    if (this.#recoveries.has(key)) return false;
    this.#recoveries.set(key, hold);
    return true;
  }

  /** The recovery `hold` of a room ends: false when it is not the current one (or it left). */
  finishRecovery(key: string, hold: RecoveryHold): boolean {
    if (this.#recoveries?.get(key) !== hold) return false;
    this.#recoveries.delete(key);
    if (this.#recoveries.size === 0) this.#recoveries = undefined;
    return true;
  }

  // ------------------------------------------------------------------ the application's view

  /** A connected client for the application (`getClientType`): false once it is gone for good. */
  get connected(): boolean {
    return !this.#gone;
  }

  /** The client is gone for good: its `OnDisconnect` handlers run next (its data stays readable). */
  leave(): void {
    this.#gone = true;
  }

  /** One value of its data, or all of them as a new object without a key. */
  getData(key?: string | null): unknown {
    if (key === undefined || key === null) return Object.fromEntries(this.#data ?? []);
    return this.#data?.get(key);
  }

  setData(key: string, value: unknown): void {
    (this.#data ??= new Map()).set(key, value);
  }

  /** Takes over the data of the connection a resume replaces (the client keeps its data). */
  inherit(previous: Connection | undefined): void {
    if (previous !== undefined && previous !== this) this.#data = previous.#data;
  }

  // ------------------------------------------------------------------ handlers at work

  /** Its message handlers not finished yet (timed-out ones included). */
  get working(): number {
    return this.#work?.size ?? 0;
  }

  /** A message handler of this client is at work until `work` settles (or {@link end}). */
  startWork(work: Promise<void>): void {
    (this.#work ??= new Set()).add(work);
  }

  /** The work settled: false when it was not counted (any more). */
  finishWork(work: Promise<void>): boolean {
    if (this.#work === undefined || !this.#work.delete(work)) return false;
    if (this.#work.size === 0) this.#work = undefined;
    return true;
  }

  /** Takes every unfinished work out (the client is gone: nothing waits for them here). */
  takeWork(): Iterable<Promise<void>> {
    const work = this.#work ?? [];
    this.#work = undefined;
    return work;
  }

  /** While its `OnConnect` handlers run: what its messages wait for. */
  get connectPhase(): Promise<unknown> | undefined {
    return this.#connectPhase;
  }

  /** Its `OnConnect` handlers run until `phase` settles. */
  startConnect(phase: Promise<unknown>): void {
    this.#connectPhase = phase;
    void phase.then(() => {
      if (this.#connectPhase === phase) this.#connectPhase = undefined;
    });
  }

  // ------------------------------------------------------------------ room grants

  /** Rooms granted until a time. */
  get grants(): number {
    return this.#grants?.size ?? 0;
  }

  /** A room (by room key) is granted until `ms` from now, when `expire` runs (replaces an earlier grant). */
  grant(key: string, ms: number, expire: () => void): void {
    this.ungrant(key);
    const timer = setTimeout(() => {
      this.#grants?.delete(key);
      expire();
    }, ms);
    timer.unref?.();
    (this.#grants ??= new Map()).set(key, timer);
  }

  /** The room's grant ends without expiring (left, granted for good, or the client ended). */
  ungrant(key: string): void {
    const timer = this.#grants?.get(key);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.#grants!.delete(key);
    if (this.#grants!.size === 0) this.#grants = undefined;
  }

  // ------------------------------------------------------------------ the end

  /**
   * The one cleanup: no deadline, nothing held, no request remembered, no queue, no
   * recovery, no marks;
   * its server requests are rejected (the client is gone). The state is the caller's
   * (`closed` or `away` is set by {@link move} before).
   */
  end(): void {
    this.#disarm();
    this.serverRequests.rejectAll(this.id);
    this.#held = [];
    this.#expired = undefined;
    this.#positions = undefined;
    this.#history.queue = undefined;
    this.#recoveries = undefined;
    this.marks.replayed = undefined;
    if (this.#grants !== undefined) for (const timer of this.#grants.values()) clearTimeout(timer);
    this.#grants = undefined;
  }
}
