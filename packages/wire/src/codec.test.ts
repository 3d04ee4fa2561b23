import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  appendRid,
  appendSeq,
  encodeAnswer,
  encodeEnvelope,
  encodeMembers,
  encodeRequest,
  fillPosition,
  positionTemplate,
  readPositionMember,
} from './codec';

// JSON has no -0: compare with what the text parses to, not with the generated value.
const json = fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown);
const name = fc.string({ unit: 'grapheme', maxLength: 20 });

describe('the envelope codec', () => {
  it('builds envelopes that parse back to their members, in wire order', () => {
    fc.assert(
      fc.property(name, json, fc.string({ maxLength: 10 }), (event, data, id) => {
        expect(JSON.parse(encodeEnvelope(event, data))).toEqual({ event, data });
        expect(Object.keys(JSON.parse(encodeRequest(event, data, id)))).toEqual([
          'event',
          'data',
          'id',
        ]);
        const answer = JSON.parse(encodeAnswer(event, id, data)) as Record<string, unknown>;
        expect(Object.keys(answer)).toEqual(['event', 'id', 'data']);
        expect(answer['data']).toEqual(data);
      }),
    );
  });

  it('answers undefined as null, and keeps member order for other members', () => {
    expect(encodeAnswer('e', 1, undefined)).toBe('{"event":"e","id":1,"data":null}');
    expect(encodeMembers('join_room', { data: { room: 'a' }, id: 'j' })).toBe(
      '{"event":"join_room","data":{"room":"a"},"id":"j"}',
    );
  });

  it('appends seq and rid without reparsing, to any envelope', () => {
    fc.assert(
      fc.property(
        name,
        json,
        fc.nat(),
        fc.oneof(fc.string({ maxLength: 64 }), fc.nat()),
        (event, data, seq, rid) => {
          const text = encodeEnvelope(event, data);
          expect(JSON.parse(appendSeq(text, seq))).toEqual({ event, data, seq });
          expect(JSON.parse(appendRid(appendSeq(text, seq), rid))).toEqual({
            event,
            data,
            seq,
            rid,
          });
        },
      ),
    );
  });

  it('fills a position template and reads the position back from the end', () => {
    fc.assert(
      fc.property(
        name,
        json,
        name,
        name,
        name,
        fc.nat(),
        (event, data, room, ns, epoch, offset) => {
          const template = positionTemplate(encodeEnvelope(event, data), room, ns);
          const text = fillPosition(template, epoch, offset);
          const pos = { room, namespace: ns, epoch, offset };
          expect(JSON.parse(text)).toEqual({ event, data, pos });
          expect(readPositionMember(text)).toEqual(pos);
          // With a seq appended after it, the position is no longer the last member.
          expect(readPositionMember(appendSeq(text, 3))).toBeUndefined();
        },
      ),
    );
  });

  it('reads no position from a text without one, or a broken one', () => {
    expect(readPositionMember('{"event":"e","data":{}}')).toBeUndefined();
    expect(readPositionMember('{"event":"e","data":{},"pos":{"room":}}')).toBeUndefined();
    expect(readPositionMember('')).toBeUndefined();
  });
});
