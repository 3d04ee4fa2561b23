import { describe, expect, it } from '@jest/globals';
import {
  CLIENT_CONTROL_EVENTS,
  ControlEvent,
  readHello,
  readStreamPosition,
  readWelcome,
} from './control';
import { HISTORY_LIMITS } from './history';

describe('control events', () => {
  it('all start with "$"; a client sends $hello, $ping, $ack, $nack, $history and $refresh only', () => {
    for (const name of Object.values(ControlEvent)) expect(name.startsWith('$')).toBe(true);
    expect([...CLIENT_CONTROL_EVENTS].sort()).toEqual([
      '$ack',
      '$hello',
      '$history',
      '$nack',
      '$ping',
      '$refresh',
    ]);
  });
});

describe('readHello positions and readStreamPosition', () => {
  const one = { room: 'chat:1', namespace: '/', offset: 4, epoch: 'abc' };

  it('keeps well-formed positions, only their four members', () => {
    expect(readHello({ v: 1, positions: [{ ...one, extra: true }] })).toEqual({
      v: 1,
      positions: [one],
    });
    expect(readHello({ v: 1, positions: [] })).toEqual({ v: 1 });
    expect(readHello({ v: 1, positions: null })).toEqual({ v: 1 });
  });

  it('refuses more than maxHelloPositions, bad names, offsets and epochs', () => {
    const many = Array.from({ length: HISTORY_LIMITS.maxHelloPositions + 1 }, () => one);
    for (const positions of [
      many,
      {},
      [{ ...one, room: '' }],
      [{ ...one, room: 'x\ud800' }],
      [{ ...one, room: 'r'.repeat(129) }],
      [{ ...one, namespace: 'chat' }],
      [{ ...one, offset: -1 }],
      [{ ...one, offset: 0.5 }],
      [{ ...one, offset: 2 ** 53 }],
      [{ ...one, epoch: '' }],
      [{ ...one, epoch: 'e'.repeat(HISTORY_LIMITS.maxEpochLength + 1) }],
      [null],
    ]) {
      expect(readHello({ v: 1, positions })).toMatch(/positions/);
    }
    expect(
      readHello({ v: 1, positions: [{ ...one, room: 'r'.repeat(129) }] }, { maxNameLength: 200 }),
    ).toMatchObject({ positions: [{ room: 'r'.repeat(129) }] });
  });

  it('reads a position strictly', () => {
    expect(readStreamPosition({ offset: 0, epoch: 'e', room: 'x' })).toEqual({
      offset: 0,
      epoch: 'e',
    });
    expect(readStreamPosition([0, 'e'])).toMatch(/must be an object/);
    expect(readStreamPosition({ offset: '1', epoch: 'e' })).toMatch(/offset/);
    expect(readStreamPosition({ offset: 1, epoch: 5 })).toMatch(/epoch/);
  });
});

describe('readHello', () => {
  it('reads a full hello and clamps the heartbeat to [1000, 300000]', () => {
    expect(
      readHello({
        v: 1,
        auth: 't',
        heartbeat: { interval: 10, timeout: 10_000_000 },
        resume: { session: 's', seq: 0 },
      }),
    ).toEqual({
      v: 1,
      auth: 't',
      heartbeat: { interval: 1000, timeout: 300_000 },
      resume: { session: 's', seq: 0 },
    });
  });

  it('fills in a missing heartbeat member with the defaults', () => {
    expect(readHello({ v: 2, heartbeat: {} })).toEqual({
      v: 2,
      heartbeat: { interval: 25_000, timeout: 20_000 },
    });
  });

  it('says what is wrong with a malformed hello', () => {
    expect(readHello([])).toMatch(/must be an object/);
    expect(readHello({ v: 0 })).toMatch(/"v"/);
    expect(readHello({ v: 1, auth: 5 })).toMatch(/"auth"/);
    expect(readHello({ v: 1, heartbeat: { interval: -1 } })).toMatch(/"heartbeat"/);
    expect(readHello({ v: 1, resume: { session: '', seq: 0 } })).toMatch(/"resume"/);
    expect(readHello({ v: 1, resume: { session: 'x'.repeat(129), seq: 0 } })).toMatch(/"resume"/);
    expect(readHello({ v: 1, resume: { session: 's', seq: -1 } })).toMatch(/"resume"/);
  });
});

describe('readWelcome', () => {
  it('reads every member, including auth "unused" and a refused resume', () => {
    expect(
      readWelcome({
        v: 1,
        clientId: 'c1',
        heartbeat: { interval: 25_000, timeout: 20_000 },
        session: 's',
        recovery: { window: 120_000 },
        resumed: false,
        reason: 'identity',
        auth: 'unused',
      }),
    ).toEqual({
      v: 1,
      clientId: 'c1',
      heartbeat: { interval: 25_000, timeout: 20_000 },
      session: 's',
      recovery: { window: 120_000 },
      resumed: false,
      reason: 'identity',
      auth: 'unused',
    });
  });

  it('leaves out what is malformed instead of failing', () => {
    expect(readWelcome('nonsense')).toEqual({ heartbeat: null, resumed: false });
    expect(readWelcome({ resumed: 'yes', heartbeat: { interval: 0, timeout: 5 } })).toEqual({
      heartbeat: null,
      resumed: false,
    });
  });
});
