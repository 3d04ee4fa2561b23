import type { LoggerInterface } from '@pkg/logger';
import type { HistoryStore } from '../history/history';
import type { EnvelopeMeta } from '@pkg/wire';
import { DEFAULT_NAMESPACE, NamespaceManager } from '../ws/namespace-manager';
import type { PresenceReplicator } from '../presence/cluster-presence';
import type { BroadcastTarget } from '../ws/broadcast-target';
import type { ClusterQueryResult } from './cluster-query';
import type { SerializedMessage } from '../ws/serialized-message';

export type { BroadcastTarget } from '../ws/broadcast-target';

/** Which clients to count: all, a namespace, or a room (as in {@link BroadcastTarget}). */
export interface CountTarget {
  readonly namespace?: string | null;
  readonly room?: string | null;
}

/**
 * How an adapter sees its link to the other instances: `local` (no other instances),
 * `connecting`, `connected`, `degraded` (the link is down: local traffic still flows, messages
 * for other instances are lost) or `closed`. The health check shows it; it never turns the
 * health check to 503.
 */
export type AdapterState = 'local' | 'connecting' | 'connected' | 'degraded' | 'closed';

/**
 * An operation on one client that is not connected to this process, carried out by the
 * instance that holds it. `send` carries a message serialised once by the sender: the JSON
 * text of an envelope, or (protocol version 1) the bytes of a binary frame.
 */
export type RemoteClientOperation =
  | { readonly type: 'send'; readonly clientId: string; readonly text: SerializedMessage }
  | { readonly type: 'disconnect'; readonly clientId: string }
  | {
      readonly type: 'joinRoom' | 'leaveRoom';
      readonly clientId: string;
      readonly room: string;
      readonly namespace: string;
    };

/** What the server hands an adapter: local membership and local delivery. */
export interface AdapterHost {
  /** Membership of the clients connected to this process. */
  readonly namespaces: NamespaceManager;
  /** Ids of every WebSocket client connected to this process. */
  localClientIds(): Iterable<string>;
  /**
   * Writes an already serialised message (a JSON text, or a binary frame's bytes: never
   * to a version 0 client) to those of the given clients that are connected to this
   * process; returns how many it was written to.
   */
  deliver(clientIds: Iterable<string>, text: SerializedMessage): number;
  /** Whether a WebSocket client with that id is connected to this process. */
  hasClient?(clientId: string): boolean;
  /**
   * Disconnects a WebSocket client of this process (close 1000, its `OnDisconnect` handlers
   * run), on behalf of another instance; false when it is not connected here.
   */
  disconnect?(clientId: string): boolean;
  /**
   * `server.revoke` asked by another instance: every connection of `identity` on this
   * process loses the room (`room` null: is sent away). Returns how many it reached.
   */
  revoke?(identity: string, room: string | null, namespace: string | null): number;
  /**
   * A cluster query asked by another instance (`server.queryCluster`): this instance's
   * answer, from the handler registered for `topic`; rejects when there is none.
   */
  answerQuery?(topic: string, payload: unknown): Promise<unknown>;
  /**
   * A cluster adapter delivered here a broadcast another instance published `ms` ago (on the
   * publisher's clock against this one's): the server's metrics record it.
   */
  crossInstanceLatency?(ms: number): void;
  /** The server's logger, for adapters that have no logger of their own. */
  readonly logger?: LoggerInterface;
  /**
   * Runs `deliver` (a delivery another instance asked for, of the serialised envelope
   * `text`) as part of the trace `trace` came from: a span on this instance when tracing is
   * on, a plain call otherwise. Returns what `deliver` returns.
   */
  runTraced?<T>(trace: EnvelopeMeta, text: SerializedMessage, deliver: () => T): T;
}

type MaybePromise<T> = T | Promise<T>;

/**
 * The broadcast and membership layer between `Server` and the transport. The default
 * {@link LocalAdapter} works inside one process; a cluster adapter (Redis pub/sub) implements
 * the same interface: it updates local membership at once (so a join followed by a broadcast
 * works), publishes membership and broadcasts for the other processes, and delivers what it
 * receives through {@link AdapterHost.deliver}. `Server` never needs to change for that.
 *
 * Membership methods are called synchronously by the server; a returned promise is awaited
 * only for its error, which is logged.
 */
