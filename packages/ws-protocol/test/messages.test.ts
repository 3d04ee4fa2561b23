import { afterEach, describe, expect, it } from '@jest/globals';
import { once } from 'node:events';
import type { WebSocket } from 'ws';
import type { Envelope, WsClient } from '../src/index';
import {
  cleanup,
  closed,
  collector,
  nextMessage,
  openClient,
  rawWsClient,
  startServer,
} from './helpers';
import type { TestServer } from './helpers';

afterEach(cleanup);

/** A server plus one connected `ws` client and its server-side WsClient. */
async function connected(options: Parameters<typeof startServer>[0] = {}) {
  const ts = await startServer(options);
  const clients = collector<WsClient>();
  const messages = collector<Envelope>();
  const disconnects = collector<{ id: string; code: number; reason: string }>();
  ts.handler.onConnect(clients.push);
  ts.handler.onMessage((_client, envelope) => messages.push(envelope));
  ts.handler.onDisconnect((client, code, reason) =>
    disconnects.push({ id: client.id, code, reason }),
  );
  const ws = await openClient(ts.url);
  const client = await clients.next();
  return { ts, ws, client, messages, disconnects };
}

async function errorEventFor(ws: WebSocket, text: string): Promise<unknown> {
  const reply = nextMessage(ws);
  ws.send(text);
  return reply;
}

