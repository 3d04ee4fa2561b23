/**
 * Refusals by code since the server started (`server.getRefusals()`), counted whether or
 * not metrics are on: a refusal is rare next to a message, so a map increment is all it
 * costs. The codes come from fixed tables (the wire's error codes, core's connection
 * refusals); past {@link MAX_REFUSAL_CODES} distinct codes the rest are counted as `other`,
 * so the map stays bounded whatever reaches it.
 */
export const MAX_REFUSAL_CODES = 64;

export class RefusalCounts {
  readonly #counts = new Map<string, number>();

  /** Counts one refusal of `code`. */
  readonly count = (code: string): void => {
    const key = this.#counts.has(code) || this.#counts.size < MAX_REFUSAL_CODES ? code : 'other';
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
  };

  /** Code -> refusals so far, as a new object. */
  snapshot(): Record<string, number> {
    return Object.fromEntries(this.#counts);
  }
}
