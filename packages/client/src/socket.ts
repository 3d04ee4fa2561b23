/**
 * The protocol socket: what travels on one open connection, as docs/protocol.md says. It
 * sends `$hello` and waits for `$welcome` (or settles on version 0), dispatches what the
 * server sends (answers, server requests, `seq` order, errors, room events), runs the
 * message heartbeat, and flushes what was buffered while disconnected. Opening connections,
 * deciding whether to reconnect and the timers of that are the manager's (manager.ts).
 */
import {
  CloseCode,
  ControlEvent,
  PROTOCOL_VERSION,
  SUBPROTOCOL,
  WireErrorCode,
  readErrorData,
  encodeMembers,
  readRecovered,
  readRevoked,
  readWelcome,
  type ReceivedWelcome,
} from '@pkg/wire';
import { ClientError } from './errors';
import type { ConnectInfo, LifecycleEventName, LifecycleEvents, ServerErrorData } from './events';
import { Heartbeat } from './heartbeat';
import { LIFECYCLE_EVENTS, type Listeners } from './listeners';
import type { ResolvedClientOptions } from './options';
import {
  decodeInbound,
  decodeInboundBinary,
  encodeBinary,
  isBytes,
  type InboundMessage,
} from './protocol';
import { RoomPositions } from './positions';
import { PresenceRegistry } from './presence';
import { PendingRequests } from './requests';
import { CredentialRefresh } from './refresh';
import { RoomSet } from './rooms';
import type { Connection } from './transport';

/** Close code the client uses when it gives up on a connection but keeps the session. */
export const CLOSE_LOST = CloseCode.CLIENT_LOST;

/** Messages kept between `$hello` and `$welcome` at most. */
const MAX_EARLY = 1000;

/** What the socket needs of the manager that owns the connection. */
export interface SocketHost {
  /** The open connection, or null. */
  readonly connection: Connection | null;
  /** The connection is established: the manager records it and says whether it reconnected. */
  established(): { reconnected: boolean; attempt: number };
  /** Settles the waiting `connect()` promises. */
  settle(error: Error | undefined): void;
  emit<E extends LifecycleEventName>(event: E, payload: Parameters<LifecycleEvents[E]>[0]): void;
}

/** What a closed connection leaves for the manager's report. */
export interface CloseFacts {
  /** An `unauthorized` / `forbidden` error the server sent before it closed. */
  authRefusal: ServerErrorData | undefined;
  /** Why the client itself closed a connection that was not established yet. */
  closeError: ClientError | undefined;
}

export function unsupported(event: string, binary = false): ClientError {
  const message = binary
    ? `emit("${event}", bytes): the server speaks protocol version 0, which has no binary messages.`
    : event === ControlEvent.HISTORY
      ? 'history(): the server speaks protocol version 0, which keeps no room history.'
      : `emitWithAck("${event}"): the server speaks protocol version 0, which has no answers to requests; use emit.`;
  return new ClientError('PKG_ERR_CLIENT_REMOTE', message, { event, remoteCode: 'unsupported' });
}

