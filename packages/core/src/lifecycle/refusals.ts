import { Buffer } from 'node:buffer';
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { httpErrorBody } from '@pkg/http';

/**
 * The raw HTTP answer of a refusal before any request was read (a connection over every
 * cap): the status line, `Connection: close`, the JSON error body of `@pkg/http`, and
 * `Retry-After` when the client may come back.
 */
export function refusalMessage(
  status: number,
  code: string,
  retryAfter?: number,
  message?: string,
): string {
  const body = JSON.stringify(httpErrorBody(status, { code, message }));
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nConnection: close\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    (retryAfter === undefined ? '' : `Retry-After: ${retryAfter}\r\n`) +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/**
 * Answers an HTTP request the server refuses on its own (Host not allowed, over a connection
 * cap, shutting down) with the JSON error body, before any route or middleware runs.
 */
export function refuseRequest(
  res: ServerResponse,
  status: number,
  code: string,
  retryAfter?: number,
  message?: string,
): void {
  const body = JSON.stringify(httpErrorBody(status, { code, message }));
  const headers: Record<string, string | number> = {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  };
  if (retryAfter !== undefined) {
    headers['Retry-After'] = retryAfter;
    headers['Connection'] = 'close';
  }
  res.writeHead(status, headers);
  res.end(body);
}

/** Refuses an upgrade request with {@link refusalMessage} and closes the connection. */
export function refuseUpgrade(
  socket: Duplex,
  status: number,
  code: string,
  retryAfter?: number,
  message?: string,
): void {
  socket.on('error', () => socket.destroy());
  socket.end(refusalMessage(status, code, retryAfter, message));
}
