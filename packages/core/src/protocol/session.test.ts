import { describe, expect, it } from '@jest/globals';
import { SessionStore, withSeq, type Session } from './session';

const store = (
  bufferSize: number,
  ended: Session[] = [],
  bounds: { maxAway?: number; maxAwayPerAddress?: number } = {},
): SessionStore =>
  new SessionStore({
    window: 60_000,
    bufferSize,
    maxAway: bounds.maxAway ?? 0,
    maxAwayPerAddress: bounds.maxAwayPerAddress ?? 0,
    onEnded: (s) => ended.push(s),
  });

const msg = (n: string): string => `{"event":"${n}","data":{}}`;

describe('withSeq', () => {
  it('adds seq to a serialised message without parsing it', () => {
    expect(JSON.parse(withSeq('{"event":"e","data":{}}', 7))).toEqual({
      event: 'e',
      data: {},
      seq: 7,
    });
  });
});

describe('SessionStore', () => {
  it('numbers each session from 1 and replays what came after the given seq, in order', () => {
    const sessions = store(10);
    const s = sessions.open('c1', undefined, '1.1.1.1');
    const t = sessions.open('c2', undefined, '1.1.1.1');
    expect(sessions.keep(t, msg('x'))).toBe(1);
    expect(['a', 'b', 'c'].map((n) => sessions.keep(s, msg(n)))).toEqual([1, 2, 3]);
    sessions.away(s);
    const token = s.token;
    expect(sessions.resume(s, 1)).toEqual({
      replay: [withSeq(msg('b'), 2), withSeq(msg('c'), 3)],
    });
    expect(s.connected).toBe(true);
    // Rotated: the old token names nothing any more.
    expect(s.token).not.toBe(token);
    expect(sessions.lookup(token)).toBeUndefined();
    expect(sessions.lookup(s.token)).toBe(s);
  });

  it('refuses a resume with overflow once a message after seq was dropped, and ends the session', () => {
    const sessions = store(2);
    const s = sessions.open('c1', undefined, 'a');
    for (const n of ['a', 'b', 'c']) sessions.keep(s, msg(n));
    expect(s.messages).toEqual([msg('b'), msg('c')]);
    sessions.away(s);
    expect(sessions.resume(s, 0)).toEqual({ refused: 'overflow' });
    expect(sessions.lookup(s.token)).toBeUndefined();
    expect(sessions.refusalFor(s.token)).toBe('ended');
    expect(sessions.size).toBe(0);
    expect(sessions.approximateBytes).toBe(0);
  });

  it('says unknown only for a token it never issued', () => {
    const sessions = store(1);
    const s = sessions.open('c1', 'ada', 'a');
    expect(sessions.refusalFor('nope')).toBe('unknown');
    expect([...sessions.awayClientIds()]).toEqual([]);
    sessions.away(s);
    expect([...sessions.awayClientIds()]).toEqual(['c1']);
    expect(sessions.endAll()).toEqual([s]);
    expect(sessions.refusalFor(s.token)).toBe('ended');
  });

  it('bounds away sessions per address and in all, ending the oldest first', () => {
    const ended: Session[] = [];
    const sessions = store(1, ended, { maxAway: 3, maxAwayPerAddress: 2 });
    const a = ['a1', 'a2', 'a3'].map((id) => sessions.open(id, undefined, 'A'));
    for (const s of a) sessions.away(s);
    expect(ended.map((s) => s.clientId)).toEqual(['a1']);
    expect(sessions.awayCount).toBe(2);
    const b = ['b1', 'b2'].map((id) => sessions.open(id, undefined, 'B'));
    for (const s of b) sessions.away(s);
    expect(ended.map((s) => s.clientId)).toEqual(['a1', 'a2']);
    expect([...sessions.awayClientIds()]).toEqual(['a3', 'b1', 'b2']);
    expect(sessions.refusalFor(a[0]!.token)).toBe('ended');
  });

  it('ends a session whose window passes, then answers its token with expired', async () => {
    let expired: (s: Session) => void = () => undefined;
    const done = new Promise<Session>((resolve) => (expired = resolve));
    const sessions = new SessionStore({
      window: 1,
      bufferSize: 1,
      maxAway: 0,
      maxAwayPerAddress: 0,
      onEnded: (s) => expired(s),
    });
    const s = sessions.open('c1', undefined, 'a');
    sessions.away(s);
    expect(await done).toBe(s);
    expect(sessions.refusalFor(s.token)).toBe('expired');
    expect(sessions.lookup(s.token)).toBeUndefined();
  });
});
