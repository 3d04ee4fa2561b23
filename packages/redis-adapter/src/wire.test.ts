import { describe, expect, it } from '@jest/globals';
import {
  Channels,
  WIRE_VERSION,
  decodeBroadcast,
  decodeReply,
  decodeRequest,
  encodeBroadcast,
  encodeName,
  encodeReply,
  encodeRequest,
} from './wire';

describe('encodeName', () => {
  it('never throws, and gives distinct names distinct channels', () => {
    expect(encodeName('lobby')).toBe('lobby');
    expect(encodeName('a:b/c')).toBe('a%3Ab%2Fc');
    expect(encodeName('x\ud800')).toBe('x%uD800');
    expect(encodeName('\udc00a\ud83d\ude00')).toBe('%uDC00a%F0%9F%98%80');
    // A name spelling the escape itself cannot collide: its "%" is escaped.
    expect(encodeName('x%uD800')).toBe('x%25uD800');
    expect(new Channels('p').room('/', 'x\ud800')).toBe('p:room:%2F:x%uD800');
  });
});

describe('wire format', () => {
  it('round-trips a broadcast and passes the envelope through untouched', () => {
    const text = '{"event":"chat","data":{"text":"line\\nbreak"}}';
    const raw = encodeBroadcast('node-a', ['c1'], text);
    expect(decodeBroadcast(raw)).toEqual({
      ok: true,
      value: { origin: 'node-a', except: ['c1'], text, self: false },
    });
  });

  it('marks a kept message for its origin to deliver, and names history keys in one slot', () => {
    const raw = encodeBroadcast('node-a', [], '{}', { self: true });
    expect(raw).toBe(`{"v":${WIRE_VERSION},"o":"node-a","x":[],"s":1}\n{}`);
    expect(decodeBroadcast(raw)).toEqual({
      ok: true,
      value: { origin: 'node-a', except: [], text: '{}', self: true },
    });
    // Anything but 1 is an ordinary broadcast (the origin ignores its echo).
    expect(decodeBroadcast(`{"v":${WIRE_VERSION},"o":"a","x":[],"s":"1"}\n{}`)).toMatchObject({
      value: { self: false },
    });
    // Braces in names are escaped, so the hash tag is always the whole namespace:room.
    expect(new Channels('p').history('/', 'a}b{')).toEqual({
      meta: 'p:hist:{%2F:a%7Db%7B}:m',
      stream: 'p:hist:{%2F:a%7Db%7B}:s',
    });
  });

  it('carries a trace context in the header, and reads a header without one as before', () => {
    const text = '{"event":"chat","data":{}}';
    const trace = {
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      tracestate: 'k=v',
    };
    const raw = encodeBroadcast('node-a', [], text, { trace });
    expect(decodeBroadcast(raw)).toEqual({
      ok: true,
      value: { origin: 'node-a', except: [], text, self: false, trace },
    });
    // What an instance of the previous release sends (no `t`), and what it would read from
    // this one: the same format version, the trace an ignored extra member.
    expect(raw.startsWith(`{"v":${WIRE_VERSION},"o":"node-a","x":[],"t":`)).toBe(true);
    expect(decodeBroadcast(encodeBroadcast('node-a', [], text))).toEqual({
      ok: true,
      value: { origin: 'node-a', except: [], text, self: false },
    });
  });

  it('carries the publish time in the header, and ignores one that is not a number', () => {
    const raw = encodeBroadcast('node-a', [], '{}', { sentAt: 1_700_000_000_123 });
    expect(raw).toBe(`{"v":${WIRE_VERSION},"o":"node-a","x":[],"ms":1700000000123}\n{}`);
    expect(decodeBroadcast(raw)).toEqual({
      ok: true,
      value: { origin: 'node-a', except: [], text: '{}', self: false, sentAt: 1_700_000_000_123 },
    });
    expect(decodeBroadcast(`{"v":${WIRE_VERSION},"o":"a","x":[],"ms":"soon"}\n{}`)).toEqual({
      ok: true,
      value: { origin: 'a', except: [], text: '{}', self: false },
    });
  });

  it('delivers a broadcast whose trace context is malformed, without the trace', () => {
    for (const t of ['x', 5, null, [], {}, { traceparent: 9 }, { traceparent: 'y'.repeat(500) }]) {
      const raw = `${JSON.stringify({ v: WIRE_VERSION, o: 'a', x: [], t })}\n{"event":"e","data":{}}`;
      expect(decodeBroadcast(raw)).toEqual({
        ok: true,
        value: { origin: 'a', except: [], text: '{"event":"e","data":{}}', self: false },
      });
    }
  });

  it('rejects foreign, malformed and unknown-version messages with a reason', () => {
    expect(decodeBroadcast('hello')).toEqual({ ok: false, reason: 'no header line' });
    expect(decodeBroadcast('[1]\n{}')).toEqual({ ok: false, reason: 'not a JSON object' });
    expect(decodeBroadcast('{"v":2,"o":"a","x":[]}\n{}')).toEqual({
      ok: false,
      reason: 'unknown format version 2',
    });
    expect(decodeBroadcast(`{"v":${WIRE_VERSION},"x":[]}\n{}`)).toEqual({
      ok: false,
      reason: 'no origin node id',
    });
    expect(decodeBroadcast(`{"v":${WIRE_VERSION},"o":"a","x":[1]}\n{}`).ok).toBe(false);
    expect(decodeRequest('{"v":1,"o":"a","id":"1","b":{"kind":"send","clientId":""}}').ok).toBe(
      false,
    );
    expect(decodeReply('{"v":1,"o":"a","id":"1","count":-1}').ok).toBe(false);
  });

  it('refuses a request naming a room or namespace that is not well-formed UTF-16', () => {
    const join = { kind: 'joinRoom', clientId: 'c', room: 'x\ud800', namespace: '/' } as const;
    expect(decodeRequest(encodeRequest('a', 'a:1', join)).ok).toBe(false);
    const count = { kind: 'count', target: { namespace: '/\udc00', room: null } } as const;
    expect(decodeRequest(encodeRequest('a', 'a:2', count)).ok).toBe(false);
    const fine = { kind: 'joinRoom', clientId: 'c', room: 'x😀', namespace: '/' } as const;
    expect(decodeRequest(encodeRequest('a', 'a:3', fine)).ok).toBe(true);
  });

  it('carries a revocation by identity, with a room or for the whole server, and refuses a malformed one', () => {
    const room = { kind: 'revoke', identity: 'ann', room: 'r', namespace: '/' } as const;
    const server = { kind: 'revoke', identity: 'ann', room: null, namespace: null } as const;
    for (const body of [room, server]) {
      const decoded = decodeRequest(encodeRequest('a', 'a:9', body));
      expect(decoded.ok && decoded.value.body).toEqual(body);
    }
    for (const bad of [
      { kind: 'revoke', identity: '', room: null, namespace: null },
      { kind: 'revoke', identity: 'ann', room: 'r', namespace: null },
      { kind: 'revoke', identity: 'ann', room: null, namespace: '/' },
      { kind: 'revoke', identity: 'ann', room: '\ud800', namespace: '/' },
      { kind: 'revoke', identity: 7 },
    ]) {
      expect(decodeRequest(JSON.stringify({ v: 1, o: 'a', id: 'a:1', b: bad })).ok).toBe(false);
    }
  });

  it('round-trips requests and replies', () => {
    const body = { kind: 'joinRoom', clientId: 'c', room: 'r', namespace: '/' } as const;
    expect(decodeRequest(encodeRequest('a', 'a:1', body))).toEqual({
      ok: true,
      value: { origin: 'a', id: 'a:1', body },
    });
    const count = { kind: 'count', target: { namespace: '/x', room: null } } as const;
    expect(decodeRequest(encodeRequest('a', 'a:2', count))).toEqual({
      ok: true,
      value: { origin: 'a', id: 'a:2', body: count },
    });
    expect(decodeReply(encodeReply({ origin: 'b', id: 'a:1', ids: ['x'], found: true }))).toEqual({
      ok: true,
      value: { origin: 'b', id: 'a:1', ids: ['x'], found: true },
    });
  });

  it('carries a cluster query and its answer or error, and refuses a malformed one', () => {
    const body = { kind: 'query', topic: 'admin', payload: { view: 'rooms', limit: 5 } } as const;
    const decoded = decodeRequest(encodeRequest('a', 'a:4', body));
    expect(decoded.ok && decoded.value.body).toEqual(body);
    const noPayload = decodeRequest(JSON.stringify({ v: 1, o: 'a', id: 'a:5', b: { kind: 'query', topic: 't' } })); // prettier-ignore
    expect(noPayload.ok && noPayload.value.body).toEqual({
      kind: 'query',
      topic: 't',
      payload: null,
    });
    for (const bad of [
      { kind: 'query' },
      { kind: 'query', topic: '' },
      { kind: 'query', topic: 3 },
    ]) {
      expect(decodeRequest(JSON.stringify({ v: 1, o: 'a', id: 'a:1', b: bad })).ok).toBe(false);
    }
    const data = { rows: [{ id: 'c1' }], total: 1 };
    expect(decodeReply(encodeReply({ origin: 'b', id: 'a:4', data }))).toEqual({
      ok: true,
      value: { origin: 'b', id: 'a:4', data },
    });
    expect(decodeReply(encodeReply({ origin: 'b', id: 'a:4', error: 'no handler' }))).toEqual({
      ok: true,
      value: { origin: 'b', id: 'a:4', error: 'no handler' },
    });
    expect(decodeReply(JSON.stringify({ v: 1, o: 'b', id: 'a:4', error: 5 })).ok).toBe(false);
  });

  it('percent-encodes names so that no room can pose as another channel', () => {
    const ch = new Channels('p');
    expect(ch.room('/', 'a:b')).toBe('p:room:%2F:a%3Ab');
    expect(ch.room('/:x', 'y')).not.toBe(ch.room('/', 'x:y'));
    expect(ch.namespace('/chat')).toBe('p:ns:%2Fchat');
  });
});
