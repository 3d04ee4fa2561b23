/**
 * Header names with their lower-case form, for names met on every request or response: a map
 * lookup instead of a lower-casing. Bounded: once full, further names are not kept (their
 * callers lower-case them every time), so peers sending ever new names cannot grow it.
 */
export class LowerCaseNames {
  readonly #names = new Map<string, string>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  /** The kept lower-case form of `name`, or undefined. */
  get(name: string): string | undefined {
    return this.#names.get(name);
  }

  /** `name` in lower case, kept while there is room. */
  remember(name: string): string {
    const lower = name.toLowerCase();
    if (this.#names.size < this.#max) this.#names.set(name, lower);
    return lower;
  }
}