describe('inbound envelopes', () => {
  it('answers invalid_json to __proto__ and constructor.prototype keys by default, and stays open', async () => {
    const { ws, messages } = await connected({ errorReplyInterval: 0 });
    for (const text of [
      '{"event":"chat","data":{"__proto__":{"polluted":1}}}',
      '{"event":"chat","data":{"a":{"constructor":{"prototype":{"polluted":1}}}}}',
    ]) {
      const reply = (await errorEventFor(ws, text)) as { event: string; data: { code: string } };
      expect(reply.event).toBe('error');
      expect(reply.data.code).toBe('invalid_json');
    }
    ws.send('{"event":"chat","data":{"ok":true}}');
    expect(await messages.next()).toEqual({ event: 'chat', data: { ok: true } });
    expect(messages.items).toHaveLength(1);
  });

  it("drops __proto__ and constructor.prototype keys with prototypeKeys 'remove'", async () => {
    const { ws, messages } = await connected({ prototypeKeys: 'remove' });
    ws.send(
      '{"event":"chat","data":{"__proto__":{"polluted":1},"a":{"constructor":{"prototype":{}}},"n":1}}',
    );
    const envelope = await messages.next();
    expect(envelope).toEqual({ event: 'chat', data: { a: {}, n: 1 } });
    expect(Object.hasOwn(envelope.data, '__proto__')).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('decodes a valid envelope and hands it to onMessage', async () => {
    const { ws, messages } = await connected();
    ws.send('{"event":"chat.message","data":{"text":"hi"}}');
    expect(await messages.next()).toEqual({ event: 'chat.message', data: { text: 'hi' } });
  });

  const invalid: [string, string, string][] = [
    ['text that is not JSON', 'hello', 'invalid_json'],
    ['JSON that is not an object', '[1,2,3]', 'invalid_envelope'],
    ['JSON null', 'null', 'invalid_envelope'],
    ['a missing event', '{"data":{}}', 'invalid_event'],
    ['an event that is not a string', '{"event":42,"data":{}}', 'invalid_event'],
    ['an event with forbidden characters', '{"event":"chat message!","data":{}}', 'invalid_event'],
    ['an empty event', '{"event":"","data":{}}', 'invalid_event'],
    ['a missing data member', '{"event":"chat"}', 'invalid_data'],
    ['data that is a string', '{"event":"chat","data":"hi"}', 'invalid_data'],
    ['data that is null', '{"event":"chat","data":null}', 'invalid_data'],
  ];

  it.each(invalid)(
    'answers %s with an error event and keeps the connection',
    async (_n, text, code) => {
      const { ts, ws, client, messages } = await connected();
      const reply = (await errorEventFor(ws, text)) as {
        event: string;
        data: { code: string; message: string };
      };
      expect(reply.event).toBe('error');
      expect(reply.data.code).toBe(code);
      expect(reply.data.message.length).toBeGreaterThan(10);
      expect(messages.items).toHaveLength(0);

      // Still open: the next valid message goes through, and the server can still send.
      ws.send('{"event":"after","data":[]}');
      expect(await messages.next()).toEqual({ event: 'after', data: [] });
      expect(ws.readyState).toBe(ws.OPEN);
      expect(ts.handler.getClient(client.id)).toBe(client);
    },
  );

  it('answers a binary message with an error event by default, connection open', async () => {
    const { ws, messages } = await connected();
    const reply = nextMessage(ws);
    ws.send(Buffer.from('{"event":"x","data":{}}'), { binary: true });
    expect(await reply).toEqual({
      event: 'error',
      data: { code: 'binary_not_supported', message: expect.stringMatching(/text message/) },
    });
    ws.send('{"event":"x","data":{}}');
    expect(await messages.next()).toEqual({ event: 'x', data: {} });
  });

  it("closes with 1003 on a binary message when binaryMessages is 'close'", async () => {
    const { ts, ws, disconnects } = await connected({ binaryMessages: 'close' });
    const done = closed(ws);
    ws.send(Buffer.from([1, 2, 3]));
    expect(await done).toEqual({ code: 1003, reason: 'Binary messages are not supported' });
    expect((await disconnects.next()).code).toBe(1003);
    expect(ts.logger.withCode('PKG_ERR_WS_BINARY_NOT_SUPPORTED')).toHaveLength(1);
  });

  it('keeps the connection when an onMessage listener throws, and logs the error', async () => {
    const { ts, ws, messages } = await connected();
    ts.handler.onMessage(() => {
      throw new Error('handler bug');
    });
    ws.send('{"event":"a","data":{}}');
    ws.send('{"event":"b","data":{}}');
    await messages.next();
    expect((await messages.next()).event).toBe('b');
    expect(ts.logger.lines.filter((l) => l.message === 'handler bug')).toHaveLength(2);
    expect(ws.readyState).toBe(ws.OPEN);
  });

  it('exposes handle() and decodeWebSocketFrame() for the same path', async () => {
    const { ts, client, ws, messages } = await connected();
    expect(ts.handler.handle(client, Buffer.from('{"event":"direct","data":{}}'), false)).toBe(
      true,
    );
    expect(await messages.next()).toEqual({ event: 'direct', data: {} });
    const reply = nextMessage(ws);
    expect(ts.handler.handle(client, [Buffer.from('{"ev'), Buffer.from('ent":1}')], false)).toBe(
      false,
    );
    expect(await reply).toMatchObject({ event: 'error', data: { code: 'invalid_event' } });
    expect(ts.handler.decodeWebSocketFrame('{"event":"a","data":[1]}')).toEqual({
      event: 'a',
      data: [1],
    });
    expect(() => ts.handler.decodeWebSocketFrame('nope')).toThrow(
      expect.objectContaining({ name: 'MessageDecodeError', code: 'invalid_json' }),
    );
  });
});

describe('message size', () => {
  it('closes with 1009 on a message over maxPayload', async () => {
    const { ts, ws, disconnects, messages } = await connected({ maxPayload: 1024 });
    const done = closed(ws);
    ws.send(JSON.stringify({ event: 'big', data: { text: 'x'.repeat(2000) } }));
    expect((await done).code).toBe(1009);
    expect((await disconnects.next()).code).toBe(1009);
    expect(messages.items).toHaveLength(0);
    expect(ts.logger.withCode('PKG_ERR_WS_MESSAGE_TOO_LARGE')[0]).toMatchObject({
      context: { maxPayload: 1024 },
    });
  });

  it('defaults to 1 MiB: exactly 1 MiB passes, one byte more closes with 1009', async () => {
    const { ws, messages } = await connected();
    const frame = (size: number): string => {
      const bare = JSON.stringify({ event: 'big', data: { p: '' } });
      return JSON.stringify({ event: 'big', data: { p: 'x'.repeat(size - bare.length) } });
    };
    const exact = frame(1024 * 1024);
    expect(Buffer.byteLength(exact)).toBe(1024 * 1024);
    ws.send(exact);
    expect((await messages.next()).event).toBe('big');

    const done = closed(ws);
    ws.send(frame(1024 * 1024 + 1));
    expect((await done).code).toBe(1009);
  });
});

describe('outbound', () => {
  it('send, sendRaw and sendError reach the client as envelopes', async () => {
    const { ts, ws, client } = await connected();
    let reply = nextMessage(ws);
    expect(ts.handler.send(client.id, 'welcome', { id: client.id })).toBe(true);
    expect(await reply).toEqual({ event: 'welcome', data: { id: client.id } });

    reply = nextMessage(ws);
    expect(ts.handler.sendRaw(client.id, ts.handler.prepareMessage('raw', [1]))).toBe(true);
    expect(await reply).toEqual({ event: 'raw', data: [1] });

    reply = nextMessage(ws);
    expect(ts.handler.sendError(client.id, 'forbidden', 'Not in this room')).toBe(true);
    expect(await reply).toEqual({
      event: 'error',
      data: { code: 'forbidden', message: 'Not in this room' },
    });
  });

  it('sendToMany delivers one serialised message to each open client and counts them', async () => {
    const ts = await startServer();
    const ids = collector<string>();
    ts.handler.onConnect((c) => ids.push(c.id));
    const a = await openClient(ts.url);
    const b = await openClient(ts.url);
    const idA = await ids.next();
    const idB = await ids.next();

    const text = ts.handler.prepareMessage('tick', { n: 1 });
    const got = Promise.all([nextMessage(a), nextMessage(b)]);
    expect(ts.handler.sendToMany(new Set([idA, idB, 'unknown']), text)).toBe(2);
    expect(await got).toEqual([
      { event: 'tick', data: { n: 1 } },
      { event: 'tick', data: { n: 1 } },
    ]);
    expect([...ts.handler.getClients()].map((c) => c.id).sort()).toEqual([idA, idB].sort());
  });

  it('returns false for unknown or closed clients and throws for a bad event or data', async () => {
    const { ts, ws, client, disconnects } = await connected();
    expect(ts.handler.send('nobody', 'x', {})).toBe(false);
    expect(() => ts.handler.send(client.id, 'bad event', {})).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_WS_INVALID_EVENT' }),
    );
    expect(() => ts.handler.send(client.id, 'ok', 'text' as never)).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_WS_INVALID_DATA' }),
    );
    ws.close();
    await disconnects.next();
    expect(ts.handler.send(client.id, 'x', {})).toBe(false);
    expect(ts.handler.sendToMany([client.id], '{}')).toBe(0);
  });

  it('answers client pings with a pong carrying the same data', async () => {
    const { ws } = await connected();
    ws.ping(Buffer.from('are you there'));
    const [data] = (await once(ws, 'pong')) as [Buffer];
    expect(data.toString()).toBe('are you there');
  });

  it('generateAcceptKey follows RFC 6455', async () => {
    const ts = await startServer();
    expect(ts.handler.generateAcceptKey('dGhlIHNhbXBsZSBub25jZQ==')).toBe(
      's3pPLMBiTxaQ9kYGzzhZRbK+xOo=',
    );
  });
});

