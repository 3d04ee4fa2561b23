import { describe, expect, it } from '@jest/globals';
import {
  decodeMessage,
  isValidEventName,
  isValidRequestId,
  MessageDecodeError,
  prepareAnswer,
  prepareMessage,
} from './envelope';

describe('prepareMessage', () => {
  it('gives the JSON text {"event", "data"}', () => {
    expect(prepareMessage('chat.message', { text: 'hi' })).toBe(
      '{"event":"chat.message","data":{"text":"hi"}}',
    );
    expect(prepareMessage('list', [1, 2])).toBe('{"event":"list","data":[1,2]}');
  });

  it('round-trips through decodeMessage', () => {
    const data = { nested: { a: [1, 'two', null] }, unicode: 'é✓' };
    expect(decodeMessage(prepareMessage('x_y-z.1', data))).toEqual({ event: 'x_y-z.1', data });
  });

  it('throws a TypeError with PKG_ERR_WS_INVALID_EVENT for a bad event name', () => {
    for (const event of ['', 'has space', 'émoji', 'a/b', 5 as unknown as string]) {
      expect(() => prepareMessage(event, {})).toThrow(
        expect.objectContaining({ name: 'TypeError', code: 'PKG_ERR_WS_INVALID_EVENT' }),
      );
    }
  });

  it('throws a TypeError with PKG_ERR_WS_INVALID_DATA for data that is not an object or array', () => {
    for (const data of [null, 'text', 3, undefined, true]) {
      expect(() => prepareMessage('ok', data as unknown as object[])).toThrow(
        expect.objectContaining({ name: 'TypeError', code: 'PKG_ERR_WS_INVALID_DATA' }),
      );
    }
  });

  it('throws PKG_ERR_WS_INVALID_DATA for data JSON cannot serialise', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => prepareMessage('ok', cyclic)).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_WS_INVALID_DATA' }),
    );
    expect(() => prepareMessage('ok', { n: 1n })).toThrow(/cannot be serialised to JSON/);
  });
});

function decodeError(raw: string): MessageDecodeError {
  try {
    decodeMessage(raw);
  } catch (err) {
    expect(err).toBeInstanceOf(MessageDecodeError);
    return err as MessageDecodeError;
  }
  throw new Error(`expected ${raw} to be refused`);
}

describe('decodeMessage', () => {
  it('decodes a string or a Buffer', () => {
    expect(decodeMessage('{"event":"a","data":{"x":1}}')).toEqual({ event: 'a', data: { x: 1 } });
    expect(decodeMessage(Buffer.from('{"event":"a","data":[]}'))).toEqual({ event: 'a', data: [] });
  });

  it('ignores members other than event, data and id', () => {
    expect(decodeMessage('{"event":"a","data":{},"x":7,"seq":1}')).toEqual({
      event: 'a',
      data: {},
    });
  });

  it('keeps a well-formed meta (trace context) and ignores a malformed one', () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    expect(
      decodeMessage(JSON.stringify({ event: 'a', data: {}, id: 3, meta: { traceparent } })),
    ).toEqual({ event: 'a', data: {}, id: 3, meta: { traceparent } });
    for (const meta of ['x', 5, null, [], { traceparent: 7 }, { traceparent: 'y'.repeat(129) }]) {
      expect(decodeMessage(JSON.stringify({ event: 'a', data: {}, meta }))).toEqual({
        event: 'a',
        data: {},
      });
    }
  });

  it('refuses text that is not JSON', () => {
    const err = decodeError('not json');
    expect(err.code).toBe('invalid_json');
    expect(err.message).toMatch(/not valid JSON/);
    expect(err.name).toBe('MessageDecodeError');
  });

  it('refuses JSON that is not an object', () => {
    expect(decodeError('[1,2]').message).toMatch(/is an array, not a JSON object/);
    for (const raw of ['[1,2]', 'null', '"x"', '42', 'true']) {
      expect(decodeError(raw).code).toBe('invalid_envelope');
    }
  });

  it('refuses a missing event', () => {
    const err = decodeError('{"data":{}}');
    expect(err.code).toBe('invalid_event');
    expect(err.message).toMatch(/no "event" member/);
  });

  it('refuses an event that is not a string', () => {
    const err = decodeError('{"event":5,"data":{}}');
    expect(err.code).toBe('invalid_event');
    expect(err.message).toMatch(/is a number, not a string/);
    expect(decodeError('{"event":null,"data":{}}').message).toMatch(/is null/);
  });

  it('refuses an event name outside ^[A-Za-z0-9._-]+$', () => {
    for (const event of ['', 'a b', 'a/b', 'ä', 'x\n']) {
      const err = decodeError(JSON.stringify({ event, data: {} }));
      expect(err.code).toBe('invalid_event');
      expect(err.message).toMatch(/letters, digits/);
    }
  });

  it('refuses a missing data member', () => {
    const err = decodeError('{"event":"a"}');
    expect(err.code).toBe('invalid_data');
    expect(err.message).toMatch(/no "data" member/);
  });

  it('refuses data that is not an object or an array', () => {
    for (const data of ['"s"', '1', 'null', 'false']) {
      const err = decodeError(`{"event":"a","data":${data}}`);
      expect(err.code).toBe('invalid_data');
      expect(err.message).toMatch(/send an object or an array/);
    }
  });

  it('does not take event or data from the prototype chain', () => {
    expect(decodeError('{"__proto__":{"event":"a","data":{}}}').code).toBe('invalid_json');
    const removed = (): unknown => decodeMessage('{"__proto__":{"event":"a","data":{}}}', 'remove');
    expect(removed).toThrow(expect.objectContaining({ code: 'invalid_event' }));
  });
});

