/**
 * What a `Request` is built from, and its checks: a hand-made `RequestInit` is checked and its
 * headers copied to lower-case names; one built from Node's own message (`initFromNode`) is
 * trusted as Node's parser left it and used without a copy.
 */
import { Buffer } from 'node:buffer';
import { IncomingMessage, type IncomingHttpHeaders } from 'node:http';
import type { PrototypeKeysPolicy } from './body';
import { createHttpError, HttpError } from './errors';
import { compileTrustProxy, type TrustPredicate, type TrustProxySetting } from './trust-proxy';

/** What a {@link Request} is built from. `Request.fromIncomingMessage` fills it from Node. */
export interface RequestInit {
  /** The method, e.g. `GET`. */
  method: string;
  /** The request-target: path and query (`/users/7?full=1`). */
  url: string;
  /** The protocol version, e.g. `HTTP/1.1` (the default). */
  protocol?: string;
  /** The headers; names are matched case-insensitively. */
  headers: IncomingHttpHeaders;
  /** The body bytes, when the body has been read. */
  body?: Buffer;
  /** The socket peer's address. */
  remoteAddress?: string;
  /** True when the connection is TLS. */
  encrypted?: boolean;
  /** The local port the connection arrived on. */
  localPort?: number;
  /**
   * Which peers may report forwarded values (default: none): a trust-proxy setting, or a
   * predicate made once with `compileTrustProxy` (cheaper when building many requests).
   */
  trustProxy?: TrustProxySetting | TrustPredicate;
  /** `__proto__` / `constructor.prototype` keys in a JSON body: `'error'` (400, the default) or `'remove'`. */
  prototypeKeys?: PrototypeKeysPolicy;
}

/** The fields of a message, as `initFromNode` hands them to the constructor. */
class MessageInit implements RequestInit {
  constructor(
    readonly method: string,
    readonly url: string,
    readonly protocol: string,
    readonly headers: IncomingHttpHeaders,
    readonly body: Buffer | undefined,
    readonly remoteAddress: string | undefined,
    readonly encrypted: boolean,
    readonly localPort: number | undefined,
    readonly trustProxy: TrustProxySetting | TrustPredicate | undefined,
    readonly prototypeKeys: PrototypeKeysPolicy,
  ) {}
}

/**
 * An init built from Node's own message: lower-case header names, used without a copy. A
 * class of this module (not a mark on a plain object), so that nothing else can pass for one
 * and every request's init has the same shape.
 */
class NodeRequestInit extends MessageInit {}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const TRUST_NONE: TrustPredicate = () => false;

export function invalidHost(host: unknown): HttpError {
  return new HttpError(
    'PKG_ERR_HTTP_INVALID_HOST',
    `Invalid Host header ${JSON.stringify(host)}: expected a host name or IP and an ` +
      `optional port, once.`,
  );
}

export function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return (
    value !== null &&
    typeof value === 'object' &&
    !Array.isArray(value) &&
    !(value instanceof Uint8Array)
  );
}

export function invalidArgument(message: string): TypeError {
  return createHttpError(TypeError, 'PKG_ERR_HTTP_INVALID_ARGUMENT', message);
}

function normalizeHeaders(raw: IncomingHttpHeaders): Record<string, string | string[]> {
  const headers = Object.create(null) as Record<string, string | string[]>;
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    const key = name.toLowerCase();
    const text = Array.isArray(value) ? value.map(String) : String(value);
    const existing = headers[key];
    if (existing === undefined) headers[key] = text;
    else headers[key] = ([] as string[]).concat(existing, text);
  }
  return headers;
}

/** The parts of a `RequestInit` a request keeps, checked (TypeError naming the bad field). */
export interface CheckedInit {
  readonly method: string;
  /** Lower-case names; Node's own object when built from an IncomingMessage (never written). */
  readonly headers: Record<string, string | string[] | undefined>;
  readonly trust: TrustPredicate;
  readonly prototypeKeys: PrototypeKeysPolicy;
}

