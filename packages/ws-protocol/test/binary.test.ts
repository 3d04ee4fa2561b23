// Binary frames of protocol version 1 over real sockets: a `ws` client sends frames built by
// @pkg/wire's encoder, the handler decodes them with the one decoder and hands
// `Uint8Array`s to its listeners, refuses malformed ones through the one error door, and
// sends binary frames only to the connections that take them.
import { afterEach, describe, expect, it } from '@jest/globals';
import { once } from 'node:events';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { WebSocket } from 'ws';
import {
  SUBPROTOCOL,
  appendBinarySeq,
  decodeBinaryFrame,
  encodeBinaryFrame,
  encodeBinaryHeader,
  type BinaryFrame,
} from '@pkg/wire';
import type { BinaryEnvelope, Envelope, WsClient } from '../src/index';
import { cleanup, closed, collector, nextMessage, openClient, startServer } from './helpers';

const opened: WebSocket[] = [];
afterEach(async () => {
  for (const ws of opened.splice(0)) ws.terminate();
  await cleanup();
});

type Inbound = Envelope | BinaryEnvelope;

/** A server taking binary frames on `pkg.v1` connections, and one client that offers it. */
async function v1Server(options: Parameters<typeof startServer>[0] = {}) {
  const ts = await startServer({ controlEvents: true, binaryFrames: true, ...options });
  const clients = collector<WsClient>();
  const all = collector<Inbound>();
  const textOnly = collector<Envelope>();
  ts.handler.onConnect(clients.push);
  ts.handler.onMessage((_client, envelope) => all.push(envelope), { binary: true });
  ts.handler.onMessage((_client, envelope) => textOnly.push(envelope));
  const ws = await openV1(ts.url);
  return { ts, ws, client: await clients.next(), clients, all, textOnly };
}

async function openV1(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url, [SUBPROTOCOL]);
  opened.push(ws);
  ws.on('error', () => {});
  await once(ws, 'open');
  return ws;
}

/** The next binary message a client receives, decoded. */
async function nextBinary(ws: WebSocket): Promise<BinaryFrame> {
  for (;;) {
    const [raw, isBinary] = (await once(ws, 'message')) as [Buffer, boolean];
    if (!isBinary) continue;
    const read = decodeBinaryFrame(raw);
    if (!read.ok) throw new Error(read.message);
    return read.frame;
  }
}

const bytes = (n: number, fill?: number): Uint8Array =>
  fill === undefined
    ? Uint8Array.from({ length: n }, (_, i) => (i * 31 + 7) & 0xff)
    : new Uint8Array(n).fill(fill);

