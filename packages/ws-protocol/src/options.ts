/** The options of WebSocketHandler: one full defaults object, merged and checked once. */
import type { IncomingMessage } from 'node:http';
import type { LoggerInterface } from '@pkg/logger';
import { SUBPROTOCOL } from '@pkg/wire';
import type { WsClient } from './connection';
import type { PrototypeKeysPolicy } from './envelope';
import { describe } from './describe';
import { createWsError } from './errors';
import { guardLogger } from './guard-logger';
import { fallbackLogger } from './fallback-logger';

export interface WebSocketHandlerOptions {
  /** Origins that may connect: `'*'`, exact origins, or `https://*.example.com`. Default `['*']`. */
  allowedOrigins?: string[];
  /** Whether a request without an `Origin` header (a non-browser client) may connect. Default `true`. */
  allowMissingOrigin?: boolean;
  /** Largest inbound message in bytes; a larger one closes the connection with 1009. Default 1 MiB. */
  maxPayload?: number;
  /** Milliseconds between server pings; `0` turns the heartbeat off. Default 25000. */
  heartbeatInterval?: number;
  /** Milliseconds to wait for the pong before terminating the client. Default 20000. */
  heartbeatTimeout?: number;
  /** Unsent bytes a client may have queued before it is dropped with 1013. Default 4 MiB. */
  maxBufferedAmount?: number;
  /** Compression: `false` (default), `true` (threshold 1024 bytes) or `{ threshold }`. */
  perMessageDeflate?: boolean | { threshold?: number };
  /**
   * What a binary message gets when the connection does not take binary frames (see
   * `binaryFrames`): an `error` event `binary_not_supported` (`'error'`, default) or close
   * 1003 (`'close'`).
   */
  binaryMessages?: 'error' | 'close';
  /**
   * Which connections take the binary frames of protocol version 1 (docs/protocol.md,
   * "Binary frames"): `false` (the default) none; `true` those that negotiated the
   * subprotocol `pkg.v1` (which `controlEvents: true` selects); or a function that says it
   * per client (a server that knows which connections said `$hello`). On such a connection a
   * binary message is decoded with `@pkg/wire`'s `decodeBinaryFrame` and handed to the
   * listeners registered with `onMessage(fn, { binary: true })` as an envelope whose `data`
   * is a `Uint8Array`; a malformed one is refused through the one error door
   * (`invalid_binary_frame`, ...). Only such a connection is sent binary frames
   * (`sendBinary`, `sendBinaryToMany`); the others are skipped and counted
   * (`skippedBinary`). Every other connection keeps `binaryMessages`.
   */
  binaryFrames?: boolean | ((client: WsClient) => boolean);
  /**
   * What a message whose JSON has a `__proto__` or `constructor.prototype` key gets:
   * `'error'` (the default) answers an `error` event with code `invalid_json` (the
   * connection stays open); `'remove'` drops those keys and delivers the rest.
   */
  prototypeKeys?: PrototypeKeysPolicy;
  /**
   * Keep the upgrade request on `client.request` for the life of the connection (default
   * true). It is about 1.3 KiB per client: with false, `client.request` is undefined and the
   * request is given to the onConnect listeners only (their second argument).
   */
  keepRequest?: boolean;
  /** Milliseconds a started close handshake may take before the socket is destroyed. Default 5000. */
  closeTimeout?: number;
  /** Milliseconds the handshake hooks may take before the handshake is refused with 503; `0` = no limit. Default 10000. */
  handshakeTimeout?: number;
  /** Where log lines go. Default: discarded. */
  logger?: LoggerInterface;
  /** The client IP of an upgrade request. Default: the socket's remote address. */
  clientIp?: (req: IncomingMessage) => string;
  /** Id of a new client when performHandshake gets none. Default: random per-process prefix + counter. */
  generateId?: () => string;
  /**
   * Decode the control events of protocol version 1 (`$hello`, `$ping`, `$ack`, `$nack`)
   * and hand them to the onMessage listeners; when false (the default) they are
   * `invalid_event` like any name outside `^[A-Za-z0-9._-]+$`. When true the handshake
   * also selects the subprotocol `pkg.v1` when the client offers it; when false `pkg.v1`
   * is never selected (other subprotocols: the first offered, either way).
   */
  controlEvents?: boolean;
  /** Inbound messages per second per connection (bursts of twice as many); over it, refused with `too_many_messages`. `0` = no limit. Default 100. */
  maxMessagesPerSecond?: number;
  /** Inbound bytes per second per connection (bursts of twice as many, at least maxPayload). `0` = no limit. Default 1 MiB. */
  maxBytesPerSecond?: number;
  /** Protocol errors (invalid JSON, bad envelope, unknown event, over budget) a connection may make in a burst, refilled one per second; then closed with 1008. `0` = no limit. Default 10. */
  maxProtocolErrors?: number;
  /** Milliseconds between two `error` replies with the same code to one connection. `0` = answer every refusal. Default 1000. */
  errorReplyInterval?: number;
  /** Messages one connection may have handled per event-loop turn before it is paused until the next turn. `0` = no bound. Default 32. */
  maxMessagesPerTurn?: number;
  /** Called with the code of every refusal (`WebSocketHandler.refuse`, over budget, invalid messages), for metrics. */
  onRefusal?: (code: string) => void;
}

