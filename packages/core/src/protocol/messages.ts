/**
 * What an `open` connection's messages come to past the protocol: each is routed (the
 * routes return an outcome and never send), its outcome leaves through the connection's
 * door (answer or `error`), its work is kept on the connection until it settles; and a
 * client's `OnConnect` and `OnDisconnect` handlers run here, in order with its messages.
 */
import type { LoggerInterface } from '@pkg/logger';
import { CloseCode } from '@pkg/wire';
import type { Envelope, WebSocketHandler } from '@pkg/ws-protocol';
import { CoreEventErrorCode } from '../errors';
import { connectDeadline } from '../http/timeouts';
import type { MetricsHolder, Observers } from '../observability/request-context';
import type { TracingSlot } from '../observability/tracing-load';
import { DEFAULT_NAMESPACE } from '../ws/namespace-manager';
import type { Outcome, Routes } from '../routing/ws-dispatch';
import type { Connection } from './connection';
import type { Outbound } from './outbound';
import type { PendingHandlers } from './pending-handlers';

/** A client's rooms and namespaces (the AdapterBridge): joined on open, all left at the end. */
export interface Membership {
  connected(clientId: string, namespace: string): void;
  disconnected(clientId: string): void;
  leaveRoom(clientId: string, room: string, namespace: string): void;
}

/** What observes messages: metrics (`holder.metrics`, null while off), ids and log scope. */
export interface MessageObservation {
  readonly holder: MetricsHolder;
  readonly observers: Pick<Observers, 'message' | 'messagesPassThrough'>;
}

export interface MessagesOptions {
  /** The routes (WsDispatcher): they return an outcome and never send. */
  readonly routes: Routes;
  /** Handlers one client may have unfinished at once (`ws_max_pending`); 0 = no limit. */
  readonly maxPending: number;
  /** Milliseconds before an unfinished handler's request is answered `handler_timeout`; 0 = never. */
  readonly handlerTimeout: number;
  readonly ws: WebSocketHandler;
  readonly logger: LoggerInterface;
  readonly observability: MessageObservation;
  /** With `tracing` on: the spans' maker (filled by run()); null with tracing off. */
  readonly tracing: TracingSlot | null;
  /** Milliseconds `OnConnect` handlers may take before the client is closed with 1011; 0 = no bound. */
  readonly connectTimeout: number;
}

const noop = (): void => undefined;

export class Messages {
  readonly #o: MessagesOptions;
  readonly #out: Outbound;
  readonly #pending: PendingHandlers;
  /**
   * Bounds the `OnConnect` phase (`connect_timeout`): false when it ran out of time, and the
   * client is then closed with 1011 and its session ends with it (a resume would skip the
   * `OnConnect` that failed).
   */
  readonly #connectDeadline: (conn: Connection, phase: Promise<void>) => Promise<boolean>;
  /** Rooms and namespaces; set once the adapter bridge is built (see ProtocolV1.serveRooms). */
  #rooms: Membership | undefined = undefined;

