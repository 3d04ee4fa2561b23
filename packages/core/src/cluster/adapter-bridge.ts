import type { LoggerInterface } from '@pkg/logger';
import type { EnvelopeMeta } from '@pkg/wire';
import type { WebSocketHandler } from '@pkg/ws-protocol';
import type { AdapterSlot } from './adapter-slot';
import {
  type Adapter,
  type AdapterHost,
  type AdapterState,
  type CountTarget,
  type RemoteClientOperation,
} from './adapter';
import type { ClientRegistry } from '../ws/client-registry';
import { createCoreError } from '../errors';
import { DEFAULT_NAMESPACE, type NamespaceManager } from '../ws/namespace-manager';
import { checkRoomName } from '../ws/room-names';
import { eventErrorOf } from '../ws/event-refusal';
import type { BroadcastOptions } from '../routing/socket-controller';
import type { StreamPosition } from '@pkg/wire';
import type { RoomHistory } from '../history/room-history';
import type { ClusterQueries } from './cluster-query';
import {
  sendTo,
  serialize,
  type OutboundData,
  type SerializedMessage,
} from '../ws/serialized-message';

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
  /** Holds the current adapter (room history reads it too). */
  readonly slot: AdapterSlot;
  readonly namespaces: NamespaceManager;
  readonly clients: ClientRegistry;
  readonly wsHandler: WebSocketHandler;
  readonly logger: LoggerInterface;
  /** Rooms that keep history: their broadcasts are published through the history store. */
  readonly history?: RoomHistory;
  /** With tracing on: the trace context a broadcast made now carries to the adapter. */
  readonly traceContext?: (
    event: string,
    room: string | null,
    namespace: string | null,
  ) => EnvelopeMeta | undefined;
  /** With tracing on: runs a delivery another instance asked for in a span of its trace. */
  readonly runTraced?: <T>(trace: EnvelopeMeta, text: SerializedMessage, deliver: () => T) => T;
  /** A broadcast of another instance was delivered here `ms` after it was published. */
  readonly crossInstanceLatency?: (ms: number) => void;
  /** Told of each adapter once it is attached (the presence tracker starts its replicator). */
  readonly attached?: (adapter: Adapter) => void;
  /** The cluster queries this instance answers for the others. */
  readonly queries?: ClusterQueries;
}

/**
 * The clients of this process as the rooms see them, served by the protocol layer (which
 * is built before the bridge and handed to it with {@link AdapterBridge.serve}).
 */
export interface LocalClients {
  /** Delivers one serialised broadcast to those of the clients that take deliveries. */
  deliver(clientIds: Iterable<string>, text: SerializedMessage): number;
  /** The clients broadcasts and counts see (open connections and away sessions). */
  localClientIds(): Iterable<string>;
  /** Sends to a client of this process; false when it has none by that id (or skipped it). */
  send(clientId: string, message: SerializedMessage): boolean;
  /**
   * A local client was put in a room it was not in (`already` false): the protocol layer
   * recovers the room from `since` (or a position of its `$hello`). Also called, with
   * `already` true, for a join with `since` of a room the client is in: nothing is replayed,
   * and the client is told so.
   */
  joined(
    clientId: string,
    room: string,
    namespace: string,
    since: StreamPosition | undefined,
    already: boolean,
  ): void;
  /** `server.revoke` on this process; how many connections it reached. */
  revoke(identity: string, room: string | null, namespace: string | null): number;
}

/**
 * Rooms, namespaces and broadcast through the server's `Adapter` (in-memory by default, a
 * cluster adapter for several processes): checks the arguments, attaches the adapter to
 * this process's clients, and logs a failed adapter call instead of leaving it unhandled.
 * With a cluster adapter (one with `forward`), an operation on a client that is not
 * connected here goes to the instance that holds it.
 */
export class AdapterBridge {
  readonly #o: AdapterBridgeOptions;
  readonly #slot: AdapterSlot;
  /** The protocol layer's clients (until served: the WebSocket handler's, without recovery). */
  #local: LocalClients;