export function checkInit(init: RequestInit): CheckedInit {
  if (init === null || typeof init !== 'object') {
    throw invalidArgument('new Request(init) needs an object with method, url and headers.');
  }
  let method: string;
  let headers: Record<string, string | string[] | undefined>;
  const fromNode = init instanceof NodeRequestInit;
  if (fromNode) {
    // Node's parser has checked the method and kept names in lower case.
    method = init.method;
    headers = init.headers;
  } else {
    if (typeof init.method !== 'string' || !TOKEN.test(init.method)) {
      throw invalidArgument(
        `Request method must be a token such as "GET"; got ${JSON.stringify(init.method)}.`,
      );
    }
    if (typeof init.url !== 'string') {
      throw invalidArgument('Request url must be a string: the path and query, e.g. "/a?b=1".');
    }
    if (init.headers === null || typeof init.headers !== 'object') {
      throw invalidArgument('Request headers must be an object of header names to values.');
    }
    if (init.body !== undefined && !Buffer.isBuffer(init.body)) {
      throw invalidArgument('Request body must be a Buffer of the bytes received.');
    }
    method = init.method.toUpperCase();
    headers = normalizeHeaders(init.headers);
  }
  const trustSetting = init.trustProxy;
  const trust =
    trustSetting === undefined || trustSetting === false
      ? TRUST_NONE
      : typeof trustSetting === 'function'
        ? trustSetting
        : compileTrustProxy(trustSetting, 'RequestInit.trustProxy');
  const prototypeKeys = init.prototypeKeys ?? 'error';
  if (prototypeKeys !== 'error' && prototypeKeys !== 'remove') {
    throw invalidArgument(
      `RequestInit.prototypeKeys must be 'error' or 'remove'; got ${JSON.stringify(prototypeKeys)}.`,
    );
  }
  return { method, headers, trust, prototypeKeys };
}

/** What a connection's socket says of its two ends, read once per connection. */
class SocketEnds {
  constructor(
    readonly remoteAddress: string | undefined,
    readonly encrypted: boolean,
    readonly localPort: number | undefined,
  ) {}
}

type EndsSocket = NonNullable<IncomingMessage['socket']> & {
  encrypted?: boolean;
  [kEnds]?: SocketEnds;
};

const kEnds = Symbol('socket ends');
const NO_ENDS = new SocketEnds(undefined, false, undefined);

function readEnds(socket: EndsSocket): SocketEnds {
  return new SocketEnds(socket.remoteAddress, socket.encrypted === true, socket.localPort);
}

/**
 * The addresses of the connection a message of Node's arrived on. They never change while
 * the connection lives, and Node's getters behind them cost a lookup through the socket's
 * handle each time, so they are read on the connection's first request and kept on the
 * socket for the requests that follow on it (keep-alive, pipelining).
 */
function endsOf(socket: EndsSocket): SocketEnds {
  let ends = socket[kEnds];
  if (ends === undefined) {
    ends = readEnds(socket);
    // A socket that takes no properties (frozen by its maker) is read on every request.
    if (Object.isExtensible(socket)) socket[kEnds] = ends;
  }
  return ends;
}

/**
 * The init of a request built from Node's message, marked so that its headers are used
 * without a copy (Node keeps them in a prototype-free object with lower-case names, which
 * the request only reads).
 */
export function initFromNode(
  req: IncomingMessage,
  body: Buffer | undefined,
  trustProxy: TrustProxySetting | TrustPredicate | undefined,
  prototypeKeys: PrototypeKeysPolicy,
): RequestInit {
  const protocol = req.httpVersion === '1.1' ? 'HTTP/1.1' : `HTTP/${req.httpVersion}`;
  const socket = req.socket as EndsSocket | null;
  // Node's own message keeps lower-case names in an object whose prototype chain is empty;
  // anything else (a hand-made message) is checked and copied like any RequestInit, and its
  // socket read as it is.
  const fromNode = req instanceof IncomingMessage && typeof req.method === 'string';
  const ends =
    socket === null || socket === undefined
      ? NO_ENDS
      : fromNode
        ? endsOf(socket)
        : readEnds(socket);
  const Init = fromNode ? NodeRequestInit : MessageInit;
  return new Init(
    req.method ?? 'GET',
    req.url ?? '/',
    protocol,
    req.headers,
    body,
    ends.remoteAddress,
    ends.encrypted,
    ends.localPort,
    trustProxy,
    prototypeKeys,
  );
}
