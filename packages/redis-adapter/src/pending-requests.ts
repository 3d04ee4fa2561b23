import type { ReplyMessage } from './wire';

interface Entry {
  readonly expected: number;
  readonly replies: ReplyMessage[];
  readonly stopOnFound: boolean;
  readonly resolve: (replies: ReplyMessage[]) => void;
  readonly reject: (err: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/**
 * Cluster-wide requests waiting for their replies. A request settles when `expected` replies
 * have come (or, with `stopOnFound`, the first reply that found the client), when its timer
 * fires, or when the table is closed; in every case its entry and timer are gone, so nothing
 * accumulates whatever the other instances do.
 */
export class PendingRequests {
  readonly #entries = new Map<string, Entry>();

  /** Requests waiting now. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * Registers a request; the promise resolves with its replies, or rejects with
   * `onTimeout(repliesSoFar)` after `timeoutMs` (`onTimeout` null: resolves with the
   * replies that came in time).
   */
  add(
    id: string,
    expected: number,
    stopOnFound: boolean,
    timeoutMs: number,
    onTimeout: ((received: number) => Error) | null,
  ): Promise<ReplyMessage[]> {
    return new Promise<ReplyMessage[]>((resolve, reject) => {
      const timer = setTimeout(() => {
        const replies = this.#entries.get(id)?.replies ?? [];
        this.#entries.delete(id);
        if (onTimeout === null) resolve(replies);
        else reject(onTimeout(replies.length));
      }, timeoutMs);
      this.#entries.set(id, { expected, replies: [], stopOnFound, resolve, reject, timer });
    });
  }

  /** Records a reply; false when no request waits for it (a late or foreign reply). */
  reply(reply: ReplyMessage): boolean {
    const entry = this.#entries.get(reply.id);
    if (!entry) return false;
    entry.replies.push(reply);
    if (entry.replies.length >= entry.expected || (entry.stopOnFound && reply.found === true)) {
      clearTimeout(entry.timer);
      this.#entries.delete(reply.id);
      entry.resolve(entry.replies);
    }
    return true;
  }

  /** Rejects one request (its message could not be sent). */
  fail(id: string, err: Error): void {
    const entry = this.#entries.get(id);
    if (!entry) return;
    clearTimeout(entry.timer);
    this.#entries.delete(id);
    entry.reject(err);
  }

  /** Rejects every waiting request. */
  failAll(err: () => Error): void {
    for (const id of [...this.#entries.keys()]) this.fail(id, err());
  }
}
