/**
 * Requests from the server to a client (`emitWithAck`): each gets a `rid`, waits for the
 * client's `$ack` / `$nack` with that `rid`, and is rejected on timeout or when the client
 * goes away. At most `maxPerClient` are pending per client; a late or unknown `rid` is
 * ignored. One timer per pending request, cleared as soon as it settles.
 */
import { appendBinaryRid, appendRid } from '@pkg/wire';
import type { WebSocketHandler } from '@pkg/ws-protocol';
import { createCoreError, type CoreError } from '../errors';
import {
  readFrame,
  serialize,
  type OutboundData,
  type SerializedMessage,
} from '../ws/serialized-message';

/** Longest `$nack` `code` / `message` copied into the server-side error (characters). */
export const MAX_NACK_CODE_LENGTH = 64;
export const MAX_NACK_MESSAGE_LENGTH = 256;

/** Cuts a client-supplied text to `max` characters (with an ellipsis when cut). */
function bounded(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

import type { EmitWithAckOptions } from '../routing/socket-controller';

export type { EmitWithAckOptions } from '../routing/socket-controller';

export interface Pending {
  readonly event: string;
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: Error) => void;
  readonly timer: NodeJS.Timeout;
}

export interface ServerRequestsOptions {
  readonly maxPerClient: number;
  readonly defaultTimeout: number;
}

/**
 * One client's requests waiting for `$ack` / `$nack`, by `rid`: kept on its connection, so
 * they go with it (a takeover or the connection's end rejects them).
 */
export class PendingRequests {
  /** Made on the first request: most connections never get one. */
  #byRid: Map<string, Pending> | undefined = undefined;

  get size(): number {
    return this.#byRid?.size ?? 0;
  }

  add(rid: string, pending: Pending): void {
    (this.#byRid ??= new Map()).set(rid, pending);
  }

  /** Takes a request out (its timer cleared); undefined when unknown or already settled. */
  take(rid: string): Pending | undefined {
    const p = this.#byRid?.get(rid);
    if (p === undefined) return undefined;
    this.#byRid!.delete(rid);
    clearTimeout(p.timer);
    return p;
  }

  /** Rejects every request: the client is gone (`PKG_ERR_CORE_CLIENT_GONE`). */
  rejectAll(clientId: string): void {
    if (this.#byRid === undefined) return;
    const all = [...this.#byRid.values()];
    this.#byRid = undefined;
    for (const p of all) {
      clearTimeout(p.timer);
      p.reject(gone(p.event, clientId, 'disconnected before it answered'));
    }
  }
}

/** Requests to clients (`emitWithAck`): their ids, bounds and timeouts; each client's are on its connection. */
export class ServerRequests {
  readonly #o: ServerRequestsOptions;
  #counter = 0;

  constructor(options: ServerRequestsOptions) {
    this.#o = options;
  }

  /**
   * Starts a request: checks the limit and the timeout, picks a `rid` and calls `send(rid)`
   * (false: the client is not connected, the request is rejected at once).
   */
  request(
    pending: PendingRequests,
    clientId: string,
    event: string,
    timeout: number | undefined,
    send: (rid: string) => boolean,
  ): Promise<unknown> {
    const ms = timeout ?? this.#o.defaultTimeout;
    if (!Number.isSafeInteger(ms) || ms < 1 || ms > 2 ** 31 - 1) {
      return Promise.reject(
        createCoreError(
          RangeError,
          'PKG_ERR_CORE_INVALID_ARGUMENT',
          `emitWithAck("${event}"): timeout must be an integer number of milliseconds from 1 to 2147483647, got ${String(ms)}.`,
        ),
      );
    }
    if (pending.size >= this.#o.maxPerClient) {
      return Promise.reject(
        createCoreError(
          RangeError,
          'PKG_ERR_CORE_TOO_MANY_PENDING',
          `emitWithAck("${event}"): client ${clientId} already has ${this.#o.maxPerClient} unanswered requests (max_pending_server_requests); wait for some answers first.`,
        ),
      );
    }
    this.#counter += 1;
    const rid = `r${this.#counter.toString(36)}`;
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.take(rid);
        reject(
          createCoreError(
            Error,
            'PKG_ERR_CORE_ACK_TIMEOUT',
            `emitWithAck("${event}"): client ${clientId} did not answer within ${ms} ms.`,
          ),
        );
      }, ms);
      pending.add(rid, { event, resolve, reject, timer });
      if (!send(rid)) {
        pending.take(rid);
        reject(gone(event, clientId, 'is not connected'));
      }
    });
  }

  /** An `$ack` (ok) or `$nack` arrived; unknown or late rids are ignored. */
  settle(
    pending: PendingRequests,
    clientId: string,
    rid: string,
    ok: boolean,
    data: unknown,
  ): void {
    const p = pending.take(rid);
    if (p === undefined) return;
    if (ok) {
      p.resolve(data === undefined ? null : data);
      return;
    }
    const info = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>;
    // Client text, so bounded before it goes into a server-side error (and its logs).
    const remoteCode =
      typeof info['code'] === 'string'
        ? bounded(info['code'], MAX_NACK_CODE_LENGTH)
        : 'handler_error';
    const remoteMessage =
      typeof info['message'] === 'string'
        ? `: ${bounded(info['message'], MAX_NACK_MESSAGE_LENGTH)}`
        : '';
    const err = createCoreError(
      Error,
      'PKG_ERR_CORE_ACK_REFUSED',
      `emitWithAck("${p.event}"): client ${clientId} refused the request (${remoteCode}${remoteMessage}).`,
    ) as CoreError & { remoteCode?: string };
    err.remoteCode = remoteCode;
    p.reject(err);
  }
}

