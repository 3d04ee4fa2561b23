/**
 * The client: one logical connection to a server of docs/protocol.md, kept alive across
 * network failures. This class is the public API; it hands connection attempts and the
 * reconnect rule to the manager (manager.ts) and what travels on an open connection to the
 * protocol socket (socket.ts), as socket.io-client splits its Manager from its Socket.
 */
import {
  CloseCode,
  ControlEvent,
  encodeRequest,
  readHistoryAnswer,
  readStreamPosition,
} from '@pkg/wire';
import { ClientError, createClientError } from './errors';
import type {
  AckOptions,
  DefaultEvents,
  EventAnswer,
  EventData,
  EventName,
  EventsMap,
  HistoryOptions,
  HistoryResult,
  LifecycleEventName,
  LifecycleEvents,
  Listener,
  ListenName,
  RoomRef,
} from './events';
import { Listeners, type AnyListener } from './listeners';
import { Manager, type ClientStatus } from './manager';
import { resolveOptions, type ClientOptions, type ResolvedClientOptions } from './options';
import type { Presence, PresenceMetaType } from './presence';
import { encodeMessage, traceMeta } from './protocol';
import { checkRoom } from './rooms';
import { ProtocolSocket, unsupported } from './socket';
import { buildUrl } from './url';

export type { ClientStatus } from './manager';
export { CLOSE_LOST } from './socket';

/**
 * A typed client. `Emit` describes what the client sends (`emit`, `emitWithAck`), `Listen`
 * what the server sends (`on`); both default to "any event, unknown data".
 */
export class Client<
  Emit extends EventsMap<Emit> = DefaultEvents,
  Listen extends EventsMap<Listen> = DefaultEvents,
