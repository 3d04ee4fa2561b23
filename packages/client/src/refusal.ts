/**
 * How a closed connection is reported: a refusal that reconnecting would not fix (close
 * 4401/4403, or 401/403 to the upgrade), or a failed attempt that the backoff retries.
 */
import { ClientError } from './errors';
import type { ServerErrorData } from './events';
import type { UpgradeRefusal } from './transport';

/** The error for a refusal of the credentials, or undefined when retrying may help. */
export function credentialRefusal(
  code: number,
  reason: string,
  upgrade: UpgradeRefusal | undefined,
  remote: ServerErrorData | undefined,
): ClientError | undefined {
  const status = code === 4401 || code === 4403 ? code - 4000 : upgrade?.status;
  if (status !== 401 && status !== 403) return undefined;
  const text = reason || remote?.message || upgrade?.body || '';
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

/** The error of an attempt that closed before it was established. */
export function attemptFailure(
  code: number,
  reason: string,
  upgrade: UpgradeRefusal | undefined,
): ClientError {
  return upgrade
    ? new ClientError(
        'PKG_ERR_CLIENT_HANDSHAKE_REFUSED',
        `The server refused the upgrade with ${upgrade.status}${upgrade.body ? `: ${upgrade.body}` : ''}.`,
        { status: upgrade.status, reason: upgrade.body },
      )
    : new ClientError(
        'PKG_ERR_CLIENT_CONNECTION_FAILED',
        `The connection closed (code ${code}) before it was established.`,
        { closeCode: code, reason },
      );
}
