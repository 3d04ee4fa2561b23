import { Buffer } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { HttpError } from './errors';

/**
 * Why a request's framing is ambiguous, or undefined when it is not. Node 20's parser lets
 * these through, and proxies may frame such a request differently from Node (request
 * smuggling): more than one `Host` or `Content-Length` header, a `Transfer-Encoding` other
 * than exactly `chunked`, or both `Content-Length` and `Transfer-Encoding`.
 */
export function findAmbiguity(req: IncomingMessage): string | undefined {
  let hosts = 0;
  let lengths = 0;
  const codings: string[] = [];
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const rawName = raw[i] ?? '';
    // Only names of these three lengths can matter: the others are not lower-cased at all.
    const length = rawName.length;
    if (length !== 4 && length !== 14 && length !== 17) continue;
    const name = rawName === 'Host' || rawName === 'host' ? 'host' : rawName.toLowerCase();
    if (name === 'host') hosts++;
    else if (name === 'content-length') lengths++;
    else if (name === 'transfer-encoding') codings.push(...(raw[i + 1] ?? '').split(','));
  }
  if (hosts > 1) return 'it has more than one Host header';
  if (lengths > 1) return 'it has more than one Content-Length header';
  if (codings.length === 0) return undefined;
  if (lengths > 0) return 'it has both Content-Length and Transfer-Encoding';
  const named = codings.map((c) => c.trim().toLowerCase()).filter((c) => c !== '');
  if (named.length !== 1 || named[0] !== 'chunked') {
    return 'its Transfer-Encoding is not exactly "chunked"';
  }
  return undefined;
}

/**
 * The declared Content-Length, or undefined when absent or not a plain number (digits only).
 * Read digit by digit: on every POST this is cheaper than a regular expression and `Number`.
 */
export function declaredLength(req: IncomingMessage): number | undefined {
  const value = req.headers['content-length'];
  if (value === undefined || value.length === 0) return undefined;
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const digit = value.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return undefined;
    n = n * 10 + digit;
  }
  // Past 15 digits the sum may round differently from the parse: let `Number` read it.
  return value.length > 15 ? Number(value) : n;
}

function tooLarge(limit: number): HttpError {
  return new HttpError(
    'PKG_ERR_HTTP_BODY_TOO_LARGE',
    `The request body is larger than the limit of ${limit} bytes (maxBodySize).`,
  );
}

/** Called once with the body, or with the error that ended the read. */
export type BodyCallback = (err: HttpError | undefined, body: Buffer) => void;

const EMPTY = Buffer.alloc(0);

/** A body being read: what the listeners shared by every request keep on the message. */
interface BodyRead {
  readonly limit: number;
  readonly done: BodyCallback;
  chunks: Buffer[] | undefined;
  first: Buffer | undefined;
  size: number;
  settled: boolean;
}

const kBodyRead = Symbol('body read');
type ReadingMessage = IncomingMessage & { [kBodyRead]?: BodyRead };

// The same four functions serve every request (no closures per request), and stay attached
// once the read is over (`settled` makes them inert): removing them costs more than it saves.
function onBodyData(this: ReadingMessage, chunk: Buffer): void {
  const read = this[kBodyRead];
  if (read === undefined || read.settled) return;
  read.size += chunk.length;
  if (read.size > read.limit) {
    read.settled = true;
    read.chunks = read.first = undefined;
    // Nothing more is read: no listener is left that would take the stream's data.
    this.off('data', onBodyData);
    this.off('end', onBodyEnd);
    this.off('error', onBodyFailure);
    this.off('close', onBodyFailure);
    this.pause();
    read.done(tooLarge(read.limit), EMPTY);
    return;
  }
  if (read.first === undefined) read.first = chunk;
  else (read.chunks ??= [read.first]).push(chunk);
}

function onBodyEnd(this: ReadingMessage): void {
  const read = this[kBodyRead];
  if (read === undefined || read.settled) return;
  read.settled = true;
  const { first, chunks, size } = read;
  read.chunks = read.first = undefined;
  // One chunk (the usual small body) is the body itself; several are joined once.
  read.done(undefined, chunks !== undefined ? Buffer.concat(chunks, size) : (first ?? EMPTY));
}

function onBodyFailure(this: ReadingMessage, err?: Error): void {
  const read = this[kBodyRead];
  if (read === undefined || read.settled) return;
  read.settled = true;
  read.chunks = read.first = undefined;
  read.done(
    new HttpError(
      'PKG_ERR_HTTP_BODY_READ_FAILED',
      'The connection ended before the whole request body arrived.',
      err instanceof Error ? { cause: err } : undefined,
    ),
    EMPTY,
  );
}

/**
 * Reads the body up to `limit` bytes and calls `done` once. A declared Content-Length over
 * the limit is refused before a byte is read; a body that grows past the limit stops being
 * read at once (the stream is paused). Both give an `HttpError` of status 413. A client that
 * aborts gives `PKG_ERR_HTTP_BODY_READ_FAILED`. No promise is made: `HttpHandler` goes on
 * from the callback. A message is read at most once.
 */
export function readBodyInto(req: IncomingMessage, limit: number, done: BodyCallback): void {
  const declared = declaredLength(req);
  if (declared !== undefined && declared > limit) {
    done(tooLarge(limit), EMPTY);
    return;
  }
  if (req.readableEnded) {
    done(undefined, EMPTY);
    return;
  }
  const message = req as ReadingMessage;
  message[kBodyRead] = {
    limit,
    done,
    chunks: undefined,
    first: undefined,
    size: 0,
    settled: false,
  };
  message.on('data', onBodyData);
  message.on('end', onBodyEnd);
  message.on('error', onBodyFailure);
  message.on('close', onBodyFailure);
}

/** {@link readBodyInto} as a promise: resolves with the body, rejects with the `HttpError`. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    readBodyInto(req, limit, (err, body) => (err === undefined ? resolve(body) : reject(err)));
  });
}
