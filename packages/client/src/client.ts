/**
 * The client: one logical connection to a server of docs/protocol.md, kept alive across
 * network failures (backoff with jitter, rejoin, re-authentication, session recovery).
 */
import { backoffDelay } from './backoff';
import { ClientError, createClientError } from './errors';
import type {
  AckOptions,
  ConnectInfo,
  DefaultEvents,
  EventAnswer,
  EventData,
  EventName,
  EventsMap,
  LifecycleEventName,
  LifecycleEvents,
  Listener,
  ListenName,
  RoomRef,
  ServerErrorData,
} from './events';
import { Heartbeat } from './heartbeat';
import { LIFECYCLE_EVENTS, Listeners, type AnyListener } from './listeners';
import { resolveOptions, type ClientOptions, type ResolvedClientOptions } from './options';
import {
  ControlEvent,
  PROTOCOL_VERSION,
  decodeInbound,
  encodeMessage,
  readErrorData,
  readWelcome,
  type InboundMessage,
  type Welcome,
} from './protocol';
import { attemptFailure, credentialRefusal } from './refusal';
import { RoomSet, checkRoom } from './rooms';
import { PendingRequests } from './requests';
import { Connection, V1_SUBPROTOCOL, resolveWebSocket, type UpgradeRefusal } from './transport';
import { buildUrl } from './url';

/** Where the client is: not connecting, opening a connection, connected, or waiting to retry. */
export type ClientStatus = 'idle' | 'connecting' | 'connected' | 'waiting';

/** Close code the client uses when it gives up on a connection but keeps the session. */
export const CLOSE_LOST = 4000;

const MAX_EARLY = 1000;

function unsupported(event: string): ClientError {
  return new ClientError(
    'PKG_ERR_CLIENT_REMOTE',
    `emitWithAck("${event}"): the server speaks protocol version 0, which has no answers to requests; use emit.`,
    { event, remoteCode: 'unsupported' },
  );
}

