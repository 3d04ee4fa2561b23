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
    const name = (raw[i] ?? '').toLowerCase();
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

/** The declared Content-Length, or undefined when absent or not a plain number. */
export function declaredLength(req: IncomingMessage): number | undefined {
  const value = req.headers['content-length'];
  if (value === undefined || !/^[0-9]+$/.test(value)) return undefined;
  return Number(value);
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

/**
 * Reads the body up to `limit` bytes and calls `done` once. A declared Content-Length over
 * the limit is refused before a byte is read; a body that grows past the limit stops being
 * read at once (the stream is paused). Both give an `HttpError` of status 413. A client that
 * aborts gives `PKG_ERR_HTTP_BODY_READ_FAILED`. No promise is made: `HttpHandler` goes on
 * from the callback.
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
  const chunks: Buffer[] = [];
  let size = 0;
  const cleanup = (): void => {
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onFailure);
    req.off('close', onFailure);
  };
  const onData = (chunk: Buffer): void => {
    size += chunk.length;
    if (size > limit) {
      cleanup();
      req.pause();
      done(tooLarge(limit), EMPTY);
      return;
    }
    chunks.push(chunk);
  };
  const onEnd = (): void => {
    cleanup();
    done(undefined, Buffer.concat(chunks, size));
  };
  const onFailure = (err?: Error): void => {
    cleanup();
    done(
      new HttpError(
        'PKG_ERR_HTTP_BODY_READ_FAILED',
        'The connection ended before the whole request body arrived.',
        err === undefined ? undefined : { cause: err },
      ),
      EMPTY,
    );
  };
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onFailure);
  req.on('close', onFailure);
}

/** {@link readBodyInto} as a promise: resolves with the body, rejects with the `HttpError`. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    readBodyInto(req, limit, (err, body) => (err === undefined ? resolve(body) : reject(err)));
  });
}
