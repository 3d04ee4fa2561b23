import { describe, expect, it } from '@jest/globals';
import {
  CloseCode,
  MAX_RESTART_DELAY_MS,
  closeCodeInfo,
  closeCodes,
  fitCloseReason,
  isSendableCloseCode,
  reconnectsAfter,
  reconnectsAfterRefusal,
  retryAfterDelay,
  MAX_RETRY_AFTER_MS,
  restartDelay,
  restartReason,
  utf8Length,
} from './close-codes';

describe('the close-code table', () => {
  it('has a row for every named code and names every row', () => {
    const named = Object.values(CloseCode).map(String).sort();
    expect(Object.keys(closeCodes).sort()).toEqual(named);
    expect(CloseCode.SESSION_TAKEN_OVER).toBe(4409);
  });

  it('says "go away" (no reconnect) for 1000, 1008, 4401, 4403 and 4409 only', () => {
    const noReconnect = Object.entries(closeCodes)
      .filter(([, info]) => !info.reconnect)
      .map(([code]) => Number(code));
    expect(noReconnect).toEqual([1000, 1008, 4401, 4403, 4409]);
  });

  it('reconnects after a code it does not know (another application, a future one)', () => {
    expect(closeCodeInfo(4999)).toBeUndefined();
    expect(reconnectsAfter(4999)).toBe(true);
    expect(reconnectsAfter(3000)).toBe(true);
    expect(reconnectsAfter(1001)).toBe(true);
    expect(reconnectsAfter(1000)).toBe(false);
  });
});

describe('isSendableCloseCode', () => {
  it('accepts 1000-1014 except 1004-1006, and 3000-4999', () => {
    for (const code of [1000, 1003, 1007, 1014, 3000, 4409, 4999]) {
      expect(isSendableCloseCode(code)).toBe(true);
    }
    for (const code of [999, 1004, 1005, 1006, 1015, 2999, 5000, 1000.5, '1000']) {
      expect(isSendableCloseCode(code)).toBe(false);
    }
  });
});

describe('close reasons', () => {
  it('counts UTF-8 bytes like an encoder does', () => {
    for (const text of ['', 'abc', 'é', '€', '😀', 'a\ud800b']) {
      expect(utf8Length(text)).toBe(Buffer.byteLength(text));
    }
  });

  it('cuts a reason to 123 bytes without splitting a character', () => {
    expect(fitCloseReason('short')).toBe('short');
    const emoji = fitCloseReason('😀'.repeat(40));
    expect(Buffer.byteLength(emoji)).toBe(120);
    expect(emoji).toBe('😀'.repeat(30));
    expect(Buffer.byteLength(fitCloseReason('é'.repeat(100)))).toBe(122);
  });
});

describe('the 1012 restart hint', () => {
  it('round-trips a delay through the close reason, within a close frame', () => {
    for (const ms of [0, 1, 1234, 5000, MAX_RESTART_DELAY_MS]) {
      const reason = restartReason(ms);
      expect(utf8Length(reason)).toBeLessThanOrEqual(123);
      expect(restartDelay(1012, reason)).toBe(ms);
    }
    expect(restartReason(1234.6)).toBe('restart; retry after 1235 ms');
    expect(reconnectsAfter(1012)).toBe(true);
  });

  it('clamps what it writes and what it reads to the 10-minute cap', () => {
    expect(restartReason(-5)).toBe('restart; retry after 0 ms');
    expect(restartReason(Number.NaN)).toBe('restart; retry after 0 ms');
    expect(restartDelay(1012, restartReason(10 ** 12))).toBe(MAX_RESTART_DELAY_MS);
    expect(restartDelay(1012, 'restart; retry after 999999999 ms')).toBe(MAX_RESTART_DELAY_MS);
  });

  it('reads no hint from another code or from an odd reason', () => {
    expect(restartDelay(1001, 'restart; retry after 10 ms')).toBeUndefined();
    for (const reason of [
      '',
      'Server shutting down',
      'restart; retry after -1 ms',
      'restart; retry after 1e3 ms',
      'restart; retry after 1234567890 ms',
      ' restart; retry after 5 ms',
      'restart; retry after 5 ms ',
      'restart; retry after 0x10 ms',
    ]) {
      expect(restartDelay(1012, reason)).toBeUndefined();
    }
  });
});

describe('the session column', () => {
  it('keeps the session only after closes that do not mean the session is over', () => {
    const ends = Object.entries(closeCodes)
      .filter(([, info]) => info.session !== 'kept')
      .map(([code]) => Number(code));
    expect(ends).toEqual([1000, 1001, 1008, 1011, 1012, 4401, 4403, 4409, 4419]);
    expect(closeCodes[4409].session).toBe('moved');
    expect(closeCodes[4401].session).toBe('none');
  });
});

describe('refused upgrades', () => {
  const now = Date.UTC(2026, 10, 28, 6, 0, 0);

  it('stops after 401 and 403 only', () => {
    expect(reconnectsAfterRefusal(401, '5')).toEqual({ reconnect: false });
    expect(reconnectsAfterRefusal(403)).toEqual({ reconnect: false });
    for (const status of [400, 404, 426, 429, 500, 502, 503, 0]) {
      expect(reconnectsAfterRefusal(status).reconnect).toBe(true);
    }
  });

  it('waits the Retry-After the answer carries, in seconds or as a date', () => {
    expect(reconnectsAfterRefusal(503, '5', now)).toEqual({ reconnect: true, delayMs: 5000 });
    expect(reconnectsAfterRefusal(503, null, now)).toEqual({ reconnect: true });
    expect(retryAfterDelay(' 0 ', now)).toBe(0);
    expect(retryAfterDelay('Sat, 28 Nov 2026 06:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterDelay('Sat, 28 Nov 2026 05:00:00 GMT', now)).toBe(0);
  });

  it('caps a long wait and ignores what it cannot read', () => {
    expect(retryAfterDelay('999999999', now)).toBe(MAX_RETRY_AFTER_MS);
    expect(retryAfterDelay('Sat, 28 Nov 2099 06:00:00 GMT', now)).toBe(MAX_RETRY_AFTER_MS);
    for (const bad of ['', '-5', '1.5', '5s', 'soon', '1e3', 'Sat, 99 Nov 2026 06:00:00 GMT']) {
      expect({ bad, delay: retryAfterDelay(bad, now) }).toEqual({ bad, delay: undefined });
    }
    expect(retryAfterDelay(undefined)).toBeUndefined();
  });
});
