import { Buffer } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { responseHeaderEntries, type Response } from './response';

/** The body to send: bytes as they are, anything else as a string (one write with the head). */
export function encode(response: Response): string | Buffer {
  return response.getBody() instanceof Uint8Array
    ? response.getBodyBuffer()
    : response.getBodyString();
}

/**
 * Writes a response on Node's `ServerResponse` with a single `writeHead` and `end`:
 * Content-Length from the encoded payload, no body for 1xx/204/304 or HEAD, and with
 * `close` a `Connection: close` that also tells Node not to keep the connection.
 */
export function writeHeadAndBody(
  req: IncomingMessage,
  res: ServerResponse,
  response: Response,
  payload: string | Buffer,
  close: boolean,
): void {
  const status = response.getStatusCode();
  const bodiless = status === 204 || status === 304 || status < 200;
  // Names and values in one flat list, which Node takes as it is (no for-in over an object).
  const head: Array<string | number | string[]> = [];
  let hasContentType = false;
  for (const entry of responseHeaderEntries(response).values()) {
    const lower = entry.key;
    if (lower === 'content-length' || lower === 'transfer-encoding') continue;
    if (lower === 'connection' && close) continue;
    if (lower === 'content-type') hasContentType = true;
    const values = entry.values;
    head.push(entry.name, values.length === 1 ? values[0]! : values.slice());
  }
  if (!bodiless) {
    if (!hasContentType) {
      const contentType = response.getContentType();
      if (contentType !== '') head.push('Content-Type', contentType);
    }
    head.push(
      'Content-Length',
      typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length,
    );
  }
  if (close) {
    head.push('Connection', 'close');
    res.shouldKeepAlive = false;
  }
  res.writeHead(status, head);
  if (bodiless || req.method === 'HEAD') res.end();
  else res.end(payload);
}
