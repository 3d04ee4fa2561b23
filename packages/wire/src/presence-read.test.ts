import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  readPresenceData,
  readPresenceDiff,
  readPresenceMeta,
  readPresenceState,
  readPresenceStats,
} from './presence-read';

describe('readPresenceMeta', () => {
  it('keeps the application members and reads a bad joinedAt as 0', () => {
    expect(readPresenceMeta({ clientId: 'c1', joinedAt: 5, name: 'Ada' })).toEqual({
      clientId: 'c1',
      joinedAt: 5,
      name: 'Ada',
    });
    expect(readPresenceMeta({ clientId: 'c1', joinedAt: 'soon' })).toEqual({
      clientId: 'c1',
      joinedAt: 0,
    });
  });

  it.each([null, 'c1', [], {}, { clientId: '' }, { clientId: 7 }])('drops %p', (value) => {
    expect(readPresenceMeta(value)).toBeUndefined();
  });
});

describe('readPresenceState', () => {
  it('drops malformed entries and metas, keeps one meta per clientId', () => {
    const state = readPresenceState({
      ada: {
        metas: [{ clientId: 'a1', joinedAt: 1 }, { nope: true }, { clientId: 'a1', joinedAt: 2 }],
      },
      bob: { metas: 'many' },
      cy: { metas: [] },
      dee: null,
    });
    expect(state).toEqual({ ada: { metas: [{ clientId: 'a1', joinedAt: 2 }] } });
  });

  it('treats __proto__ and constructor as ordinary keys', () => {
    const state = readPresenceState(
      JSON.parse(
        '{"__proto__":{"metas":[{"clientId":"x","joinedAt":1}]},"constructor":{"metas":[{"clientId":"y","joinedAt":1}]}}',
      ),
    );
    expect(Object.keys(state).sort()).toEqual(['__proto__', 'constructor']);
    expect(({} as Record<string, unknown>)['metas']).toBeUndefined();
  });

  it('never throws and returns only well-formed entries, whatever JSON comes', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const state = readPresenceState(value);
        for (const entry of Object.values(state)) {
          expect(entry.metas.length).toBeGreaterThan(0);
          for (const meta of entry.metas) {
            expect(typeof meta.clientId).toBe('string');
            expect(Number.isFinite(meta.joinedAt)).toBe(true);
          }
        }
      }),
    );
  });
});

describe('readPresenceStats', () => {
  it('needs two non-negative integers', () => {
    expect(readPresenceStats({ connections: 3, keys: 2 })).toEqual({ connections: 3, keys: 2 });
    expect(readPresenceStats({ connections: -1, keys: 2 })).toBeUndefined();
    expect(readPresenceStats({ connections: 1.5, keys: 2 })).toBeUndefined();
    expect(readPresenceStats({ connections: 1 })).toBeUndefined();
  });
});

describe('readPresenceData and readPresenceDiff', () => {
  it('read a state, stats, and a diff; the namespace defaults to "/"', () => {
    const meta = { clientId: 'a1', joinedAt: 1 };
    expect(readPresenceData({ room: 'r', state: { ada: { metas: [meta] } } })).toEqual({
      room: 'r',
      namespace: '/',
      state: { ada: { metas: [meta] } },
    });
    expect(
      readPresenceData({ room: 'r', namespace: '/n', stats: { connections: 9, keys: 4 } }),
    ).toEqual({
      room: 'r',
      namespace: '/n',
      stats: { connections: 9, keys: 4 },
    });
    expect(
      readPresenceDiff({ room: 'r', namespace: '/', joins: { ada: { metas: [meta] } } }),
    ).toEqual({
      room: 'r',
      namespace: '/',
      joins: { ada: { metas: [meta] } },
      leaves: {},
    });
  });

  it.each([
    null,
    [],
    { state: {} },
    { room: '', state: {} },
    { room: 'r', namespace: 'n', state: {} },
    { room: 'r' },
    { room: 'r', stats: { connections: 'x', keys: 1 } },
  ])('refuse %p as $presence', (data) => {
    expect(readPresenceData(data)).toBeUndefined();
  });

  it.each([null, {}, { room: 5 }, { room: 'r', namespace: 3 }])(
    'refuse %p as $presence_diff',
    (data) => {
      expect(readPresenceDiff(data)).toBeUndefined();
    },
  );
});
