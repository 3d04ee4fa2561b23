import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { HistoryBudget, historyBudgetLimits } from './history-budget';

const limits = historyBudgetLimits({
  requestsPerSecond: 2,
  bytesPerSecond: 1000,
  maxRooms: 5,
  maxReplayBytes: 4000,
});

describe('historyBudgetLimits', () => {
  it('bursts max_rooms_per_client requests and one full answer of bytes', () => {
    expect(limits).toEqual({
      requestsPerSecond: 2,
      requestBurst: 5,
      bytesPerSecond: 1000,
      byteBurst: 4000,
    });
    const wide = historyBudgetLimits({
      requestsPerSecond: 10,
      bytesPerSecond: 5000,
      maxRooms: 1,
      maxReplayBytes: 10,
    });
    expect(wide.requestBurst).toBe(10);
    expect(wide.byteBurst).toBe(10_000);
  });
});

describe('HistoryBudget', () => {
  it('admits a burst of requests, then refills at the sustained rate', () => {
    const budget = new HistoryBudget(limits, 0);
    for (let i = 0; i < 5; i++) expect(budget.take(0)).toBe(0);
    expect(budget.take(0)).toBe(1);
    expect(budget.take(499)).toBe(1);
    expect(budget.take(500)).toBe(0);
    expect(budget.take(500)).toBe(1);
  });

  it('waits for answer bytes spent past the burst, with the seconds to wait', () => {
    const budget = new HistoryBudget(limits, 0);
    expect(budget.take(0)).toBe(0);
    budget.spend(4000, 0);
    // Empty byte bucket: the next request waits about a millisecond's worth, at least 1 s.
    expect(budget.take(0)).toBe(1);
    budget.spend(2500, 0);
    // 2,500 bytes of debt at 1,000 bytes per second: 3 s (rounded up).
    expect(budget.take(0)).toBe(3);
    expect(budget.take(2600)).toBe(0);
  });

  it('never goes past its bursts however long it rests', () => {
    const budget = new HistoryBudget(limits, 0);
    for (let i = 0; i < 5; i++) budget.take(10 ** 9);
    expect(budget.take(10 ** 9)).toBe(1);
  });

  it('admits everything with both limits off', () => {
    const off = historyBudgetLimits({
      requestsPerSecond: 0,
      bytesPerSecond: 0,
      maxRooms: 1,
      maxReplayBytes: 1,
    });
    const budget = new HistoryBudget(off, 0);
    for (let i = 0; i < 1000; i++) {
      expect(budget.take(0)).toBe(0);
      budget.spend(10 ** 9, 0);
    }
  });

  it('serves at most the bursts plus the sustained rates over any schedule', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 5000 })), {
          maxLength: 200,
        }),
        (steps) => {
          const budget = new HistoryBudget(limits, 0);
          let now = 0;
          let served = 0;
          let bytes = 0;
          let largest = 0;
          for (const [gap, size] of steps) {
            now += gap;
            if (budget.take(now) === 0) {
              served += 1;
              bytes += size;
              largest = Math.max(largest, size);
              budget.spend(size, now);
            }
          }
          const seconds = now / 1000;
          expect(served).toBeLessThanOrEqual(5 + seconds * 2 + 1e-9);
          expect(bytes).toBeLessThanOrEqual(4000 + seconds * 1000 + largest + 1e-9);
        },
      ),
    );
  });
});
