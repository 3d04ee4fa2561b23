import { describe, expect, it } from '@jest/globals';
import { decodePresence, encodePresence, entryField, entryValue, readEntry } from './presence-wire';

describe('presence messages between instances', () => {
  it('round-trips joins, leaves, heartbeats and goodbyes', () => {
    const meta = { clientId: 'c1', joinedAt: 5, name: 'Ada' };
    for (const message of [
      { t: 'j', o: 'n1', s: 1, ns: '/', r: 'chat:1', k: 'ada', m: meta },
      { t: 'l', o: 'n1', s: 2, ns: '/', r: 'chat:1', c: 'c1' },
      { t: 'h', o: 'n1', s: 2 },
      { t: 'b', o: 'n1', s: 2 },
    ] as const) {
      expect(decodePresence(encodePresence(message))).toEqual({ ok: true, value: message });
    }
  });

  it('rejects what is not one, with a reason, and never throws', () => {
    const bad = [
      'not json',
      '[]',
      '{"v":2,"o":"n","s":1,"t":"h"}',
      '{"v":1,"s":1,"t":"h"}',
      '{"v":1,"o":"n","s":-1,"t":"h"}',
      '{"v":1,"o":"n","s":1.5,"t":"h"}',
      '{"v":1,"o":"n","s":1,"t":"x"}',
      '{"v":1,"o":"n","s":1,"t":"j","ns":"/","r":"a","k":"k","m":{"clientId":"c"}}',
      '{"v":1,"o":"n","s":1,"t":"l","ns":"/","r":"a"}',
      '\u0000\ud800',
    ];
    for (const raw of bad) {
      const decoded = decodePresence(raw);
      expect(decoded.ok).toBe(false);
      if (!decoded.ok) expect(decoded.reason.length).toBeGreaterThan(0);
    }
  });

  it('reads back hash entries, and refuses malformed or mismatched ones', () => {
    const meta = { clientId: 'c1', joinedAt: 5 };
    const field = entryField('/', 'chat:1', 'c1');
    expect(readEntry(field, entryValue('ada', meta))).toEqual({
      namespace: '/',
      room: 'chat:1',
      clientId: 'c1',
      key: 'ada',
      meta,
    });
    expect(readEntry(field, entryValue('ada', { clientId: 'other', joinedAt: 5 }))).toBeNull();
    expect(readEntry('["/","r"]', entryValue('ada', meta))).toBeNull();
    expect(readEntry(field, '{"k":"","m":{}}')).toBeNull();
    expect(readEntry('nope', 'nope')).toBeNull();
  });
});