describe('disconnects', () => {
  it('disconnect() closes with the given code and reason; onDisconnect fires once', async () => {
    const { ts, ws, client, disconnects } = await connected();
    const done = closed(ws);
    expect(ts.handler.disconnect(client.id, 4000, 'kicked')).toBe(true);
    expect(await done).toEqual({ code: 4000, reason: 'kicked' });
    expect(await disconnects.next()).toEqual({ id: client.id, code: 4000, reason: 'kicked' });
    expect(ts.handler.getClient(client.id)).toBeUndefined();
    expect(ts.handler.disconnect(client.id)).toBe(false);
    expect(disconnects.items).toHaveLength(1);
  });

  it('disconnect() checks the close code and reason', async () => {
    const { ts, client } = await connected();
    expect(() => ts.handler.disconnect(client.id, 1006)).toThrow(
      expect.objectContaining({ name: 'TypeError', code: 'PKG_ERR_WS_INVALID_CLOSE_CODE' }),
    );
    expect(() => ts.handler.disconnect(client.id, 1000, 'x'.repeat(200))).toThrow(RangeError);
  });

  it('terminates a client that ignores disconnect() after closeTimeout', async () => {
    const ts = await startServer({ closeTimeout: 30 });
    const clients = collector<WsClient>();
    const gone = collector<{ code: number; reason: string }>();
    ts.handler.onConnect(clients.push);
    ts.handler.onDisconnect((_c, code, reason) => gone.push({ code, reason }));
    const raw = await rawWsClient(ts.port);
    const rawClosed = once(raw.socket, 'close');
    const client = await clients.next();
    ts.handler.disconnect(client.id, 4001, 'go away');
    const payload = await raw.nextFrame(0x8);
    expect(payload.readUInt16BE(0)).toBe(4001);
    // The raw client never answers the close frame: the server terminates it.
    expect(await gone.next()).toEqual({ code: 4001, reason: 'go away' });
    await rawClosed;
    expect(ts.handler.size).toBe(0);
  });

  it('reports a client that resets its connection exactly once, with 1006', async () => {
    const ts = await startServer();
    const clients = collector<WsClient>();
    const gone = collector<number>();
    ts.handler.onConnect(clients.push);
    ts.handler.onDisconnect((_c, code) => gone.push(code));
    const raw = await rawWsClient(ts.port);
    await clients.next();
    raw.socket.resetAndDestroy();
    expect(await gone.next()).toBe(1006);
    expect(ts.handler.size).toBe(0);
    expect(gone.items).toEqual([1006]);
  });

  it('reports a client that resets in the middle of a frame once, with 1006, and keeps serving', async () => {
    const ts = await startServer();
    const clients = collector<WsClient>();
    const gone = collector<number>();
    const messages = collector<Envelope>();
    ts.handler.onConnect(clients.push);
    ts.handler.onDisconnect((_c, code) => gone.push(code));
    ts.handler.onMessage((_c, envelope) => messages.push(envelope));
    const raw = await rawWsClient(ts.port);
    await clients.next();
    // A masked text frame announcing 64 bytes, of which only three arrive.
    raw.socket.write(Buffer.from([0x81, 0x80 | 64, 1, 2, 3, 4, 0x7a, 0x27, 0x66]));
    raw.socket.resetAndDestroy();
    expect(await gone.next()).toBe(1006);
    expect(gone.items).toEqual([1006]);
    expect(messages.items).toHaveLength(0);
    expect(ts.handler.size).toBe(0);

    const ws = await openClient(ts.url);
    ws.send('{"event":"after","data":{}}');
    expect((await messages.next()).event).toBe('after');
  });

  it('survives a protocol violation (an unmasked client frame): ws closes it with 1002', async () => {
    const ts = await startServer();
    const clients = collector<WsClient>();
    const gone = collector<number>();
    ts.handler.onConnect(clients.push);
    ts.handler.onDisconnect((_c, code) => gone.push(code));
    const raw = await rawWsClient(ts.port);
    await clients.next();
    raw.sendFrame(0x1, '{"event":"a","data":{}}', false);
    const close = await raw.nextFrame(0x8);
    expect(close.readUInt16BE(0)).toBe(1002);
    raw.socket.end();
    expect(await gone.next()).toBe(1002);
    expect(ts.logger.withCode('PKG_ERR_WS_PROTOCOL_ERROR')[0]?.context).toMatchObject({
      wsCode: 'WS_ERR_EXPECTED_MASK',
    });
    // The server still accepts and serves others.
    const ws = await openClient(ts.url);
    expect(ws.readyState).toBe(ws.OPEN);
  });

  it('fires onDisconnect once even when a listener throws, and logs it', async () => {
    const { ts, ws, disconnects } = await connected();
    ts.handler.onDisconnect(() => {
      throw new Error('listener bug');
    });
    ws.terminate();
    await disconnects.next();
    expect(disconnects.items).toHaveLength(1);
    expect(ts.logger.lines.some((l) => l.message === 'listener bug')).toBe(true);
  });
});

