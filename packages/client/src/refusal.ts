/**
 * How a closed connection is reported: a refusal that reconnecting would not fix (close
 * 4401/4403, or 401/403 to the upgrade), a server that sent the client away (1000, 1008,
 * 4409), or a failed attempt that the backoff retries.
 */
import { CloseCode, reconnectsAfterRefusal } from '@pkg/wire';
import { ClientError } from './errors';
import type { ServerErrorData } from './events';
import type { UpgradeRefusal } from './transport';

/**
 * What a refused upgrade's body says: the `message` of the server's JSON error body
 * (`{"error", "code", "message"}`), else its `error`, else the body as sent.
 */
export function refusalText(body: string): string {
  if (!body.startsWith('{')) return body;
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed !== 'object' || parsed === null) return body;
    const { message, error } = parsed as { message?: unknown; error?: unknown };
    if (typeof message === 'string' && message !== '') return message;
    if (typeof error === 'string' && error !== '') return error;
  } catch {
    // Not JSON after all: the text as sent.
  }
  return body;
}

/** The error for a refusal of the credentials, or undefined when retrying may help. */
export function credentialRefusal(
  code: number,
  reason: string,
  upgrade: UpgradeRefusal | undefined,
  remote: ServerErrorData | undefined,
): ClientError | undefined {
  const status =
    code === CloseCode.UNAUTHORIZED || code === CloseCode.FORBIDDEN ? code - 4000 : upgrade?.status;
  // @pkg/wire's rule for a refused upgrade: 401 and 403 mean "do not come back".
  if (status === undefined || reconnectsAfterRefusal(status).reconnect) return undefined;
  const text = reason || remote?.message || (upgrade ? refusalText(upgrade.body) : '');
  return new ClientError(
    status === 401 ? 'PKG_ERR_CLIENT_UNAUTHORIZED' : 'PKG_ERR_CLIENT_FORBIDDEN',
    `The server refused the connection with ${status}${text ? ` "${text}"` : ''}; check the credentials (auth or query), then call connect() again.`,
    {
      status: typeof remote?.['status'] === 'number' ? remote['status'] : status,
      ...(code >= 4000 ? { closeCode: code } : {}),
      reason: text,
      ...(remote ? { remoteCode: remote.code, data: remote } : {}),
    },
  );
}

/**
 * The error for a close after which the client does not reconnect on its own (the codes
 * of @pkg/wire's table with `reconnect: false`, other than 4401 / 4403).
 */
export function goAway(code: number, reason: string): ClientError {
  const said = reason ? ` "${reason}"` : '';
  if (code === CloseCode.SESSION_TAKEN_OVER) {
    return new ClientError(
      'PKG_ERR_CLIENT_SESSION_TAKEN_OVER',
      `Another connection resumed this client's session (close ${code}${said}); this one stops. Call connect() to start a new session.`,
      { closeCode: code, reason },
    );
  }
  return new ClientError(
    'PKG_ERR_CLIENT_SENT_AWAY',
    `The server closed the connection with ${code}${said}, which means "do not come back"; the client does not reconnect on its own. Call connect() when the application decides to.`,
    { closeCode: code, reason },
  );
}

/** The error of an attempt that closed before it was established. */
export function attemptFailure(
  code: number,
  reason: string,
  upgrade: UpgradeRefusal | undefined,
): ClientError {
  if (upgrade) {
    const text = refusalText(upgrade.body);
    return new ClientError(
      'PKG_ERR_CLIENT_HANDSHAKE_REFUSED',
      `The server refused the upgrade with ${upgrade.status}${text ? `: ${text}` : ''}.`,
      { status: upgrade.status, reason: text },
    );
  }
  return new ClientError(
    'PKG_ERR_CLIENT_CONNECTION_FAILED',
    `The connection closed (code ${code}) before it was established.`,
    { closeCode: code, reason },
  );
}
