import { describe, expect, it } from '@jest/globals';
import { backoffDelay } from './backoff';

describe('backoffDelay', () => {
  it('doubles the ceiling per attempt and never exceeds the maximum', () => {
    const top = (): number => 0.999999;
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, 100, 1000, top))).toEqual([
      99, 199, 399, 799, 999, 999,
    ]);
    expect(backoffDelay(10_000, 100, 1000, top)).toBe(999);
  });

  it('spreads delays over [0, ceiling] (full jitter)', () => {
    expect(backoffDelay(3, 100, 1000, () => 0)).toBe(0);
    expect(backoffDelay(3, 100, 1000, () => 0.5)).toBe(200);
  });
});