describe('inbound binary frames (binaryFrames on)', () => {
  it('hands a binary message to the binary listeners as a Uint8Array, in order with text', async () => {
    const { ws, all, textOnly } = await v1Server();
    const payload = bytes(5000);
    ws.send('{"event":"before","data":{}}');
    ws.send(encodeBinaryFrame({ event: 'file.put', id: 3, data: payload }));
    ws.send(encodeBinaryFrame({ event: 'empty', data: new Uint8Array(0) }));
    ws.send('{"event":"after","data":[]}');
    expect((await all.next()).event).toBe('before');
    const got = (await all.next()) as BinaryEnvelope;
    expect(got.event).toBe('file.put');
    expect(got.id).toBe(3);
    expect(got.data).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(got.data).equals(Buffer.from(payload))).toBe(true);
    const empty = (await all.next()) as BinaryEnvelope;
    expect(empty).toMatchObject({ event: 'empty' });
    expect(empty.data.length).toBe(0);
    expect((await all.next()).event).toBe('after');
    // The text-only listener saw the two text messages and nothing else.
    expect(textOnly.items.map((e) => e.event)).toEqual(['before', 'after']);
  });

  it('takes $ack with a rid (controlEvents on) and ignores seq and pos a client sends', async () => {
    const { ws, all } = await v1Server();
    ws.send(encodeBinaryFrame({ event: '$ack', rid: 'r1', data: Uint8Array.of(1, 2) }));
    ws.send(
      encodeBinaryFrame({
        event: 'x',
        seq: 4,
        rid: 'r2',
        pos: { room: 'a', namespace: '/', epoch: 'e', offset: 1 },
        data: Uint8Array.of(3),
      }),
    );
    const ack = (await all.next()) as BinaryEnvelope;
    expect({ ...ack, data: [...ack.data] }).toEqual({ event: '$ack', rid: 'r1', data: [1, 2] });
    const x = (await all.next()) as BinaryEnvelope;
    expect({ ...x, data: [...x.data] }).toEqual({ event: 'x', data: [3] });
  });

  it('refuses malformed frames through the error door, answering a readable id', async () => {
    const { ws, all } = await v1Server({ errorReplyInterval: 0 });
    const cases: Array<[Uint8Array, Record<string, unknown>]> = [
      [Uint8Array.of(1, 2, 3), { code: 'invalid_binary_frame' }],
      [Uint8Array.of(0xf5, 2, 0, 1, 0, 0, 0, 0, 0x65), { code: 'unsupported_binary_version' }],
      [
        encodeBinaryFrame({ event: 'e', data: bytes(10) }).subarray(0, 15),
        { code: 'invalid_binary_frame' },
      ],
    ];
    const badName = encodeBinaryFrame({ event: 'e', id: 'req-1', data: bytes(3) });
    badName[8] = 0x20; // a space: not an event name
    for (const [frame, data] of cases) {
      const reply = nextMessage(ws);
      ws.send(frame);
      expect(await reply).toMatchObject({ event: 'error', data });
    }
    const reply = nextMessage(ws);
    ws.send(badName);
    expect(await reply).toMatchObject({
      event: 'error',
      id: 'req-1',
      data: { code: 'invalid_event' },
    });
    expect(all.items).toEqual([]);
  });

  it('closes with 1008 after too many malformed frames (they are protocol errors)', async () => {
    const { ws } = await v1Server({ maxProtocolErrors: 3 });
    const done = closed(ws);
    for (let i = 0; i < 5; i += 1) ws.send(Uint8Array.of(0xf5, 1, 0xff, 0, 0, 0, 0, 0));
    expect((await done).code).toBe(1008);
  });

  it('counts binary bytes against the inbound byte budget, the id answered', async () => {
    const { ws, all } = await v1Server({ maxBytesPerSecond: 1000, maxPayload: 2000 });
    const frame = (id: number): Uint8Array =>
      encodeBinaryFrame({ event: 'b', id, data: bytes(900) });
    ws.send(frame(1));
    ws.send(frame(2));
    const reply = nextMessage(ws);
    ws.send(frame(3)); // 3 x ~915 bytes > the 2000-byte burst
    expect(await reply).toMatchObject({
      event: 'error',
      id: 3,
      data: { code: 'too_many_messages' },
    });
    expect(all.items.map((e) => e.id)).toEqual([1, 2]);
  });

  it('refuses $ack in a binary frame without controlEvents, as in text', async () => {
    const ts = await startServer({ binaryFrames: () => true, errorReplyInterval: 0 });
    const got = collector<Inbound>();
    ts.handler.onMessage((_c, e) => got.push(e), { binary: true });
    const ws = await openClient(ts.url);
    const reply = nextMessage(ws);
    ws.send(encodeBinaryFrame({ event: '$ack', rid: 'r', data: bytes(1) }));
    expect(await reply).toMatchObject({ data: { code: 'invalid_event' } });
    ws.send(encodeBinaryFrame({ event: 'ok', data: bytes(1) }));
    expect((await got.next()).event).toBe('ok');
  });
});

