import { describe, expect, it } from '@jest/globals';
import { RoomSequence, type MissedReader } from './cluster-gaps';
import { decodeBroadcast, encodeBroadcast } from './wire';

/** A kept message as the cluster publish script sends it. */
function kept(epoch: string, offset: number): string {
  return `#${epoch}:${offset}\n${encodeBroadcast('origin', [], `m${offset}`)}`;
}

function setUp(missed: MissedReader = () => Promise.resolve(null)) {
  const got: string[] = [];
  const errors: Error[] = [];
  const sequence = new RoomSequence(missed, (err) => errors.push(err));
  const listener = (raw: string): void => {
    const decoded = decodeBroadcast(raw);
    got.push(decoded.ok ? String(decoded.value.text) : `bad:${raw}`);
  };
  return { got, errors, sequence, receive: (raw: string) => sequence.receive(raw, 'ch', listener) };
}

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('RoomSequence', () => {
  it('hands on messages in order without their position line', () => {
    const { got, receive } = setUp();
    for (let n = 1; n <= 3; n++) receive(kept('e', n));
    expect(got).toEqual(['m1', 'm2', 'm3']);
  });

  it('tells the position it reached, the messages waiting for a fill included', async () => {
    let release: (texts: string[]) => void = () => undefined;
    const { sequence, receive } = setUp(() => new Promise<string[] | null>((r) => (release = r)));
    expect(sequence.position('ch')).toBeUndefined();
    receive(kept('e', 1));
    expect(sequence.position('ch')).toEqual({ epoch: 'e', offset: 1 });
    receive(kept('e', 4)); // 2 and 3 are read from history meanwhile
    receive(kept('e', 5));
    expect(sequence.position('ch')).toEqual({ epoch: 'e', offset: 5 });
    release(['m2', 'm3']);
    await settle();
    expect(sequence.position('ch')).toEqual({ epoch: 'e', offset: 5 });
    sequence.forget('ch');
    expect(sequence.position('ch')).toBeUndefined();
  });

  it('catches up with what was kept after its last message, without a later message', async () => {
    const asked: Array<{ offset: number; before: number }> = [];
    const { got, sequence, receive } = setUp((_channel, since, before) => {
      asked.push({ offset: since.offset, before });
      return Promise.resolve(['m3', 'm4']);
    });
    receive(kept('e', 1));
    receive(kept('e', 2));
    sequence.catchUp('ch');
    receive(kept('e', 4)); // arrives while the catch-up reads: waits, then is a repeat
    await settle();
    receive(kept('e', 5));
    expect(got).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
    expect(asked).toEqual([{ offset: 2, before: Number.MAX_SAFE_INTEGER }]);
    expect(sequence.filled).toBe(2);
    expect(sequence.unfilled).toBe(0);
    sequence.catchUp('other'); // a channel without messages: nothing to read
    expect(asked).toHaveLength(1);
  });

  it('passes a message without a position (not kept) untouched', () => {
    const { got, receive } = setUp();
    receive(encodeBroadcast('origin', [], 'plain'));
    expect(got).toEqual(['plain']);
  });

  it('drops a message that comes twice', () => {
    const { got, receive } = setUp();
    receive(kept('e', 1));
    receive(kept('e', 2));
    receive(kept('e', 2));
    receive(kept('e', 1));
    expect(got).toEqual(['m1', 'm2']);
  });

  it('fills a hole from history before the messages after it, in order', async () => {
    const asked: unknown[] = [];
    let release!: (texts: string[]) => void;
    const { got, sequence, receive } = setUp((channel, since, before) => {
      asked.push({ channel, since, before });
      return new Promise((r) => (release = r));
    });
    receive(kept('e', 1));
    receive(kept('e', 4));
    receive(kept('e', 5)); // arrives while the hole is read: waits
    expect(got).toEqual(['m1']);
    expect(asked).toEqual([{ channel: 'ch', since: { epoch: 'e', offset: 1 }, before: 4 }]);
    release(['m2', 'm3']);
    await settle();
    expect(got).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
    expect(sequence.filled).toBe(2);
    expect(sequence.unfilled).toBe(0);
  });

  it('goes on, and counts the hole, when history cannot fill it', async () => {
    const { got, sequence, errors, receive } = setUp(() => Promise.reject(new Error('down')));
    receive(kept('e', 1));
    receive(kept('e', 3));
    await settle();
    await settle();
    receive(kept('e', 4));
    expect(got).toEqual(['m1', 'm3', 'm4']);
    expect(sequence.unfilled).toBe(1);
    expect(errors.map((e) => e.message)).toEqual(['down']);
  });

  it('starts again at a new epoch, and on a room it forgot', () => {
    const { got, sequence, receive } = setUp();
    receive(kept('e', 5));
    receive(kept('f', 1));
    sequence.forget('ch');
    receive(kept('f', 9));
    expect(got).toEqual(['m5', 'm1', 'm9']);
  });

  it('hands a malformed position line on without it, for the adapter to drop', () => {
    const { got, receive } = setUp();
    receive('#no-offset\n' + encodeBroadcast('o', [], 'x'));
    receive('#e:NaN\n' + encodeBroadcast('o', [], 'y'));
    receive('#e:1');
    expect(got.slice(0, 2)).toEqual(['x', 'y']);
    expect(got[2]).toMatch(/^bad:/);
  });
});