export class ProtocolSocket {
  readonly requests = new PendingRequests();
  readonly rooms = new RoomSet();
  readonly positions = new RoomPositions();
  readonly presence = new PresenceRegistry();
  /** Refreshes the credentials of the connection before they expire (refresh.ts). */
  readonly refresh: CredentialRefresh;
  /** Messages emitted while disconnected (text or binary frames to send), oldest first. */
  buffer: Array<string | Uint8Array> = [];
  protocol: 0 | 1 | undefined;
  clientId: string | undefined;
  readonly #options: ResolvedClientOptions;
  readonly #listeners: Listeners;
  readonly #host: SocketHost;
  readonly #heartbeat = new Heartbeat();
  #session: string | undefined;
  /** The highest `seq` processed in the current session; 0 when a session starts. */
  #lastSeq = 0;
  #early: InboundMessage[] | null = null;
  #facts: CloseFacts = { authRefusal: undefined, closeError: undefined };
  #helloTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: ResolvedClientOptions, listeners: Listeners, host: SocketHost) {
    this.#options = options;
    this.#listeners = listeners;
    this.#host = host;
    const { auth } = options;
    this.refresh = new CredentialRefresh({
      token: typeof auth === 'function' ? auth : undefined,
      random: options.random,
      request: (event, data) => {
        const { id, promise } = this.requests.add(
          event,
          (n) => encodeMembers(event, { data, id: n }),
          options.ackTimeout,
          Number.POSITIVE_INFINITY,
        );
        this.send(this.requests.take(id)!);
        return promise;
      },
      refreshed: (expiresAt) => host.emit('refreshed', { expiresAt }),
      failed: (error, retryIn) =>
        host.emit('refresh_error', {
          error:
            error instanceof ClientError
              ? error
              : new ClientError(
                  'PKG_ERR_CLIENT_REFRESH_FAILED',
                  `Could not refresh the credentials: ${error instanceof Error ? error.message : String(error)}`,
                ),
          retryIn,
        }),
    });
  }

  /** The highest `seq` processed in the current session. */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** Sends a text message, or a binary frame (protocol version 1 only: dropped on 0). */
  send(message: string | Uint8Array): void {
    if (typeof message !== 'string' && this.protocol !== 1) return;
    this.#host.connection?.send(message);
  }

  sendControl(event: string, fields: Record<string, unknown>): void {
    this.send(encodeMembers(event, fields));
  }

  /**
   * Sends `join_room`: with an `id` on a version 1 connection, so that the server's answer
   * (`{room, namespace}`, or an `error` with its code) settles exactly this room, and with
   * `since`, the last position seen in the room, when there is one (recovery on).
   */
  sendJoin(room: string, namespace: string): void {
    const data: Record<string, unknown> = { room, namespace };
    if (this.protocol === 1) {
      const last = this.#options.recovery ? this.positions.get(room, namespace) : undefined;
      if (last) data['since'] = { offset: last.offset, epoch: last.epoch };
      this.sendControl('join_room', { data, id: this.rooms.request(room, namespace) });
    } else {
      this.sendControl('join_room', { data });
    }
  }

  /**
   * A connection opened: say `$hello`, or carry on in version 0 at once when the client
   * speaks only version 0 (`protocol: 'basic'`) or the server selected another subprotocol.
   */
  opened(selected: string | undefined, speaksV1: boolean, auth: string | undefined): void {
    if (!speaksV1 || (selected !== undefined && selected !== SUBPROTOCOL)) {
      // Version 0: asked for, or the server did not select pkg.v1 in the handshake.
      this.#established(0, undefined);
      return;
    }
    const hello: Record<string, unknown> = { v: PROTOCOL_VERSION };
    if (auth !== undefined) hello['auth'] = auth;
    if (this.#options.heartbeat) hello['heartbeat'] = { ...this.#options.heartbeat };
    if (this.#options.recovery && this.#session !== undefined) {
      hello['resume'] = { session: this.#session, seq: this.#lastSeq };
    }
    if (this.#options.recovery) {
      // Rooms the server joined this client to: it recovers them when it joins it again.
      const positions = this.positions.forHello((room, ns) => this.rooms.isWanted(room, ns));
      if (positions.length > 0) hello['positions'] = positions;
    }
    this.#early = [];
    this.sendControl(ControlEvent.HELLO, { data: hello });
    this.#helloTimer = setTimeout(() => {
      this.#facts.closeError = new ClientError(
        'PKG_ERR_CLIENT_HELLO_TIMEOUT',
        `The server answered neither $welcome nor an error within ${this.#options.helloTimeout} ms.`,
      );
      this.#host.connection?.close(CLOSE_LOST, 'no welcome');
    }, this.#options.helloTimeout);
  }

  /** One text message from the server. */
  message(text: string): void {
    this.#receive(decodeInbound(text));
  }

  /** One binary message from the server: a binary frame of protocol version 1. */
  binaryMessage(bytes: Uint8Array): void {
    this.#receive(decodeInboundBinary(bytes));
  }

  #receive(message: InboundMessage | null): void {
    if (!message) return;
    this.#heartbeat.alive();
    if (this.#early !== null) this.#beforeWelcome(message);
    else this.#dispatch(message);
  }

  /** The connection closed: stop its timers, reject what was sent on it. */
  closed(code: number): CloseFacts {
    this.#early = null;
    this.stopTimers();
    this.refresh.stop();
    this.requests.rejectAll(
      (event) =>
        new ClientError(
          'PKG_ERR_CLIENT_DISCONNECTED',
          `The connection closed (code ${code}) before the answer to "${event}" arrived.`,
          { event, closeCode: code },
        ),
      true,
    );
    // What this connection left is reported once; the next attempt starts with nothing.
    const facts = this.#facts;
    this.#facts = { authRefusal: undefined, closeError: undefined };
    return facts;
  }

  stopTimers(): void {
    clearTimeout(this.#helloTimer);
    this.#helloTimer = undefined;
    this.#heartbeat.stop();
  }

  /** Forgets the session: the next connection starts a new one, with `seq` from 1. */
  forgetSession(): void {
    this.#session = undefined;
    this.#lastSeq = 0;
  }

  /** disconnect(): nothing of this logical connection is kept. */
  reset(error: (event: string) => ClientError): void {
    this.stopTimers();
    this.refresh.stop();
    this.requests.rejectAll(error, false);
    this.rooms.clear(error('join_room'));
    this.presence.clear();
    this.buffer = [];
    this.#early = null;
    this.positions.clear();
    this.forgetSession();
  }

  #established(protocol: 0 | 1, welcome: ReceivedWelcome | undefined): void {
    clearTimeout(this.#helloTimer);
    this.#helloTimer = undefined;
    const hadSession = this.#session !== undefined;
    const resumed = welcome?.resumed === true && hadSession;
    this.protocol = protocol;
    this.clientId = welcome?.clientId;
    // `seq` is scoped to a session: a fresh one (resumed false) numbers from 1 again.
    if (!resumed) this.#lastSeq = 0;
    this.#session = this.#options.recovery ? welcome?.session : undefined;
    this.refresh.start(protocol === 1 ? welcome?.expiresAt : undefined);
    const { reconnected, attempt } = this.#host.established();
    if (welcome?.heartbeat) {
      this.#heartbeat.start(
        welcome.heartbeat,
        () => this.sendControl(ControlEvent.PING, { data: {} }),
        () => this.#host.connection?.close(CLOSE_LOST, 'heartbeat timeout'),
      );
    }
    const { join, leave } = this.rooms.onConnected(resumed);
    this.presence.connected(resumed);
    for (const r of leave) this.sendControl('leave_room', { data: r });
    for (const r of join) this.sendJoin(r.room, r.namespace);
    const buffered = this.buffer;
    this.buffer = [];
    for (const text of buffered) this.send(text);
    if (protocol === 0) this.requests.rejectAll((event) => unsupported(event), false);
    for (const id of this.requests.unsent()) this.send(this.requests.take(id)!);

    const info: ConnectInfo = { protocol, clientId: this.clientId, resumed };
    if (hadSession && !resumed && welcome?.reason) info.freshReason = welcome.reason;
    this.#host.emit('connect', info);
    if (reconnected) this.#host.emit('reconnect', { attempt });
    this.#host.settle(undefined);
    const early = this.#early ?? [];
    this.#early = null;
    for (const message of early) this.#dispatch(message);
  }

  /** Messages that arrive between `$hello` and `$welcome`. */
  #beforeWelcome(message: InboundMessage): void {
    if (message.event === ControlEvent.WELCOME) {
      this.#established(1, readWelcome(message.data));
      return;
    }
    if (message.event === 'error' && message.id === undefined) {
      const error = readErrorData(message.data);
      if (error.code === WireErrorCode.INVALID_EVENT) {
        // A server of protocol version 0 does not know `$hello`: carry on without it.
        this.#established(0, undefined);
        return;
      }
      if (error.code === WireErrorCode.UNAUTHORIZED || error.code === WireErrorCode.FORBIDDEN) {
        this.#facts.authRefusal = error;
        return;
      }
    }
    if (this.#early!.length < MAX_EARLY) this.#early!.push(message);
  }

  #dispatch(message: InboundMessage): void {
    const { event } = message;
    if (event === ControlEvent.PONG || event === ControlEvent.WELCOME) return;
    if (message.id !== undefined && message.pos !== undefined && isBytes(message.data)) {
      // A binary part of a `$history` answer (an answer itself never carries `pos`).
      this.requests.part(message.id, message.data);
      return;
    }
    if (message.id !== undefined) {
      const room = this.rooms.answer(message);
      // A refused rejoin (after a reconnect) answers no promise: report it as an `error`.
      if (room && !room.waited && message.event === 'error') {
        this.#host.emit('error', readErrorData(message.data));
      }
      if (!room) this.requests.answer(message);
      return;
    }
    if (message.seq !== undefined) {
      if (message.seq <= this.#lastSeq) return;
      this.#lastSeq = message.seq;
    }
    // A message of a room with history that the client has already seen (a replay that
    // overlaps what arrived live, a resume that crossed a recovery) is dropped.
    if (message.pos !== undefined && !this.positions.accept(message.pos)) return;
    if (message.rid !== undefined && event !== 'error') {
      void this.#serveRequest(message.rid, event, message.data);
      return;
    }
    const data = message.data;
    this.rooms.observe(event, data);
    if (this.presence.receive(event, data)) return;
    if (event === 'room_left') this.#roomLeft(data);
    if (event === 'error') {
      this.#host.emit('error', readErrorData(data));
      return;
    }
    if (event === ControlEvent.RECOVERED) {
      this.#recovered(data);
      return;
    }
    if (event === ControlEvent.REVOKED) {
      this.#revoked(data);
      return;
    }
    if (LIFECYCLE_EVENTS.has(event) || event.startsWith('$')) return;
    this.#listeners.call(event, data, message.pos ? { position: { ...message.pos } } : {});
  }

  /** `$recovered`: where the room stands now, and the `recovered` event. */
  #recovered(data: unknown): void {
    const read = readRecovered(data);
    if (!read) return;
    this.positions.recovered(read);
    const { room, namespace, recovered, reason, replayed, lost } = read;
    this.#host.emit('recovered', {
      room,
      namespace,
      recovered,
      ...(reason === undefined ? {} : { reason }),
      replayed,
      ...(lost === undefined ? {} : { lost }),
    });
  }

  /** `$revoked`: the server took the client out of a room; it is not rejoined. */
  #revoked(data: unknown): void {
    const read = readRevoked(data);
    if (!read) return;
    const { room, namespace, reason } = read;
    this.rooms.revoked(room, namespace);
    this.positions.forget(room, namespace);
    this.presence.left(room, namespace);
    this.#host.emit('revoked', { room, namespace, reason });
  }

  #roomLeft(data: unknown): void {
    const { room, namespace } = (data ?? {}) as Record<string, unknown>;
    if (typeof room === 'string' && typeof namespace === 'string') {
      this.presence.left(room, namespace);
    }
  }

  /** A request of the server (`rid`): the first listener's result is the answer. */
  async #serveRequest(rid: string | number, event: string, data: unknown): Promise<void> {
    const connection = this.#host.connection;
    const listener = this.#listeners.first(event);
    const reply = (name: string, payload: unknown): void => {
      if (connection !== this.#host.connection) return;
      // An answer in bytes goes back as one binary frame: `$ack` with the `rid`.
      if (name === ControlEvent.ACK && isBytes(payload)) {
        this.send(encodeBinary(name, payload, { rid: String(rid) }));
      } else this.sendControl(name, { rid, data: payload });
    };
    if (!listener || LIFECYCLE_EVENTS.has(event)) {
      reply(ControlEvent.NACK, {
        code: 'unknown_event',
        message: `The client has no handler for "${event}".`,
      });
      return;
    }
    try {
      const result = await (listener as (d: unknown, i: unknown) => unknown)(data, {});
      reply(ControlEvent.ACK, result === undefined ? null : result);
    } catch (err) {
      reply(ControlEvent.NACK, {
        code: 'handler_error',
        message: err instanceof Error ? err.message : String(err),
      });
    }
  }
}