function isData(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

async function resolveSource<T>(
  source: T | (() => T | Promise<T>) | undefined,
): Promise<T | undefined> {
  return typeof source === 'function' ? await (source as () => T | Promise<T>)() : source;
}

/**
 * A typed client. `Emit` describes what the client sends (`emit`, `emitWithAck`), `Listen`
 * what the server sends (`on`); both default to "any event, unknown data".
 */
export class Client<
  Emit extends EventsMap<Emit> = DefaultEvents,
  Listen extends EventsMap<Listen> = DefaultEvents,
> {
  readonly #url: string;
  readonly #options: ResolvedClientOptions;
  readonly #listeners = new Listeners();
  readonly #heartbeat = new Heartbeat();
  readonly #requests = new PendingRequests();
  readonly #rooms = new RoomSet();
  /** Messages emitted while disconnected (text to send), oldest first. */
  #buffer: string[] = [];
  #connection: Connection | null = null;
  #status: ClientStatus = 'idle';
  #protocol: 0 | 1 | undefined;
  #clientId: string | undefined;
  #session: string | undefined;
  #lastSeq = 0;
  #attempt = 0;
  #reconnecting = false;
  #offline = false;
  #early: InboundMessage[] | null = null;
  #authRefusal: ServerErrorData | undefined;
  /** Why the client itself closed a connection that was not established yet. */
  #closeError: ClientError | undefined;
  #helloTimer: ReturnType<typeof setTimeout> | undefined;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #connectWaiters: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  #generation = 0;
  /**
   * Offer the subprotocol `pkg.v1`; false after a server selected none and `ws` refused the
   * handshake for it, until the next connect() from idle.
   */
  #offerV1 = true;
  readonly #onOnline = (): void => this.#networkChanged(true);
  readonly #onOffline = (): void => this.#networkChanged(false);

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
    this.#url = url;
    this.#options = resolveOptions(options);
    buildUrl(url, {});
  }

  // ------------------------------------------------------------------ state

  get status(): ClientStatus {
    return this.#status;
  }

  get connected(): boolean {
    return this.#status === 'connected';
  }

  /** The client id from `$welcome` (protocol version 1), else undefined. */
  get id(): string | undefined {
    return this.#clientId;
  }

  /** The protocol version of the current (or last) connection. */
  get protocol(): 0 | 1 | undefined {
    return this.#protocol;
  }

  /** The rooms the server confirmed with `room_joined`. */
  rooms(): RoomRef[] {
    return this.#rooms.list();
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

  #emitLocal<E extends LifecycleEventName>(
    event: E,
    payload: Parameters<LifecycleEvents[E]>[0],
  ): void {
    this.#listeners.call(event, payload);
  }

  // ------------------------------------------------------------- sending

  /**
   * Sends an event. While disconnected it is buffered (up to `maxBuffered`, sent in order
   * after reconnecting) or, with `whenDisconnected: 'reject'`, throws PKG_ERR_CLIENT_NOT_CONNECTED.
   */
  emit<E extends EventName<Emit>>(event: E, data: EventData<Emit, E>): void {
    const text = encodeMessage(event, data);
    if (this.#connection?.isOpen && this.#status === 'connected') {
      this.#connection.send(text);
      return;
    }
    if (this.#options.whenDisconnected === 'reject') {
      throw new ClientError(
        'PKG_ERR_CLIENT_NOT_CONNECTED',
        `emit("${event}") while disconnected: wait for the "connect" event, or set whenDisconnected to "buffer".`,
        { event },
      );
    }
    if (this.#buffer.length >= this.#options.maxBuffered) {
      throw createClientError(
        RangeError,
        'PKG_ERR_CLIENT_BUFFER_FULL',
        `emit("${event}") while disconnected: the offline buffer already holds ${this.#options.maxBuffered} messages (maxBuffered).`,
      );
    }
    this.#buffer.push(text);
  }

  /**
   * Sends an event with a request id and resolves with the server's answer; rejects with
   * PKG_ERR_CLIENT_REMOTE when the server answers with an `error`, PKG_ERR_CLIENT_ACK_TIMEOUT
   * after the timeout, PKG_ERR_CLIENT_DISCONNECTED when the connection is lost first.
   */
  emitWithAck<E extends EventName<Emit>>(
    event: E,
    data: EventData<Emit, E>,
    options: AckOptions = {},
  ): Promise<EventAnswer<Emit, E>> {
    try {
      const timeout = options.timeout ?? this.#options.ackTimeout;
      if (typeof timeout !== 'number' || !(timeout > 0) || timeout > 2_147_483_647) {
        throw createClientError(
          TypeError,
          'PKG_ERR_CLIENT_INVALID_ARGUMENT',
          `emitWithAck("${event}"): timeout must be a positive number of milliseconds.`,
        );
      }
      encodeMessage(event, data);
      const connected = this.#status === 'connected';
      if (connected && this.#protocol === 0) {
        throw unsupported(event);
      }
      if (!connected && this.#options.ackWhenDisconnected === 'reject') {
        throw new ClientError(
          'PKG_ERR_CLIENT_NOT_CONNECTED',
          `emitWithAck("${event}") while disconnected: wait for the "connect" event, or set ackWhenDisconnected to "wait".`,
          { event },
        );
      }
      const { id, promise } = this.#requests.add(
        event,
        (id) => encodeMessage(event, data, id),
        timeout,
        this.#options.maxPendingAcks,
      );
      if (connected) this.#connection?.send(this.#requests.take(id)!);
      return promise as Promise<EventAnswer<Emit, E>>;
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  #sendControl(event: string, fields: Record<string, unknown>): void {
    this.#connection?.send(JSON.stringify({ event, ...fields }));
  }

  // ---------------------------------------------------------------- rooms

  /**
   * Joins a room through the built-in `join_room` event; resolves on `room_joined`,
   * rejects with PKG_ERR_CLIENT_REMOTE (remoteCode `forbidden`) when the server refuses.
   * The room is joined again after a reconnect that did not resume the session.
   */
  joinRoom(room: string, namespace = '/', options: AckOptions = {}): Promise<void> {
    try {
      checkRoom('joinRoom', room, namespace);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    if (this.#rooms.isJoined(room, namespace)) return Promise.resolve();
    const joined = this.#rooms.join(room, namespace, options.timeout ?? this.#options.ackTimeout);
    if (this.connected) this.#sendControl('join_room', { data: { room, namespace } });
    return joined;
  }

  /** Leaves a room through `leave_room`; resolves on `room_left` (at once when disconnected). */
  leaveRoom(room: string, namespace = '/', options: AckOptions = {}): Promise<void> {
    try {
      checkRoom('leaveRoom', room, namespace);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    const timeout = options.timeout ?? this.#options.ackTimeout;
    const left = this.#rooms.leave(room, namespace, this.connected, timeout);
    if (this.connected) this.#sendControl('leave_room', { data: { room, namespace } });
    return left;
  }

  // ----------------------------------------------------------- connecting

  /**
   * Connects (and keeps reconnecting, by the options). Resolves once connected; rejects
   * when the server refuses the credentials, when the attempts run out, or on disconnect().
   */
  connect(): Promise<void> {
    if (this.#status === 'connected') return Promise.resolve();
    const waiting = new Promise<void>((resolve, reject) =>
      this.#connectWaiters.push({ resolve, reject }),
    );
    if (this.#status === 'idle') {
      this.#attempt = 0;
      this.#offerV1 = true;
      this.#reconnecting = false;
      this.#watchNetwork(true);
      void this.#open();
    }
    return waiting;
  }

  /**
   * Closes the connection (code 1000, which ends the session on the server) and stops
   * reconnecting. Pending requests and joins reject with PKG_ERR_CLIENT_DISCONNECTED; the
   * offline buffer and the rooms are cleared.
   */
  disconnect(): void {
    const wasConnected = this.connected;
    this.#generation += 1;
    this.#status = 'idle';
    this.#watchNetwork(false);
    this.#clearTimers();
    const connection = this.#connection;
    this.#connection = null;
    connection?.close(1000, 'client disconnect');
    const error = (event: string): ClientError =>
      new ClientError(
        'PKG_ERR_CLIENT_DISCONNECTED',
        `"${event}": disconnect() was called before the answer arrived.`,
        { event },
      );
    this.#requests.rejectAll(error, false);
    this.#rooms.clear(error('join_room'));
    this.#buffer = [];
    this.#session = undefined;
    this.#lastSeq = 0;
    this.#early = null;
    this.#settleConnect(error('connect'));
    if (wasConnected) {
      this.#emitLocal('disconnect', {
        code: 1000,
        reason: 'client disconnect',
        willReconnect: false,
      });
    }
  }

  async #open(): Promise<void> {
    const generation = ++this.#generation;
    this.#status = 'connecting';
    this.#authRefusal = undefined;
    this.#closeError = undefined;
    let url: string;
    let auth: string | undefined;
    let Ctor;
    try {
      Ctor = await resolveWebSocket(this.#options.WebSocket);
      url = buildUrl(this.#url, (await resolveSource(this.#options.query)) ?? {});
      auth = await resolveSource(this.#options.auth);
    } catch (err) {
      if (generation !== this.#generation) return;
      const error =
        err instanceof ClientError
          ? err
          : new ClientError(
              'PKG_ERR_CLIENT_CONNECTION_FAILED',
              `Could not prepare the connection: ${err instanceof Error ? err.message : String(err)}`,
            );
      this.#fail(error);
      return;
    }
    if (generation !== this.#generation) return;
    const protocols = this.#options.protocol === 'basic' || !this.#offerV1 ? [] : [V1_SUBPROTOCOL];
    const connection: Connection = new Connection(Ctor, url, protocols, {
      open: () => this.#onOpen(generation, auth),
      message: (text) => this.#onMessage(generation, text),
      close: (code, reason, refusal) => {
        if (generation === this.#generation && connection.noSubprotocol && this.#offerV1) {
          // `ws` refuses a handshake in which the server selected none of the offered
          // subprotocols (browsers accept it): that server speaks version 0, so connect
          // again at once without offering pkg.v1.
          this.#offerV1 = false;
          this.#connection = null;
          void this.#open();
          return;
        }
        this.#onClose(generation, code, reason, refusal);
      },
    });
    this.#connection = connection;
  }

  #onOpen(generation: number, auth: string | undefined): void {
    if (generation !== this.#generation) return;
    const selected = this.#connection?.protocol;
    if (
      this.#options.protocol === 'basic' ||
      (selected !== undefined && selected !== V1_SUBPROTOCOL)
    ) {
      // Version 0: asked for, or the server did not select pkg.v1 in the handshake (a
      // server without protocol version 1), so no $hello and no waiting for $welcome.
      this.#established(0, undefined);
      return;
    }
    const hello: Record<string, unknown> = { v: PROTOCOL_VERSION };
    if (auth !== undefined) hello['auth'] = auth;
    if (this.#options.heartbeat) hello['heartbeat'] = { ...this.#options.heartbeat };
    if (this.#options.recovery && this.#session !== undefined) {
      hello['resume'] = { session: this.#session, seq: this.#lastSeq };
    }
    this.#early = [];
    this.#sendControl(ControlEvent.HELLO, { data: hello });
    this.#helloTimer = setTimeout(() => {
      this.#closeError = new ClientError(
        'PKG_ERR_CLIENT_HELLO_TIMEOUT',
        `The server answered neither $welcome nor an error within ${this.#options.helloTimeout} ms.`,
      );
      this.#connection?.close(CLOSE_LOST, 'no welcome');
    }, this.#options.helloTimeout);
  }

  #established(protocol: 0 | 1, welcome: Welcome | undefined): void {
    clearTimeout(this.#helloTimer);
    this.#helloTimer = undefined;
    const hadSession = this.#session !== undefined;
    const resumed = welcome?.resumed === true && hadSession;
    this.#protocol = protocol;
    this.#clientId = welcome?.clientId;
    if (!resumed) this.#lastSeq = 0;
    this.#session = this.#options.recovery ? welcome?.session : undefined;
    this.#status = 'connected';
    if (welcome?.heartbeat) {
      this.#heartbeat.start(
        welcome.heartbeat,
        () => this.#sendControl(ControlEvent.PING, { data: {} }),
        () => this.#connection?.close(CLOSE_LOST, 'heartbeat timeout'),
      );
    }

    const { join, leave } = this.#rooms.onConnected(resumed);
    for (const r of leave) this.#sendControl('leave_room', { data: r });
    for (const r of join) this.#sendControl('join_room', { data: r });
    const buffered = this.#buffer;
    this.#buffer = [];
    for (const text of buffered) this.#connection?.send(text);
    if (protocol === 0) {
      this.#requests.rejectAll((event) => unsupported(event), false);
    }
    for (const id of this.#requests.unsent()) this.#connection?.send(this.#requests.take(id)!);

    const info: ConnectInfo = { protocol, clientId: this.#clientId, resumed };
    if (hadSession && !resumed && welcome?.reason) info.freshReason = welcome.reason;
    const reconnected = this.#reconnecting;
    const attempt = this.#attempt;
    this.#reconnecting = false;
    this.#attempt = 0;
    this.#emitLocal('connect', info);
    if (reconnected) this.#emitLocal('reconnect', { attempt });
    this.#settleConnect(undefined);
    const early = this.#early ?? [];
    this.#early = null;
    for (const message of early) this.#dispatch(message);
  }

  #onMessage(generation: number, text: string): void {
    if (generation !== this.#generation) return;
    const message = decodeInbound(text);
    if (!message) return;
    this.#heartbeat.alive();
    if (this.#early !== null) {
      this.#beforeWelcome(message);
      return;
    }
    this.#dispatch(message);
  }

  /** Messages that arrive between `$hello` and `$welcome`. */
  #beforeWelcome(message: InboundMessage): void {
    if (message.event === ControlEvent.WELCOME) {
      this.#established(1, readWelcome(message.data));
      return;
    }
    if (message.event === 'error' && message.id === undefined) {
      const error = readErrorData(message.data);
      if (error.code === 'invalid_event') {
        // A server of protocol version 0 does not know `$hello`: carry on without it.
        this.#established(0, undefined);
        return;
      }
      if (error.code === 'unauthorized' || error.code === 'forbidden') {
        this.#authRefusal = { ...(isData(message.data) ? message.data : {}), ...error };
        return;
      }
    }
    if (this.#early!.length < MAX_EARLY) this.#early!.push(message);
  }

  #dispatch(message: InboundMessage): void {
    const { event } = message;
    if (event === ControlEvent.PONG || event === ControlEvent.WELCOME) return;
    if (message.id !== undefined) {
      this.#requests.answer(message);
      return;
    }
    if (message.seq !== undefined) {
      if (message.seq <= this.#lastSeq) return;
      this.#lastSeq = message.seq;
    }
    if (message.rid !== undefined && event !== 'error') {
      void this.#serveRequest(message.rid, event, message.data);
      return;
    }
    const data = message.data;
    this.#rooms.observe(event, data);
    if (event === 'error') {
      this.#emitLocal('error', { ...(isData(data) ? data : {}), ...readErrorData(data) });
      return;
    }
    if (LIFECYCLE_EVENTS.has(event) || event.startsWith('$')) return;
    this.#listeners.call(event, data);
  }

  /** A request of the server (`rid`): the first listener's result is the answer. */
  async #serveRequest(rid: string | number, event: string, data: unknown): Promise<void> {
    const connection = this.#connection;
    const listener = this.#listeners.first(event);
    const reply = (name: string, payload: unknown): void => {
      if (connection === this.#connection) this.#sendControl(name, { rid, data: payload });
    };
    if (!listener || LIFECYCLE_EVENTS.has(event)) {
      reply(ControlEvent.NACK, {
        code: 'unknown_event',
        message: `The client has no handler for "${event}".`,
      });
      return;
    }
    try {
      const result = await (listener as (d: unknown) => unknown)(data);
      reply(ControlEvent.ACK, result === undefined ? null : result);
    } catch (err) {
      reply(ControlEvent.NACK, {
        code: 'handler_error',
        message: err instanceof Error ? err.message : String(err),
      });
    }
  }

  // ------------------------------------------------------------- liveness

  #clearTimers(): void {
    clearTimeout(this.#helloTimer);
    clearTimeout(this.#retryTimer);
    this.#heartbeat.stop();
    this.#helloTimer = this.#retryTimer = undefined;
  }

  // ------------------------------------------------------------- closing

  #onClose(
    generation: number,
    code: number,
    reason: string,
    refusal: UpgradeRefusal | undefined,
  ): void {
    if (generation !== this.#generation) return;
    const wasConnected = this.#status === 'connected';
    this.#connection = null;
    this.#early = null;
    this.#clearTimers();
    this.#requests.rejectAll(
      (event) =>
        new ClientError(
          'PKG_ERR_CLIENT_DISCONNECTED',
          `The connection closed (code ${code}) before the answer to "${event}" arrived.`,
          { event, closeCode: code },
        ),
      true,
    );
    const fatal = credentialRefusal(code, reason, refusal, this.#authRefusal);
    const willReconnect = fatal === undefined && this.#options.reconnection;
    if (wasConnected) this.#emitLocal('disconnect', { code, reason, willReconnect });
    if (fatal) {
      this.#fail(fatal);
      return;
    }
    if (!wasConnected) {
      this.#emitLocal('connect_error', this.#closeError ?? attemptFailure(code, reason, refusal));
    }
    if (!this.#options.reconnection) {
      this.#status = 'idle';
      this.#watchNetwork(false);
      this.#settleConnect(
        new ClientError(
          'PKG_ERR_CLIENT_CONNECTION_FAILED',
          `The connection closed (code ${code}) and reconnection is off.`,
          { closeCode: code, reason },
        ),
      );
      return;
    }
    this.#scheduleRetry();
  }

  /** Gives up: reports the error, stops retrying, rejects connect(). */
  #fail(error: ClientError): void {
    this.#status = 'idle';
    this.#reconnecting = false;
    this.#watchNetwork(false);
    this.#clearTimers();
    this.#emitLocal('connect_error', error);
    this.#settleConnect(error);
  }

  #scheduleRetry(): void {
    this.#status = 'waiting';
    this.#reconnecting = true;
    if (this.#offline) return; // `online` starts the next attempt
    const attempt = this.#attempt + 1;
    if (attempt > this.#options.reconnectionAttempts) {
      const attempts = this.#attempt;
      this.#status = 'idle';
      this.#reconnecting = false;
      this.#watchNetwork(false);
      this.#emitLocal('reconnect_failed', { attempts });
      this.#settleConnect(
        new ClientError(
          'PKG_ERR_CLIENT_CONNECTION_FAILED',
          `Gave up after ${attempts} reconnection attempts (reconnectionAttempts).`,
        ),
      );
      return;
    }
    this.#attempt = attempt;
    const o = this.#options;
    const delay = backoffDelay(attempt, o.reconnectionDelay, o.reconnectionDelayMax, o.random);
    this.#emitLocal('reconnecting', { attempt, delay });
    const generation = this.#generation;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      if (generation === this.#generation && this.#status === 'waiting') void this.#open();
    }, delay);
  }

  #settleConnect(error: Error | undefined): void {
    const waiters = this.#connectWaiters;
    this.#connectWaiters = [];
    for (const w of waiters) {
      if (error) w.reject(error);
      else w.resolve();
    }
  }

  // -------------------------------------------------------------- network

  #watchNetwork(on: boolean): void {
    const network = this.#options.network;
    if (!network) return;
    network.removeEventListener('online', this.#onOnline);
    network.removeEventListener('offline', this.#onOffline);
    if (on) {
      network.addEventListener('online', this.#onOnline);
      network.addEventListener('offline', this.#onOffline);
    } else this.#offline = false;
  }

  /** Offline: drop the (probably dead) connection and wait. Online: retry at once. */
  #networkChanged(online: boolean): void {
    if (!online) {
      this.#offline = true;
      clearTimeout(this.#retryTimer);
      this.#retryTimer = undefined;
      if (this.#connection) this.#connection.close(CLOSE_LOST, 'network offline');
      return;
    }
    if (!this.#offline) return;
    this.#offline = false;
    if (this.#status === 'waiting') {
      this.#attempt = 0;
      void this.#open();
    }
  }
}
