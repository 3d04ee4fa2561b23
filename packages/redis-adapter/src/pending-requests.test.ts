import { describe, expect, it } from '@jest/globals';
import { PendingRequests } from './pending-requests';

const timeoutError = (received: number): Error => new Error(`timed out after ${received}`);

describe('PendingRequests', () => {
  it('resolves once every expected reply has come, and forgets the request', async () => {
    const table = new PendingRequests();
    const answer = table.add('r1', 2, false, 10_000, timeoutError);
    expect(table.reply({ origin: 'a', id: 'r1', count: 1 })).toBe(true);
    expect(table.size).toBe(1);
    table.reply({ origin: 'b', id: 'r1', count: 2 });
    await expect(answer).resolves.toEqual([
      { origin: 'a', id: 'r1', count: 1 },
      { origin: 'b', id: 'r1', count: 2 },
    ]);
    expect(table.size).toBe(0);
    expect(table.reply({ origin: 'c', id: 'r1', count: 3 })).toBe(false);
  });

  it('resolves at the first reply that found the client when asked to', async () => {
    const table = new PendingRequests();
    const answer = table.add('r2', 3, true, 10_000, timeoutError);
    table.reply({ origin: 'a', id: 'r2', found: false });
    table.reply({ origin: 'b', id: 'r2', found: true });
    await expect(answer).resolves.toHaveLength(2);
    expect(table.size).toBe(0);
  });

  it('rejects with the timeout error, saying how many replies came', async () => {
    const table = new PendingRequests();
    const answer = table.add('r3', 2, false, 5, timeoutError);
    table.reply({ origin: 'a', id: 'r3', count: 0 });
    await expect(answer).rejects.toThrow('timed out after 1');
    expect(table.size).toBe(0);
  });

  it('resolves with the replies that came in time when it has no timeout error', async () => {
    const table = new PendingRequests();
    const answer = table.add('r4', 3, false, 5, null);
    table.reply({ origin: 'a', id: 'r4', data: 1 });
    await expect(answer).resolves.toEqual([{ origin: 'a', id: 'r4', data: 1 }]);
    expect(table.size).toBe(0);
    expect(table.reply({ origin: 'b', id: 'r4', data: 2 })).toBe(false);
  });

  it('rejects everything on failAll', async () => {
    const table = new PendingRequests();
    const answers = [
      table.add('x', 1, false, 10_000, timeoutError),
      table.add('y', 1, false, 10_000, timeoutError),
    ];
    table.failAll(() => new Error('closed'));
    await expect(Promise.all(answers)).rejects.toThrow('closed');
    expect(table.size).toBe(0);
  });
});
