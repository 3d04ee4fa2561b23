/** Client ids that are unique across processes: a random prefix and a counter. */
import { randomBytes } from 'node:crypto';
import { createWsError } from './errors';

/** Returns a new client id on each call. */
export type ClientIdGenerator = () => string;

const PREFIX_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Creates a generator of client ids that are unique across processes and machines: a random
 * per-generator prefix (72 bits, base64url) joined with a base-36 counter, e.g. `q3Jx0f9aZ1Lk.1a`.
 * A Redis-backed cluster can therefore address any client by id without coordination.
 *
 * @param prefix fixed prefix to use instead of a random one (letters, digits, `_`, `-`), for
 *   example to make ids readable in tests or logs.
 */
export function createClientIdGenerator(prefix?: string): ClientIdGenerator {
  if (prefix !== undefined && (typeof prefix !== 'string' || !PREFIX_PATTERN.test(prefix))) {
    throw createWsError(
      TypeError,
      'PKG_ERR_WS_INVALID_ARGUMENT',
      `createClientIdGenerator: prefix must be 1-64 characters of A-Z, a-z, 0-9, "_" or "-", got ${JSON.stringify(prefix)}.`,
    );
  }
  const base = prefix ?? randomBytes(9).toString('base64url');
  let counter = 0;
  return () => {
    counter += 1;
    return `${base}.${counter.toString(36)}`;
  };
}

/** The next id of this process, e.g. `q3Jx0f9aZ1Lk.1a`: the handler's default `generateId`. */
export const nextClientId: ClientIdGenerator = createClientIdGenerator();
