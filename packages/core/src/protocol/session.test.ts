import { describe, expect, it } from '@jest/globals';
import { SessionStore, withSeq, type Session } from './session';

const store = (bufferSize: number, expired: Session[] = []): SessionStore =>
  new SessionStore({ window: 60_000, bufferSize, onExpired: (s) => expired.push(s) });

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
  it('replays the kept messages after the given seq, in order, to a session that is away', () => {
    const sessions = store(10);
    const s = sessions.open('c1');
    for (const text of ['a', 'b', 'c']) sessions.keep(s, sessions.nextSeq(), text);
    sessions.away(s);
    expect(sessions.resume(s.token, 1)).toEqual({ session: s, replay: ['b', 'c'] });
    expect(s.connected).toBe(true);
  });

  it('refuses a resume with overflow once a message after seq was dropped, and ends the session', () => {
    const sessions = store(2);
    const s = sessions.open('c1');
    for (const text of ['a', 'b', 'c']) sessions.keep(s, sessions.nextSeq(), text);
    expect(s.texts).toEqual(['b', 'c']);
    sessions.away(s);
    expect(sessions.resume(s.token, 0)).toEqual({ refused: 'overflow', ended: s });
    expect(sessions.resume(s.token, 3)).toEqual({ refused: 'unknown' });
    expect(sessions.size).toBe(0);
  });

  it('says unknown for a token never issued or still connected', () => {
    const sessions = store(1);
    const s = sessions.open('c1');
    expect(sessions.resume('nope', 0)).toEqual({ refused: 'unknown' });
    expect(sessions.resume(s.token, 0)).toEqual({ refused: 'unknown' });
    expect([...sessions.awayClientIds()]).toEqual([]);
    sessions.away(s);
    expect([...sessions.awayClientIds()]).toEqual(['c1']);
    expect(sessions.endAll()).toEqual([s]);
  });

  it('ends a session whose window passes, then answers its token with expired', async () => {
    let expired: (s: Session) => void = () => undefined;
    const done = new Promise<Session>((resolve) => (expired = resolve));
    const sessions = new SessionStore({ window: 1, bufferSize: 1, onExpired: (s) => expired(s) });
    const s = sessions.open('c1');
    sessions.away(s);
    expect(await done).toBe(s);
    expect(sessions.resume(s.token, 0)).toEqual({ refused: 'expired' });
    expect(sessions.ofClient('c1')).toBeUndefined();
  });
});
