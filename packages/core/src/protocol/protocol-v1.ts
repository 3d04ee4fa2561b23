/**
 * Protocol version 1 on the server (docs/protocol.md): the composition of the connection
 * state machine (connection.ts), authentication (auth.ts), `$hello` / `$welcome` and
 * resumes (hello.ts, session.ts), the `$ping` answer (heartbeat.ts), answers and deliveries
 * (outbound.ts) and requests to the client (acks.ts). It sits between the WebSocket handler
 * and the dispatcher: every decoded message passes here first, and is dispatched only while
 * its connection is `open`. `#transition` is the one place a connection changes state.
 */
import {
  CloseCode,
  ControlEvent,
  MAX_AUTH_LENGTH,
  SUBPROTOCOL,
  WireErrorCode as Code,
  encodeEnvelope,
  fitCloseReason,
  readRefresh,
  roomKey,
  type StreamPosition,
} from '@pkg/wire';
import {
  PROTOCOL_V1_SUBPROTOCOL,
  type BinaryEnvelope,
  type Envelope,
  type WebSocketHandler,
  type WsClient,
} from '@pkg/ws-protocol';
import type { IncomingMessage } from 'node:http';
import { addressGroup } from '@pkg/http';
import { PendingRequests, ServerRequests, requestToClient } from './acks';
import type { EmitWithAckOptions } from './acks';
import { authContext, runAuthHandlers } from './auth';
import type { AuthHandler, AuthOutcome, AuthRefusal } from './auth';
import { Connection, ConnectionState as S } from './connection';
import type { ConnectionStateName } from './connection';
import { PONG } from './heartbeat';
import { Welcomer } from './hello';
import { FINAL_CLOSES, type ProtocolLoad, type ProtocolV1Options } from './options';
import { Outbound } from './outbound';
import { SessionStore, type Session } from './session';
import type { ConnectionTable } from './connections';
import { Messages, type Membership } from './messages';
import type { LocalClients } from '../cluster/adapter-bridge';
import { socketBytes } from '../observability/observability';
import { eventOfMessage, type OutboundData } from '../ws/serialized-message';
import { PendingHandlers } from './pending-handlers';
import { RoomRecovery, marksOf } from './room-recovery';
import { answerHistory, type HistoryRequestHost } from '../history/history-request';
import { historyBudgetLimits } from '../history/history-budget';
import { createCoreError } from '../errors';
import { DEFAULT_NAMESPACE } from '../ws/namespace-manager';

export type {
  AuthContext,
  AuthExpiry,
  AuthHandler,
  AuthIdentity,
  AuthRefusal,
  AuthResult,
} from './auth';
export type { AuthResume } from './auth';
export type { ProtocolLoad, ProtocolV1Options } from './options';

/** Stands for the requests of a client that is not here (`requestToClient` refuses it first). */
const NO_REQUESTS = new PendingRequests();

export class ProtocolV1 {
  readonly #o: ProtocolV1Options;
  readonly #ws: WebSocketHandler;
  readonly #conns: ConnectionTable;
  readonly #auth: AuthHandler[] = [];
  readonly #requests: ServerRequests;
  readonly #sessions: SessionStore | undefined;
  readonly #out: Outbound;
  readonly #welcomer: Welcomer;
  readonly #recovery: RoomRecovery | undefined;
  readonly #historyHost: HistoryRequestHost | undefined;
  readonly #messages: Messages;
  readonly #pending: PendingHandlers;
  /** Told when a session's connection drops (it waits) and when it resumes. */
  #awayChanged: ((clientId: string, away: boolean) => void) | undefined = undefined;
  #openCount = 0;
  #closing = false;