describe('binary frames on connections that do not take them', () => {
  it('keeps binary_not_supported when the option is off, even for a valid frame', async () => {
    const ts = await startServer({ controlEvents: true });
    ts.handler.onMessage(
      () => {
        throw new Error('not reached');
      },
      { binary: true },
    );
    const ws = await openV1(ts.url);
    const reply = nextMessage(ws);
    ws.send(encodeBinaryFrame({ event: 'e', data: bytes(4) }));
    expect(await reply).toMatchObject({ data: { code: 'binary_not_supported' } });
  });

  it('keeps binary_not_supported (or 1003) on a version 0 connection with the option on', async () => {
    const ts = await startServer({ controlEvents: true, binaryFrames: true });
    const v0 = await openClient(ts.url); // no pkg.v1 offered
    const reply = nextMessage(v0);
    v0.send(encodeBinaryFrame({ event: 'e', data: bytes(4) }));
    expect(await reply).toMatchObject({ data: { code: 'binary_not_supported' } });

    const closing = await startServer({
      controlEvents: true,
      binaryFrames: true,
      binaryMessages: 'close',
    });
    const other = await openClient(closing.url);
    const done = closed(other);
    other.send(encodeBinaryFrame({ event: 'e', data: bytes(4) }));
    expect((await done).code).toBe(1003);
  });

  it('asks a binaryFrames function per client; one that throws means no', async () => {
    const ts = await startServer({
      binaryFrames: (client) => {
        if (client.data['explode']) throw new Error('boom');
        return client.data['v1'] === true;
      },
      errorReplyInterval: 0,
    });
    const seen = collector<Inbound>();
    ts.handler.onConnect((client) => {
      if (ts.handler.size === 1) client.data['v1'] = true;
      else client.data['explode'] = true;
    });
    ts.handler.onMessage((_c, e) => seen.push(e), { binary: true });
    const yes = await openClient(ts.url);
    await new Promise((r) => setTimeout(r, 20));
    const no = await openClient(ts.url);
    await new Promise((r) => setTimeout(r, 20));
    yes.send(encodeBinaryFrame({ event: 'yes', data: bytes(2) }));
    expect((await seen.next()).event).toBe('yes');
    const reply = nextMessage(no);
    no.send(encodeBinaryFrame({ event: 'no', data: bytes(2) }));
    expect(await reply).toMatchObject({ data: { code: 'binary_not_supported' } });
    expect(ts.logger.lines.some((l) => l.message === 'boom')).toBe(true);
  });
});

