import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { CloseCode, closeCodes, reconnectsAfter } from './close-codes';
import { readWelcome } from './control';
import {
  REFRESH_LIMITS,
  readRefresh,
  readRefreshAnswer,
  readRevoked,
  refreshDelay,
} from './refresh';

describe('$refresh', () => {
  it('reads the new credentials strictly, and says what is wrong otherwise', () => {
    expect(readRefresh({ auth: 't2' }, 10)).toEqual({ auth: 't2' });
    expect(readRefresh({ auth: 't2', extra: 1 }, 10)).toEqual({ auth: 't2' });
    for (const bad of [undefined, null, [], 'x', {}, { auth: '' }, { auth: 3 }]) {
      expect(readRefresh(bad, 10)).toMatch(/\$refresh needs data \{"auth"/);
    }
    expect(readRefresh({ auth: 'x'.repeat(11) }, 10)).toMatch(/longer than 10 characters/);
  });

  it('reads the answer leniently: a positive number, else null', () => {
    expect(readRefreshAnswer({ expiresAt: 1_800_000_000_000 })).toEqual({
      expiresAt: 1_800_000_000_000,
    });
    for (const odd of [
      undefined,
      null,
      {},
      { expiresAt: null },
      { expiresAt: -1 },
      { expiresAt: 'soon' },
      { expiresAt: Infinity },
    ]) {
      expect(readRefreshAnswer(odd)).toEqual({ expiresAt: null });
    }
  });

  it('$welcome carries expiresAt when the server gave one', () => {
    expect(readWelcome({ resumed: false, expiresAt: 42 }).expiresAt).toBe(42);
    expect(readWelcome({ resumed: false, expiresAt: 'x' }).expiresAt).toBeUndefined();
  });

  it('a client refreshes before expiry: never late, never negative, spread by jitter', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: -1000, max: 10_000_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (now, left, random) => {
          const delay = refreshDelay(now + left, now, random);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(now + delay).toBeLessThanOrEqual(Math.max(now, now + left));
          if (left > 2 * REFRESH_LIMITS.lead) {
            expect(delay).toBeGreaterThanOrEqual(left - 2 * REFRESH_LIMITS.lead - 1);
          }
        },
      ),
    );
    expect(refreshDelay(100_000, 0, 0)).toBe(70_000);
    expect(refreshDelay(100_000, 0, 0.5)).toBe(55_000);
    expect(refreshDelay(10_000, 0, 0)).toBe(5_000);
  });
});

describe('$revoked and the expiry close', () => {
  it('reads $revoked leniently: needs a room; reason revoked unless expired', () => {
    expect(readRevoked({ room: 'r', namespace: '/n', reason: 'expired' })).toEqual({
      room: 'r',
      namespace: '/n',
      reason: 'expired',
    });
    expect(readRevoked({ room: 'r' })).toEqual({ room: 'r', namespace: '/', reason: 'revoked' });
    expect(readRevoked({ namespace: '/' })).toBeUndefined();
    expect(readRevoked('r')).toBeUndefined();
  });

  it('4419 tells the client to reconnect (with new credentials), its session ended', () => {
    expect(CloseCode.CREDENTIALS_EXPIRED).toBe(4419);
    expect(reconnectsAfter(4419)).toBe(true);
    expect(closeCodes[4419].session).toBe('ends');
    expect(closeCodes[4419].sentBy).toBe('server');
  });
});
