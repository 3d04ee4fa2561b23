import {
  DEFAULT_NAMESPACE,
  type AdapterState,
  type CountTarget,
  type RemoteClientOperation,
} from '@pkg/core';
import type { RedisClient } from './connection';
import { createRedisError } from './errors';
import { PendingRequests } from './pending-requests';
import {
  encodeRequest,
  type Channels,
  type ReplyMessage,
  type RequestBody,
  type WireTarget,
} from './wire';

/** The target of a count or ids request as the wire carries it. */
export function wireTarget(target: CountTarget): WireTarget {
  if (target.room != null)
    return { namespace: target.namespace ?? DEFAULT_NAMESPACE, room: target.room };
  return { namespace: target.namespace ?? null, room: null };
}

/** The request that carries out an operation on a client of another instance. */
export function forwardRequest(operation: RemoteClientOperation): RequestBody {
  if (operation.type === 'send') {
    if (typeof operation.text !== 'string') {
      // The adapter's forward() keeps bytes here: requests between instances are JSON.
      throw new TypeError('A binary send is not forwarded to another instance.');
    }
    return { kind: 'send', clientId: operation.clientId, text: operation.text };
  }
  if (operation.type === 'disconnect') {
    return { kind: 'disconnect', clientId: operation.clientId };
  }
  return {
    kind: operation.type,
    clientId: operation.clientId,
    room: operation.room,
    namespace: operation.namespace,
  };
}

/** What a request is sent over: the publishing connection and the state of the link. */
export interface RequestLink {
  readonly pub: RedisClient | null;
  readonly state: AdapterState;
}

/**
 * The requests this instance asks of the whole cluster (counts, ids, operations on a client
 * of another instance): each is published once on the request channel, and answered by
 * every instance subscribed to it, this one included, on this instance's reply channel.
 */
export class ClusterRequests {
  readonly #pending = new PendingRequests();
  readonly #nodeId: string;
  readonly #channels: Channels;
  readonly #timeout: number;
  #seq = 0;

  constructor(nodeId: string, channels: Channels, timeout: number) {
    this.#nodeId = nodeId;
    this.#channels = channels;
    this.#timeout = timeout;
  }

  /** Requests waiting for their answers now. */
  get size(): number {
    return this.#pending.size;
  }

  /** Takes a reply; false for a late reply to a request that timed out. */
  reply(message: ReplyMessage): boolean {
    return this.#pending.reply(message);
  }

  /** Fails every waiting request (when the adapter closes). */
  failAll(err: () => Error): void {
    this.#pending.failAll(err);
  }

  /**
   * Publishes a request and resolves with the replies of every instance, or (with
   * `stopOnFound`) with the first that found the client. Rejects when Redis is unreachable
   * or an instance does not answer within the timeout (option requestTimeout).
   */
  async ask(link: RequestLink, body: RequestBody, stopOnFound: boolean): Promise<ReplyMessage[]> {
    const timeout = this.#timeout;
    const { replies } = await this.#send(link, body, stopOnFound, timeout, (received, expected) =>
      createRedisError(
        Error,
        'PKG_ERR_REDIS_REQUEST_TIMEOUT',
        `RedisAdapter: ${received} of ${expected} instances answered the "${body.kind}" request within ${timeout} ms (option requestTimeout).`,
      ),
    );
    return replies;
  }

  /**
   * Publishes a request and resolves, at the latest after `timeout` ms, with the replies that
   * came and the number of instances that were asked (a late instance is left out, never
   * waited for). Rejects only when Redis is unreachable.
   */
  gather(
    link: RequestLink,
    body: RequestBody,
    timeout: number,
  ): Promise<{ replies: ReplyMessage[]; expected: number }> {
    return this.#send(link, body, false, timeout, null);
  }

  async #send(
    link: RequestLink,
    body: RequestBody,
    stopOnFound: boolean,
    timeout: number,
    onTimeout: ((received: number, expected: number) => Error) | null,
  ): Promise<{ replies: ReplyMessage[]; expected: number }> {
    const { pub, state } = link;
    if (!pub || state !== 'connected') {
      throw createRedisError(
        Error,
        'PKG_ERR_REDIS_UNAVAILABLE',
        `RedisAdapter: Redis is ${state === 'closed' ? 'closed' : 'unreachable'}, so the cluster-wide "${body.kind}" request could not be sent; retry once the health check says "connected".`,
      );
    }
    // Every instance (this one included) answers on our reply channel; NUMSUB says how many.
    const numsub = await pub.pubSubNumSub(this.#channels.requests);
    const expected = Number(numsub[this.#channels.requests] ?? 0);
    if (expected === 0) {
      throw createRedisError(
        Error,
        'PKG_ERR_REDIS_UNAVAILABLE',
        'RedisAdapter: no instance is subscribed to the request channel yet; wait for adapter.ready().',
      );
    }
    this.#seq += 1;
    const id = `${this.#nodeId}:${this.#seq}`;
    const answer = this.#pending.add(
      id,
      expected,
      stopOnFound,
      timeout,
      onTimeout === null ? null : (received) => onTimeout(received, expected),
    );
    try {
      await pub.publish(this.#channels.requests, encodeRequest(this.#nodeId, id, body));
    } catch (err) {
      this.#pending.fail(
        id,
        createRedisError(
          Error,
          'PKG_ERR_REDIS_UNAVAILABLE',
          `RedisAdapter: the "${body.kind}" request could not be published: ${err instanceof Error ? err.message : String(err)}`,
        ),
      );
    }
    return { replies: await answer, expected };
  }
}