describe('outbound binary frames', () => {
  it('sends a prebuilt frame, or its header and payload, to a version 1 client', async () => {
    const { ts, ws, client } = await v1Server();
    const payload = bytes(70_000);
    expect(ts.handler.takesBinary(client.id)).toBe(true);
    expect(
      ts.handler.sendBinary(client.id, encodeBinaryFrame({ event: 'a', seq: 1, data: payload })),
    ).toBe(true);
    const first = await nextBinary(ws);
    expect(first.seq).toBe(1);
    expect(Buffer.from(first.data).equals(Buffer.from(payload))).toBe(true);
    const header = encodeBinaryHeader({ event: 'b', id: 'q' }, payload.length);
    expect(ts.handler.sendBinary(client.id, [header, payload])).toBe(true);
    const second = await nextBinary(ws);
    expect(second).toMatchObject({ event: 'b', id: 'q' });
    expect(Buffer.from(second.data).equals(Buffer.from(payload))).toBe(true);
  });

  it('never sends a binary frame to a version 0 client: skipped and counted', async () => {
    const { ts, ws, client, clients } = await v1Server();
    const v0 = await openClient(ts.url);
    const v0Client = await clients.next();
    let v0Got = 0;
    v0.on('message', () => (v0Got += 1));
    const frame = encodeBinaryFrame({ event: 'room.update', data: bytes(100) });
    expect(ts.handler.takesBinary(v0Client.id)).toBe(false);
    expect(ts.handler.sendBinary(v0Client.id, frame)).toBe(false);
    expect(ts.handler.skippedBinary).toBe(1);
    expect(ts.handler.sendBinaryToMany([client.id, v0Client.id, 'nobody'], frame)).toBe(1);
    expect(ts.handler.skippedBinary).toBe(2);
    expect((await nextBinary(ws)).event).toBe('room.update');
    ts.handler.send(v0Client.id, 'text', {});
    await once(v0, 'message');
    expect(v0Got).toBe(1); // only the text
  });

  it('refuses bytes that are not a binary frame', async () => {
    const { ts, client } = await v1Server();
    expect(() => ts.handler.sendBinary(client.id, Uint8Array.of(0x7b))).toThrow(TypeError);
    expect(() => ts.handler.sendBinary(client.id, 'text' as never)).toThrow(TypeError);
    expect(() => ts.handler.sendBinary(client.id, [Uint8Array.of(0xf5)] as never)).toThrow(
      TypeError,
    );
    expect(() =>
      ts.handler.sendBinaryToMany([client.id], [Uint8Array.of(1), Uint8Array.of(2)]),
    ).toThrow(TypeError);
  });

  it('sends [header, payload] intact with permessage-deflate too, between text messages', async () => {
    const ts = await startServer({
      controlEvents: true,
      binaryFrames: true,
      perMessageDeflate: { threshold: 0 },
    });
    const clients = collector<WsClient>();
    ts.handler.onConnect(clients.push);
    const ws = new WebSocket(ts.url, [SUBPROTOCOL], { perMessageDeflate: true });
    opened.push(ws);
    await once(ws, 'open');
    const client = await clients.next();
    const got: Array<string | BinaryFrame> = [];
    ws.on('message', (raw: Buffer, isBinary: boolean) => {
      if (!isBinary) got.push(raw.toString('utf8'));
      else {
        const read = decodeBinaryFrame(raw);
        got.push(read.ok ? read.frame : read.message);
      }
    });
    const payload = bytes(100_000);
    const header = encodeBinaryHeader({ event: 'z' }, payload.length);
    ts.handler.send(client.id, 'before', {});
    ts.handler.sendBinary(client.id, [appendBinarySeq(header, 1), payload]);
    ts.handler.send(client.id, 'after', {});
    ts.handler.sendBinary(client.id, [appendBinarySeq(header, 2), payload]);
    while (got.length < 4) await new Promise((r) => setTimeout(r, 5));
    expect(got[0]).toBe('{"event":"before","data":{}}');
    expect(got[2]).toBe('{"event":"after","data":{}}');
    for (const [i, seq] of [
      [1, 1],
      [3, 2],
    ] as const) {
      const frame = got[i] as BinaryFrame;
      expect(frame.seq).toBe(seq);
      expect(Buffer.from(frame.data).equals(Buffer.from(payload))).toBe(true);
    }
  });

  it('echoes 64 KiB through a listener: equal bytes back, as one frame each way', async () => {
    const { ts, ws } = await v1Server({ maxPayload: 1 << 20 });
    ts.handler.onMessage(
      (client, envelope) => {
        if (!(envelope.data instanceof Uint8Array) || envelope.id === undefined) return;
        const { event, id, data } = envelope;
        ts.handler.sendBinary(client.id, [encodeBinaryHeader({ event, id }, data.length), data]);
      },
      { binary: true },
    );
    const payload = bytes(64 * 1024);
    ws.send(encodeBinaryFrame({ event: 'echo', id: 9, data: payload }));
    const back = await nextBinary(ws);
    expect(back.id).toBe(9);
    expect(Buffer.from(back.data).equals(Buffer.from(payload))).toBe(true);
  });
});