describe('listener registration', () => {
  it('refuses what is not a function', async () => {
    const ts: TestServer = await startServer();
    for (const register of [
      (x: never) => ts.handler.onConnect(x),
      (x: never) => ts.handler.onMessage(x),
      (x: never) => ts.handler.onDisconnect(x),
      (x: never) => ts.handler.addHandshakeHook(x),
    ]) {
      expect(() => register('nope' as never)).toThrow(
        expect.objectContaining({ name: 'TypeError', code: 'PKG_ERR_WS_INVALID_ARGUMENT' }),
      );
    }
  });
});

describe('protocol version 1 on the handler', () => {
  it('answers a decode error with the valid id and refuses control events unless controlEvents is on', async () => {
    const { ws } = await connected();
    expect(await errorEventFor(ws, '{"event":"chat","data":5,"id":4}')).toMatchObject({
      event: 'error',
      id: 4,
      data: { code: 'invalid_data' },
    });
    expect(await errorEventFor(ws, '{"event":"$hello","data":{"v":1}}')).toMatchObject({
      data: { code: 'invalid_event' },
    });
    const on = await connected({ controlEvents: true });
    on.ws.send('{"event":"$hello","data":{"v":1}}');
    expect(await on.messages.next()).toEqual({ event: '$hello', data: { v: 1 } });
  });

  it('renames a connected client: messages and the disconnect report the new id', async () => {
    const { ts, ws, client, messages, disconnects } = await connected();
    const other = await openClient(ts.url);
    const otherId = [...ts.handler.getClients()].find((c) => c.id !== client.id)!.id;
    expect(ts.handler.renameClient(client.id, otherId)).toBeUndefined();
    expect(ts.handler.renameClient('nobody', 'x')).toBeUndefined();
    const renamed = ts.handler.renameClient(client.id, 'kept-id');
    expect(renamed).toMatchObject({ id: 'kept-id', ip: client.ip });
    expect(ts.handler.getClient(client.id)).toBeUndefined();
    const reply = nextMessage(ws);
    expect(ts.handler.send('kept-id', 'hi', {})).toBe(true);
    expect(await reply).toEqual({ event: 'hi', data: {} });
    ws.send('{"event":"chat","data":{}}');
    await messages.next();
    ws.close(1000);
    expect(await disconnects.next()).toMatchObject({ id: 'kept-id', code: 1000 });
    other.close();
  });
});