export interface ResolvedWebSocketHandlerOptions {
  allowedOrigins: string[];
  allowMissingOrigin: boolean;
  maxPayload: number;
  heartbeatInterval: number;
  heartbeatTimeout: number;
  maxBufferedAmount: number;
  perMessageDeflate: false | { threshold: number };
  binaryMessages: 'error' | 'close';
  /** Whether a client takes binary frames; undefined when none does. */
  binaryFrames: ((client: WsClient) => boolean) | undefined;
  prototypeKeys: PrototypeKeysPolicy;
  keepRequest: boolean;
  closeTimeout: number;
  handshakeTimeout: number;
  logger: LoggerInterface;
  clientIp: ((req: IncomingMessage) => string) | undefined;
  generateId: (() => string) | undefined;
  controlEvents: boolean;
  maxMessagesPerSecond: number;
  maxBytesPerSecond: number;
  maxProtocolErrors: number;
  errorReplyInterval: number;
  maxMessagesPerTurn: number;
  onRefusal: ((code: string) => void) | undefined;
}

/** The defaults, in one place (README "Options" mirrors this table). */
export const wsHandlerDefaults = Object.freeze({
  allowedOrigins: Object.freeze(['*'] as const),
  allowMissingOrigin: true,
  maxPayload: 1024 * 1024,
  heartbeatInterval: 25_000,
  heartbeatTimeout: 20_000,
  maxBufferedAmount: 4 * 1024 * 1024,
  perMessageDeflate: false,
  deflateThreshold: 1024,
  binaryMessages: 'error',
  binaryFrames: false,
  prototypeKeys: 'error',
  keepRequest: true,
  closeTimeout: 5_000,
  handshakeTimeout: 10_000,
  controlEvents: false,
  maxMessagesPerSecond: 100,
  maxBytesPerSecond: 1024 * 1024,
  maxProtocolErrors: 10,
  errorReplyInterval: 1_000,
  maxMessagesPerTurn: 32,
} as const);

/** `binaryFrames: true`: the connections that negotiated the subprotocol of version 1. */
const negotiatedV1 = (client: WsClient): boolean => client.socket.protocol === SUBPROTOCOL;

/** setTimeout's largest delay; anything above fires at once. */
const MAX_TIMER = 2 ** 31 - 1;

const KNOWN_KEYS = new Set<string>([
  'allowedOrigins',
  'allowMissingOrigin',
  'maxPayload',
  'heartbeatInterval',
  'heartbeatTimeout',
  'maxBufferedAmount',
  'perMessageDeflate',
  'binaryMessages',
  'binaryFrames',
  'prototypeKeys',
  'keepRequest',
  'closeTimeout',
  'handshakeTimeout',
  'controlEvents',
  'logger',
  'clientIp',
  'generateId',
  'maxMessagesPerSecond',
  'maxBytesPerSecond',
  'maxProtocolErrors',
  'errorReplyInterval',
  'maxMessagesPerTurn',
  'onRefusal',
]);

