/**
 * What a WebSocketHandler does when a connection fails on its own: a heartbeat that was not
 * answered (terminate, 1006) and an error `ws` reports (its close code kept for
 * onDisconnect, a log line).
 */
import type { LoggerInterface } from '@pkg/logger';
import { closeCodeForWsError, WsCloseCode } from './close-codes';
import type { Connection } from './connection';
import type { WsErrorCode } from './errors';

/** The limits these log lines report. */
interface Limits {
  readonly heartbeatTimeout: number;
  readonly maxPayload: number;
}

/** Terminates a client that did not answer the ping in time. */
export function heartbeatExpired(conn: Connection, log: LoggerInterface, limits: Limits): void {
  if (conn.gone) return;
  log.notice('WebSocket client did not answer the ping; terminating', {
    clientId: conn.client.id,
    code: 'PKG_ERR_WS_HEARTBEAT_TIMEOUT' satisfies WsErrorCode,
    heartbeatTimeout: limits.heartbeatTimeout,
  });
  conn.terminate(WsCloseCode.ABNORMAL, 'Heartbeat timeout');
}

/** An `error` event of an accepted `ws` connection. */
export function connectionError(
  conn: Connection,
  err: Error,
  log: LoggerInterface,
  limits: Limits,
): void {
  const wsCode = (err as { code?: unknown }).code;
  const clientId = conn.client.id;
  if (typeof wsCode !== 'string' || !wsCode.startsWith('WS_ERR_')) {
    log.debug('WebSocket connection error', { clientId, error: err.message });
    return;
  }
  // `ws` has sent a close frame with this code and stopped reading, so the peer's echo is
  // never seen; remember the code for onDisconnect.
  conn.noteIntent(closeCodeForWsError(wsCode), '');
  if (wsCode === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') {
    log.notice('WebSocket message larger than maxPayload; closing with 1009', {
      clientId,
      code: 'PKG_ERR_WS_MESSAGE_TOO_LARGE' satisfies WsErrorCode,
      maxPayload: limits.maxPayload,
    });
  } else {
    log.notice('WebSocket protocol error; ws closed the connection', {
      clientId,
      code: 'PKG_ERR_WS_PROTOCOL_ERROR' satisfies WsErrorCode,
      wsCode,
      error: err.message,
    });
  }
}
