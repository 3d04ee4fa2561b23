import { describe, expect, it } from '@jest/globals';
import { CLIENT_DEFAULTS, resolveOptions } from './options';

describe('resolveOptions', () => {
  it('fills in the documented defaults', () => {
    const o = resolveOptions({ network: null });
    expect(o).toMatchObject({ ...CLIENT_DEFAULTS, network: null });
    expect(o.reconnectionAttempts).toBe(Infinity);
    expect(o.heartbeat).toEqual({ interval: 25_000, timeout: 20_000 });
  });

  it.each([
    [{ nope: 1 }, /unknown option "nope"/],
    [{ reconnectionDelay: -1 }, /reconnectionDelay must be/],
    [{ reconnectionDelay: 500, reconnectionDelayMax: 100 }, /must not be smaller/],
    [{ reconnectionAttempts: 1.5 }, /reconnectionAttempts must be/],
    [{ protocol: 'v2' }, /protocol must be one of "auto", "basic"/],
    [{ heartbeat: { interval: 0, timeout: 10 } }, /heartbeat.interval/],
    [{ query: { key: 1 } }, /query must be/],
    [{ network: {} }, /network must have/],
    [{ whenDisconnected: 'drop' }, /whenDisconnected must be one of/],
  ])('refuses %j with a TypeError naming the option', (options, message) => {
    let caught: unknown;
    try {
      resolveOptions(options as never);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(TypeError);
    expect(caught).toMatchObject({ code: 'PKG_ERR_CLIENT_INVALID_OPTION' });
    expect((caught as Error).message).toMatch(message);
  });

  it('accepts an infinite number of attempts and heartbeat false', () => {
    const o = resolveOptions({ reconnectionAttempts: Infinity, heartbeat: false, network: null });
    expect(o.reconnectionAttempts).toBe(Infinity);
    expect(o.heartbeat).toBe(false);
  });
});