export interface Adapter {
  /** Called once by the server, before any other method. */
  attach(host: AdapterHost): MaybePromise<void>;
  joinNamespace(clientId: string, namespace: string): MaybePromise<void>;
  /** Without a namespace: leave every namespace and room. */
  leaveNamespace(clientId: string, namespace?: string): MaybePromise<void>;
  joinRoom(clientId: string, room: string, namespace: string): MaybePromise<void>;
  leaveRoom(clientId: string, room: string, namespace: string): MaybePromise<void>;
  leaveAllRooms(clientId: string): MaybePromise<void>;
  /** Forgets the client everywhere (it disconnected). */
  removeClient(clientId: string): MaybePromise<void>;
  /**
   * Delivers a message that has been serialised once by the server to every client the
   * target selects; returns (or resolves to) the number of local clients it was written to.
   * The message is a JSON text, or (protocol version 1) a binary frame's bytes, which an
   * adapter carries unchanged (as bytes: never as a text).
   */
  broadcast(text: SerializedMessage, target: BroadcastTarget): MaybePromise<number>;
  /** Number of clients the target selects (cluster-wide for a cluster adapter). */
  clientCount(target?: CountTarget): MaybePromise<number>;
  /** Releases connections and timers; called by `Server.close()`. */
  close(): MaybePromise<void>;
  /**
   * Ids of the clients the target selects (cluster-wide for a cluster adapter). Optional:
   * without it the server lists its own clients.
   */
  clientIds?(target?: CountTarget): MaybePromise<string[]>;
  /**
   * Carries out an operation on a client that is not connected to this process, on the
   * instance that holds it; resolves true when some instance had the client. The server
   * calls it for `send`, `disconnectClient`, `joinRoom` and `leaveRoom` when the client is
   * not local. Optional: without it those calls only reach local clients.
   */
  forward?(operation: RemoteClientOperation): Promise<boolean>;
  /**
   * `server.revoke` on every other instance (each calls its host's `revoke`); resolves with
   * how many connections they reached. Optional: without it a revocation reaches this
   * process only.
   */
  revoke?(identity: string, room: string | null, namespace: string | null): Promise<number>;
  /**
   * `server.queryCluster`: asks every instance, this one included (each calls its host's
   * `answerQuery`), and resolves with the answers that came within `timeout` ms and how many
   * instances did not answer. Optional: without it only this instance answers.
   */
  query?(topic: string, payload: unknown, timeout: number): Promise<ClusterQueryResult>;
  /** The link to the other instances, for the health check. Optional (`local` without it). */
  getState?(): AdapterState;
  /**
   * Where room history is kept for every instance (the Redis adapter: Redis Streams).
   * Optional: without it the server keeps history in its own memory, and a broadcast to a
   * room with history is numbered by the instance that sends it, so recovery works only on
   * that instance. With it, every broadcast to such a room goes through `history.publish`
   * (which delivers it, instead of `broadcast`), and recovery, `$history` and
   * `server.history` read through `history.read`.
   */
  readonly history?: HistoryStore;

  /**
   * Shares presence (the `presence` setting) between instances. Optional: without it,
   * presence covers this process only.
   */
  readonly presence?: PresenceReplicator;
}

function exceptSet(except: BroadcastTarget['except']): ReadonlySet<string> | null {
  if (except === undefined) return null;
  if (typeof except === 'string') return new Set([except]);
  return except.length === 0 ? null : new Set(except);
}

function* without(ids: Iterable<string>, skip: ReadonlySet<string> | null): Iterable<string> {
  for (const id of ids) if (!skip || !skip.has(id)) yield id;
}

/** The in-memory adapter: one process, no external services. */
export class LocalAdapter implements Adapter {
  #host: AdapterHost | null = null;

  attach(host: AdapterHost): void {
    this.#host = host;
  }

  joinNamespace(clientId: string, namespace: string): void {
    this.#require().namespaces.joinNamespace(clientId, namespace);
  }

  leaveNamespace(clientId: string, namespace?: string): void {
    this.#require().namespaces.leaveNamespace(clientId, namespace);
  }

  joinRoom(clientId: string, room: string, namespace: string): void {
    this.#require().namespaces.joinRoom(clientId, room, namespace);
  }

  leaveRoom(clientId: string, room: string, namespace: string): void {
    this.#require().namespaces.leaveRoom(clientId, room, namespace);
  }

  leaveAllRooms(clientId: string): void {
    this.#require().namespaces.leaveAllRooms(clientId);
  }

  removeClient(clientId: string): void {
    this.#require().namespaces.removeClient(clientId);
  }

  broadcast(text: SerializedMessage, target: BroadcastTarget): number {
    const host = this.#require();
    const skip = exceptSet(target.except);
    return host.deliver(without(this.#select(host, target), skip), text);
  }

  clientCount(target: CountTarget = {}): number {
    const host = this.#require();
    if (target.room == null && target.namespace == null) {
      let n = 0;
      for (const _ of host.localClientIds()) n += 1;
      return n;
    }
    const ids = this.#select(host, target);
    return (ids as ReadonlySet<string>).size;
  }

  clientIds(target: CountTarget = {}): string[] {
    return [...this.#select(this.#require(), target)];
  }

  getState(): AdapterState {
    return 'local';
  }

  close(): void {
    this.#host = null;
  }

  #select(host: AdapterHost, target: CountTarget): Iterable<string> {
    if (target.room != null) {
      return host.namespaces.roomMembers(target.room, target.namespace ?? DEFAULT_NAMESPACE);
    }
    if (target.namespace != null) return host.namespaces.namespaceMembers(target.namespace);
    return host.localClientIds();
  }

  #require(): AdapterHost {
    if (!this.#host) {
      throw new Error(
        'LocalAdapter: not attached to a server. Pass it to the Server, which calls attach(), or call attach(host) yourself.',
      );
    }
    return this.#host;
  }
}
