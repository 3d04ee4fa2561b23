import type {
  EventAnswer,
  EventName,
  EventPayload,
  EventsMap,
  ListenedEvents,
  SocketEventsDeclaration,
  UntypedEvents,
} from '@pkg/decorators';
import type { EventData } from '@pkg/ws-protocol';
import type { StreamPosition } from '@pkg/wire';
import type { LoggerInterface } from '@pkg/logger';
import type { ClientType } from '../ws/client-registry';
import { createCoreError } from '../errors';
import { DEFAULT_NAMESPACE } from '../ws/namespace-manager';

/** Options of `emitWithAck`. */
export interface EmitWithAckOptions {
  /** Milliseconds to wait for the answer (default: the `ack_timeout` config key, 10000). */
  timeout?: number;
}

/** Options of `broadcast` beyond the spec's arguments. */
export interface BroadcastOptions {
  /** Client id(s) that do not receive the message, typically the sender. */
  except?: string | readonly string[];
}

/** The options-object form of `broadcast(event, data, { namespace, room, except })`. */
export interface BroadcastTargetOptions extends BroadcastOptions {
  /** Only members of this namespace (with `room`: the namespace of the room, `/` by default). */
  namespace?: string | null;
  /** Only members of this room. */
  room?: string | null;
}

/**
 * The positional arguments of `broadcast` from either form: `(namespace, room, options)`
 * or `({ namespace, room, except })`.
 */
export function resolveBroadcastArgs(
  namespaceOrOptions: string | null | BroadcastTargetOptions | undefined,
  room: string | null | undefined,
  options: BroadcastOptions | undefined,
): [namespace: string | null, room: string | null, options: BroadcastOptions] {
  if (typeof namespaceOrOptions !== 'object' || namespaceOrOptions === null) {
    return [namespaceOrOptions ?? null, room ?? null, options ?? {}];
  }
  if (room !== undefined || options !== undefined) {
    throw createCoreError(
      TypeError,
      'PKG_ERR_CORE_INVALID_ARGUMENT',
      'broadcast(event, data, { namespace, room, except }): with an options object as the third argument, pass nothing after it.',
    );
  }
  const { namespace = null, room: target = null, except } = namespaceOrOptions;
  return [namespace, target, except === undefined ? {} : { except }];
}

/**
 * What a controller can ask of the server it is registered with: messaging, rooms,
 * namespaces and per-client data. `Server` implements it; a controller that needs more of
 * the server (its handlers, its namespace manager) extends `SocketController<Server>`.
 */
/** Options of `joinRoom` beyond the spec's arguments. */
export interface JoinRoomOptions {
  /**
   * The last position the client saw in the room (protocol version 1, a room that keeps
   * history): when the client was not in the room yet, it gets the messages it missed, then
   * `$recovered`.
   */
  readonly since?: StreamPosition;
}

/** Who a client is and until when its credentials hold, as its auth handlers said. */
export interface ClientCredentials {
  /** The identity its auth handlers gave (`{ identity }`); undefined: none. */
  readonly identity: string | undefined;
  /** When its credentials expire (ms since the epoch); undefined: they do not. */
  readonly expiresAt: number | undefined;
}

export interface ControllerHost {
  /** `data` a Uint8Array: one binary frame (protocol version 1 clients only). */
  send(clientId: string, event: string, data: EventData | Uint8Array): boolean;
  sendEventError(
    clientId: string,
    code: string,
    message: string,
    extra?: Record<string, unknown>,
  ): void;
  broadcast(
    event: string,
    data: EventData | Uint8Array,
    namespace?: string | null | BroadcastTargetOptions,
    room?: string | null,
    options?: BroadcastOptions,
  ): number;
  joinRoom(clientId: string, room: string, namespace?: string, options?: JoinRoomOptions): boolean;
  leaveRoom(clientId: string, room: string, namespace?: string): void;
  leaveAllRooms(clientId: string): void;
  joinNamespace(clientId: string, namespace: string): boolean;
  leaveNamespace(clientId: string, namespace?: string): void;
  disconnectClient(clientId: string): void;
  getClientCount(): number;
  getAllClients(): string[];
  setClientData(clientId: string, key: string, value: unknown): boolean;
  getClientData(clientId: string, key?: string | null): unknown;
  getClientType(clientId: string): ClientType | undefined;
  isConnected(clientId: string): boolean;
  getLogger(): LoggerInterface;
  log(message: string): void;
  /** The credentials of a connected client (`Server` has it; other hosts may not). */
  getCredentials?(clientId: string): ClientCredentials | undefined;
  /**
   * Grants a joined room until `expiresAt` (ms since the epoch; null: for good, replacing an
   * earlier grant): then the client leaves it and gets `$revoked` (reason `expired`).
   */
  grantRoom?(clientId: string, room: string, namespace: string, expiresAt: number | null): void;
  /** Requests to protocol version 1 clients (`Server` has it; other hosts may not). */
  emitWithAck?(
    clientId: string,
    event: string,
    data: EventData | Uint8Array,
    options?: EmitWithAckOptions,
  ): Promise<unknown>;
}

