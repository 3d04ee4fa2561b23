import type { LoggerInterface } from '@pkg/logger';
import { prepareMessage, type EventData, type WebSocketHandler } from '@pkg/ws-protocol';
import { LocalAdapter, type Adapter, type AdapterHost, type CountTarget } from './adapter';
import type { ClientRegistry } from './client-registry';
import { createCoreError } from './errors';
import type { NamespaceManager } from './namespace-manager';
import type { BroadcastOptions } from './socket-controller';

const ADAPTER_METHODS = [
  'attach',
  'joinRoom',
  'leaveRoom',
  'broadcast',
  'removeClient',
  'clientCount',
];

function checkRoomArgs(method: string, room: unknown, namespace: unknown): void {
  if (
    typeof room !== 'string' ||
    room === '' ||
    typeof namespace !== 'string' ||
    namespace === ''
  ) {
    throw createCoreError(
      TypeError,
      'PKG_ERR_CORE_INVALID_ARGUMENT',
      `${method}: room and namespace must be non-empty strings, got ${typeof room} and ${typeof namespace}.`,
    );
  }
}

/** What the bridge needs, handed over once. */
export interface AdapterBridgeOptions {
  readonly namespaces: NamespaceManager;
  readonly clients: ClientRegistry;
  readonly wsHandler: WebSocketHandler;
  readonly logger: LoggerInterface;
}

/**
 * Rooms, namespaces and broadcast through the server's `Adapter` (in-memory by default, a
 * cluster adapter for several processes): checks the arguments, attaches the adapter to
 * this process's clients, and logs a failed adapter call instead of leaving it unhandled.
 */
export class AdapterBridge {
  readonly #o: AdapterBridgeOptions;
  #adapter: Adapter = new LocalAdapter();

  constructor(options: AdapterBridgeOptions) {
    this.#o = options;
    this.#adapter.attach(this.#host());
  }

  get adapter(): Adapter {
    return this.#adapter;
  }

  /** Replaces the adapter (the caller checks that the server has not started). */
  setAdapter(adapter: Adapter): void {
    if (
      typeof adapter !== 'object' ||
      adapter === null ||
      ADAPTER_METHODS.some(
        (m) => typeof (adapter as unknown as Record<string, unknown>)[m] !== 'function',
      )
    ) {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        `setAdapter: expected an object implementing Adapter (${ADAPTER_METHODS.join(', ')}, ...).`,
      );
    }
    this.#adapter = adapter;
    this.#settle(adapter.attach(this.#host()), 'adapter.attach');
  }

  /** A new WebSocket client: a member of the default namespace. */
  connected(clientId: string, namespace: string): void {
    this.#settle(this.#adapter.joinNamespace(clientId, namespace), 'adapter.joinNamespace');
  }

  /** A WebSocket client went away: out of every room and namespace. */
  disconnected(clientId: string): void {
    this.#settle(this.#adapter.removeClient(clientId), 'adapter.removeClient');
  }

  broadcast(
    event: string,
    data: EventData,
    namespace: string | null,
    room: string | null,
    options: BroadcastOptions,
  ): number {
    const text = prepareMessage(event, data);
    const target = {
      namespace,
      room,
      ...(options.except === undefined ? {} : { except: options.except }),
    };
    const delivered = this.#adapter.broadcast(text, target);
    this.#settle(delivered, 'adapter.broadcast');
    // Local deliveries when the adapter knows them at once (an asynchronous adapter: 0).
    return typeof delivered === 'number' ? delivered : 0;
  }

  joinRoom(clientId: string, room: string, namespace: string): boolean {
    checkRoomArgs('joinRoom', room, namespace);
    if (this.#o.clients.getType(clientId) !== 'ws') {
      this.#o.logger.debug('joinRoom for a client that is not connected', {
        clientId,
        room,
        namespace,
      });
      return false;
    }
    this.#settle(this.#adapter.joinRoom(clientId, room, namespace), 'adapter.joinRoom');
    return true;
  }

  leaveRoom(clientId: string, room: string, namespace: string): void {
    checkRoomArgs('leaveRoom', room, namespace);
    this.#settle(this.#adapter.leaveRoom(clientId, room, namespace), 'adapter.leaveRoom');
  }

  leaveAllRooms(clientId: string): void {
    this.#settle(this.#adapter.leaveAllRooms(clientId), 'adapter.leaveAllRooms');
  }

  joinNamespace(clientId: string, namespace: string): boolean {
    checkRoomArgs('joinNamespace', 'x', namespace);
    if (this.#o.clients.getType(clientId) !== 'ws') return false;
    this.#settle(this.#adapter.joinNamespace(clientId, namespace), 'adapter.joinNamespace');
    return true;
  }

  leaveNamespace(clientId: string, namespace?: string): void {
    this.#settle(this.#adapter.leaveNamespace(clientId, namespace), 'adapter.leaveNamespace');
  }

  async clientCount(target: CountTarget): Promise<number> {
    return this.#adapter.clientCount(target);
  }

  async close(): Promise<void> {
    await this.#adapter.close();
  }

  #host(): AdapterHost {
    const handler = this.#o.wsHandler;
    return {
      namespaces: this.#o.namespaces,
      localClientIds: () =>
        (function* () {
          for (const client of handler.getClients()) yield client.id;
        })(),
      deliver: (clientIds, text) => handler.sendToMany(clientIds, text),
    };
  }

  /** Handles the result of an adapter call: a rejected promise is logged, never unhandled. */
  #settle(result: unknown, what: string): void {
    if (typeof (result as { then?: unknown } | null)?.then === 'function') {
      Promise.resolve(result).catch((err: unknown) =>
        this.#o.logger.exception(err, { phase: what }),
      );
    }
  }
}