  constructor(options: MessagesOptions, pending: PendingHandlers, out: Outbound) {
    this.#o = options;
    this.#pending = pending;
    this.#out = out;
    const ms = options.connectTimeout;
    this.#connectDeadline = connectDeadline<Connection>(ms, (conn) => {
      options.logger.warning('OnConnect handlers did not finish in time; closing the client', {
        code: 'PKG_ERR_CORE_CONNECT_TIMEOUT',
        clientId: conn.id,
        closeCode: CloseCode.INTERNAL_ERROR,
        timeout: ms,
      });
      conn.finalise();
      options.ws.disconnect(conn.id, CloseCode.INTERNAL_ERROR, 'OnConnect timeout');
    });
  }

  set rooms(rooms: Membership) {
    this.#rooms = rooms;
  }

  /** Takes a client out of a room (a revocation, an expired grant). */
  leaveRoom(clientId: string, room: string, namespace: string): void {
    this.#rooms?.leaveRoom(clientId, room, namespace);
  }

  /** The connection opened for the first time: into its namespace, then its `OnConnect` handlers. */
  opened(conn: Connection): void {
    this.#rooms?.connected(conn.id, DEFAULT_NAMESPACE);
    const { routes } = this.#o;
    if (!routes.hasConnectHandlers) return;
    const phase = this.#connectDeadline(conn, routes.dispatchSpecialEvent(conn.id, 'connect'));
    conn.startConnect(phase);
    this.#pending.background(phase.then(noop));
  }

  /**
   * One message of an `open` connection: refused `busy` past `ws_max_pending` unfinished
   * handlers, else routed (after its `OnConnect` handlers, while they run) and answered.
   */
  run(conn: Connection, envelope: Envelope): void {
    const pending = this.#pending;
    if (!pending.admit(conn)) {
      this.#o.logger.debug('WebSocket message refused: too many unfinished handlers', {
        code: 'PKG_ERR_CORE_BUSY',
        clientId: conn.id,
      });
      this.#out.failTo(
        conn,
        CoreEventErrorCode.BUSY,
        'Too many messages waiting for an answer: wait for answers before sending more.',
        { event: envelope.event },
        envelope.id,
      );
      return;
    }
    const traced = this.#o.tracing?.current;
    const observers = this.#o.observability.observers;
    // Nothing to observe (no metrics, no log scope, no tracing): no closure per message.
    if (traced == null && observers.messagesPassThrough()) {
      this.#handle(conn, envelope);
      return;
    }
    observers.message(
      conn.id,
      envelope.event,
      traced
        ? () => {
            let work: Promise<void> | undefined;
            traced.message(conn.client, envelope, () => {
              work = this.#handle(conn, envelope);
              return work;
            });
            return work;
          }
        : () => this.#handle(conn, envelope),
    );
  }

  /** Routes the message and sends its outcome; the promise of the work when it is not done yet. */
  #handle(conn: Connection, envelope: Envelope): Promise<void> | undefined {
    const phase = conn.connectPhase;
    let work: Promise<void> | undefined;
    if (phase !== undefined) {
      // Not routed when OnConnect ran out of time: the client is being closed.
      work = phase.then((ok) => {
        if (ok === false) return undefined;
        const outcome = this.#route(conn, envelope);
        return outcome instanceof Promise ? outcome.then((o) => this.#send(conn, envelope, o)) : this.#send(conn, envelope, outcome); // prettier-ignore
      });
    } else {
      const outcome = this.#route(conn, envelope);
      if (!(outcome instanceof Promise)) {
        this.#send(conn, envelope, outcome);
        return undefined;
      }
      work = outcome.then((o) => this.#send(conn, envelope, o));
    }
    this.#pending.track(conn, work, envelope.id);
    return work.catch(noop);
  }

  #route(conn: Connection, envelope: Envelope): Outcome | Promise<Outcome> {
    return this.#o.routes.dispatch(conn.id, envelope.event, envelope.data, envelope.id);
  }

  /** The outcome leaves through the connection's door: an answer, an `error`, or nothing. */
  #send(conn: Connection, envelope: Envelope, outcome: Outcome): void {
    if (outcome === undefined) return;
    const { id, event } = envelope;
    if (outcome.kind === 'refusal') {
      this.#out.failTo(conn, outcome.code, outcome.message, outcome.extra, id);
      return;
    }
    if (id === undefined) return;
    if (this.#out.answerTo(conn, event, id, outcome.result) > 0) {
      this.#o.observability.holder.metrics?.messageOut(event, 1);
    }
  }

  /**
   * The client is gone for good: out of its rooms and namespaces, then its `OnDisconnect`
   * handlers (after its `OnConnect` ones), then `done`. Every step runs even when one
   * throws: a failing adapter must not skip `OnDisconnect` or keep the client's data.
   */
  ended(conn: Connection, clientId: string, done: () => void): void {
    this.#pending.release(conn);
    try {
      this.#rooms?.disconnected(clientId);
    } catch (err) {
      this.#o.logger.exception(err, { phase: 'disconnect: leave rooms and namespaces', clientId });
    }
    const { routes } = this.#o;
    const phase = conn.connectPhase;
    const work = (
      phase === undefined
        ? routes.dispatchSpecialEvent(clientId, 'disconnect')
        : phase.then(() => routes.dispatchSpecialEvent(clientId, 'disconnect'))
    ).finally(done);
    this.#pending.background(work);
  }
}
