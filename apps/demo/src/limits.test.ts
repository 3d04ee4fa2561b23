import { describe, expect, it } from '@jest/globals';
import { BASE_LIMITS, scaleLimits } from './limits';

describe('scaleLimits', () => {
  it('keeps the budgets at scale 1', () => {
    expect(scaleLimits(1)).toEqual(BASE_LIMITS);
  });

  it('multiplies every maxCount, keeps the windows, never goes below 1', () => {
    const big = scaleLimits(100);
    for (const key of Object.keys(BASE_LIMITS) as Array<keyof typeof BASE_LIMITS>) {
      expect(big[key]).toEqual({
        maxCount: BASE_LIMITS[key].maxCount * 100,
        timeWindow: BASE_LIMITS[key].timeWindow,
      });
      expect(scaleLimits(0.0001)[key].maxCount).toBe(1);
    }
  });

  it.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY])('refuses the scale %p', (scale) => {
    expect(() => scaleLimits(scale)).toThrow(/positive number/);
  });
});
