import type { EventData } from '@pkg/ws-protocol';
import type { BroadcastOptions, Server } from './server';
import { createCoreError } from './errors';
import { DEFAULT_NAMESPACE } from './namespace-manager';

/**
 * Base class of application controllers. Decorate methods with `SocketOn`, `OnConnect`,
 * `OnDisconnect`, `HttpRoute` and `RateLimit`, then pass an instance to
 * `server.registerController()`, which calls `setServer` and registers the routes. The
 * helpers below forward to that server.
 */
export abstract class SocketController {
  #server: Server | null = null;

  /** The server this controller is registered with (read-only; set by `setServer`). */
  get server(): Server | null {
    return this.#server;
  }

  /** Called by `Server.registerController`. */
  setServer(server: Server): void {
    this.#server = server;
  }

  /** The server this controller is registered with; throws before registration. */
  getServer(): Server {
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
  emit(clientId: string, event: string, data: EventData): boolean {
    return this.getServer().send(clientId, event, data);
  }

  /** Broadcasts to all clients, a namespace, or a room (see `Server.broadcast`). */
  broadcast(
    event: string,
    data: EventData,
    namespace: string | null = null,
    room: string | null = null,
    options: BroadcastOptions = {},
  ): void {
    this.getServer().broadcast(event, data, namespace, room, options);
  }

  /** Broadcasts to a room, optionally leaving one client (usually the sender) out. */
  broadcastToRoomClients(
    event: string,
    data: EventData,
    room: string,
    namespace: string = DEFAULT_NAMESPACE,
    exceptClientId?: string,
  ): void {
    this.getServer().broadcast(
      event,
      data,
      namespace,
      room,
      exceptClientId === undefined ? {} : { except: exceptClientId },
    );
  }

  /** Puts a connected WebSocket client in a room; false (and nothing done) for an unknown client. */
  joinRoom(clientId: string, room: string, namespace: string = DEFAULT_NAMESPACE): boolean {
    return this.getServer().joinRoom(clientId, room, namespace);
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
