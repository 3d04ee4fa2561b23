/**
 * Cluster queries: a question every instance answers about itself (`@pkg/admin` asks each
 * instance for its page of connections, its rooms, its load), merged by the asker.
 *
 * An instance answers the topics it registered with `server.answerClusterQuery(topic,
 * handler)`. `server.queryCluster(topic, payload)` asks every instance through the adapter's
 * `query` (the Redis adapter publishes one request and collects one reply per instance);
 * with an adapter without `query` only this instance answers. An instance that does not
 * answer within the timeout is counted in `missing`, never waited for longer, so one dead
 * instance does not hang the asker. Payloads and answers cross the wire as JSON.
 */
import { hostname } from 'node:os';
import { createCoreError } from '../errors';
import type { Adapter } from './adapter';

/** What a handler answers for its instance: any JSON value, or a promise of one. */
export type ClusterQueryHandler = (payload: unknown) => unknown;

/** One instance's answer: `data`, or `error` when its handler failed or it has none. */
export interface ClusterAnswer {
  /** The instance (a cluster adapter's node id; `host/pid` without one). */
  readonly node: string;
  readonly data?: unknown;
  readonly error?: string;
}

/** Every answer that came in time. */
export interface ClusterQueryResult {
  readonly answers: readonly ClusterAnswer[];
  /** Instances that were asked and did not answer within the timeout. */
  readonly missing: number;
}

/** How long the asker waits. */
export interface ClusterQueryOptions {
  /** Ms to wait for every instance's answer (default {@link DEFAULT_QUERY_TIMEOUT}). */
  readonly timeout?: number;
}

export const DEFAULT_QUERY_TIMEOUT = 1000;

/** The name of this process when no cluster adapter names it. */
export const LOCAL_NODE = `${hostname()}/${process.pid}`;

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The topics this instance answers, and the asking side. */
export class ClusterQueries {
  readonly #handlers = new Map<string, ClusterQueryHandler>();

  /** Registers (or, with undefined, removes) the handler of a topic. */
  handle(topic: string, handler: ClusterQueryHandler | undefined): void {
    if (typeof topic !== 'string' || topic === '') {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        'answerClusterQuery: topic must be a non-empty string.',
      );
    }
    if (handler !== undefined && typeof handler !== 'function') {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        'answerClusterQuery: handler must be a function (payload) => answer, or undefined to remove it.',
      );
    }
    if (handler === undefined) this.#handlers.delete(topic);
    else this.#handlers.set(topic, handler);
  }

  /** This instance's answer to a topic; rejects when no handler takes it, or it fails. */
  async answer(topic: string, payload: unknown): Promise<unknown> {
    const handler = this.#handlers.get(topic);
    if (handler === undefined) throw new Error(`no handler for the cluster query "${topic}"`);
    return handler(payload);
  }

  /** Asks every instance through the adapter (only this one without `adapter.query`). */
  async ask(
    adapter: Adapter,
    topic: string,
    payload: unknown,
    options: ClusterQueryOptions = {},
  ): Promise<ClusterQueryResult> {
    const timeout = options.timeout ?? DEFAULT_QUERY_TIMEOUT;
    if (typeof topic !== 'string' || topic === '') {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        'queryCluster: topic must be a non-empty string.',
      );
    }
    if (!Number.isSafeInteger(timeout) || timeout < 1) {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        'queryCluster: timeout must be a positive whole number of milliseconds.',
      );
    }
    if (adapter.query !== undefined) return adapter.query(topic, payload, timeout);
    try {
      return {
        answers: [{ node: LOCAL_NODE, data: await this.answer(topic, payload) }],
        missing: 0,
      };
    } catch (err) {
      return { answers: [{ node: LOCAL_NODE, error: message(err) }], missing: 0 };
    }
  }
}
