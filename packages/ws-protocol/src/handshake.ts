/**
 * The HTTP side of the WebSocket handshake that comes before `ws`: the checks of the
 * upgrade request, the context and result types of handshake hooks, and the short JSON
 * answer that refuses a handshake.
 */
import { Buffer } from 'node:buffer';
import { STATUS_CODES, validateHeaderName, validateHeaderValue } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { LoggerInterface } from '@pkg/logger';
import { isValidWebSocketKey } from './accept-key';
import type { WsErrorCode } from './errors';

/** What a handshake hook sees of the upgrade request, and where it attaches client data. */
export interface HandshakeContext {
  readonly request: IncomingMessage;
  readonly headers: IncomingHttpHeaders;
  /** The query string of the request URL (e.g. `query.get('key')` for a token). */
  readonly query: URLSearchParams;
  /** The path of the request URL, without the query. */
  readonly path: string;
  /** The client IP (from the `clientIp` option; by default the socket's remote address). */
  readonly ip: string;
  /** The `Origin` header, if any (already checked against allowedOrigins). */
  readonly origin: string | undefined;
  /** The id the client will have once connected. */
  readonly clientId: string;
  /** Values set here become `client.data` of the new client. */
  readonly data: Record<string, unknown>;
}

/**
 * A hook's refusal: the HTTP status (4xx/5xx) and a short text, the `message` of the JSON
 * error body the handshake is answered with.
 */
export interface HandshakeRefusal {
  status: number;
  message: string;
  /** Extra response headers, e.g. `WWW-Authenticate`. */
  headers?: Record<string, string>;
}

/**
 * Runs before the upgrade completes, in the order added. Return nothing to accept (and
 * attach values to `ctx.data`), or a {@link HandshakeRefusal} to refuse. May be async; a
 * hook that throws refuses the handshake with 500 (and is logged).
 */
export type HandshakeHook = (
  ctx: HandshakeContext,
) => void | HandshakeRefusal | Promise<void | HandshakeRefusal>;

/** A refused handshake as this package answers it. */
export interface HandshakeFailure {
  status: number;
  message: string;
  code: WsErrorCode;
  headers?: Record<string, string>;
}

/** The first value of a header that Node may give as a list. */
export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Path and query of a request target (origin-form, or absolute-form as proxies send it). */
export function splitRequestTarget(url: string): { path: string; query: URLSearchParams } {
  let target = url;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(target)) {
    try {
      const parsed = new URL(target);
      target = parsed.pathname + parsed.search;
    } catch {
      target = '/';
    }
  }
  const q = target.indexOf('?');
  return q === -1
    ? { path: target, query: new URLSearchParams() }
    : { path: target.slice(0, q), query: new URLSearchParams(target.slice(q + 1)) };
}

/** How many times a header (lower-case name) occurs in Node's `rawHeaders` list. */
function countHeader(raw: readonly string[] | undefined, name: string): number {
  if (raw === undefined) return 0;
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]?.toLowerCase() === name) n += 1;
  return n;
}

/**
 * Checks that `req` is an RFC 6455 opening handshake: GET over HTTP/1.1 or later,
 * exactly one `Host`, `Upgrade: websocket`, a valid `Sec-WebSocket-Key`, `Sec-WebSocket-Version: 13`. Returns
 * the refusal, or undefined.
 */
export function validateUpgradeRequest(req: IncomingMessage): HandshakeFailure | undefined {
  if (req.method !== 'GET') {
    return {
      status: 400,
      code: 'PKG_ERR_WS_BAD_HANDSHAKE',
      message: 'A WebSocket handshake must use GET.',
    };
  }
  const { httpVersionMajor: major, httpVersionMinor: minor } = req;
  if (major < 1 || (major === 1 && minor < 1)) {
    // RFC 6455 section 4.1: the opening handshake is an HTTP/1.1 (or later) GET. `ws` does
    // not check this itself.
    return {
      status: 400,
      code: 'PKG_ERR_WS_BAD_HANDSHAKE',
      message: 'A WebSocket handshake must use HTTP/1.1 or later.',
    };
  }
  if (countHeader(req.rawHeaders, 'host') > 1) {
    // As on HTTP (@pkg/http refuses it with 400): a proxy and Node may each read another
    // of the values, so the Host check would look at one and the application at the other.
    return {
      status: 400,
      code: 'PKG_ERR_WS_BAD_HANDSHAKE',
      message: 'The request has more than one Host header; send exactly one.',
    };
  }
  const upgrade = headerValue(req.headers.upgrade);
  if (upgrade === undefined || upgrade.trim().toLowerCase() !== 'websocket') {
    return {
      status: 400,
      code: 'PKG_ERR_WS_BAD_HANDSHAKE',
      message: 'Missing or invalid Upgrade header; expected "Upgrade: websocket".',
    };
  }
  if (!isValidWebSocketKey(headerValue(req.headers['sec-websocket-key']))) {
    return {
      status: 400,
      code: 'PKG_ERR_WS_BAD_HANDSHAKE',
      message: 'Missing or invalid Sec-WebSocket-Key header.',
    };
  }
  if (headerValue(req.headers['sec-websocket-version'])?.trim() !== '13') {
    return {
      status: 426,
      code: 'PKG_ERR_WS_UNSUPPORTED_VERSION',
      message: 'Unsupported WebSocket version; this server speaks version 13.',
      headers: { 'Sec-WebSocket-Version': '13' },
    };
  }
  return undefined;
}

