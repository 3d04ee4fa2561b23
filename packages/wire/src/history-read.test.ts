import { describe, expect, it } from '@jest/globals';
import { readHistoryAnswer, readRecovered, readRoomPosition } from './history-read';

const pos = { room: 'r', namespace: '/', epoch: 'e1', offset: 3 };

describe('readRoomPosition', () => {
  it('reads a well-formed position and drops members it does not know', () => {
    expect(readRoomPosition({ ...pos, extra: 1 })).toEqual(pos);
  });

  it.each([
    ['no object', 'e1:3'],
    ['an offset of 0', { offset: 0, epoch: 'e' }],
    ['a fractional offset', { offset: 1.5, epoch: 'e' }],
    ['an offset past 2^53', { offset: 2 ** 53, epoch: 'e' }],
    ['an offset as text', { offset: '3', epoch: 'e' }],
    ['an empty epoch', { offset: 1, epoch: '' }],
    ['an epoch of 65 characters', { offset: 1, epoch: 'e'.repeat(65) }],
    ['a numeric epoch', { offset: 1, epoch: 7 }],
  ])('reads %s as undefined', (_case, value) => {
    expect(readRoomPosition({ room: 'r', namespace: '/', ...(value as object) })).toBeUndefined();
  });

  it('need a room and a namespace starting with "/" for a room position', () => {
    expect(readRoomPosition({ ...pos, room: '' })).toBeUndefined();
    expect(readRoomPosition({ ...pos, namespace: 'chat' })).toBeUndefined();
    expect(readRoomPosition({ offset: 1, epoch: 'e' })).toBeUndefined();
  });
});

describe('readRecovered', () => {
  it('reads a success and a failure with its reason', () => {
    expect(
      readRecovered({
        room: 'r',
        namespace: '/',
        recovered: true,
        replayed: 4,
        position: { offset: 9, epoch: 'e' },
      }),
    ).toEqual({
      room: 'r',
      namespace: '/',
      recovered: true,
      replayed: 4,
      position: { offset: 9, epoch: 'e' },
    });
    expect(
      readRecovered({ room: 'r', namespace: '/', recovered: false, reason: 'epoch_changed' }),
    ).toEqual({
      room: 'r',
      namespace: '/',
      recovered: false,
      reason: 'epoch_changed',
      replayed: 0,
    });
  });

  it('leaves out a reason it does not know, a bad count and a bad position', () => {
    expect(
      readRecovered({
        room: 'r',
        namespace: '/',
        recovered: false,
        reason: 'solar_flare',
        replayed: -1,
        position: { offset: 'x' },
      }),
    ).toEqual({ room: 'r', namespace: '/', recovered: false, replayed: 0 });
  });

  it('is undefined without a room, a namespace or a boolean recovered', () => {
    expect(readRecovered(null)).toBeUndefined();
    expect(readRecovered([])).toBeUndefined();
    expect(readRecovered({ namespace: '/', recovered: true })).toBeUndefined();
    expect(readRecovered({ room: 'r', recovered: true })).toBeUndefined();
    expect(readRecovered({ room: 'r', namespace: '/', recovered: 'yes' })).toBeUndefined();
  });
});

describe('readHistoryAnswer', () => {
  it('reads envelopes given as objects or as text, oldest first', () => {
    const text = JSON.stringify({ event: 'b', data: { n: 2 }, pos: { ...pos, offset: 4 } });
    expect(
      readHistoryAnswer({
        messages: [{ event: 'a', data: { n: 1 }, pos }, text],
        position: { offset: 4, epoch: 'e1' },
        complete: true,
      }),
    ).toEqual({
      messages: [
        { event: 'a', data: { n: 1 }, pos },
        { event: 'b', data: { n: 2 }, pos: { ...pos, offset: 4 } },
      ],
      position: { offset: 4, epoch: 'e1' },
      complete: true,
    });
  });

  it("keeps a quiet room's position (offset 0), which a message's pos can never have", () => {
    const quiet = { offset: 0, epoch: 'e2' };
    expect(readHistoryAnswer({ messages: [], position: quiet, complete: true })).toEqual({
      messages: [],
      position: quiet,
      complete: true,
    });
    expect(
      readRecovered({ room: 'r', namespace: '/', recovered: true, replayed: 0, position: quiet }),
    ).toMatchObject({ position: quiet });
    expect(readRoomPosition({ room: 'r', namespace: '/', ...quiet })).toBeUndefined();
  });

  it('leaves out messages without an event or a valid pos, and unknown reasons', () => {
    expect(
      readHistoryAnswer({
        messages: [
          { event: 'a', data: {} },
          { data: {}, pos },
          '{not json',
          7,
          { event: 'ok', pos },
        ],
        complete: 'yes',
        reason: 'too_far_behind',
      }),
    ).toEqual({
      messages: [{ event: 'ok', data: null, pos }],
      complete: false,
      reason: 'too_far_behind',
    });
    expect(readHistoryAnswer({ messages: [], complete: false, reason: 'nope' })).toEqual({
      messages: [],
      complete: false,
    });
  });

  it('reads the lost offsets of messages_lost, in order, and leaves out malformed or overlapping ranges', () => {
    const data = {
      room: 'r',
      namespace: '/',
      recovered: false,
      reason: 'messages_lost',
      replayed: 18,
      lost: [
        { from: 6, to: 10 },
        { from: 8, to: 12 },
        { from: 20, to: 19 },
        { from: 1.5, to: 2 },
        'x',
        { from: 30, to: 30 },
      ],
    };
    expect(readRecovered(data)).toMatchObject({
      reason: 'messages_lost',
      replayed: 18,
      lost: [
        { from: 6, to: 10 },
        { from: 30, to: 30 },
      ],
    });
    // `lost` belongs to messages_lost only.
    expect(readRecovered({ ...data, reason: 'too_far_behind' })).not.toHaveProperty('lost');
    expect(readRecovered({ ...data, lost: 'all' })).not.toHaveProperty('lost');
    expect(
      readHistoryAnswer({
        messages: [],
        complete: false,
        reason: 'messages_lost',
        lost: [{ from: 3, to: 4 }],
      }),
    ).toEqual({
      messages: [],
      complete: false,
      reason: 'messages_lost',
      lost: [{ from: 3, to: 4 }],
    });
    // A flood of ranges is read up to a bound.
    const many = Array.from({ length: 5000 }, (_, i) => ({ from: 2 * i + 1, to: 2 * i + 1 }));
    expect(readRecovered({ ...data, lost: many })?.lost).toHaveLength(1024);
  });

  it('is undefined without a messages array', () => {
    expect(readHistoryAnswer(undefined)).toBeUndefined();
    expect(readHistoryAnswer({ messages: 'none' })).toBeUndefined();
  });
});