  constructor(options: AdapterBridgeOptions) {
    this.#o = options;
    this.#slot = options.slot;
    const ws = options.wsHandler;
    this.#local = {
      deliver: (clientIds, text) =>
        typeof text === 'string'
          ? ws.sendToMany(clientIds, text)
          : ws.sendBinaryToMany(clientIds, text),
      *localClientIds() {
        for (const client of ws.getClients()) yield client.id;
      },
      send: (clientId, message) => sendTo(ws, clientId, message),
      joined: () => undefined,
      revoke: () => 0,
    };
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
    const { history } = adapter;
    if (
      history !== undefined &&
      (typeof history !== 'object' ||
        history === null ||
        typeof history.publish !== 'function' ||
        typeof history.read !== 'function')
    ) {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        "setAdapter: the adapter's history must be a HistoryStore (publish(target, template, policy) and read(namespace, room, query)), or left out.",
      );
    }
    this.#slot.adapter = adapter;
    this.#settle(adapter.attach(this.#host()), 'adapter.attach');
    this.#o.attached?.(adapter);
  }

  /** A new WebSocket client: a member of the default namespace. */
  connected(clientId: string, namespace: string): void {
    this.#settle(this.#adapter.joinNamespace(clientId, namespace), 'adapter.joinNamespace');
  }

  /**
   * A WebSocket client went away: out of every room and namespace. An adapter that throws
   * is logged, and the local membership is removed anyway, so nothing of the client stays.
   */
  disconnected(clientId: string): void {
    try {
      this.#settle(this.#adapter.removeClient(clientId), 'adapter.removeClient');
    } catch (err) {
      this.#o.logger.exception(err, { phase: 'adapter.removeClient', clientId });
    }
    this.#o.namespaces.removeClient(clientId);
  }

  broadcast(
    event: string,
    data: OutboundData,
    namespace: string | null,
    room: string | null,
    options: BroadcastOptions,
  ): number {
    const { history } = this.#o;
    if (room !== null && history !== undefined) {
      const ns = namespace ?? DEFAULT_NAMESPACE;
      const policy = history.policyFor(ns, room);
      if (policy !== undefined) {
        const kept = {
          namespace: ns,
          room,
          ...(options.except === undefined ? {} : { except: options.except }),
        };
        const published = history.publish(event, data, kept, policy);
        if (typeof (published as { then?: unknown }).then !== 'function') {
          return (published as { delivered: number }).delivered;
        }
        this.#settle(published, 'history.publish');
        return 0;
      }
    }
    const text = serialize(event, data);
    const trace = this.#o.traceContext?.(event, room, namespace);
    const target = {
      namespace,
      room,
      ...(options.except === undefined ? {} : { except: options.except }),
      ...(trace === undefined ? {} : { trace }),
    };
    const delivered = this.#adapter.broadcast(text, target);
    this.#settle(delivered, 'adapter.broadcast');
    // Local deliveries when the adapter knows them at once (an asynchronous adapter: 0).
    return typeof delivered === 'number' ? delivered : 0;
  }

  /**
   * Sends to a local WebSocket client, or hands an unknown id to the cluster adapter. Bytes
   * (`data` a Uint8Array) go as one binary frame; a version 0 client is skipped (false).
   */
  send(clientId: string, event: string, data: OutboundData): boolean {
    const message = serialize(event, data);
    if (this.#local.send(clientId, message)) return true;
    if (this.#o.clients.getType(clientId) !== undefined) return false;
    return this.#forward({ type: 'send', clientId, text: message });
  }

  /**
   * A WebSocket client gets close 1000 (its `OnDisconnect` handlers run), an HTTP connection
   * is closed, an unknown id goes to the cluster adapter (ignored without one).
   */
  disconnectClient(clientId: string): void {
    const type = this.#o.clients.getType(clientId);
    if (type === 'ws') this.#o.wsHandler.disconnect(clientId, 1000, 'Disconnected by the server');
    else if (type === 'http') this.#o.clients.destroy(clientId);
    else this.#forward({ type: 'disconnect', clientId });
  }

  /**
   * Puts a client in a room. Refuses before anything changes: a malformed name
   * (`PKG_ERR_CORE_INVALID_ROOM_NAME`), a local client at `max_rooms_per_client`
   * (`PKG_ERR_CORE_TOO_MANY_ROOMS`). When the adapter fails (throws, or its promise
   * rejects), the join is rolled back: the client is in no room or namespace it was not in
   * before; a synchronous failure is thrown to the caller.
   */
  joinRoom(clientId: string, room: string, namespace: string, since?: StreamPosition): boolean {
    checkRoomArgs('joinRoom', room, namespace);
    checkRoomName('joinRoom', room, namespace, this.#o.namespaces.maxNameLength);
    const type = this.#o.clients.getType(clientId);
    if (type !== 'ws') {
      if (type === undefined && this.#forward({ type: 'joinRoom', clientId, room, namespace })) {
        return true;
      }
      this.#o.logger.debug('joinRoom for a client that is not connected', {
        clientId,
        room,
        namespace,
      });
      return false;
    }
    const namespaces = this.#o.namespaces;
    namespaces.checkJoin(clientId, room, namespace);
    if (namespaces.isInRoom(clientId, room, namespace)) {
      if (since !== undefined) this.#local.joined(clientId, room, namespace, since, true);
      return true;
    }
    const newNamespace = !namespaces.isInNamespace(clientId, namespace);
    const rollback = (err: unknown): void => {
      // An adapter's refusal (e.g. too many new subscriptions) is the client's doing.
      if (eventErrorOf(err) === null) {
        this.#o.logger.exception(err, { phase: 'adapter.joinRoom (rolled back)', clientId, room });
      }
      try {
        this.#settle(this.#adapter.leaveRoom(clientId, room, namespace), 'adapter.leaveRoom');
        if (newNamespace) {
          this.#settle(this.#adapter.leaveNamespace(clientId, namespace), 'adapter.leaveNamespace');
        }
      } catch (again) {
        this.#o.logger.exception(again, { phase: 'join rollback', clientId, room });
      }
      namespaces.leaveRoom(clientId, room, namespace);
      if (newNamespace) namespaces.leaveNamespace(clientId, namespace);
    };
    let result: unknown;
    try {
      result = this.#adapter.joinRoom(clientId, room, namespace);
    } catch (err) {
      rollback(err);
      throw err;
    }
    if (typeof (result as { then?: unknown } | null)?.then === 'function') {
      Promise.resolve(result).catch(rollback);
    }
    this.#local.joined(clientId, room, namespace, since, false);
    return true;
  }

  leaveRoom(clientId: string, room: string, namespace: string): void {
    checkRoomArgs('leaveRoom', room, namespace);
    if (this.#o.clients.getType(clientId) === undefined) {
      if (this.#forward({ type: 'leaveRoom', clientId, room, namespace })) return;
    }
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

  /**
   * `server.revoke`: this process's connections of `identity`, then every other instance's
   * through the adapter (when it can). Resolves with how many connections were reached; a
   * failing adapter is logged and counts 0 for the others.
   */
  async revoke(identity: string, room: string | null, namespace: string | null): Promise<number> {
    const here = this.#local.revoke(identity, room, namespace);
    const others = this.#adapter.revoke;
    if (others === undefined) return here;
    try {
      return here + (await others.call(this.#adapter, identity, room, namespace));
    } catch (err) {
      this.#o.logger.exception(err, { phase: 'adapter.revoke' });
      return here;
    }
  }

  /** Ids the target selects: the adapter's `clientIds` when it has one, else local ids. */
  async clientIds(target: CountTarget): Promise<string[]> {
    if (this.#adapter.clientIds) return this.#adapter.clientIds(target);
    return [...this.#local.localClientIds()];
  }

  /** The adapter's link to other instances, for the health document (undefined: local). */
  state(): AdapterState | undefined {
    return this.#adapter.getState?.();
  }

  async close(): Promise<void> {
    await this.#adapter.close();
  }

  /** The protocol layer takes over delivery, sends and recovery for the clients of this process. */
  serve(local: LocalClients): void {
    this.#local = local;
  }

  get #adapter(): Adapter {
    return this.#slot.adapter;
  }

  #host(): AdapterHost {
    const { clients, wsHandler, logger } = this.#o;
    return {
      namespaces: this.#o.namespaces,
      localClientIds: () => this.#local.localClientIds(),
      deliver: (clientIds, text) => this.#local.deliver(clientIds, text),
      hasClient: (clientId) => clients.getType(clientId) === 'ws',
      disconnect: (clientId) => {
        if (clients.getType(clientId) !== 'ws') return false;
        wsHandler.disconnect(clientId, 1000, 'Disconnected by the server');
        return true;
      },
      revoke: (identity, room, namespace) => this.#local.revoke(identity, room, namespace),
      ...(this.#o.queries === undefined
        ? {}
        : { answerQuery: this.#o.queries.answer.bind(this.#o.queries) }),
      logger,
      ...(this.#o.runTraced === undefined ? {} : { runTraced: this.#o.runTraced }),
      ...(this.#o.crossInstanceLatency === undefined
        ? {}
        : { crossInstanceLatency: this.#o.crossInstanceLatency }),
    };
  }

  /**
   * Hands an operation on a client that is not connected here to the adapter's `forward`;
   * false when the adapter has none (the caller then treats the id as unknown).
   */
  #forward(operation: RemoteClientOperation): boolean {
    const forward = this.#adapter.forward;
    if (!forward) return false;
    const work = forward.call(this.#adapter, operation).then((found) => {
      if (!found) {
        this.#o.logger.debug(`${operation.type} for a client no instance has`, {
          clientId: operation.clientId,
        });
      }
    });
    this.#settle(work, `adapter.forward(${operation.type})`);
    return true;
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