> {
  readonly #options: ResolvedClientOptions;
  readonly #listeners = new Listeners();
  readonly #manager: Manager;
  readonly #socket: ProtocolSocket;

  /**
   * @param url `ws://` or `wss://` URL of the server (`http(s)://` is accepted and turned
   *   into `ws(s)://`; in a browser a path such as `/ws` is resolved against the page).
   */
  constructor(url: string, options: ClientOptions = {}) {
    if (typeof url !== 'string' || url.length === 0) {
      throw createClientError(
        TypeError,
        'PKG_ERR_CLIENT_INVALID_ARGUMENT',
        'Client: url must be a WebSocket URL such as "ws://localhost:6001".',
      );
    }
    this.#options = resolveOptions(options);
    buildUrl(url, {});
    const emit = <E extends LifecycleEventName>(
      event: E,
      payload: Parameters<LifecycleEvents[E]>[0],
    ): void => this.#listeners.call(event, payload);
    const manager = new Manager(url, this.#options, emit);
    this.#manager = manager;
    this.#socket = new ProtocolSocket(this.#options, this.#listeners, {
      get connection() {
        return manager.connection;
      },
      established: () => manager.established(),
      settle: (error) => manager.settle(error),
      emit,
    });
    manager.attach(this.#socket);
  }

  // ------------------------------------------------------------------ state

  get status(): ClientStatus {
    return this.#manager.status;
  }

  get connected(): boolean {
    return this.#manager.status === 'connected';
  }

  /** The client id from `$welcome` (protocol version 1), else undefined. */
  get id(): string | undefined {
    return this.#socket.clientId;
  }

  /** The protocol version of the current (or last) connection. */
  get protocol(): 0 | 1 | undefined {
    return this.#socket.protocol;
  }

  /** The rooms the server confirmed with `room_joined`. */
  rooms(): RoomRef[] {
    return this.#socket.rooms.list();
  }

  // ------------------------------------------------------------- listeners

  /**
   * Listens to a server event or a lifecycle event. For a request of the server (a message
   * with `rid`) the first listener's return value, awaited, is the answer.
   */
  on<E extends ListenName<Listen>>(event: E, listener: Listener<Listen, E>): this {
    this.#listeners.add(event, listener, false);
    return this;
  }

  /** Like `on`, removed after the first call. */
  once<E extends ListenName<Listen>>(event: E, listener: Listener<Listen, E>): this {
    this.#listeners.add(event, listener, true);
    return this;
  }

  /** Removes one listener, or every listener of the event when none is given. */
  off<E extends ListenName<Listen>>(event: E, listener?: Listener<Listen, E>): this {
    this.#listeners.remove(event, listener as AnyListener | undefined);
    return this;
  }

  // ------------------------------------------------------------- sending

  /**
   * Sends an event. `data` that is a `Uint8Array` (a Node.js Buffer is one) travels as one
   * binary frame, bytes unchanged (protocol version 1; on a version 0 connection it throws
   * PKG_ERR_CLIENT_REMOTE with `remoteCode` `unsupported`). While disconnected it is
   * buffered (up to `maxBuffered`, sent in order after reconnecting; a buffered binary
   * message is dropped if the server turns out to speak version 0) or, with
   * `whenDisconnected: 'reject'`, throws PKG_ERR_CLIENT_NOT_CONNECTED.
   */
  emit<E extends EventName<Emit>>(event: E, data: EventData<Emit, E>): void {
    const text = encodeMessage(event, data, undefined, traceMeta(this.#options.traceContext));
    const connection = this.#manager.connection;
    if (typeof text !== 'string' && this.connected && this.#socket.protocol === 0) {
      throw unsupported(event, true);
    }
    if (connection?.isOpen && this.connected) {
      connection.send(text);
      return;
    }
    if (this.#options.whenDisconnected === 'reject') {
      throw new ClientError(
        'PKG_ERR_CLIENT_NOT_CONNECTED',
        `emit("${event}") while disconnected: wait for the "connect" event, or set whenDisconnected to "buffer".`,
        { event },
      );
    }
    if (this.#socket.buffer.length >= this.#options.maxBuffered) {
      throw createClientError(
        RangeError,
        'PKG_ERR_CLIENT_BUFFER_FULL',
        `emit("${event}") while disconnected: the offline buffer already holds ${this.#options.maxBuffered} messages (maxBuffered).`,
      );
    }
    this.#socket.buffer.push(text);
  }

  /**
   * Sends an event with a request id and resolves with the server's answer (a `Uint8Array`
   * when the server answers with a binary frame; `data` that is bytes is sent as one); rejects with
   * PKG_ERR_CLIENT_REMOTE when the server answers with an `error`, PKG_ERR_CLIENT_ACK_TIMEOUT
   * after the timeout, PKG_ERR_CLIENT_DISCONNECTED when the connection is lost first.
   */
  emitWithAck<E extends EventName<Emit>>(
    event: E,
    data: EventData<Emit, E>,
    options: AckOptions = {},
  ): Promise<EventAnswer<Emit, E>> {
    try {
      encodeMessage(event, data);
      const meta = traceMeta(this.#options.traceContext);
      return this.#request(
        event,
        (id) => encodeMessage(event, data, id, meta),
        options.timeout,
      ) as Promise<EventAnswer<Emit, E>>;
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  /**
   * The kept messages of a room the client is in (a room whose server keeps history), for
   * an initial load or after a `recovered` event that says messages were lost: sends
   * `$history` and resolves with the messages, oldest first, and the room's position.
   * Rejects with PKG_ERR_CLIENT_REMOTE when the server refuses (`remoteCode` `forbidden`
   * when the client is not in the room), and as emitWithAck does on a timeout or a lost
   * connection.
   */
  history(room: string, options: HistoryOptions = {}): Promise<HistoryResult<Listen>> {
    try {
      const { namespace = '/', limit, since } = options;
      checkRoom('history', room, namespace);
      const data: Record<string, unknown> = { room, namespace };
      if (limit !== undefined) {
        if (!Number.isSafeInteger(limit) || limit < 1) {
          throw createClientError(
            TypeError,
            'PKG_ERR_CLIENT_INVALID_ARGUMENT',
            'history: limit must be a whole number of 1 or more (the server caps it).',
          );
        }
        data['limit'] = limit;
      }
      if (since !== undefined) {
        const position = readStreamPosition(since);
        if (typeof position === 'string') {
          throw createClientError(
            TypeError,
            'PKG_ERR_CLIENT_INVALID_ARGUMENT',
            `history: since must be a position {offset, epoch} taken from a message or an earlier answer (${position}).`,
          );
        }
        data['since'] = position;
      }
      const event = ControlEvent.HISTORY;
      const answer = this.#request(event, (id) => encodeRequest(event, data, id), options.timeout);
      return answer.then((raw) => {
        const read = readHistoryAnswer(raw);
        if (read) {
          // What the application now has: a recovery need not start before it.
          const positions = this.#socket.positions;
          const newest = read.messages[read.messages.length - 1]?.pos;
          const upTo = since === undefined ? read.position : newest;
          if (upTo !== undefined) positions.floor(room, namespace, upTo);
          else if (read.reason === 'not_kept') positions.forget(room, namespace);
          else if (since === undefined && read.complete) positions.unknown(room, namespace);
          return read as HistoryResult<Listen>;
        }
        throw new ClientError(
          'PKG_ERR_CLIENT_REMOTE',
          `The server's answer to $history for room "${room}" has no messages list: it does not keep history as this client expects.`,
          { event, data: raw, room, namespace },
        );
      });
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  /** Sends a request with an id (now, or once connected) and resolves with its answer. */
  #request(
    event: string,
    encode: (id: number) => string | Uint8Array,
    timeout?: number,
  ): Promise<unknown> {
    const call = event === ControlEvent.HISTORY ? 'history()' : `emitWithAck("${event}")`;
    const ms = timeout ?? this.#options.ackTimeout;
    if (typeof ms !== 'number' || !(ms > 0) || ms > 2_147_483_647) {
      throw createClientError(
        TypeError,
        'PKG_ERR_CLIENT_INVALID_ARGUMENT',
        `${call}: timeout must be a positive number of milliseconds.`,
      );
    }
    const connected = this.connected;
    if (connected && this.#socket.protocol === 0) throw unsupported(event);
    if (!connected && this.#options.ackWhenDisconnected === 'reject') {
      throw new ClientError(
        'PKG_ERR_CLIENT_NOT_CONNECTED',
        `${call} while disconnected: wait for the "connect" event, or set ackWhenDisconnected to "wait".`,
        { event },
      );
    }
    const requests = this.#socket.requests;
    const { id, promise } = requests.add(event, encode, ms, this.#options.maxPendingAcks);
    if (connected) this.#socket.send(requests.take(id)!);
    return promise;
  }

  // ---------------------------------------------------------------- rooms

  /**
   * Joins a room through the built-in `join_room` event; resolves on `room_joined`,
   * rejects with PKG_ERR_CLIENT_REMOTE when the server refuses (`remoteCode` `forbidden`,
   * `too_many_rooms`, `invalid_payload` or `rate_limited`; `room` and `namespace` name the
   * room). The room is joined again after a reconnect that did not resume the session.
   */
  joinRoom(room: string, namespace = '/', options: AckOptions = {}): Promise<void> {
    try {
      checkRoom('joinRoom', room, namespace);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    const rooms = this.#socket.rooms;
    if (rooms.isJoined(room, namespace)) return Promise.resolve();
    const joined = rooms.join(room, namespace, options.timeout ?? this.#options.ackTimeout);
    if (this.connected) this.#socket.sendJoin(room, namespace);
    return joined.then(() => this.#positionAfterJoin(room, namespace));
  }

  /**
   * A room joined with no position known yet: its current position is read once (`$history`
   * with limit 1), so that a client that moves to another instance before the room's first
   * message still recovers what it missed. Nothing is read for a server of version 0 or
   * with `recovery: false`; a room that keeps no history is forgotten again (`not_kept`).
   */
  #positionAfterJoin(room: string, namespace: string): void {
    const socket = this.#socket;
    if (socket.protocol !== 1 || !this.#options.recovery) return;
    if (socket.positions.get(room, namespace) !== undefined) return;
    // Until the answer comes (it may not: the connection can drop first), a recovery of the
    // room cannot name a position; it asks from an unknown one and is told what was lost.
    socket.positions.unknown(room, namespace);
    this.history(room, { namespace, limit: 1 }).catch(() => undefined);
  }

  /** Leaves a room through `leave_room`; resolves on `room_left` (at once when disconnected). */
  leaveRoom(room: string, namespace = '/', options: AckOptions = {}): Promise<void> {
    try {
      checkRoom('leaveRoom', room, namespace);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    const timeout = options.timeout ?? this.#options.ackTimeout;
    this.#socket.positions.forget(room, namespace);
    const left = this.#socket.rooms.leave(room, namespace, this.connected, timeout);
    if (this.connected) this.#socket.sendControl('leave_room', { data: { room, namespace } });
    return left;
  }

  /**
   * The live presence of a room whose server tracks presence: who is in it, kept up to date
   * from `$presence` and `$presence_diff` (protocol version 1), across reconnects. The same
   * object until its `close()`. It does not join the room: use `joinRoom`, or let the
   * server join the client. The metas' members are typed by the `$presence` member of the
   * map of what the server sends.
   */
  presence<M = PresenceMetaType<Listen>>(room: string, namespace = '/'): Presence<M> {
    checkRoom('presence', room, namespace);
    return this.#socket.presence.view<M>(room, namespace);
  }

  // ----------------------------------------------------------- connecting

  /**
   * Connects (and keeps reconnecting, by the options and the close-code rule). Resolves
   * once connected; rejects when the server refuses the credentials or sends the client
   * away, when the attempts run out, or on disconnect().
   */
  connect(): Promise<void> {
    return this.#manager.connect();
  }

  /**
   * Closes the connection (code 1000, which ends the session on the server) and stops
   * reconnecting. Pending requests and joins reject with PKG_ERR_CLIENT_DISCONNECTED; the
   * offline buffer and the rooms are cleared.
   */
  disconnect(): void {
    const wasConnected = this.#manager.disconnect();
    const error = (event: string): ClientError =>
      new ClientError(
        'PKG_ERR_CLIENT_DISCONNECTED',
        `"${event}": disconnect() was called before the answer arrived.`,
        { event },
      );
    this.#socket.reset(error);
    this.#manager.settle(error('connect'));
    if (wasConnected) {
      this.#listeners.call('disconnect', {
        code: CloseCode.NORMAL,
        reason: 'client disconnect',
        willReconnect: false,
      });
    }
  }
}
