/**
 * The outbound side of a WebSocketHandler: every frame the server sends goes through
 * {@link Outbound.deliver} (or ping/pong here), which drops a client whose unsent bytes
 * exceed `maxBufferedAmount` (close 1013) instead of buffering without bound.
 *
 * What one client is sent within one turn (answers, messages, errors) leaves in one write:
 * the first frame corks its socket and the end of the batch (the next process tick) uncorks
 * it, as for a burst of broadcasts. Frames keep their order (they are queued on one stream);
 * a frame over 16 KiB is written at once (coalescing gains nothing on it, and a held large
 * frame would count against the send limit before the socket had a chance to take it), and
 * held bytes are written out once they reach 64 KiB.
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
  /** True while a batch is under way: the sends before the next process tick. */
  #batchOpen = false;
  /** Clients corked in this batch, uncorked at its end. */
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
   * Like every send, it joins each client's batch: the frames of a burst of broadcasts (and
   * whatever else a client is sent in the same tick) leave in one write per client instead
   * of one each. The send-buffer limit still applies to every frame (held bytes count in
   * `bufferedAmount`).
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
    let count = 0;
    for (const id of clientIds) {
      const conn = this.#table.get(id);
      if (conn === undefined || (skip !== undefined && skip(conn))) continue;
      if (this.deliver(conn, payload, binary)) count += 1;
    }
    return count;
  }

  readonly #endBatch = (): void => {
    this.#batchOpen = false;
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
    this.#hold(conn, payload.length);
    return this.#send(conn, (socket) => {
      if (typeof payload !== 'string') {
        socket.send(payload, binary ? SEND_AS_BINARY : SEND_AS_TEXT);
      } else if (payload.length <= CORK_MAX_FRAME) {
        // Made bytes here: the socket's write then takes every chunk of a batch as it is,
        // where Node measures, checks the encoding of and copies each string chunk on its
        // own (about 2k instructions per answer more). A long text is copied once either way.
        socket.send(Buffer.from(payload, 'utf8'), SEND_AS_TEXT);
      } else {
        socket.send(payload);
      }
    });
  }

  /**
   * Before a frame of `size` bytes to one client: corks it until the end of the batch, so
   * that what it is sent in this turn leaves in one write. A large frame is written at once
   * (held frames first), and held bytes past {@link CORK_MAX_HELD} are written out.
   */
  #hold(conn: HandlerConnection, size: number): void {
    if (size > CORK_MAX_FRAME) {
      if (conn.corked) conn.uncork();
      return;
    }
    if (conn.corked) {
      if (conn.client.socket.bufferedAmount < CORK_MAX_HELD) return;
      conn.uncork();
      conn.cork();
      return;
    }
    conn.cork();
    this.#corked.push(conn);
    if (!this.#batchOpen) {
      this.#batchOpen = true;
      nextTick(this.#endBatch);
    }
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
    this.#hold(conn, head.length + tail.length);
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