  constructor(options: ProtocolV1Options) {
    this.#o = options;
    this.#ws = options.wsHandler;
    this.#conns = options.connections;
    this.#requests = new ServerRequests({
      maxPerClient: options.maxPendingServerRequests,
      defaultTimeout: options.ackTimeout,
    });
    this.#sessions =
      options.recoveryWindow > 0
        ? new SessionStore({
            window: options.recoveryWindow,
            bufferSize: options.recoveryBuffer,
            maxAway: options.maxAwaySessions,
            maxAwayPerAddress: options.maxAwaySessionsPerAddress,
            groupOf: (address) => addressGroup(address, options.ipv6Subnet),
            onEnded: (session) => {
              const conn = this.#conns.get(session.clientId);
              if (conn === undefined || conn.session !== session) return;
              conn.attach(undefined);
              this.#endClient(conn);
            },
          })
        : undefined;
    const { history } = options;
    this.#recovery =
      history === undefined
        ? undefined
        : new RoomRecovery({
            history,
            logger: options.logger,
            sendRaw: (clientId, text) => this.#ws.sendRaw(clientId, text),
            deliver: (clientId, text) => this.#out.deliverHeld(clientId, text),
            ...(options.recoveryOutcome === undefined ? {} : { outcome: options.recoveryOutcome }),
            ...(options.isMember === undefined ? {} : { isMember: options.isMember }),
          });
    this.#out = new Outbound({
      ws: this.#ws,
      logger: options.logger,
      conns: this.#conns,
      sessions: this.#sessions,
      maxPendingRequests: options.maxPendingRequests,
      ...(this.#recovery === undefined ? {} : { recovery: this.#recovery }),
    });
    const m = options.messages;
    this.#pending = new PendingHandlers({
      maxPending: m.maxPending,
      timeout: m.handlerTimeout,
      logger: options.logger,
      // With a request id the refusal answers that request (its requester stops waiting).
      // A request that timed out gets this answer only: a late result of its handler is dropped.
      onTimeout: (conn, requestId) =>
        this.#out.expire(
          conn,
          requestId,
          'A handler did not finish in time; no answer will come for that message.',
        ),
    });
    this.#messages = new Messages(m, this.#pending, this.#out);
    this.#historyHost =
      history === undefined
        ? undefined
        : {
            history,
            outbound: this.#out,
            maxNameLength: options.maxNameLength ?? 128,
            isMember: options.isMember ?? (() => false),
            logger: options.logger,
            budget:
              options.historyBudget ??
              historyBudgetLimits({
                requestsPerSecond: 0,
                bytesPerSecond: 0,
                maxRooms: 0,
                maxReplayBytes: 0,
              }),
          };
    this.#welcomer = new Welcomer({
      ws: this.#ws,
      sessions: this.#sessions,
      conns: this.#conns,
      logger: options.logger,
      recoveryWindow: options.recoveryWindow,
      open: (conn, start) => this.#open(conn, start),
      close: (conn, code, reason) => this.#close(conn, code, reason),
      endClient: (conn, clientId) => this.#endClient(conn, undefined, clientId),
      authenticates: () => this.#auth.length > 0,
      authenticate: (conn, auth, session, then) => this.#authenticate(conn, auth, session, then),
      refuse: (conn, refusal) => this.#refuse(conn, refusal),
      maxNameLength: options.maxNameLength ?? 128,
    });
  }

  /**
   * The clients of this process as the rooms see them (the adapter bridge delivers and
   * sends through it): deliveries and sends reach `open` connections and away sessions.
   */
  get local(): LocalClients {
    const out = this.#out;
    const holder = this.#o.messages.observability.holder;
    return {
      deliver: (clientIds, text) => {
        const n = out.deliver(clientIds, text);
        holder.metrics?.messageOut(eventOfMessage(text), n);
        return n;
      },
      localClientIds: () => this.localClientIds(),
      send: (clientId, message) => {
        const sent = out.sendMessage(clientId, message);
        if (sent) holder.metrics?.messageOut(eventOfMessage(message), 1);
        return sent;
      },
      joined: (clientId, room, namespace, since, already) =>
        this.recoverRoom(clientId, room, namespace, since, already),
      revoke: (identity, room, namespace) => this.revokeLocal(identity, room, namespace),
    };
  }

  /** Answers, refusals, direct sends and broadcast deliveries (only to `open` clients). */
  get outbound(): Outbound {
    return this.#out;
  }

  /** Adds an auth handler; with one or more, a client passes them all before `OnConnect`. */
  addAuthHandler(handler: AuthHandler): void {
    if (typeof handler !== 'function') {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        'addAuthHandler expects a function (context) => true | false | {identity} | {status, message}.',
      );
    }
    this.#auth.push(handler);
  }

  // ------------------------------------------------------------------ the state machine

  /** The one place a connection changes state: checks the move, arms the new deadline. */
  #transition(conn: Connection, to: ConnectionStateName): void {
    const from = conn.move(to, Date.now());
    if (from === S.OPEN) this.#openCount -= 1;
    switch (to) {
      case S.AWAITING_HELLO:
        // First wait: hello_wait, then version 0. After a refusal: the rest of auth_timeout.
        if (conn.refusal === undefined) {
          conn.arm(this.#o.helloWait, () => this.#serveAsV0(conn, undefined));
        } else conn.arm(this.#authLeft(conn), () => this.#authExpired(conn));
        break;
      case S.AUTHENTICATING:
        conn.arm(this.#authLeft(conn), () => this.#authExpired(conn));
        break;
      case S.OPEN:
        this.#openCount += 1;
        this.#armExpiry(conn);
        break;
      default:
        break;
    }
  }

  #authLeft(conn: Connection): number {
    return Math.max(0, this.#o.authTimeout - (Date.now() - conn.authStarted));
  }

  /**
   * Closes from the server side (unless already closing). A refused connection sends its
   * close frame one turn later: requests read with the one that was refused still get
   * their one answer, the refusal (nothing can be sent after the close frame).
   */
  #close(conn: Connection, code: number, reason: string): void {
    if (conn.state === S.CLOSING || conn.state === S.CLOSED || conn.state === S.AWAY) return;
    this.#transition(conn, S.CLOSING);
    if (conn.refused === undefined) this.#ws.disconnect(conn.client.id, code, reason);
    else setImmediate(() => this.#ws.disconnect(conn.client.id, code, reason));
  }

  /** A new connection: `pkg.v1` waits for `$hello` (at most `hello_wait`), others do not. */
  readonly connected = (client: WsClient, request?: IncomingMessage): void => {
    const { observability, tracing } = this.#o.messages;
    // The trace context of the upgrade request, parent of its messages' spans.
    if (request !== undefined) tracing?.current?.upgraded(client, request);
    observability.holder.metrics?.connected(
      client.socket.protocol === PROTOCOL_V1_SUBPROTOCOL ? '1' : '0',
    );
    const conn = new Connection(client, client.socket.protocol === SUBPROTOCOL);
    this.#conns.set(conn);
    this.#o.clients.upgraded(client.id);
    if (conn.v1 && this.#o.helloWait > 0) this.#transition(conn, S.AWAITING_HELLO);
    else this.#serveAsV0(conn, undefined);
  };

  /** Serves a connection without `$hello` (yet): authenticated with `auth` undefined, if needed. */
  #serveAsV0(conn: Connection, first: Envelope | undefined): void {
    if (this.#auth.length === 0) {
      this.#open(conn, true);
      if (first !== undefined) this.#inbound(conn, first);
      return;
    }
    if (first !== undefined) conn.hold(first);
    this.#authenticate(conn, undefined, undefined, (outcome) => {
      if (outcome.accepted) {
        conn.identify(outcome.identity, outcome.expiresAt);
        this.#open(conn, true);
        return;
      }
      const held = conn.takeHeld();
      const next = held[0];
      if (next === undefined || next.event === ControlEvent.HELLO) {
        // Not accepted without credentials: wait for a $hello with some (auth_timeout).
        conn.awaitCredentials(outcome.refusal);
        for (const envelope of held.slice(1)) conn.hold(envelope);
        this.#transition(conn, S.AWAITING_HELLO);
        if (next !== undefined) this.#welcomer.hello(conn, next.data);
        return;
      }
      for (const envelope of held) conn.hold(envelope);
      this.#refuse(conn, outcome.refusal);
    });
  }

  /** Runs the auth handlers (state `authenticating`); a late or stale outcome is ignored. */
  #authenticate(
    conn: Connection,
    auth: string | undefined,
    resume: Session | undefined,
    then: (outcome: AuthOutcome) => void,
  ): void {
    this.#transition(conn, S.AUTHENTICATING);
    const round = conn.beginAuth();
    const context = authContext(conn.client, auth, resume);
    runAuthHandlers(this.#auth, context, this.#o.logger, (outcome) => {
      if (conn.isCurrentAuth(round)) then(outcome);
    });
  }

  /** `auth_timeout` passed: held requests and the client get `auth_timeout`, close 4401. */
  #authExpired(conn: Connection): void {
    const message = `Authentication did not finish within ${this.#o.authTimeout} ms (auth_timeout): send $hello with valid credentials right after connecting.`;
    this.#o.logger.info('WebSocket client closed: authentication timed out', {
      code: 'PKG_ERR_CORE_AUTH_TIMEOUT',
      clientId: conn.client.id,
      closeCode: CloseCode.UNAUTHORIZED,
    });
    this.#out.refused(conn, { code: Code.AUTH_TIMEOUT, message });
    this.#close(conn, CloseCode.UNAUTHORIZED, 'auth timeout');
  }

  /** A refusal: one `error`, one answer per held request, close 4401 / 4403. Nothing replays. */
  #refuse(conn: Connection, refusal: AuthRefusal): void {
    const forbidden = refusal.status === 403;
    this.#o.logger.info('WebSocket client refused by an auth handler', {
      code: forbidden ? 'PKG_ERR_CORE_FORBIDDEN' : 'PKG_ERR_CORE_UNAUTHORIZED',
      clientId: conn.client.id,
      status: refusal.status,
    });
    const { message, status } = refusal;
    const code = forbidden ? Code.FORBIDDEN : Code.UNAUTHORIZED;
    this.#out.refused(conn, { code, message, fields: { status } });
    const closeCode = forbidden ? CloseCode.FORBIDDEN : CloseCode.UNAUTHORIZED;
    this.#close(conn, closeCode, fitCloseReason(message));
  }

  /** Opens the connection (`OnConnect` when `start`), then dispatches what was held. */
  #open(conn: Connection, start: boolean): void {
    this.#transition(conn, S.OPEN);
    if (start) this.#messages.opened(conn);
    else this.#awayChanged?.(conn.client.id, false);
    for (const envelope of conn.takeHeld()) {
      if (conn.state !== S.OPEN) break;
      this.#inbound(conn, envelope);
    }
  }

  // ------------------------------------------------------------------ inbound

  /** The `message` listener: what a message does depends on its connection's state only. */
  readonly onMessage = (client: WsClient, message: Envelope | BinaryEnvelope): void => {
    // A binary message (`data` a Uint8Array) takes the same path: its handler gets the bytes.
    const envelope = message as Envelope;
    this.#o.messages.observability.holder.metrics?.messageIn(envelope.event);
    const conn = this.#conns.get(client.id);
    if (conn === undefined) return;
    if (envelope.event === ControlEvent.PING && conn.state !== S.CLOSING) {
      this.#ws.sendRaw(client.id, PONG);
      return;
    }
    switch (conn.state) {
      case S.AWAITING_HELLO:
        if (envelope.event === ControlEvent.HELLO) {
          return this.#welcomer.hello(conn, envelope.data);
        }
        if (conn.refusal === undefined) return this.#serveAsV0(conn, envelope);
        conn.hold(envelope);
        return this.#refuse(conn, conn.refusal);
      case S.AUTHENTICATING:
        return this.#hold(conn, envelope);
      case S.OPEN:
        return this.#inbound(conn, envelope);
      case S.CLOSING:
        // Refused: a request that was on its way still gets its one answer, the refusal.
        return this.#out.lateRequest(conn, envelope);
      default:
        // handshaken, closed, away: nothing is dispatched.
        return;
    }
  };

  /** Holds a message while the auth handlers run: at most `max_pending_requests`. */
  #hold(conn: Connection, envelope: Envelope): void {
    if (envelope.event === ControlEvent.HELLO && conn.hello)
      return this.#welcomer.secondHello(conn);
    if (!conn.hold(envelope, this.#o.maxPendingRequests)) this.#out.overHeld(conn, envelope);
  }

  #inbound(conn: Connection, envelope: Envelope): void {
    const { client } = conn;
    switch (envelope.event) {
      case ControlEvent.HELLO:
        return this.#welcomer.lateHello(conn, envelope.data);
      case ControlEvent.PING:
        this.#ws.sendRaw(client.id, PONG);
        return;
      case ControlEvent.ACK:
      case ControlEvent.NACK: {
        const ok = envelope.event === ControlEvent.ACK;
        this.#requests.settle(conn.serverRequests, client.id, envelope.rid!, ok, envelope.data);
        return;
      }
      case ControlEvent.REFRESH:
        if (envelope.id === undefined || this.#out.admit(conn, envelope)) {
          this.#refresh(conn, envelope);
        }
        return;
      case ControlEvent.HISTORY:
        if (this.#historyHost === undefined) break;
        if (envelope.id === undefined || this.#out.admit(conn, envelope)) {
          answerHistory(this.#historyHost, conn, envelope);
        }
        return;
      default:
        break;
    }
    if (this.#out.admit(conn, envelope)) this.#messages.run(conn, envelope);
  }

  // ------------------------------------------------------------------ credentials that expire

  /** An open connection whose credentials expire: `token_expired` and 4419 past the grace. */
  #armExpiry(conn: Connection): void {
    const { expiresAt } = conn;
    if (expiresAt === undefined) return;
    const left = expiresAt + this.#o.refreshGrace - Date.now();
    conn.arm(Math.max(0, left), () => this.#credentialsExpired(conn));
  }

  #credentialsExpired(conn: Connection): void {
    if (conn.state !== S.OPEN) return;
    const expiresAt = conn.expiresAt;
    this.#o.logger.info('WebSocket client closed: its credentials expired without a $refresh', {
      code: 'PKG_ERR_CORE_TOKEN_EXPIRED',
      clientId: conn.id,
      closeCode: CloseCode.CREDENTIALS_EXPIRED,
      expiresAt,
    });
    this.#out.failTo(
      conn,
      Code.TOKEN_EXPIRED,
      'Your credentials expired: send $refresh with new ones before expiresAt (the grace is auth_refresh_grace), or reconnect with new credentials.',
      { expiresAt },
    );
    // Its session ends with it: a resume would carry the expired credentials' authority on.
    conn.finalise();
    this.#close(conn, CloseCode.CREDENTIALS_EXPIRED, 'credentials expired');
  }

  /**
   * `$refresh {auth}` (a request): the same auth handlers check the new credentials; the
   * identity must stay the same. Accepted: the answer carries the new expiry and the
   * deadline moves. Refused: an `error` answers it and the connection keeps its current
   * expiry. One at a time; `auth_timeout` bounds the check.
   */
  #refresh(conn: Connection, envelope: Envelope): void {
    const { id } = envelope;
    const event = ControlEvent.REFRESH;
    if (id === undefined) {
      this.#out.failTo(conn, Code.INVALID_PAYLOAD, '$refresh is a request: send it with an "id" to get the answer.', { event }); // prettier-ignore
      return;
    }
    const read = readRefresh(envelope.data, MAX_AUTH_LENGTH);
    if (typeof read === 'string') {
      this.#out.failTo(conn, Code.INVALID_PAYLOAD, `${read}.`, { event }, id);
      return;
    }
    if (this.#auth.length === 0) {
      // Nothing checks credentials on this server: nothing expires either.
      this.#out.answerTo(conn, event, id, { expiresAt: null });
      return;
    }
    if (!conn.startRefresh()) {
      this.#out.failTo(conn, Code.BUSY, 'A $refresh of this connection is being checked: wait for its answer.', { event }, id); // prettier-ignore
      return;
    }
    let settled = false;
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      conn.endRefresh(false, undefined);
      this.#out.failTo(conn, Code.AUTH_TIMEOUT, `$refresh was not checked within ${this.#o.authTimeout} ms (auth_timeout); the connection keeps its current expiry.`, { event }, id); // prettier-ignore
    }, this.#o.authTimeout);
    timer.unref();
    const context = authContext(conn.client, read.auth, undefined, { identity: conn.identity });
    runAuthHandlers(this.#auth, context, this.#o.logger, (outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (conn.state !== S.OPEN) {
        conn.endRefresh(false, undefined);
        return;
      }
      if (!outcome.accepted) {
        conn.endRefresh(false, undefined);
        const { status, message } = outcome.refusal;
        const code = status === 403 ? Code.FORBIDDEN : Code.UNAUTHORIZED;
        this.#out.failTo(conn, code, `$refresh refused: ${message}`, { event, status }, id);
        return;
      }
      if (outcome.identity !== conn.identity) {
        conn.endRefresh(false, undefined);
        this.#out.failTo(conn, Code.FORBIDDEN, '$refresh refused: the new credentials name another identity than the connection\'s; connect again to change identity.', { event, status: 403, reason: 'identity' }, id); // prettier-ignore
        return;
      }
      conn.endRefresh(true, outcome.expiresAt);
      if (outcome.expiresAt === undefined) conn.disarm();
      else this.#armExpiry(conn);
      this.#out.answerTo(conn, event, id, { expiresAt: outcome.expiresAt ?? null });
    });
  }

  /** Who a connected client is and until when (`canJoin` sees it); undefined when unknown here. */
  credentialsOf(
    clientId: string,
  ): { identity: string | undefined; expiresAt: number | undefined } | undefined {
    const conn = this.#conns.get(clientId);
    if (conn === undefined || !conn.connected) return undefined;
    return { identity: conn.identity, expiresAt: conn.expiresAt };
  }

  /**
   * A room joined until `expiresAt` (null: for good): then the client leaves it and gets
   * `$revoked` with reason `expired`.
   */
  grantRoom(clientId: string, room: string, namespace: string, expiresAt: number | null): void {
    const conn = this.#conns.get(clientId);
    if (conn === undefined || conn.state !== S.OPEN) return;
    const key = roomKey(namespace, room);
    if (expiresAt === null) return conn.ungrant(key);
    conn.grant(key, Math.max(0, expiresAt - Date.now()), () => {
      if (this.#o.isMember?.(conn.id, room, namespace) !== true) return;
      this.#messages.leaveRoom(conn.id, room, namespace);
      this.#out.deliverHeld(conn.id, encodeEnvelope(ControlEvent.REVOKED, { room, namespace, reason: 'expired' })); // prettier-ignore
    });
  }

  /**
   * `server.revoke` on this process: every connection of `identity` loses the room
   * (`$revoked` with reason `revoked`; an away session keeps the notice for its resume), or
   * without a room is sent away (`revoked`, close 4403; an away session ends). Returns how
   * many connections it reached.
   */
  revokeLocal(identity: string, room: string | null, namespace: string | null): number {
    let n = 0;
    for (const conn of [...this.#conns.values()]) {
      if (conn.identity !== identity || !conn.connected) continue;
      // Only connections that have the client now: a closing one is on its way out already.
      if (conn.state !== S.OPEN && conn.state !== S.AWAY) continue;
      if (room !== null) {
        const ns = namespace ?? DEFAULT_NAMESPACE;
        if (this.#o.isMember?.(conn.id, room, ns) !== true) continue;
        this.#messages.leaveRoom(conn.id, room, ns);
        this.#out.deliverHeld(conn.id, encodeEnvelope(ControlEvent.REVOKED, { room, namespace: ns, reason: 'revoked' })); // prettier-ignore
        n += 1;
        continue;
      }
      n += 1;
      if (conn.state === S.AWAY) {
        const { session } = conn;
        conn.attach(undefined);
        if (session !== undefined) this.#sessions?.end(session);
        this.#endClient(conn);
        continue;
      }
      this.#o.logger.info('WebSocket client closed: its identity was revoked', {
        code: 'PKG_ERR_CORE_REVOKED',
        clientId: conn.id,
        closeCode: CloseCode.FORBIDDEN,
      });
      this.#out.failTo(conn, Code.REVOKED, 'Your access was revoked by the server.');
      conn.finalise();
      this.#close(conn, CloseCode.FORBIDDEN, 'revoked');
    }
    return n;
  }

  // ------------------------------------------------------------------ endings

  /** The connection closed: its session waits (a drop), or the client ends. */
  readonly disconnected = (client: WsClient, code: number): void => {
    const { observability, tracing } = this.#o.messages;
    tracing?.current?.closed(client);
    const metrics = observability.holder.metrics;
    if (metrics !== null) {
      const bytes = socketBytes(client);
      metrics.disconnected(code, bytes.received, bytes.sent);
    }
    const conn = this.#conns.get(client.id);
    // Already gone (its OnDisconnect runs, or its session waits): this socket ended before.
    if (conn === undefined || conn.state === S.CLOSED || conn.state === S.AWAY) return;
    conn.serverRequests.rejectAll(client.id);
    this.#pending.release(conn);
    if (conn.takenOver) {
      this.#conns.remove(conn);
      this.#transition(conn, S.CLOSED);
      return conn.end();
    }
    const { session } = conn;
    const keep = conn.state === S.OPEN && !this.#closing && !conn.final && !FINAL_CLOSES.has(code);
    if (session !== undefined && this.#sessions !== undefined && keep) {
      // Away: the connection stays in the table with its session and data, for a resume.
      this.#transition(conn, S.AWAY);
      conn.end();
      this.#sessions.away(session);
      this.#awayChanged?.(client.id, true);
      return;
    }
    this.#transition(conn, S.CLOSED);
    conn.end();
    if (session !== undefined) {
      conn.attach(undefined);
      this.#sessions?.end(session);
    }
    if (conn.opened) this.#endClient(conn);
    else {
      conn.leave();
      this.#conns.remove(conn);
    }
  };

  /** `disconnectClient`: the session ends with the connection, or at once when it is away. */
  endSession(clientId: string): boolean {
    const conn = this.#conns.get(clientId);
    if (conn === undefined) return false;
    if (conn.state !== S.AWAY) {
      conn.finalise();
      return false;
    }
    const { session } = conn;
    if (session === undefined || !conn.connected) return false;
    conn.attach(undefined);
    this.#sessions!.end(session);
    this.#endClient(conn);
    return true;
  }

  /** Server close: sessions without a connection end (their `OnDisconnect` runs). */
  close(): Promise<void> {
    this.#closing = true;
    const away = this.#sessions?.endAll() ?? [];
    const ends: Array<Promise<void>> = [];
    for (const session of away) {
      const conn = this.#conns.get(session.clientId);
      if (conn === undefined || conn.session !== session) continue;
      conn.attach(undefined);
      ends.push(new Promise<void>((resolve) => this.#endClient(conn, resolve)));
    }
    return Promise.all(ends).then(() => undefined);
  }

  /** The client is gone for good: `OnDisconnect`, then it leaves the table (and its data with it). */
  #endClient(conn: Connection, done?: () => void, clientId = conn.id): void {
    if (!conn.connected) return done?.();
    conn.leave();
    this.#messages.ended(conn, clientId, () => {
      this.#conns.remove(conn);
      done?.();
    });
  }

  // ------------------------------------------------------------------ who is a client

  /** Open connections and away sessions: the clients broadcasts and counts see. */
  *localClientIds(): IterableIterator<string> {
    for (const conn of this.#conns.values()) {
      if (conn.state === S.OPEN || (conn.state === S.AWAY && conn.session !== undefined)) {
        yield conn.id;
      }
    }
  }

  /** Ids of the `open` connections. */
  *openClientIds(): IterableIterator<string> {
    for (const conn of this.#conns.values()) if (conn.state === S.OPEN) yield conn.id;
  }

  /** Connections by state and protocol version, and away sessions (read by the metrics). */
  connectionStates(): Array<readonly [string, string, number]> {
    const counts = new Map<string, number>();
    for (const conn of this.#conns.values()) {
      // Away sessions are counted below; a closed client whose OnDisconnect runs is gone.
      if (conn.state === S.AWAY || conn.state === S.CLOSED) continue;
      const v1 = conn.hello || conn.state === S.AWAITING_HELLO;
      const key = `${conn.state}:${v1 ? '1' : '0'}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const rows = [...counts].map(([key, n]) => [...key.split(':'), n] as [string, string, number]);
    rows.push([S.AWAY, '1', this.#sessions?.awayCount ?? 0]);
    return rows;
  }

  load(): ProtocolLoad {
    return {
      openClients: this.#openCount,
      sessions: this.#sessions?.size ?? 0,
      awaySessions: this.#sessions?.awayCount ?? 0,
      sessionBytes: this.#sessions?.approximateBytes ?? 0,
    };
  }

  /** `emitWithAck`: a request to an open version 1 client, answered by `$ack` / `$nack`. */
  emitWithAck(
    clientId: string,
    event: string,
    data: OutboundData,
    options: EmitWithAckOptions = {},
  ): Promise<unknown> {
    const conn = this.#conns.get(clientId);
    const state =
      conn === undefined ? 'gone' : conn.state !== S.OPEN ? 'gone' : conn.hello ? 'v1' : 'v0';
    const pending = conn?.serverRequests ?? NO_REQUESTS;
    return requestToClient(
      this.#requests,
      pending,
      this.#ws,
      clientId,
      state,
      event,
      data,
      options,
    );
  }

  /**
   * A client of this process was put in a room it was not in: recovered from `since`, or
   * from its `$hello.positions` entry for that room (see {@link RoomRecovery.joined}).
   */
  recoverRoom(
    clientId: string,
    room: string,
    namespace: string,
    since: StreamPosition | undefined,
    already = false,
  ): void {
    const conn = this.#conns.get(clientId);
    if (conn === undefined || conn.state === S.AWAY || conn.state === S.CLOSED) return;
    this.#recovery?.joined(conn, room, namespace, since, already);
  }

  /**
   * A client of this process left a room (or lost it when it ended): the position its
   * recovery of that room reached is forgotten.
   */
  roomLeft(clientId: string, room: string, namespace: string): void {
    const conn = this.#conns.get(clientId);
    if (conn !== undefined && conn.grants > 0) conn.ungrant(roomKey(namespace, room));
    if (this.#recovery === undefined) return;
    const marks = conn === undefined ? undefined : marksOf(conn);
    if (marks?.replayed !== undefined) this.#recovery.left(marks, room, namespace);
  }

  /** Recoveries running now (for leak checks). */
  get recoveries(): number {
    let n = 0;
    for (const conn of this.#conns.values()) n += conn.recovering;
    return n;
  }

  /**
   * Whether a local client said `$hello` (an away session did) and the identity its auth
   * handlers gave; undefined for an id with neither a connection nor a session here.
   */
  clientInfo(
    clientId: string,
  ): { v1: boolean; identity: string | undefined; away: boolean } | undefined {
    const conn = this.#conns.get(clientId);
    if (conn === undefined || conn.state === S.CLOSED) return undefined;
    if (conn.state !== S.AWAY) return { v1: conn.hello, identity: conn.identity, away: false };
    const { session } = conn;
    if (session === undefined) return undefined;
    return { v1: true, identity: session.identity, away: true };
  }

  /**
   * Hands the rooms to the connections once the adapter bridge is built (it delivers through
   * this layer, so it comes after it): a connection joins its namespace when it opens and
   * leaves every room when it ends.
   */
  serveRooms(rooms: Membership): void {
    this.#messages.rooms = rooms;
  }

  /** The unfinished message handlers of every client (the lifecycle waits for them). */
  get pending(): PendingHandlers {
    return this.#pending;
  }

  /** `listener` is told when a session's connection drops (it waits) and when it resumes. */
  onAway(listener: (clientId: string, away: boolean) => void): void {
    this.#awayChanged = listener;
  }

  /** Pending server requests of a client. */
  pendingServerRequests(clientId: string): number {
    return this.#conns.get(clientId)?.serverRequests.size ?? 0;
  }
}
