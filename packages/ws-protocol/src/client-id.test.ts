import { describe, expect, it, jest } from '@jest/globals';
import { createClientIdGenerator, nextClientId } from './client-id';

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

describe('createClientIdGenerator', () => {
  it('produces distinct string ids sharing one per-generator prefix', () => {
    const next = createClientIdGenerator();
    const ids = Array.from({ length: 1000 }, () => next());
    expect(new Set(ids).size).toBe(1000);
    const prefixes = new Set(ids.map((id) => id.split('.')[0]));
    expect(prefixes.size).toBe(1);
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]+\.[0-9a-z]+$/);
  });

  it('gives two generators (two processes) different prefixes', () => {
    const a = createClientIdGenerator()();
    const b = createClientIdGenerator()();
    expect(a.split('.')[0]).not.toBe(b.split('.')[0]);
  });

  it('accepts a fixed prefix and counts in base 36', () => {
    const next = createClientIdGenerator('test');
    expect(next()).toBe('test.1');
    for (let i = 0; i < 34; i += 1) next();
    expect(next()).toBe('test.10');
  });

  it('refuses a prefix that is not URL-safe', () => {
    expect(() => createClientIdGenerator('a.b')).toThrow(TypeError);
    expect(() => createClientIdGenerator('a b')).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_WS_INVALID_ARGUMENT' }),
    );
    expect(() => createClientIdGenerator('')).toThrow(/prefix must be/);
  });
});
