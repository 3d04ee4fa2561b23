import { describe, expect, it } from '@jest/globals';
import { MAX_ID_LENGTH, decodeInbound, isValidId, readWelcome } from './protocol';

describe('request ids', () => {
  it('accepts strings of 1-64 characters and integers 0 to 2^53-1 only', () => {
    expect([0, 7, Number.MAX_SAFE_INTEGER, 'a', 'x'.repeat(MAX_ID_LENGTH)].every(isValidId)).toBe(
      true,
    );
    for (const bad of [-1, 1.5, 2 ** 53, '', 'x'.repeat(MAX_ID_LENGTH + 1), null, {}, true]) {
      expect(isValidId(bad)).toBe(false);
    }
  });
});

describe('decodeInbound', () => {
  it('reads event, data, id, rid and seq, and ignores what is malformed', () => {
    expect(decodeInbound('{"event":"a","data":{"x":1},"id":3,"rid":"r1","seq":9}')).toEqual({
      event: 'a',
      data: { x: 1 },
      id: 3,
      rid: 'r1',
      seq: 9,
    });
    expect(decodeInbound('{"event":"a","id":-1,"seq":0}')).toEqual({ event: 'a', data: null });
    expect(decodeInbound('not json')).toBeNull();
    expect(decodeInbound('[1]')).toBeNull();
    expect(decodeInbound('{"data":{}}')).toBeNull();
  });
});

describe('readWelcome', () => {
  it('reads the granted heartbeat, session and resume outcome', () => {
    expect(
      readWelcome({
        v: 1,
        clientId: 'c1',
        heartbeat: { interval: 1000, timeout: 500 },
        session: 's',
        recovery: { window: 120000 },
        resumed: false,
        reason: 'expired',
      }),
    ).toEqual({
      clientId: 'c1',
      heartbeat: { interval: 1000, timeout: 500 },
      session: 's',
      recoveryWindow: 120000,
      resumed: false,
      reason: 'expired',
    });
    expect(readWelcome(null)).toEqual({ heartbeat: null, resumed: false });
  });
});
