/**
 * The inbound side of a WebSocketHandler: the path of one message from `ws` to the
 * onMessage listeners. Shutdown and the per-connection budget first, then a cheap refusal
 * of what cannot be an envelope, then decoding; every refusal is an `error` event counted
 * against the client's protocol errors (close 1008 past `maxProtocolErrors`).
 */
import { Buffer } from 'node:buffer';
import type { RawData } from 'ws';
import type { LoggerInterface } from '@pkg/logger';
import { errorPolicy } from './error-policy';
import { WsCloseCode } from './close-codes';
import type { WsClient } from './connection';
import { decodeBinaryMessage, decodeMessage, MessageDecodeError, prepareError } from './envelope';
import type { BinaryEnvelope, Envelope, RequestId } from './envelope';
import { WsEventErrorCode } from './errors';
import type { WsErrorCode } from './errors';
import { refuseCheaply } from './inbound-budget';
import type { ResolvedWebSocketHandlerOptions } from './options';
import type { ClientTable, HandlerConnection } from './client-table';
import type { Outbound } from './outbound';

/** Called with every valid envelope a client sends. */
export type WsMessageListener = (client: WsClient, envelope: Envelope) => void;

/**
 * Called with every valid envelope a client sends, text or binary (a binary one has a
 * `Uint8Array` as `data`): a listener registered with `onMessage(fn, { binary: true })`.
 */
export type WsInboundListener = (client: WsClient, envelope: Envelope | BinaryEnvelope) => void;

/** One registered message listener, and whether it takes binary envelopes. */
export interface MessageListenerEntry {
  readonly fn: WsInboundListener;
  readonly binary: boolean;
}

const NOT_AN_OBJECT =
  'The message is not a JSON object: send {"event": "name", "data": {}} as a text message.';
const NOT_JSON =
  'The message is not valid JSON: send {"event": "name", "data": {}} as a text message.';

export function toBuffer(raw: RawData | string): Buffer | string {
  if (typeof raw === 'string' || Buffer.isBuffer(raw)) return raw;
  if (Array.isArray(raw)) return Buffer.concat(raw);
  return Buffer.from(raw);
}

/** The size of a message as `ws` hands it over. */
function rawLength(raw: RawData): number {
  if (Buffer.isBuffer(raw)) return raw.length;
  if (Array.isArray(raw)) return raw.reduce((n, b) => n + b.length, 0);
  return raw.byteLength;
}

/** What the inbound side shares with the handler. */
export interface InboundParts {
  readonly options: ResolvedWebSocketHandlerOptions;
  readonly log: LoggerInterface;
  readonly table: ClientTable;
  readonly outbound: Outbound;
  readonly listeners: readonly MessageListenerEntry[];
  /** True once the handler stopped accepting (messages are answered `shutting_down`). */
  readonly closing: () => boolean;
}

export class Inbound {
  readonly #p: InboundParts;

  constructor(parts: InboundParts) {
    this.#p = parts;
  }

  /**
   * True when `client` takes binary frames (the `binaryFrames` option). A predicate that
   * throws counts as false, and is logged.
   */
  takesBinary(client: WsClient): boolean {
    const takes = this.#p.options.binaryFrames;
    if (takes === undefined) return false;
    try {
      return takes(client) === true;
    } catch (err) {
      this.#p.log.exception(err, { clientId: client.id, code: 'PKG_ERR_WS_INVALID_OPTION' });
      return false;
    }
  }

  /** Decodes a text payload into the envelope (throws a MessageDecodeError). */
  decode(raw: RawData | string): Envelope {
    const { prototypeKeys, controlEvents } = this.#p.options;
    return decodeMessage(toBuffer(raw), prototypeKeys, controlEvents);
  }

  /**
   * The one function that puts an `error` envelope on a WebSocket (every other way to send
   * an error, in this package and in `@pkg/core`, ends here). How a code is spaced and
   * counted is a column of `@pkg/wire`'s error table, not the caller's choice: a
   * `protocolError` code counts against the client's budget (closing it with 1008 once it
   * has made too many); a `throttled` code without `id` is sent at most once per
   * `errorReplyInterval`; with `id` the error answers that request and is always sent. A code
   * the table does not know (an application's own) is neither. Returns true when sent.
   */
  fail(
    conn: HandlerConnection,
    code: string,
    message: string,
    extra: Readonly<Record<string, unknown>>,
    id?: RequestId,
  ): boolean {
    if (conn.ending || conn.gone) return false;
    const { options, log, outbound } = this.#p;
    options.onRefusal?.(code);
    const now = Date.now();
    const policy = errorPolicy(code);
    if (policy.protocolError && conn.budget.protocolError(now)) {
      log.notice('WebSocket client made too many protocol errors; closing with 1008', {
        clientId: conn.client.id,
        code: 'PKG_ERR_WS_TOO_MANY_PROTOCOL_ERRORS' satisfies WsErrorCode,
        closeCode: WsCloseCode.POLICY_VIOLATION,
        lastError: code,
        maxProtocolErrors: options.maxProtocolErrors,
      });
      conn.close(
        WsCloseCode.POLICY_VIOLATION,
        'Too many protocol errors',
        options.closeTimeout,
        log,
      );
      return false;
    }
    if (id === undefined && policy.throttled && !conn.budget.mayReply(code, now)) return false;
    return outbound.deliver(conn, prepareError(code, message, id, extra));
  }

