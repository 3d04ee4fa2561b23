/**
 * Reconnection delays: exponential backoff with full jitter. Attempt n (from 1) waits a
 * random time in [0, min(max, base * 2^(n-1))], so that many clients dropped at once by a
 * restart do not come back in lockstep.
 */
export function backoffDelay(
  attempt: number,
  base: number,
  max: number,
  random: () => number = Math.random,
): number {
  const exponent = Math.min(Math.max(attempt - 1, 0), 52);
  const ceiling = Math.min(max, base * 2 ** exponent);
  return Math.floor(random() * ceiling);
}
