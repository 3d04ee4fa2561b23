import { describe, expect, it } from '@jest/globals';
import { SubscribeBudget } from './subscribe-budget';

describe('SubscribeBudget', () => {
  it('allows bursts of twice the rate, then refills at the rate', () => {
    const budget = new SubscribeBudget(10);
    for (let i = 0; i < 20; i += 1) expect(budget.take('c', 1, 0)).toBe(0);
    expect(budget.take('c', 1, 0)).toBe(100); // one token comes back in 100 ms
    expect(budget.take('c', 2, 0)).toBe(200);
    expect(budget.take('c', 1, 100)).toBe(0);
    expect(budget.take('other', 1, 100)).toBe(0); // per client
  });

  it('costs nothing for joins that need no subscription, and nothing with rate 0', () => {
    const budget = new SubscribeBudget(1);
    expect(budget.take('c', 0, 0)).toBe(0);
    expect(budget.size).toBe(0);
    const off = new SubscribeBudget(0);
    for (let i = 0; i < 1000; i += 1) expect(off.take('c', 2, 0)).toBe(0);
  });

  it('drops the bucket of a client that left', () => {
    const budget = new SubscribeBudget(1);
    budget.take('c', 2, 0);
    expect(budget.take('c', 1, 0)).toBeGreaterThan(0);
    budget.forget('c');
    expect(budget.size).toBe(0);
    expect(budget.take('c', 1, 0)).toBe(0);
  });
});