/**
 * Base class of application controllers. Decorate methods with `SocketOn`, `OnConnect`,
 * `OnDisconnect`, `HttpRoute` and `RateLimit`, then pass an instance to
 * `server.registerController()`, which calls `setServer` and registers the routes. The
 * helpers below forward to that server.
 *
 * The type parameters are optional: `Host` is what `getServer()` returns; `Emit` is the
 * event map of what the server sends (it types `emit` and `broadcast`), `Listen` the map of
 * what clients send (it types the `SocketOn` handlers). The same two interfaces type
 * `@pkg/client`'s `Client<Listen, Emit>` on the other side:
 *
 * ```ts
 * interface ClientEvents { 'chat.send': (data: { text: string }) => { delivered: boolean } }
 * interface ServerEvents { 'chat.message': (data: { from: string; text: string }) => void }
 *
 * class ChatController extends SocketController<ControllerHost, ServerEvents, ClientEvents> {
 *   @SocketOn('chat.send')
 *   send(clientId: string, data: { text: string }): { delivered: boolean } {
 *     this.broadcast('chat.message', { from: clientId, text: data.text });
 *     return { delivered: true };
 *   }
 * }
 * ```
 */
export abstract class SocketController<
  Host extends ControllerHost = ControllerHost,
  Emit extends EventsMap<Emit> = UntypedEvents,
  Listen extends EventsMap<Listen> = UntypedEvents,
> implements SocketEventsDeclaration<Listen> {
  /** Types only (never set): the inbound event map `SocketOn` checks handlers against. */
  declare readonly '~listen'?: ListenedEvents<Listen>;

  #server: Host | null = null;

  /** The server this controller is registered with (read-only; set by `setServer`). */
  get server(): Host | null {
    return this.#server;
  }

  /** Called by `Server.registerController`. */
  setServer(server: Host): void {
    this.#server = server;
  }

  /** The server this controller is registered with; throws before registration. */
  getServer(): Host {
    if (!this.#server) {
      throw createCoreError(
        Error,
        'PKG_ERR_CORE_NO_SERVER',
        `${this.constructor.name} is not registered with a server yet: call server.registerController(controller) before using it.`,
      );
    }
    return this.#server;
  }

  /** Sends an event to one client. Returns false when the client is not connected. */
  emit<E extends EventName<Emit>>(
    clientId: string,
    event: E,
    data: EventPayload<Emit, E>,
  ): boolean {
    return this.getServer().send(clientId, event, data as EventData | Uint8Array);
  }

  /** Sends a request to a protocol version 1 client; resolves with its answer (see `Server.emitWithAck`). */
  emitWithAck<E extends EventName<Emit>>(
    clientId: string,
    event: E,
    data: EventPayload<Emit, E>,
    options: EmitWithAckOptions = {},
  ): Promise<EventAnswer<Emit, E>> {
    const server = this.getServer();
    if (server.emitWithAck === undefined) {
      return Promise.reject(
        createCoreError(
          Error,
          'PKG_ERR_CORE_PROTOCOL_UNSUPPORTED',
          `emitWithAck("${event}"): the server this controller is registered with cannot send requests.`,
        ),
      );
    }
    return server.emitWithAck(clientId, event, data as EventData | Uint8Array, options) as Promise<
      EventAnswer<Emit, E>
    >;
  }

  /**
   * Broadcasts to all clients, a namespace, or a room (see `Server.broadcast`):
   * `(event, data, namespace?, room?, options?)` or `(event, data, { namespace, room, except })`.
   */
  broadcast<E extends EventName<Emit>>(
    event: E,
    data: EventPayload<Emit, E>,
    namespace?: string | null | BroadcastTargetOptions,
    room?: string | null,
    options?: BroadcastOptions,
  ): number {
    return this.getServer().broadcast(
      event,
      data as EventData | Uint8Array,
      ...resolveBroadcastArgs(namespace, room, options),
    );
  }

  /** Broadcasts to a room, optionally leaving one client (usually the sender) out. */
  broadcastToRoomClients<E extends EventName<Emit>>(
    event: E,
    data: EventPayload<Emit, E>,
    room: string,
    namespace: string = DEFAULT_NAMESPACE,
    exceptClientId?: string,
  ): number {
    return this.getServer().broadcast(
      event,
      data as EventData | Uint8Array,
      namespace,
      room,
      exceptClientId === undefined ? {} : { except: exceptClientId },
    );
  }

  /**
   * Puts a connected WebSocket client in a room; false (and nothing done) for an unknown
   * client. `options.since` recovers a room that keeps history (see `Server.joinRoom`).
   */
  joinRoom(
    clientId: string,
    room: string,
    namespace: string = DEFAULT_NAMESPACE,
    options?: JoinRoomOptions,
  ): boolean {
    return options === undefined
      ? this.getServer().joinRoom(clientId, room, namespace)
      : this.getServer().joinRoom(clientId, room, namespace, options);
  }

  leaveRoom(clientId: string, room: string, namespace: string = DEFAULT_NAMESPACE): void {
    this.getServer().leaveRoom(clientId, room, namespace);
  }

  disconnectClient(clientId: string): void {
    this.getServer().disconnectClient(clientId);
  }

  /** Number of WebSocket clients connected to this process. */
  getClientCount(): number {
    return this.getServer().getClientCount();
  }

  /** Ids of the WebSocket clients connected to this process. */
  getAllClients(): string[] {
    return this.getServer().getAllClients();
  }
}
