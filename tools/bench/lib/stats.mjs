// Small statistics and formatting helpers.
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** The p-th percentile (0..100) by nearest rank; NaN for no samples. */
export function percentile(xs, p) {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * s.length));
  return s[rank - 1];
}

export const secondsSince = (t0) => Number(process.hrtime.bigint() - t0) / 1e9;
export const msSince = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
