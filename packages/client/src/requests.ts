/**
 * Requests of the client that wait for an answer (`emitWithAck`): ids, timeouts, the
 * requests that wait for a connection, and the answers that settle them.
 */
import { ClientError, createClientError } from './errors';
import { readErrorData } from '@pkg/wire';
import type { InboundMessage } from './protocol';

interface Pending {
  readonly id: number;
  readonly event: string;
  /** What to send: a JSON text, or a binary frame (a request whose data is bytes). */
  readonly text: string | Uint8Array;
  sent: boolean;
  /** The binary parts of a `$history` answer that came before it (docs/protocol.md). */
  parts: Uint8Array[] | undefined;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

export class PendingRequests {
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;

  get size(): number {
    return this.#pending.size;
  }

  /** Registers a request; `encode` gets the id and returns the text (or frame) to send. */
  add(
    event: string,
    encode: (id: number) => string | Uint8Array,
    timeout: number,
    max: number,
  ): { id: number; promise: Promise<unknown> } {
    if (this.#pending.size >= max) {
      throw createClientError(
        RangeError,
        'PKG_ERR_CLIENT_TOO_MANY_PENDING',
        `emitWithAck("${event}"): ${max} requests are already waiting for an answer; await some first or raise maxPendingAcks.`,
      );
    }
    const id = this.#nextId++;
    const text = encode(id);
    let resolve!: (value: unknown) => void;
    let reject!: (error: Error) => void;
    const promise = new Promise<unknown>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const timer = setTimeout(() => {
      this.#pending.delete(id);
      reject(
        new ClientError(
          'PKG_ERR_CLIENT_ACK_TIMEOUT',
          `No answer to "${event}" within ${timeout} ms: check that the server handles it and answers requests with an id.`,
          { event },
        ),
      );
    }, timeout);
    this.#pending.set(id, {
      id,
      event,
      text,
      sent: false,
      parts: undefined,
      resolve,
      reject,
      timer,
    });
    return { id, promise };
  }

  /** Marks a request as sent and returns its text (or binary frame). */
  take(id: number): string | Uint8Array | undefined {
    const p = this.#pending.get(id);
    if (!p) return undefined;
    p.sent = true;
    return p.text;
  }

  /** The ids of requests not sent yet, oldest first. */
  unsent(): number[] {
    return [...this.#pending.values()].filter((p) => !p.sent).map((p) => p.id);
  }

  /** Settles the request with this id; false when it is unknown (late or never made). */
  settle(id: unknown, outcome: { data: unknown } | { error: ClientError }): boolean {
    if (typeof id !== 'number') return false;
    const p = this.#pending.get(id);
    if (!p) return false;
    this.#pending.delete(id);
    clearTimeout(p.timer);
    if ('error' in outcome) p.reject(outcome.error);
    else p.resolve(outcome.data);
    return true;
  }

  /**
   * A binary part of a pending `$history` answer: a binary frame with the request's `id`
   * and a `pos`, sent before the answer. False (dropped) when no such request is pending.
   */
  part(id: unknown, data: Uint8Array): boolean {
    const p = typeof id === 'number' ? this.#pending.get(id) : undefined;
    if (p === undefined || p.event !== '$history') return false;
    (p.parts ??= []).push(data);
    return true;
  }

  /**
   * An answer from the server (a message with `id`): its data resolves the request; an
   * `error` event rejects it with PKG_ERR_CLIENT_REMOTE carrying the server's code.
   */
  answer(message: InboundMessage): void {
    if (message.event !== 'error') {
      const parts =
        typeof message.id === 'number' ? this.#pending.get(message.id)?.parts : undefined;
      const data = parts === undefined ? message.data : withParts(message.data, parts);
      this.settle(message.id, { data });
      return;
    }
    const remote = readErrorData(message.data);
    const event = typeof message.id === 'number' ? this.#pending.get(message.id)?.event : undefined;
    this.settle(message.id, {
      error: new ClientError(
        'PKG_ERR_CLIENT_REMOTE',
        `The server refused "${event ?? message.event}": ${remote.code}${remote.message ? ` (${remote.message})` : ''}.`,
        {
          remoteCode: remote.code,
          data: message.data,
          event,
          ...(typeof remote['status'] === 'number' ? { status: remote['status'] } : {}),
        },
      ),
    });
  }

  /** Rejects the requests already sent (or all of them) with the error `make` builds. */
  rejectAll(make: (event: string) => Error, onlySent: boolean): void {
    for (const p of [...this.#pending.values()]) {
      if (onlySent && !p.sent) continue;
      this.#pending.delete(p.id);
      clearTimeout(p.timer);
      p.reject(make(p.event));
    }
  }
}

/**
 * A `$history` answer with its binary parts put in: an entry `{event, pos, binary: k}`
 * gets the payload of part `k` as its `data`; an entry whose part did not come is left out.
 */
function withParts(data: unknown, parts: readonly Uint8Array[]): unknown {
  if (typeof data !== 'object' || data === null) return data;
  const messages = (data as Record<string, unknown>)['messages'];
  if (!Array.isArray(messages)) return data;
  const filled: unknown[] = [];
  for (const entry of messages as unknown[]) {
    const k = (entry as Record<string, unknown> | null)?.['binary'];
    if (k === undefined) filled.push(entry);
    else if (typeof k === 'number' && parts[k] !== undefined) {
      const { binary: _binary, ...rest } = entry as Record<string, unknown>;
      filled.push({ ...rest, data: parts[k] });
    }
  }
  return { ...(data as Record<string, unknown>), messages: filled };
}
