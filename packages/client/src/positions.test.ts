import { describe, expect, it } from '@jest/globals';
import { HISTORY_LIMITS } from '@pkg/wire';
import { MAX_REMEMBERED_POSITIONS, RoomPositions, UNKNOWN_EPOCH } from './positions';

const at = (room: string, offset: number, epoch = 'e') => ({ room, namespace: '/', offset, epoch });

describe('RoomPositions', () => {
  it('accepts higher offsets of an epoch, refuses those seen, and replaces on a new epoch', () => {
    const p = new RoomPositions();
    expect(p.accept(at('r', 1))).toBe(true);
    expect(p.accept(at('r', 3))).toBe(true);
    expect(p.accept(at('r', 3))).toBe(false);
    expect(p.accept(at('r', 2))).toBe(false);
    expect(p.accept(at('r', 1, 'f'))).toBe(true);
    expect(p.get('r', '/')).toEqual(at('r', 1, 'f'));
    expect(p.accept(at('r', 2, 'e'))).toBe(true); // epochs are not ordered: the newest wins
  });

  it('starts a recovery at a floor from a history read, without dropping live messages below it', () => {
    const p = new RoomPositions();
    p.floor('r', '/', { offset: 5, epoch: 'e' });
    expect(p.get('r', '/')).toEqual(at('r', 5));
    expect(p.accept(at('r', 4))).toBe(true); // live, read late: still delivered
    expect(p.get('r', '/')).toEqual(at('r', 5));
    expect(p.accept(at('r', 7))).toBe(true);
    expect(p.get('r', '/')).toEqual(at('r', 7));
    expect(p.accept(at('r', 6))).toBe(false);
    p.floor('r', '/', { offset: 2, epoch: 'f' }); // a newer epoch replaces the room
    expect(p.get('r', '/')).toEqual(at('r', 2, 'f'));
    expect(p.accept(at('r', 1, 'f'))).toBe(true);
  });

  it('asks from an unknown epoch for a room joined without a position, until one is known', () => {
    const p = new RoomPositions();
    p.unknown('r', '/');
    expect(p.get('r', '/')).toEqual(at('r', 0, UNKNOWN_EPOCH));
    expect(p.forHello(() => false)).toEqual([at('r', 0, UNKNOWN_EPOCH)]);
    expect(p.accept(at('r', 3))).toBe(true);
    p.unknown('r', '/'); // a known position stays
    expect(p.get('r', '/')).toEqual(at('r', 3));
    p.forget('r', '/');
    p.unknown('r', '/');
    p.floor('r', '/', { offset: 9, epoch: 'e' });
    expect(p.get('r', '/')).toEqual(at('r', 9));
  });

  it('moves forward only after a success, stands at the given position after a failure', () => {
    const p = new RoomPositions();
    p.accept(at('r', 9));
    p.recovered({
      room: 'r',
      namespace: '/',
      recovered: true,
      replayed: 0,
      position: { offset: 4, epoch: 'e' },
    });
    expect(p.get('r', '/')?.offset).toBe(9);
    p.recovered({
      room: 'r',
      namespace: '/',
      recovered: false,
      reason: 'invalid_position',
      replayed: 0,
      position: { offset: 4, epoch: 'e' },
    });
    expect(p.get('r', '/')?.offset).toBe(4);
    p.recovered({ room: 'r', namespace: '/', recovered: false, reason: 'not_kept', replayed: 0 });
    expect(p.get('r', '/')).toBeUndefined();
  });

  it('lists the most recently updated rooms for $hello, skipping some, within the bound', () => {
    const p = new RoomPositions();
    const n = HISTORY_LIMITS.maxHelloPositions + 2;
    for (let i = 0; i < n; i++) p.accept(at(`r${i}`, 1));
    p.accept(at('r0', 2));
    const hello = p.forHello((room) => room === `r${n - 1}`);
    expect(hello).toHaveLength(HISTORY_LIMITS.maxHelloPositions);
    expect(hello[0]).toEqual(at('r0', 2));
    expect(hello.map((x) => x.room)).not.toContain(`r${n - 1}`);
  });

  it(`remembers at most ${MAX_REMEMBERED_POSITIONS} rooms, forgetting the least recently updated`, () => {
    const p = new RoomPositions();
    for (let i = 0; i <= MAX_REMEMBERED_POSITIONS; i++) p.accept(at(`r${i}`, 1));
    expect(p.get('r0', '/')).toBeUndefined();
    expect(p.get('r1', '/')).toBeDefined();
    expect(p.get(`r${MAX_REMEMBERED_POSITIONS}`, '/')).toBeDefined();
  });
});
