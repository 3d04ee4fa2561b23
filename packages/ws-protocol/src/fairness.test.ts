import fc from 'fast-check';
import type { RawData } from 'ws';
import { FairScheduler, type FairMember } from './fairness';

/** A connection as the scheduler sees it, recording what it was asked to do. */
class FakeConn implements FairMember {
  turnCount = 0;
  turnEpoch = 0;
  backlog: FairMember['backlog'] = undefined;
  gone = false;
  paused = false;
  pauses = 0;
  readonly handled: number[] = [];
  readonly client = {
    socket: {
      pause: (): void => {
        this.paused = true;
        this.pauses += 1;
      },
      resume: (): void => {
        this.paused = false;
      },
    },
  };
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** One step: how many messages each connection sends in one turn (before the loop turns). */
const stepsArb = (conns: number) =>
  fc.array(fc.array(fc.nat({ max: 40 }), { minLength: conns, maxLength: conns }), {
    minLength: 1,
    maxLength: 12,
  });

describe('FairScheduler', () => {
  it('handles every message once and in order, at most one batch per connection in a turn and one in the check phase after it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 3 }).chain((n) => fc.tuple(fc.constant(n), stepsArb(n))),
        async (maxPerTurn, [n, steps]) => {
          const conns = Array.from({ length: n }, () => new FakeConn());
          let phase = 0;
          const perPhase = new Map<string, number>();
          const scheduler = new FairScheduler<FakeConn>(maxPerTurn, (conn, raw) => {
            conn.handled.push(Number(raw.toString()));
            const key = `${conns.indexOf(conn)}:${phase}`;
            perPhase.set(key, (perPhase.get(key) ?? 0) + 1);
          });
          const sent = conns.map(() => 0);
          for (const step of steps) {
            step.forEach((count, i) => {
              for (let k = 0; k < count; k += 1) {
                scheduler.offer(conns[i]!, Buffer.from(String(sent[i]!)) as RawData, false);
                sent[i]! += 1;
              }
            });
            await nextTurn();
            phase += 1;
          }
          // Idle turns until every backlog is handled.
          for (let i = 0; i < 5000 && scheduler.waiting > 0; i += 1) {
            await nextTurn();
            phase += 1;
          }
          expect(scheduler.waiting).toBe(0);
          conns.forEach((conn, i) => {
            expect(conn.handled).toEqual([...Array(sent[i]).keys()]);
            expect(conn.paused).toBe(false);
          });
          // A phase here is one offer burst and the check phase that follows it.
          for (const count of perPhase.values()) expect(count).toBeLessThanOrEqual(2 * maxPerTurn);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('never pauses, nor adds a turn of the loop for, a connection that sends less than half a batch per turn', async () => {
    const conn = new FakeConn();
    const scheduler = new FairScheduler<FakeConn>(32, (c, raw) => c.handled.push(Number(raw)));
    const immediate = jest.spyOn(global, 'setImmediate');
    try {
      for (let i = 0; i < 15; i += 1) scheduler.offer(conn, Buffer.from(String(i)), false);
      expect(immediate).not.toHaveBeenCalled();
      // The sixteenth in the same epoch schedules its end, once.
      scheduler.offer(conn, Buffer.from('15'), false);
      scheduler.offer(conn, Buffer.from('16'), false);
      expect(immediate).toHaveBeenCalledTimes(1);
    } finally {
      immediate.mockRestore();
    }
    await nextTurn();
    expect(conn.handled).toEqual([...Array(17).keys()]);
    expect(conn.pauses).toBe(0);
  });

  it('never pauses a connection that sends up to a batch in every turn, however long it goes on', async () => {
    const conn = new FakeConn();
    const scheduler = new FairScheduler<FakeConn>(4, (c, raw) => c.handled.push(Number(raw)));
    let sent = 0;
    for (let turn = 0; turn < 50; turn += 1) {
      for (let k = 0; k < 4; k += 1) scheduler.offer(conn, Buffer.from(String(sent++)), false);
      await nextTurn();
    }
    expect(conn.handled).toEqual([...Array(sent).keys()]);
    expect(conn.pauses).toBe(0);
  });

  it('pauses a flooding connection after its batch and continues it in the next turns', async () => {
    const conn = new FakeConn();
    const scheduler = new FairScheduler<FakeConn>(4, (c, raw) => c.handled.push(Number(raw)));
    for (let i = 0; i < 10; i += 1) scheduler.offer(conn, Buffer.from(String(i)), false);
    expect(conn.handled).toEqual([0, 1, 2, 3]);
    expect(conn.paused).toBe(true);
    expect(scheduler.waiting).toBe(1);
    await nextTurn();
    expect(conn.handled).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    await nextTurn();
    expect(conn.handled).toHaveLength(10);
    expect(conn.paused).toBe(false);
    expect(scheduler.waiting).toBe(0);
  });

  it('drops the backlog of a connection that is gone, and handles nothing more of it', async () => {
    const conn = new FakeConn();
    const scheduler = new FairScheduler<FakeConn>(2, (c, raw) => c.handled.push(Number(raw)));
    for (let i = 0; i < 6; i += 1) scheduler.offer(conn, Buffer.from(String(i)), false);
    conn.gone = true;
    scheduler.drop(conn);
    await nextTurn();
    await nextTurn();
    expect(conn.handled).toEqual([0, 1]);
    expect(scheduler.waiting).toBe(0);
  });

  it('handles everything at once with maxPerTurn 0', () => {
    const conn = new FakeConn();
    const scheduler = new FairScheduler<FakeConn>(0, (c, raw) => c.handled.push(Number(raw)));
    for (let i = 0; i < 100; i += 1) scheduler.offer(conn, Buffer.from(String(i)), false);
    expect(conn.handled).toHaveLength(100);
    expect(conn.pauses).toBe(0);
  });
});
