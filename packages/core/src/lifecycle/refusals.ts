import { Buffer } from 'node:buffer';
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  403: 'Forbidden',
  503: 'Service Unavailable',
};

/**
 * Answers an HTTP request the server refuses on its own (Host not allowed, over a connection
 * cap, shutting down) with a small JSON body, before any route or middleware runs.
 */
export function refuseRequest(
  res: ServerResponse,
  status: number,
  code: string,
  retryAfter?: number,
): void {
  const body = JSON.stringify({ error: REASONS[status] ?? 'Error', code });
  const headers: Record<string, string | number> = {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
  };
  if (retryAfter !== undefined) {
    headers['Retry-After'] = retryAfter;
    headers['Connection'] = 'close';
  }
  res.writeHead(status, headers);
  res.end(body);
}

/** Refuses an upgrade request with a plain HTTP answer and closes the connection. */
export function refuseUpgrade(
  socket: Duplex,
  status: number,
  code: string,
  retryAfter?: number,
): void {
  const body = JSON.stringify({ error: REASONS[status] ?? 'Error', code });
  socket.on('error', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\nConnection: close\r\n` +
      'Content-Type: application/json\r\n' +
      (retryAfter === undefined ? '' : `Retry-After: ${retryAfter}\r\n`) +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