/** Longest refusal message written; hooks' messages are cut to it. */
const MAX_BODY = 512;

/** Headers the refusal writes itself; a hook cannot replace them. */
const OWN_HEADERS = new Set(['content-length', 'connection', 'content-type']);

/**
 * Whether a header may be written as given: Node's own rules (`validateHeaderName`,
 * `validateHeaderValue`, the ones `ServerResponse.setHeader` and @pkg/http's
 * `Response.setHeader` apply), so a value with CR, LF, NUL or a character above U+00FF (which
 * the latin1 head would turn into a raw byte, U+010D into CR) is refused.
 */
export function isWritableHeader(name: string, value: unknown): boolean {
  if (typeof value !== 'string' && typeof value !== 'number') return false;
  try {
    validateHeaderName(name);
    validateHeaderValue(name, String(value));
    return true;
  } catch {
    return false;
  }
}

/**
 * The header lines of a refusal. A header that fails {@link isWritableHeader} is dropped
 * (and logged when a logger is given, with its name only: the value may be hostile).
 */
function headerLines(
  headers: Record<string, string> | undefined,
  log: LoggerInterface | undefined,
): string {
  if (!headers) return '';
  let out = '';
  for (const [name, value] of Object.entries(headers)) {
    if (OWN_HEADERS.has(name.toLowerCase())) continue;
    if (!isWritableHeader(name, value)) {
      log?.warning('Handshake refusal header dropped: invalid name or value', {
        code: 'PKG_ERR_WS_INVALID_HEADER' satisfies WsErrorCode,
        header: name.slice(0, 64),
      });
      continue;
    }
    out += `${name}: ${String(value)}\r\n`;
  }
  return out;
}

/** A status a refusal may use: 400-599, else 500. */
export function refusalStatus(status: unknown): number {
  return typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599
    ? status
    : 500;
}

/** What a refused handshake is answered with: its status, code, message and headers. */
export interface HandshakeAnswer {
  readonly status: number;
  /** The machine code (`PKG_ERR_WS_ORIGIN_NOT_ALLOWED`...), when there is one. */
  readonly code?: WsErrorCode;
  /** What was wrong; left out when it only repeats the status's reason phrase. */
  readonly message?: string;
  readonly headers?: Record<string, string>;
}

/**
 * The JSON body of a refused handshake, in the shape of every HTTP error body of the
 * project: `{"error": <reason phrase>, "code", "message"}`, the last two when there is one
 * and when it says more than the reason phrase (the message cut to 512 characters). A 500
 * says nothing more than its reason phrase: what failed is in the log, not the answer.
 */
export function handshakeErrorBody(status: number, code?: string, message?: string): string {
  const error = STATUS_CODES[status] ?? 'Error';
  const body: { error: string; code?: string; message?: string } = { error };
  if (status === 500) return JSON.stringify(body);
  if (code !== undefined) body.code = code;
  if (message !== undefined && message !== error) body.message = message.slice(0, MAX_BODY);
  return JSON.stringify(body);
}

/**
 * Answers a refused handshake with the JSON error body of {@link handshakeErrorBody} and
 * closes the socket. Safe to call on a socket that is already gone.
 */
export function writeHandshakeError(
  socket: Duplex,
  answer: HandshakeAnswer,
  log?: LoggerInterface,
): void {
  if (socket.destroyed) return;
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const { status } = answer;
  const body = Buffer.from(handshakeErrorBody(status, answer.code, answer.message), 'utf8');
  const head =
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
    'Connection: close\r\n' +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${body.length}\r\n` +
    headerLines(answer.headers, log) +
    '\r\n';
  socket.once('finish', () => socket.destroy());
  socket.end(Buffer.concat([Buffer.from(head, 'latin1'), body]));
}

/**
 * Reads a not yet upgraded socket while something slow runs (handshake hooks): a client that
 * closes or resets is noticed (the socket stops being readable, or is destroyed), and bytes
 * it sends early are kept for `ws`. More than `limit` bytes destroy the socket. `release()`
 * stops reading and returns what was kept.
 */
export function holdEarlyBytes(socket: Duplex, limit: number): { release(): Buffer } {
  const chunks: Buffer[] = [];
  let total = 0;
  const onData = (chunk: Buffer): void => {
    total += chunk.length;
    if (total > limit) socket.destroy();
    else chunks.push(chunk);
  };
  socket.on('data', onData);
  return {
    release() {
      socket.removeListener('data', onData);
      return Buffer.concat(chunks);
    },
  };
}
