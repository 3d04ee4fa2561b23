import type { AdapterHost, LocalAdapter, LoggerInterface } from '@pkg/core';
import { createRedisError } from './errors';
import { SubscribeBudget } from './subscribe-budget';
import type { Subscriptions } from './subscriptions';

type Memberships = ReadonlyArray<{ namespace: string; rooms: readonly string[] }>;

/** What {@link ChannelMembership} needs from its adapter, handed over once. */
export interface ChannelMembershipOptions {
  readonly local: LocalAdapter;
  readonly maxSubscribesPerSecond: number;
  readonly log: () => LoggerInterface;
  /** The error for a call made before the adapter was attached. */
  readonly notAttached: (method: string) => Error;
}

/**
 * The membership half of the Redis adapter: every join and leave updates the server's
 * local membership at once (through the `LocalAdapter`), then brings the namespace and room
 * channels in line with it ({@link Subscriptions}). A join that would make this instance
 * subscribe to a new channel first takes from the client's {@link SubscribeBudget}; over it,
 * the join is refused before anything changes.
 */
export class ChannelMembership {
  readonly #o: ChannelMembershipOptions;
  readonly #budget: SubscribeBudget;
  #host: AdapterHost | null = null;
  #subs: Subscriptions | null = null;
  /** Joins refused for being over `maxSubscribesPerSecond`. */
  refusedJoins = 0;

  constructor(options: ChannelMembershipOptions) {
    this.#o = options;
    this.#budget = new SubscribeBudget(options.maxSubscribesPerSecond);
  }

  attach(host: AdapterHost, subscriptions: Subscriptions): void {
    this.#host = host;
    this.#subs = subscriptions;
  }

  joinNamespace(clientId: string, namespace: string): void {
    this.#o.local.joinNamespace(clientId, namespace);
    this.#sync(namespace, null);
  }

  leaveNamespace(clientId: string, namespace?: string): void {
    const before = this.#memberships(clientId, namespace);
    this.#o.local.leaveNamespace(clientId, namespace);
    this.#syncAll(before);
  }

  /**
   * Joins locally and subscribes to the room's channel when it is new here. Refused before
   * anything changes when the client is over `maxSubscribesPerSecond` (only joins that need
   * a new subscription count).
   */
  joinRoom(clientId: string, room: string, namespace: string): void {
    const subs = this.#subs;
    const host = this.#host;
    if (subs && host && !host.namespaces.isInRoom(clientId, room, namespace)) {
      // The server's own checks first (names, room cap), so a refused join costs no budget.
      host.namespaces.checkJoin(clientId, room, namespace);
      const cost = (subs.holds(namespace, room) ? 0 : 1) + (subs.holds(namespace, null) ? 0 : 1);
      const wait = this.#budget.take(clientId, cost);
      if (wait > 0) {
        this.refusedJoins += 1;
        throw this.#tooManySubscribes(clientId, room, namespace, wait);
      }
    }
    this.#o.local.joinRoom(clientId, room, namespace);
    this.#sync(namespace, null);
    this.#sync(namespace, room);
  }

  leaveRoom(clientId: string, room: string, namespace: string): void {
    this.#o.local.leaveRoom(clientId, room, namespace);
    this.#sync(namespace, room);
  }

  leaveAllRooms(clientId: string): void {
    const before = this.#memberships(clientId);
    this.#o.local.leaveAllRooms(clientId);
    this.#syncAll(before);
  }

  removeClient(clientId: string): void {
    this.#budget.forget(clientId);
    const before = this.#memberships(clientId);
    this.#o.local.removeClient(clientId);
    this.#syncAll(before);
  }

  #memberships(clientId: string, namespace?: string): Memberships {
    const host = this.#host;
    if (!host) throw this.#o.notAttached('leave');
    const all = host.namespaces.getMemberships(clientId);
    return namespace === undefined ? all : all.filter((m) => m.namespace === namespace);
  }

  /** Syncs every channel of a client that left; one failing channel does not stop the others. */
  #syncAll(memberships: Memberships): void {
    for (const m of memberships) {
      for (const room of [null, ...m.rooms]) {
        try {
          this.#sync(m.namespace, room);
        } catch (err) {
          this.#o.log().warning('RedisAdapter: could not update a channel subscription', {
            namespace: m.namespace,
            room,
            error: err instanceof Error ? err.message : String(err),
          });
        }
      }
    }
  }

  /** Subscribes to a namespace/room channel on its first local member, unsubscribes after the last. */
  #sync(namespace: string, room: string | null): void {
    const host = this.#host;
    if (!host || !this.#subs) return;
    const members =
      room === null
        ? host.namespaces.namespaceMembers(namespace)
        : host.namespaces.roomMembers(room, namespace);
    this.#subs.update(namespace, room, members.size);
  }

  #tooManySubscribes(clientId: string, room: string, namespace: string, waitMs: number): Error {
    const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
    const err = createRedisError(
      RangeError,
      'PKG_ERR_REDIS_TOO_MANY_SUBSCRIBES',
      `joinRoom: too many joins of new rooms from this client: at most ${this.#o.maxSubscribesPerSecond} per second (maxSubscribesPerSecond). Retry "${room}" in ${retryAfter} s.`,
    );
    // The `error` event data the client gets when a handler lets this through.
    Object.defineProperty(err, 'eventData', {
      value: { room, namespace, retryAfter },
      enumerable: false,
    });
    this.#o.log().debug('RedisAdapter: join refused, over maxSubscribesPerSecond', {
      clientId,
      refusedJoins: this.refusedJoins,
    });
    return err;
  }
}