function invalid(key: string, expected: string, value: unknown): TypeError {
  const got = typeof value === 'number' ? String(value) : describe(value);
  return createWsError(
    TypeError,
    'PKG_ERR_WS_INVALID_OPTION',
    `WebSocketHandler option "${key}" must be ${expected}, got ${got}.`,
  );
}

function integer(key: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || Number.isNaN(value)) {
    throw invalid(key, `an integer from ${min} to ${max}`, value);
  }
  if (!Number.isInteger(value) || value < min || value > max) {
    throw createWsError(
      RangeError,
      'PKG_ERR_WS_INVALID_OPTION',
      `WebSocketHandler option "${key}" must be an integer from ${min} to ${max}, got ${value}.`,
    );
  }
  return value;
}

function isLogger(value: unknown): value is LoggerInterface {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return ['debug', 'info', 'notice', 'warning', 'error', 'exception'].every(
    (m) => typeof candidate[m] === 'function',
  );
}

/** Merges `options` over the defaults; throws a TypeError or RangeError naming a bad key. */
export function resolveWsHandlerOptions(
  options: WebSocketHandlerOptions = {},
): ResolvedWebSocketHandlerOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw createWsError(
      TypeError,
      'PKG_ERR_WS_INVALID_OPTION',
      'WebSocketHandler options must be an object such as { allowedOrigins: ["https://app.example.com"] }.',
    );
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN_KEYS.has(key)) {
      throw createWsError(
        TypeError,
        'PKG_ERR_WS_INVALID_OPTION',
        `Unknown WebSocketHandler option "${key}"; known options: ${[...KNOWN_KEYS].join(', ')}.`,
      );
    }
  }
  const o = options as Record<string, unknown>;
  const d = wsHandlerDefaults;

  const allowedOrigins = o.allowedOrigins ?? [...d.allowedOrigins];
  if (!Array.isArray(allowedOrigins) || allowedOrigins.some((x) => typeof x !== 'string')) {
    throw invalid('allowedOrigins', "an array of origin strings (e.g. ['*'])", allowedOrigins);
  }

  const allowMissingOrigin = o.allowMissingOrigin ?? d.allowMissingOrigin;
  if (typeof allowMissingOrigin !== 'boolean') {
    throw invalid('allowMissingOrigin', 'a boolean', allowMissingOrigin);
  }

  let maxBufferedAmount: number = d.maxBufferedAmount;
  if (o.maxBufferedAmount === Infinity) maxBufferedAmount = Infinity;
  else {
    maxBufferedAmount = integer(
      'maxBufferedAmount',
      o.maxBufferedAmount,
      d.maxBufferedAmount,
      1,
      Number.MAX_SAFE_INTEGER,
    );
  }

  let perMessageDeflate: false | { threshold: number } = false;
  const pmd = o.perMessageDeflate;
  if (pmd === true) perMessageDeflate = { threshold: d.deflateThreshold };
  else if (typeof pmd === 'object' && pmd !== null && !Array.isArray(pmd)) {
    const extra = Object.keys(pmd).filter((k) => k !== 'threshold');
    if (extra.length > 0) {
      throw invalid('perMessageDeflate', 'true, false or { threshold: bytes }', pmd);
    }
    const threshold = integer(
      'perMessageDeflate.threshold',
      (pmd as { threshold?: unknown }).threshold,
      d.deflateThreshold,
      0,
      Number.MAX_SAFE_INTEGER,
    );
    perMessageDeflate = { threshold };
  } else if (pmd !== undefined && pmd !== false) {
    throw invalid('perMessageDeflate', 'true, false or { threshold: bytes }', pmd);
  }

  const binaryMessages = o.binaryMessages ?? d.binaryMessages;
  if (binaryMessages !== 'error' && binaryMessages !== 'close') {
    throw invalid('binaryMessages', "'error' or 'close'", binaryMessages);
  }

  const binaryFrames = o.binaryFrames ?? d.binaryFrames;
  if (typeof binaryFrames !== 'boolean' && typeof binaryFrames !== 'function') {
    throw invalid('binaryFrames', 'a boolean or a function (client) => boolean', binaryFrames);
  }

  const prototypeKeys = o.prototypeKeys ?? d.prototypeKeys;
  if (prototypeKeys !== 'error' && prototypeKeys !== 'remove') {
    throw invalid('prototypeKeys', "'error' or 'remove'", prototypeKeys);
  }

  const keepRequest = o.keepRequest ?? d.keepRequest;
  if (typeof keepRequest !== 'boolean') throw invalid('keepRequest', 'a boolean', keepRequest);

  const controlEvents = o.controlEvents ?? d.controlEvents;
  if (typeof controlEvents !== 'boolean') {
    throw invalid('controlEvents', 'a boolean', controlEvents);
  }

  const logger = o.logger ?? fallbackLogger;
  if (!isLogger(logger)) {
    throw invalid('logger', 'a LoggerInterface (debug, info, warning, error, ... methods)', logger);
  }

  const clientIp = o.clientIp;
  if (clientIp !== undefined && typeof clientIp !== 'function') {
    throw invalid('clientIp', 'a function (req) => string', clientIp);
  }
  const generateId = o.generateId;
  if (generateId !== undefined && typeof generateId !== 'function') {
    throw invalid('generateId', 'a function () => string', generateId);
  }
  const onRefusal = o.onRefusal;
  if (onRefusal !== undefined && typeof onRefusal !== 'function') {
    throw invalid('onRefusal', 'a function (code) => void', onRefusal);
  }

  return {
    allowedOrigins: [...(allowedOrigins as string[])],
    allowMissingOrigin,
    maxPayload: integer('maxPayload', o.maxPayload, d.maxPayload, 1, Number.MAX_SAFE_INTEGER),
    heartbeatInterval: integer(
      'heartbeatInterval',
      o.heartbeatInterval,
      d.heartbeatInterval,
      0,
      MAX_TIMER,
    ),
    heartbeatTimeout: integer(
      'heartbeatTimeout',
      o.heartbeatTimeout,
      d.heartbeatTimeout,
      1,
      MAX_TIMER,
    ),
    maxBufferedAmount,
    perMessageDeflate,
    binaryMessages,
    binaryFrames:
      binaryFrames === true
        ? negotiatedV1
        : typeof binaryFrames === 'function'
          ? (binaryFrames as (client: WsClient) => boolean)
          : undefined,
    prototypeKeys,
    keepRequest,
    closeTimeout: integer('closeTimeout', o.closeTimeout, d.closeTimeout, 1, MAX_TIMER),
    handshakeTimeout: integer(
      'handshakeTimeout',
      o.handshakeTimeout,
      d.handshakeTimeout,
      0,
      MAX_TIMER,
    ),
    logger: logger === fallbackLogger ? logger : guardLogger(logger),
    clientIp: clientIp as ((req: IncomingMessage) => string) | undefined,
    generateId: generateId as (() => string) | undefined,
    controlEvents,
    maxMessagesPerSecond: integer(
      'maxMessagesPerSecond',
      o.maxMessagesPerSecond,
      d.maxMessagesPerSecond,
      0,
      Number.MAX_SAFE_INTEGER,
    ),
    maxBytesPerSecond: integer(
      'maxBytesPerSecond',
      o.maxBytesPerSecond,
      d.maxBytesPerSecond,
      0,
      Number.MAX_SAFE_INTEGER,
    ),
    maxProtocolErrors: integer(
      'maxProtocolErrors',
      o.maxProtocolErrors,
      d.maxProtocolErrors,
      0,
      Number.MAX_SAFE_INTEGER,
    ),
    errorReplyInterval: integer(
      'errorReplyInterval',
      o.errorReplyInterval,
      d.errorReplyInterval,
      0,
      MAX_TIMER,
    ),
    maxMessagesPerTurn: integer(
      'maxMessagesPerTurn',
      o.maxMessagesPerTurn,
      d.maxMessagesPerTurn,
      0,
      Number.MAX_SAFE_INTEGER,
    ),
    onRefusal: onRefusal as ((code: string) => void) | undefined,
  };
}
