/**
 * The outbound side of a WebSocketHandler: every frame the server sends goes through
 * {@link Outbound.deliver} (or ping/pong here), which drops a client whose unsent bytes
 * exceed `maxBufferedAmount` (close 1013) instead of buffering without bound.
 */
import { Buffer } from 'node:buffer';
import { nextTick } from 'node:process';
import { WebSocket } from 'ws';
import type { LoggerInterface } from '@pkg/logger';
import { WsCloseCode } from './close-codes';
import type { WsErrorCode } from './errors';
import type { ClientTable, HandlerConnection } from './client-table';

/** Send options of every outbound message: a text frame, also when given a Buffer. */
const SEND_AS_TEXT = { binary: false } as const;
/** Send options of a binary frame (protocol version 1). */
const SEND_AS_BINARY = { binary: true } as const;
/** The first fragment of a binary message sent in two (its header), and the last one. */
const FIRST_BINARY_FRAGMENT = { binary: true, fin: false } as const;
const LAST_BINARY_FRAGMENT = { binary: true, fin: true } as const;

/** Frames larger than this are never held back: coalescing gains nothing on them. */
const CORK_MAX_FRAME = 16 * 1024;
/** A corked client's held bytes are written out once they reach this. */
const CORK_MAX_HELD = 64 * 1024;

