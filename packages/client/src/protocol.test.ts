import { describe, expect, it } from '@jest/globals';
import { decodeInbound, encodeMessage } from './protocol';

describe('decodeInbound', () => {
  it('reads event, data, id, rid and seq, and ignores what is malformed', () => {
    expect(decodeInbound('{"event":"a","data":{"x":1},"id":3,"rid":"r1","seq":9}')).toEqual({
      event: 'a',
      data: { x: 1 },
      id: 3,
      rid: 'r1',
      seq: 9,
    });
    expect(decodeInbound('{"event":"a","id":-1,"seq":0}')).toEqual({ event: 'a', data: null });
    expect(decodeInbound('[1]')).toBeNull();
    expect(decodeInbound('nope')).toBeNull();
    expect(decodeInbound('{"event":""}')).toBeNull();
  });

  it('reads pos when it is a room position, and leaves a malformed one out', () => {
    const pos = { room: 'r', namespace: '/', epoch: 'e', offset: 2 };
    expect(decodeInbound(JSON.stringify({ event: 'a', data: {}, pos }))).toEqual({
      event: 'a',
      data: {},
      pos,
    });
    expect(
      decodeInbound(JSON.stringify({ event: 'a', data: {}, pos: { ...pos, offset: -2 } })),
    ).toEqual({
      event: 'a',
      data: {},
    });
  });

  it('takes a server rid as a string only, as the wire rule says (an integer is not a request)', () => {
    expect(decodeInbound('{"event":"ask","data":{},"rid":12}')).toEqual({ event: 'ask', data: {} });
  });
});

describe('encodeMessage', () => {
  it('refuses a bad event name and data that is not an object, with the client code', () => {
    expect(() => encodeMessage('$hello', {})).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_CLIENT_INVALID_ARGUMENT' }),
    );
    expect(() => encodeMessage('a', 5)).toThrow(TypeError);
    expect(encodeMessage('a', { x: 1 }, 3)).toBe('{"event":"a","data":{"x":1},"id":3}');
  });
});
