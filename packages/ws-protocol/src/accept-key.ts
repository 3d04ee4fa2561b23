/** The RFC 6455 handshake key: `Sec-WebSocket-Key` in, `Sec-WebSocket-Accept` out. */
import { createHash } from 'node:crypto';
import { createWsError } from './errors';

/** The GUID that RFC 6455 section 1.3 appends to the client's key. */
const WEBSOCKET_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** A valid key is 16 random bytes in base64: 22 characters and `==`. */
const KEY_PATTERN = /^[+/0-9A-Za-z]{22}==$/;

/** True when `key` is a well-formed `Sec-WebSocket-Key` value. */
export function isValidWebSocketKey(key: unknown): key is string {
  return typeof key === 'string' && KEY_PATTERN.test(key);
}

/**
 * The `Sec-WebSocket-Accept` value for a `Sec-WebSocket-Key`: base64(SHA-1(key + GUID)).
 * RFC 6455's example: `dGhlIHNhbXBsZSBub25jZQ==` gives `s3pPLMBiTxaQ9kYGzzhZRbK+xOo=`.
 */
export function generateAcceptKey(key: string): string {
  if (typeof key !== 'string') {
    throw createWsError(
      TypeError,
      'PKG_ERR_WS_INVALID_ARGUMENT',
      `generateAcceptKey: key must be the Sec-WebSocket-Key header as a string, got ${typeof key}.`,
    );
  }
  return createHash('sha1')
    .update(key + WEBSOCKET_GUID)
    .digest('base64');
}