/** The limits the outbound side applies. */
export interface OutboundLimits {
  readonly maxBufferedAmount: number;
  readonly closeTimeout: number;
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class Outbound {
  readonly #limits: OutboundLimits;
  readonly #log: LoggerInterface;
  readonly #table: ClientTable;
  /** Which batch of broadcasts is under way: the ones sent before the next process tick. */
  #batch = 1;
  #batchOpen = false;
  /** Clients corked in this batch (a second broadcast reached them), uncorked at its end. */
  #corked: HandlerConnection[] = [];

  constructor(limits: OutboundLimits, log: LoggerInterface, table: ClientTable) {
    this.#limits = limits;
    this.#log = log;
    this.#table = table;
  }

  /** Sends serialised text to one client by id; false when it is unknown or not usable. */
  toClient(clientId: string, text: string): boolean {
    const conn = this.#table.get(clientId);
    return conn !== undefined && this.deliver(conn, text);
  }

  /**
   * Sends one serialised envelope to many clients, converted to bytes once; returns how many.
   * Broadcasts sent in the same tick form a batch: the first reaches each client at once,
   * and a client that a second one reaches is corked until the tick ends, so the frames of
   * a burst of broadcasts leave in one write per client instead of one each. The send-buffer
   * limit still applies to every frame (corked bytes count in `bufferedAmount`).
   */
  toMany(clientIds: Iterable<string>, text: string): number {
    return this.toManyBytes(clientIds, Buffer.from(text, 'utf8'), false);
  }

  /**
   * {@link toMany} for bytes already made: one text (`binary` false) or binary frame, the
   * same Buffer for every client. `skip` leaves a client out (it is not counted).
   */
  toManyBytes(
    clientIds: Iterable<string>,
    payload: Buffer,
    binary: boolean,
    skip?: (conn: HandlerConnection) => boolean,
  ): number {
    if (!this.#batchOpen) {
      this.#batchOpen = true;
      nextTick(this.#endBatch);
    }
    const batch = this.#batch;
    let count = 0;
    for (const id of clientIds) {
      const conn = this.#table.get(id);
      if (conn === undefined || (skip !== undefined && skip(conn))) continue;
      if (conn.sendBatch !== batch) {
        conn.sendBatch = batch;
      } else if (!conn.corked) {
        if (payload.length <= CORK_MAX_FRAME) {
          conn.cork();
          this.#corked.push(conn);
        }
      } else if (conn.client.socket.bufferedAmount >= CORK_MAX_HELD) {
        // Held bytes are written out early, so the batch never holds more than this.
        conn.uncork();
        conn.cork();
      }
      if (this.deliver(conn, payload, binary)) count += 1;
    }
    return count;
  }

  readonly #endBatch = (): void => {
    this.#batchOpen = false;
    this.#batch += 1;
    const corked = this.#corked;
    if (corked.length === 0) return;
    this.#corked = [];
    for (const conn of corked) conn.uncork();
  };

  /**
   * Writes one text frame (or, with `binary`, one binary frame of the bytes given); false
   * when the client is not usable or over its send limit.
   */
  deliver(conn: HandlerConnection, payload: string | Buffer, binary = false): boolean {
    if (!conn.usable || this.overLimit(conn)) return false;
    return this.#send(conn, (socket) => {
      // A string goes out as a text frame without options (`ws` copies an options object
      // on every send); a Buffer needs them to be sent as text.
      if (typeof payload === 'string') socket.send(payload);
      else socket.send(payload, binary ? SEND_AS_BINARY : SEND_AS_TEXT);
    });
  }

  /** Runs the writes of one message; false (logged at debug level) when `ws` throws. */
  #send(
    conn: HandlerConnection,
    write: (socket: HandlerConnection['client']['socket']) => void,
  ): boolean {
    try {
      write(conn.client.socket);
      return true;
    } catch (err) {
      this.#log.debug('WebSocket send failed', {
        clientId: conn.client.id,
        error: errorMessage(err),
      });
      return false;
    }
  }

  /**
   * Writes one binary message in two fragments: `head` (`fin` false), then `tail`. The
   * receiver gets one message, `head` + `tail`; the bytes of `tail` are written as they are,
   * so a payload shared by many receivers is never copied for one of them. Both sends run
   * in one synchronous step, so no other message can come between them.
   */
  deliverFragments(conn: HandlerConnection, head: Buffer, tail: Buffer): boolean {
    if (!conn.usable || this.overLimit(conn)) return false;
    return this.#send(conn, (socket) => {
      socket.send(head, FIRST_BINARY_FRAGMENT);
      socket.send(tail, LAST_BINARY_FRAGMENT);
    });
  }

  /** True (and the client is being dropped) when its unsent bytes exceed the limit. */
  overLimit(conn: HandlerConnection): boolean {
    const buffered = conn.client.socket.bufferedAmount;
    if (buffered <= this.#limits.maxBufferedAmount) return false;
    if (!conn.ending) {
      this.#log.warning('Dropping slow WebSocket client: its send buffer exceeded the limit', {
        clientId: conn.client.id,
        code: 'PKG_ERR_WS_SLOW_CONSUMER' satisfies WsErrorCode,
        closeCode: WsCloseCode.TRY_AGAIN_LATER,
        bufferedAmount: buffered,
        maxBufferedAmount: this.#limits.maxBufferedAmount,
      });
      conn.close(
        WsCloseCode.TRY_AGAIN_LATER,
        'Send buffer limit exceeded',
        this.#limits.closeTimeout,
        this.#log,
      );
    }
    return true;
  }

  /** Sends a heartbeat ping, within the send limit. */
  ping(conn: HandlerConnection): boolean {
    if (!conn.usable || this.overLimit(conn)) return false;
    try {
      conn.client.socket.ping();
      return true;
    } catch (err) {
      this.#log.debug('WebSocket ping failed', {
        clientId: conn.client.id,
        error: errorMessage(err),
      });
      return false;
    }
  }

  /** Answers a ping; `conn` (when the socket is one of the handler's) applies the send limit. */
  pong(socket: WebSocket, conn: HandlerConnection | undefined, data?: Buffer): void {
    if (socket.readyState !== WebSocket.OPEN) return;
    if (conn !== undefined && this.overLimit(conn)) return;
    try {
      socket.pong(data);
    } catch (err) {
      this.#log.debug('WebSocket pong not sent', { error: errorMessage(err) });
    }
  }
}
