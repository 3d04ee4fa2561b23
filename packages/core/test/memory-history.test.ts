// The in-memory history store against a model: any interleaving of publications, reads and
// time passing. A read answers the newest kept messages in order without duplicates, and
// `complete` is false exactly when something after the asked position is gone (or did not
// fit in the limit). Rooms nobody publishes to for their ttl are forgotten.
import { afterEach, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { MemoryHistoryStore } from '../src/history/memory-history';
import type { HistoryPolicy } from '../src/history/history';

const policy: HistoryPolicy = { size: 5, ttl: 100 };
const stores: MemoryHistoryStore[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

function storeAt(clock: { now: number }): { store: MemoryHistoryStore; sent: string[] } {
  const sent: string[] = [];
  const store = new MemoryHistoryStore({
    deliver: (text) => {
      sent.push(text as string);
      return 1;
    },
    now: () => clock.now,
  });
  stores.push(store);
  return { store, sent };
}

const template = (room: string, n: number) => ({
  head: `{"event":"m","data":{"n":${n}},"pos":{"room":"${room}","namespace":"/","epoch":`,
  tail: '}}',
});

type Op =
  | { kind: 'publish'; room: number }
  | { kind: 'wait'; ms: number }
  /** `since` as a distance back from the room's last offset (-1: one past it). */
  | { kind: 'read'; room: number; since: 'none' | 'other-epoch' | number; limit: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('publish' as const),
      room: fc.integer({ min: 0, max: 1 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('wait' as const),
      ms: fc.integer({ min: 0, max: 40 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('read' as const),
      room: fc.integer({ min: 0, max: 1 }),
      since: fc.oneof(
        fc.constant('none' as const),
        fc.constant('other-epoch' as const),
        fc.integer({ min: -1, max: 9 }),
      ),
      limit: fc.integer({ min: 1, max: 7 }),
    }),
  },
);

interface ModelRoom {
  epoch: string | null;
  /** Publications of the current epoch: offset i+1 at times[i] with text texts[i]. */
  times: number[];
  texts: string[];
  /** When the stream started or last got a publication: it expires `ttl` after that. */
  touched: number;
}

describe('MemoryHistoryStore', () => {
  it('reads a duplicate-free, in-order suffix, incomplete exactly when something after since is gone', () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 10, maxLength: 60, size: 'max' }), (ops) => {
        const clock = { now: 0 };
        const { store, sent } = storeAt(clock);
        const rooms: ModelRoom[] = [0, 1].map(() => ({
          epoch: null,
          times: [],
          texts: [],
          touched: 0,
        }));
        let n = 0;
        for (const o of ops) {
          if (o.kind === 'wait') {
            clock.now += o.ms;
            continue;
          }
          const m = rooms[o.room]!;
          const name = `r${o.room}`;
          const expired = m.epoch !== null && m.touched + policy.ttl <= clock.now;
          if (o.kind === 'publish') {
            n += 1;
            const p = store.publish({ namespace: '/', room: name }, template(name, n), policy);
            if (m.epoch === null || expired) {
              expect(p.position.epoch).not.toBe(m.epoch);
              m.epoch = p.position.epoch;
              m.times = [];
              m.texts = [];
            } else {
              expect(p.position.epoch).toBe(m.epoch);
            }
            m.times.push(clock.now);
            m.texts.push(p.text as string);
            m.touched = clock.now;
            expect(p.position.offset).toBe(m.times.length);
            expect(sent.at(-1)).toBe(p.text);
            expect(JSON.parse(p.text as string).pos).toEqual({
              room: name,
              namespace: '/',
              ...p.position,
            });
            continue;
          }
          const last = m.times.length;
          const isKept = (offset: number): boolean =>
            offset > last - policy.size && m.times[offset - 1]! > clock.now - policy.ttl;
          const since =
            o.since === 'none'
              ? undefined
              : o.since === 'other-epoch'
                ? { offset: 0, epoch: 'elsewhere' }
                : { offset: Math.max(0, m.times.length - o.since), epoch: m.epoch ?? 'never' };
          const read = store.read('/', name, {
            ...(since === undefined ? {} : { since }),
            limit: o.limit,
            policy,
          });
          if (m.epoch === null || expired) {
            // Nothing kept: a quiet position (offset 0, `~` and the time), and nothing stored,
            // so the next publication starts the stream.
            expect(read.position).toEqual({ offset: 0, epoch: `~${clock.now}` });
            expect(read.position!.epoch).not.toBe(m.epoch);
            expect(read.messages).toEqual([]);
            expect(read.complete).toBe(since === undefined);
            if (since !== undefined) expect(read.reason).toBe('epoch_changed');
            continue;
          }
          expect(read.position).toEqual({ offset: last, epoch: m.epoch });
          // Whatever comes back is the newest kept messages, in order, each once.
          const offsets = read.messages.map((x) => x.offset);
          offsets.forEach((offset, i) => {
            expect(offset).toBe(last - offsets.length + 1 + i);
            expect(isKept(offset)).toBe(true);
            expect(read.messages[i]!.text).toBe(m.texts[offset - 1]);
          });
          expect(offsets.length).toBeLessThanOrEqual(o.limit);
          if (since === undefined) {
            let kept = 0;
            for (let x = 1; x <= last; x += 1) if (isKept(x)) kept += 1;
            expect(offsets.length).toBe(Math.min(kept, o.limit));
            expect(read.complete).toBe(kept <= o.limit);
            continue;
          }
          if (since.epoch !== m.epoch) {
            expect([read.complete, read.reason, offsets]).toEqual([false, 'epoch_changed', []]);
            continue;
          }
          if (since.offset > last) {
            expect([read.complete, read.reason, offsets]).toEqual([false, 'invalid_position', []]);
            continue;
          }
          let gone = false;
          for (let x = since.offset + 1; x <= last; x += 1) if (!isKept(x)) gone = true;
          const wanted = last - since.offset;
          expect(read.complete).toBe(!gone && wanted <= o.limit);
          if (read.complete) {
            expect(offsets.length).toBe(wanted);
            expect(read.reason).toBeUndefined();
          } else {
            expect(read.reason).toBe('too_far_behind');
          }
          // Never a message at or before the position asked for.
          for (const offset of offsets) expect(offset).toBeGreaterThan(since.offset);
        }
      }),
      { numRuns: 80 },
    );
  });

  it('answers too_far_behind when messages after the position were dropped by size', () => {
    const clock = { now: 0 };
    const { store } = storeAt(clock);
    let epoch = '';
    for (let n = 1; n <= 8; n += 1) {
      epoch = store.publish({ namespace: '/', room: 'a' }, template('a', n), policy).position.epoch;
    }
    const read = store.read('/', 'a', { since: { offset: 1, epoch }, limit: 7, policy });
    expect(read.complete).toBe(false);
    expect(read.reason).toBe('too_far_behind');
    expect(read.messages.map((m) => m.offset)).toEqual([4, 5, 6, 7, 8]);
  });

  it('keeps the right texts and offsets across many publications (the kept window moves)', () => {
    const clock = { now: 0 };
    const { store } = storeAt(clock);
    const small: HistoryPolicy = { size: 3, ttl: 1000 };
    let epoch = '';
    for (let n = 1; n <= 500; n += 1) {
      epoch = store.publish({ namespace: '/', room: 'a' }, template('a', n), small).position.epoch;
      if (n % 97 === 0) {
        const read = store.read('/', 'a', { limit: 10, policy: small });
        expect(read.messages.map((m) => m.offset)).toEqual([n - 2, n - 1, n]);
        expect(read.messages.map((m) => JSON.parse(m.text as string).data.n)).toEqual([
          n - 2,
          n - 1,
          n,
        ]);
      }
    }
    const since = store.read('/', 'a', { since: { offset: 498, epoch }, limit: 10, policy: small });
    expect(since).toMatchObject({ complete: true, position: { offset: 500, epoch } });
    expect(since.messages.map((m) => m.offset)).toEqual([499, 500]);
  });

  it('forgets rooms nobody published to for their ttl, also without traffic (no leak)', async () => {
    const store = new MemoryHistoryStore({ deliver: () => 0, sweepInterval: 20 });
    stores.push(store);
    const short: HistoryPolicy = { size: 3, ttl: 1000 };
    for (let i = 0; i < 1000; i += 1) {
      store.publish({ namespace: '/', room: `r${i}` }, template(`r${i}`, i), short);
    }
    expect(store.size).toBe(1000);
    const deadline = Date.now() + 5000;
    while (store.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(store.size).toBe(0);
  });

  it('starts a new epoch for a room that was forgotten, so old positions are told epoch_changed', () => {
    const clock = { now: 0 };
    const { store } = storeAt(clock);
    const first = store.publish({ namespace: '/', room: 'a' }, template('a', 1), policy);
    clock.now += policy.ttl;
    const second = store.publish({ namespace: '/', room: 'a' }, template('a', 2), policy);
    expect(second.position.offset).toBe(1);
    expect(second.position.epoch).not.toBe(first.position.epoch);
    const read = store.read('/', 'a', { since: first.position, limit: 10, policy });
    expect(read).toMatchObject({ complete: false, reason: 'epoch_changed', messages: [] });
  });

  it('never makes a room on a read; a quiet position recovers exactly when nothing was missed', () => {
    const clock = { now: 1000 };
    const { store } = storeAt(clock);
    for (let i = 0; i < 100; i += 1) {
      const read = store.read('/', `never:${i}`, { limit: 10, policy });
      expect(read).toEqual({
        position: { offset: 0, epoch: '~1000' },
        messages: [],
        complete: true,
      });
      expect(store.read('/', `never:${i}`, { since: read.position!, limit: 10, policy })).toEqual({
        position: { offset: 0, epoch: '~1000' },
        messages: [],
        complete: true,
      });
    }
    expect(store.size).toBe(0);

    // The stream that starts after the quiet read is replayed from its first message.
    const quiet = store.read('/', 'a', { limit: 10, policy }).position!;
    clock.now += 1;
    store.publish({ namespace: '/', room: 'a' }, template('a', 1), policy);
    store.publish({ namespace: '/', room: 'a' }, template('a', 2), policy);
    const caughtUp = store.read('/', 'a', { since: quiet, limit: 10, policy });
    expect(caughtUp.complete).toBe(true);
    expect(caughtUp.messages.map((m) => m.offset)).toEqual([1, 2]);
    expect(
      store.read('/', 'a', { since: { ...quiet, offset: 1 }, limit: 10, policy }),
    ).toMatchObject({ complete: false, reason: 'invalid_position' });

    // A stream came and went after the read: the next one does not hold what was missed.
    const before = store.read('/', 'b', { limit: 10, policy }).position!;
    clock.now += 1;
    store.publish({ namespace: '/', room: 'b' }, template('b', 1), policy);
    clock.now += policy.ttl;
    store.publish({ namespace: '/', room: 'b' }, template('b', 2), policy);
    expect(store.read('/', 'b', { since: before, limit: 10, policy })).toMatchObject({
      complete: false,
      reason: 'epoch_changed',
      messages: [],
    });

    // Still empty, but a message could have come and gone since: not complete.
    const old = store.read('/', 'c', { limit: 10, policy }).position!;
    clock.now += policy.ttl;
    expect(store.read('/', 'c', { since: old, limit: 10, policy })).toMatchObject({
      complete: false,
      reason: 'too_far_behind',
    });
    // A quiet position from before this store existed: its rooms may have lost messages.
    expect(
      store.read('/', 'c', { since: { offset: 0, epoch: '~999' }, limit: 10, policy }),
    ).toMatchObject({ complete: false, reason: 'epoch_changed' });
  });
});