function gone(event: string, clientId: string, what: string): CoreError {
  return createCoreError(
    Error,
    'PKG_ERR_CORE_CLIENT_GONE',
    `emitWithAck("${event}"): client ${clientId} ${what}.`,
  );
}

/**
 * `emitWithAck` to one client: `state` says whether it is an open version 1 client (`v1`),
 * an open client that did not say `$hello` (`v0`), or not an open client (`gone`).
 */
export function requestToClient(
  requests: ServerRequests,
  pending: PendingRequests,
  ws: WebSocketHandler,
  clientId: string,
  state: 'v1' | 'v0' | 'gone',
  event: string,
  data: OutboundData,
  options: EmitWithAckOptions,
): Promise<unknown> {
  let message: SerializedMessage;
  try {
    message = serialize(event, data);
  } catch (err) {
    return Promise.reject(err as Error);
  }
  if (state === 'gone') {
    return Promise.reject(gone(event, clientId, 'is not connected'));
  }
  if (state === 'v0') {
    return Promise.reject(
      createCoreError(
        Error,
        'PKG_ERR_CORE_PROTOCOL_UNSUPPORTED',
        `emitWithAck("${event}"): client ${clientId} did not say $hello (protocol version 1), so it cannot answer; use send/emit.`,
      ),
    );
  }
  if (typeof message === 'string') {
    return requests.request(pending, clientId, event, options.timeout, (rid) =>
      ws.sendRaw(clientId, appendRid(message, rid)),
    );
  }
  // Bytes are refused at send to a client that does not take binary frames.
  if (!ws.takesBinary(clientId)) {
    return Promise.reject(
      createCoreError(
        Error,
        'PKG_ERR_CORE_PROTOCOL_UNSUPPORTED',
        `emitWithAck("${event}"): client ${clientId} does not take binary frames (protocol version 1 with ws_binary_frames), so it cannot be sent bytes; send JSON.`,
      ),
    );
  }
  const payload = readFrame(message)!.data;
  const header = message.subarray(0, message.length - payload.length);
  return requests.request(pending, clientId, event, options.timeout, (rid) =>
    ws.sendBinary(clientId, [appendBinaryRid(header, rid), payload]),
  );
}