  /**
   * The request id of a message refused before it was decoded (shutdown, over budget), so
   * that the refusal answers it. Decoding costs a parse, but a client pays for over-budget
   * messages with protocol errors and is closed with 1008 after `maxProtocolErrors` of them.
   */
  #requestIdOf(client: WsClient, raw: RawData | string, isBinary: boolean): RequestId | undefined {
    if (isBinary) {
      if (typeof raw === 'string' || !this.takesBinary(client)) return undefined;
      const read = decodeBinaryMessage(toBuffer(raw) as Buffer, this.#p.options.controlEvents);
      return read.id;
    }
    try {
      return this.decode(raw).id;
    } catch (err) {
      return err instanceof MessageDecodeError ? err.id : undefined;
    }
  }

  /** A message of a connected client: budget and shutdown checks, then {@link process}. */
  receive(conn: HandlerConnection, raw: RawData | string, isBinary: boolean): boolean {
    if (conn.ending || conn.gone) return false;
    const { options, log } = this.#p;
    if (this.#p.closing()) {
      this.fail(
        conn,
        WsEventErrorCode.SHUTTING_DOWN,
        'The server is shutting down: the message was not handled.',
        {},
        this.#requestIdOf(conn.client, raw, isBinary),
      );
      return false;
    }
    const size = typeof raw === 'string' ? Buffer.byteLength(raw) : rawLength(raw);
    if (!conn.budget.take(size, Date.now())) {
      log.debug('WebSocket message over the inbound budget', {
        clientId: conn.client.id,
        code: 'PKG_ERR_WS_OVER_BUDGET' satisfies WsErrorCode,
      });
      this.fail(
        conn,
        WsEventErrorCode.TOO_MANY_MESSAGES,
        `Too many messages: at most ${options.maxMessagesPerSecond} messages and ${options.maxBytesPerSecond} bytes per second. Slow down.`,
        {},
        this.#requestIdOf(conn.client, raw, isBinary),
      );
      return false;
    }
    return this.process(conn.client, raw, isBinary, conn);
  }

  /**
   * Decodes one message and gives the envelope to the listeners, or refuses it (an `error`
   * event; close 1003 for a binary message with `binaryMessages: 'close'`). `conn` is the
   * client's connection when it is one of the handler's (its budget counts the refusal).
   */
  process(
    client: WsClient,
    raw: RawData | string,
    isBinary: boolean,
    conn?: HandlerConnection,
  ): boolean {
    const { options, log, table } = this.#p;
    const refuse = (code: string, message: string, id?: RequestId): void => {
      const own = conn ?? table.get(client.id);
      if (own !== undefined) this.fail(own, code, message, {}, id);
    };
    if (isBinary && this.takesBinary(client)) {
      return this.#processBinary(client, raw, refuse);
    }
    if (isBinary) {
      if (options.binaryMessages === 'close') {
        log.notice('WebSocket client sent a binary message; closing with 1003', {
          clientId: client.id,
          code: 'PKG_ERR_WS_BINARY_NOT_SUPPORTED',
        });
        table
          .get(client.id)
          ?.close(
            WsCloseCode.UNSUPPORTED_DATA,
            'Binary messages are not supported',
            options.closeTimeout,
            log,
          );
      } else {
        refuse(
          WsEventErrorCode.BINARY_NOT_SUPPORTED,
          'Binary messages are not supported: send the envelope as a JSON text message.',
        );
      }
      return false;
    }
    const text = toBuffer(raw);
    // Cheap rejection: what cannot be a JSON object is refused without parsing it.
    const cheap = refuseCheaply(text);
    if (cheap !== undefined) {
      log.debug('WebSocket message refused', {
        clientId: client.id,
        code: 'PKG_ERR_WS_INVALID_MESSAGE',
        reason: cheap,
      });
      refuse(cheap, cheap === WsEventErrorCode.INVALID_JSON ? NOT_JSON : NOT_AN_OBJECT);
      return false;
    }
    let envelope: Envelope;
    try {
      envelope = decodeMessage(text, options.prototypeKeys, options.controlEvents);
    } catch (err) {
      const known = err instanceof MessageDecodeError;
      const code = known ? err.code : WsEventErrorCode.INVALID_JSON;
      const message = known ? err.message : 'Invalid message.';
      log.debug('WebSocket message refused', {
        clientId: client.id,
        code: 'PKG_ERR_WS_INVALID_MESSAGE',
        reason: code,
      });
      refuse(code, message, known ? err.id : undefined);
      return false;
    }
    this.#deliver(client, envelope, false);
    return true;
  }

  /** A binary frame of a connection that takes them: decoded with @pkg/wire's decoder. */
  #processBinary(
    client: WsClient,
    raw: RawData | string,
    refuse: (code: string, message: string, id?: RequestId) => void,
  ): boolean {
    const bytes = typeof raw === 'string' ? Buffer.from(raw) : (toBuffer(raw) as Buffer);
    const read = decodeBinaryMessage(bytes, this.#p.options.controlEvents);
    if (!('event' in read)) {
      this.#p.log.debug('WebSocket binary message refused', {
        clientId: client.id,
        code: 'PKG_ERR_WS_INVALID_MESSAGE',
        reason: read.code,
      });
      refuse(read.code, read.message, read.id);
      return false;
    }
    this.#deliver(client, read, true);
    return true;
  }

  #deliver(client: WsClient, envelope: Envelope | BinaryEnvelope, binary: boolean): void {
    for (const { fn, binary: takesBinary } of this.#p.listeners) {
      if (binary && !takesBinary) continue;
      try {
        fn(client, envelope);
      } catch (err) {
        this.#p.log.exception(err, { clientId: client.id, event: envelope.event });
      }
    }
  }
}
