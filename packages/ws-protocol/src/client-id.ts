/** Client ids that are unique across processes: a random per-process prefix and a counter. */
import { randomBytes } from 'node:crypto';

/** 72 random bits, chosen once per process, so two processes never produce the same id. */
const PROCESS_PREFIX = randomBytes(9).toString('base64url');
let counter = 0;

/** The next id of this process, e.g. `q3Jx0f9aZ1Lk.1a` (prefix, `.`, base-36 counter). */
export function nextClientId(): string {
  counter += 1;
  return `${PROCESS_PREFIX}.${counter.toString(36)}`;
}