describe('decodeMessage and prototype keys', () => {
  function mergeDeep(target: Record<string, unknown>, source: unknown): void {
    if (source === null || typeof source !== 'object') return;
    for (const [key, value] of Object.entries(source)) {
      if (value !== null && typeof value === 'object') {
        const next = (target[key] ??= {}) as Record<string, unknown>;
        mergeDeep(next, value);
      } else {
        target[key] = value;
      }
    }
  }

  it.each([
    ['__proto__', '{"event":"x","data":{"__proto__":{"polluted":"yes"}}}'],
    ['an escaped __proto__', '{"event":"x","data":{"\\u005f_proto__":{"polluted":"yes"}}}'],
    [
      'constructor.prototype',
      '{"event":"x","data":{"constructor":{"prototype":{"polluted":"yes"}}}}',
    ],
  ])('refuses %s by default with invalid_json', (_name, text) => {
    const err = decodeError(text);
    expect(err.code).toBe('invalid_json');
    expect(err.message).toMatch(/"__proto__" or "constructor.prototype"/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it.each([
    ['__proto__', '{"event":"x","data":{"__proto__":{"polluted":"yes"}}}'],
    ['an escaped __proto__', '{"event":"x","data":{"\\u005f_proto__":{"polluted":"yes"}}}'],
    [
      'constructor.prototype',
      '{"event":"x","data":{"constructor":{"prototype":{"polluted":"yes"}}}}',
    ],
  ])(
    "with 'remove', drops %s so a naive deep merge of data cannot pollute prototypes",
    (_name, text) => {
      const { data } = decodeMessage(text, 'remove');
      expect(Object.keys(data)).toEqual([]);
      mergeDeep({}, data);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
  );

  it('accepts a string value "__proto__" and constructor values without a prototype', () => {
    expect(
      decodeMessage('{"event":"x","data":{"name":"__proto__","constructor":{"name":"c"}}}').data,
    ).toEqual({ name: '__proto__', constructor: { name: 'c' } });
  });

  it('with \'remove\', keeps ordinary keys next to a dropped one, and a string value "__proto__"', () => {
    const { data } = decodeMessage(
      '{"event":"x","data":{"__proto__":{"a":1},"name":"__proto__","nested":{"ok":true}}}',
      'remove',
    );
    expect(data).toEqual({ name: '__proto__', nested: { ok: true } });
  });
});

describe('isValidEventName', () => {
  it('follows ^[A-Za-z0-9._-]+$', () => {
    expect(isValidEventName('room.join_2-x')).toBe(true);
    expect(isValidEventName('')).toBe(false);
    expect(isValidEventName('a:b')).toBe(false);
    expect(isValidEventName(1)).toBe(false);
  });
});

describe('request ids (protocol version 1)', () => {
  it('keeps a valid id: a string of 1-64 characters or an integer 0 to 2^53-1', () => {
    for (const id of ['a', 'x'.repeat(64), 0, 7, Number.MAX_SAFE_INTEGER]) {
      expect(decodeMessage(JSON.stringify({ event: 'e', data: {}, id }))).toEqual({
        event: 'e',
        data: {},
        id,
      });
    }
    expect(isValidRequestId(12)).toBe(true);
  });

  it('refuses any other id with invalid_id and no id on the error', () => {
    for (const id of ['', 'x'.repeat(65), -1, 1.5, 2 ** 53, null, true, {}, []]) {
      const err = (() => {
        try {
          decodeMessage(JSON.stringify({ event: 'e', data: {}, id }));
        } catch (e) {
          return e as MessageDecodeError;
        }
        return undefined;
      })();
      expect(err).toBeInstanceOf(MessageDecodeError);
      expect(err).toMatchObject({ code: 'invalid_id', id: undefined });
      expect(isValidRequestId(id)).toBe(false);
    }
  });

  it('puts a valid id on a later decode error, so that the error can answer the request', () => {
    expect(() => decodeMessage('{"event":"bad name","data":{},"id":3}')).toThrow(
      expect.objectContaining({ code: 'invalid_event', id: 3 }),
    );
    expect(() => decodeMessage('{"event":"e","data":1,"id":"q"}')).toThrow(
      expect.objectContaining({ code: 'invalid_data', id: 'q' }),
    );
  });

  it('decodes control events only when asked, with rid on $ack and $nack', () => {
    expect(() => decodeMessage('{"event":"$hello","data":{"v":1}}')).toThrow(
      expect.objectContaining({ code: 'invalid_event' }),
    );
    expect(decodeMessage('{"event":"$hello","data":{"v":1}}', 'error', true)).toEqual({
      event: '$hello',
      data: { v: 1 },
    });
    expect(decodeMessage('{"event":"$ack","rid":"r1","data":5}', 'error', true)).toEqual({
      event: '$ack',
      data: 5,
      rid: 'r1',
    });
    expect(() => decodeMessage('{"event":"$ack","data":5}', 'error', true)).toThrow(
      expect.objectContaining({ code: 'invalid_id' }),
    );
    expect(() => decodeMessage('{"event":"$welcome","data":{}}', 'error', true)).toThrow(
      expect.objectContaining({ code: 'invalid_event' }),
    );
  });

  it('serialises an answer with any JSON value, null for undefined', () => {
    expect(prepareAnswer('add', 7, 5)).toBe('{"event":"add","id":7,"data":5}');
    expect(prepareAnswer('add', 'a', undefined)).toBe('{"event":"add","id":"a","data":null}');
    expect(() => prepareAnswer('add', 1, { n: 1n })).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_WS_INVALID_DATA' }),
    );
  });
});
