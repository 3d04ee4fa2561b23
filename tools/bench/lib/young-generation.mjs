// The size of V8's young generation for a server whose instructions are counted
// (instructions.mjs). V8 grows and shrinks it by how fast the program allocates per unit of
// wall time; under valgrind every program runs about fifty times slower, so two runs of one
// build could settle at different sizes and collect garbage a different number of times.
// Each young-generation collection (a scavenge) costs about 550k instructions whatever is
// alive, most of it visiting the roots, so the count of a GET moved by about 3 % between
// runs with nothing changed. A fixed size makes the number of collections follow the bytes
// allocated, the same way for every server.

/** Megabytes per semi-space when INSTR_SEMI_SPACE is not set. */
export const DEFAULT_SEMI_SPACE_MB = 4;

/**
 * The megabytes per semi-space that `setting` (INSTR_SEMI_SPACE) asks for: the default when
 * unset, `0` for V8's own sizing. Anything but a whole number of megabytes is an error that
 * says what to set.
 */
export function readSemiSpace(setting) {
  const text = setting === undefined ? String(DEFAULT_SEMI_SPACE_MB) : String(setting).trim();
  if (!/^\d{1,4}$/.test(text)) {
    throw new Error(
      `INSTR_SEMI_SPACE must be a whole number of megabytes per semi-space, such as 4, ` +
        `or 0 to leave the size to V8; got ${JSON.stringify(setting)}.`,
    );
  }
  return Number(text);
}

/**
 * Node options that fix each semi-space of the young generation at `megabytes` (V8 rounds
 * up to a power of two), or none for `0` (V8's own sizing).
 */
export function semiSpaceOptions(megabytes) {
  if (megabytes === 0) return [];
  return [`--min-semi-space-size=${megabytes}`, `--max-semi-space-size=${megabytes}`];
}
