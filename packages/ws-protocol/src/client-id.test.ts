import { describe, expect, it, jest } from '@jest/globals';
import { nextClientId } from './client-id';

describe('nextClientId', () => {
  it('gives distinct ids that share this process prefix', () => {
    const ids = Array.from({ length: 1000 }, () => nextClientId());
    expect(new Set(ids).size).toBe(1000);
    const prefixes = new Set(ids.map((id) => id.split('.')[0]));
    expect(prefixes.size).toBe(1);
    expect(ids[0]).toMatch(/^[A-Za-z0-9_-]{12}\.[0-9a-z]+$/);
  });

  it('uses a random prefix, so another process (module instance) differs', () => {
    let other = '';
    jest.isolateModules(() => {
      // A fresh module instance stands for another process.
      other = (require('./client-id') as typeof import('./client-id')).nextClientId();
    });
    expect(other.split('.')[0]).not.toBe(nextClientId().split('.')[0]);
  });
});