/** A TCP relay in front of `port` that counts the bytes of each direction. */
async function countingRelay(port: number): Promise<{
  port: number;
  up: () => number;
  down: () => number;
  close: () => Promise<void>;
}> {
  let up = 0;
  let down = 0;
  const sockets: Socket[] = [];
  const relay: Server = createServer((inbound) => {
    const outbound = connect(port, '127.0.0.1');
    sockets.push(inbound, outbound);
    inbound.on('data', (chunk: Buffer) => (up += chunk.length));
    outbound.on('data', (chunk: Buffer) => (down += chunk.length));
    inbound.pipe(outbound);
    outbound.pipe(inbound);
    inbound.on('error', () => outbound.destroy());
    outbound.on('error', () => inbound.destroy());
  });
  relay.listen(0, '127.0.0.1');
  await once(relay, 'listening');
  return {
    port: (relay.address() as AddressInfo).port,
    up: () => up,
    down: () => down,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => relay.close(() => resolve()));
    },
  };
}

describe('bytes on the wire', () => {
  it('a 64 KiB payload costs at most 64 KiB + 64 B each way (counted by a TCP relay)', async () => {
    const ts = await startServer({ controlEvents: true, binaryFrames: true, maxPayload: 1 << 20 });
    const got = collector<BinaryEnvelope>();
    ts.handler.onMessage((_c, e) => got.push(e as BinaryEnvelope), { binary: true });
    const relay = await countingRelay(ts.port);
    try {
      const ws = await openV1(`ws://127.0.0.1:${relay.port}`);
      const client = [...ts.handler.getClients()][0]!;
      await new Promise((r) => setTimeout(r, 50)); // the handshake's bytes are counted first
      const [up0, down0] = [relay.up(), relay.down()];
      const payload = bytes(64 * 1024, 0xff);
      // Client -> server: event name, a request id; the frame is masked (4 more bytes).
      ws.send(encodeBinaryFrame({ event: 'doc.update', id: 12345, data: payload }));
      const received = await got.next();
      expect(received.data.length).toBe(64 * 1024);
      while (relay.up() - up0 < 64 * 1024) await new Promise((r) => setTimeout(r, 5));
      const upCost = relay.up() - up0;
      // Server -> client: the same with a pos and a seq, the members a room message carries.
      const frame = encodeBinaryFrame({
        event: 'doc.update',
        seq: 1_000_000,
        pos: { room: 'doc:1', namespace: '/', epoch: 'k3', offset: 77 },
        data: payload,
      });
      ts.handler.sendBinary(client.id, frame);
      const back = await nextBinary(ws);
      expect(Buffer.from(back.data).equals(Buffer.from(payload))).toBe(true);
      const downCost = relay.down() - down0;
      // The same with the header built once and the seq appended per receiver: two
      // fragments of one message (two more bytes), the payload bytes shared, not copied.
      const down1 = relay.down();
      const shared = encodeBinaryHeader(
        { event: 'doc.update', pos: { room: 'doc:1', namespace: '/', epoch: 'k3', offset: 78 } },
        payload.length,
      );
      ts.handler.sendBinary(client.id, [appendBinarySeq(shared, 1_000_001), payload]);
      const again = await nextBinary(ws);
      expect(again.seq).toBe(1_000_001);
      expect(Buffer.from(again.data).equals(Buffer.from(payload))).toBe(true);
      const fragmentsCost = relay.down() - down1;
      expect(fragmentsCost).toBe(downCost + 2);
      expect(fragmentsCost).toBeLessThanOrEqual(64 * 1024 + 64);
      expect(upCost).toBeGreaterThanOrEqual(64 * 1024);
      expect(upCost).toBeLessThanOrEqual(64 * 1024 + 64);
      expect(downCost).toBeGreaterThanOrEqual(64 * 1024);
      expect(downCost).toBeLessThanOrEqual(64 * 1024 + 64);
      // For comparison, the same bytes as base64 in a JSON text frame cost a third more.
      expect(Buffer.from(payload).toString('base64').length).toBeGreaterThan(87_000);
      ws.terminate();
    } finally {
      await relay.close();
    }
  });
});
