import { afterEach, describe, expect, it } from '@jest/globals';
import { once } from 'node:events';
import type { Duplex } from 'node:stream';
import type { Envelope, WsClient } from '../src/index';
import { cleanup, closed, collector, openClient, rawWsClient, startServer } from './helpers';
import type { RawWsClient, TestServer } from './helpers';

afterEach(cleanup);

const TEXT = 0x1;
const CLOSE = 0x8;

/** A server whose handler answers every `echo` at once with `{event: "echo", data}`. */
async function echoServer(options: Parameters<typeof startServer>[0] = {}): Promise<TestServer> {
  const ts = await startServer({
    maxMessagesPerSecond: 1_000_000,
    maxBytesPerSecond: 1_000_000_000,
    ...options,
  });
  ts.handler.onMessage((client: WsClient, envelope: Envelope) => {
    if (envelope.event === 'echo') ts.handler.send(client.id, 'echo', envelope.data);
  });
  return ts;
}

/** Writes every text in one write of the client's socket, as a client that pipelines does. */
function pipeline(raw: RawWsClient, texts: readonly string[]): void {
  raw.socket.cork();
  for (const text of texts) raw.sendFrame(TEXT, text);
  raw.socket.uncork();
}

const echo = (n: number): string => JSON.stringify({ event: 'echo', data: { n } });

/** Resolves once the raw client holds `count` frames. */
async function framesUntil(raw: RawWsClient, count: number): Promise<void> {
  while (raw.frames.length < count) await once(raw.socket, 'data');
}

/**
 * Counts the writes the server makes on each accepted socket from now on: its `_write` and
 * `_writev` (where a Writable hands its queued chunks to the system, one call each) are
 * wrapped before the handshake; `writes()` reads the count of the latest socket.
 */
function countWrites(ts: TestServer): { writes: () => number; reset: () => void } {
  let count = 0;
  ts.server.prependListener('upgrade', (_req, socket: Duplex) => {
    const s = socket as Duplex & {
      _write: Duplex['_write'];
      _writev: NonNullable<Duplex['_writev']>;
    };
    const write = s._write.bind(s);
    const writev = s._writev.bind(s);
    s._write = (chunk, encoding, cb) => {
      count += 1;
      write(chunk, encoding, cb);
    };
    s._writev = (chunks, cb) => {
      count += 1;
      writev(chunks, cb);
    };
  });
  return {
    writes: () => count,
    reset: () => {
      count = 0;
    },
  };
}

const parsed = (raw: RawWsClient): { event: string; data: { n?: number; code?: string } }[] =>
  raw.frames.map((f) => JSON.parse(f.payload.toString('utf8')) as never);

describe('answers to one connection within one turn', () => {
  it('leave in one write: ten messages read together are answered in one write, in order', async () => {
    const ts = await echoServer();
    const counter = countWrites(ts);
    const raw = await rawWsClient(ts.port);
    counter.reset(); // the handshake's answer is not counted
    pipeline(
      raw,
      Array.from({ length: 10 }, (_, i) => echo(i)),
    );
    await framesUntil(raw, 10);
    expect(parsed(raw).map((m) => m.data.n)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(counter.writes()).toBe(1);
  });

  it('answer every one of 3,000 messages in flight, in order, across turns and flushes', async () => {
    // 3,000 messages span many turns (at most 32 are handled per turn) and the answers pass
    // the held-bytes mark several times within a turn.
    const ts = await echoServer();
    const counter = countWrites(ts);
    const raw = await rawWsClient(ts.port);
    counter.reset();
    const count = 3000;
    const blob = 'b'.repeat(60); // frames of the raw client stay under 126 bytes
    const texts = Array.from({ length: count }, (_, i) =>
      JSON.stringify({ event: 'echo', data: { n: i, blob } }),
    );
    for (const t of texts) expect(t.length).toBeLessThanOrEqual(125);
    pipeline(raw, texts);
    await framesUntil(raw, count);
    expect(parsed(raw).map((m) => m.data.n)).toEqual(Array.from({ length: count }, (_, i) => i));
    expect(raw.frames.every((f) => f.opcode === TEXT)).toBe(true);
    // One write per turn (at most 32 messages each) and per 64 KiB held, not one per answer.
    expect(counter.writes()).toBeLessThan(count / 10);
  });

  it('keep an error reply in its place among the answers', async () => {
    const ts = await echoServer({ errorReplyInterval: 0 });
    const raw = await rawWsClient(ts.port);
    pipeline(raw, [echo(0), echo(1), '{not json', echo(2), echo(3)]);
    await framesUntil(raw, 5);
    const replies = parsed(raw);
    expect(replies.map((m) => m.event)).toEqual(['echo', 'echo', 'error', 'echo', 'echo']);
    expect(replies[2]!.data.code).toBe('invalid_json');
    expect(replies.filter((m) => m.event === 'echo').map((m) => m.data.n)).toEqual([0, 1, 2, 3]);
  });

  it('text answers of every size arrive as text frames holding exactly the JSON in UTF-8', async () => {
    // Short answers are handed to the socket as bytes, long ones as the string: either way
    // the client must read the same text frame. Multi-byte characters make the byte count
    // differ from the string's length on both sides of the 16 KiB line.
    const ts = await startServer();
    const samples = [
      'é',
      'né 😀 ✓ 中文',
      'x'.repeat(16 * 1024 - 40),
      'é'.repeat(8 * 1024 + 10), // short as a string, over 16 KiB as bytes
      '😀'.repeat(5000),
      'y'.repeat(20 * 1024),
    ];
    ts.handler.onMessage((client, envelope) => {
      if (envelope.event !== 'go') return;
      for (const [i, text] of samples.entries()) ts.handler.send(client.id, 'text', { i, text });
    });
    const ws = await openClient(ts.url);
    const frames: { binary: boolean; bytes: Buffer }[] = [];
    const all = new Promise<void>((resolve) => {
      ws.on('message', (data: Buffer, isBinary: boolean) => {
        frames.push({ binary: isBinary, bytes: data });
        if (frames.length === samples.length) resolve();
      });
    });
    ws.send(JSON.stringify({ event: 'go', data: {} }));
    await all;
    expect(frames.map((f) => f.binary)).toEqual(samples.map(() => false));
    expect(frames.map((f) => f.bytes.toString('utf8'))).toEqual(
      samples.map((text, i) => JSON.stringify({ event: 'text', data: { i, text } })),
    );
  });

  it('a large answer is not held back and keeps its place', async () => {
    const ts = await startServer();
    const big = 'L'.repeat(100 * 1024);
    ts.handler.onMessage((client, envelope) => {
      if (envelope.event !== 'go') return;
      ts.handler.send(client.id, 'small', { n: 0 });
      ts.handler.send(client.id, 'large', { big });
      ts.handler.send(client.id, 'small', { n: 1 });
    });
    const ws = await openClient(ts.url);
    const received: { event: string; data: { n?: number; big?: string } }[] = [];
    const all = new Promise<void>((resolve) => {
      ws.on('message', (raw) => {
        received.push(JSON.parse(String(raw)) as never);
        if (received.length === 3) resolve();
      });
    });
    ws.send(JSON.stringify({ event: 'go', data: {} }));
    await all;
    expect(received.map((m) => m.event)).toEqual(['small', 'large', 'small']);
    expect(received[1]!.data.big).toBe(big);
    expect(received[2]!.data.n).toBe(1);
  });
});

describe('a close right after a burst', () => {
  it('delivers every message sent before disconnect(), then the close frame', async () => {
    const ts = await startServer();
    ts.handler.onMessage((client, envelope) => {
      if (envelope.event !== 'burst') return;
      for (let i = 0; i < 500; i += 1) ts.handler.send(client.id, 'item', { i });
      ts.handler.disconnect(client.id, 4000, 'done');
    });
    const ws = await openClient(ts.url);
    const items: number[] = [];
    ws.on('message', (raw) =>
      items.push((JSON.parse(String(raw)) as { data: { i: number } }).data.i),
    );
    const end = closed(ws);
    ws.send(JSON.stringify({ event: 'burst', data: {} }));
    expect(await end).toEqual({ code: 4000, reason: 'done' });
    expect(items).toEqual(Array.from({ length: 500 }, (_, i) => i));
  });

  it('answers what was read before a close frame in the same write, then closes', async () => {
    const ts = await echoServer();
    const gone = collector<number>();
    ts.handler.onDisconnect((_client, code) => gone.push(code));
    const raw = await rawWsClient(ts.port);
    raw.socket.cork();
    for (let i = 0; i < 20; i += 1) raw.sendFrame(TEXT, echo(i));
    raw.sendFrame(CLOSE, Buffer.from([0x03, 0xe8])); // 1000
    raw.socket.uncork();
    const payload = await raw.nextFrame(CLOSE);
    expect(payload.readUInt16BE(0)).toBe(1000);
    const answers = raw.frames.filter((f) => f.opcode === TEXT);
    expect(
      answers.map((f) => (JSON.parse(String(f.payload)) as { data: { n: number } }).data.n),
    ).toEqual(Array.from({ length: 20 }, (_, i) => i));
    // The close frame came after every answer.
    expect(raw.frames.at(-1)!.opcode).toBe(CLOSE);
    expect(await gone.next()).toBe(1000);
  });

  it('sends nothing after a refusal closes the connection in the same turn', async () => {
    const ts = await startServer();
    let later: boolean | undefined;
    ts.handler.onMessage((client, envelope) => {
      if (envelope.event !== 'bad') return;
      ts.handler.send(client.id, 'before', {});
      ts.handler.disconnect(client.id, 4401, 'refused');
      // The connection is closing: a later send in the same turn is refused.
      later = ts.handler.send(client.id, 'after', {});
    });
    const ws = await openClient(ts.url);
    const events: string[] = [];
    ws.on('message', (raw) => events.push((JSON.parse(String(raw)) as { event: string }).event));
    const end = closed(ws);
    ws.send(JSON.stringify({ event: 'bad', data: {} }));
    expect(await end).toEqual({ code: 4401, reason: 'refused' });
    expect(events).toEqual(['before']);
    expect(later).toBe(false);
  });
});

describe('a client that stops reading while it keeps sending', () => {
  it('is dropped (1013) once its answers pass the send limit, and the budget is logged', async () => {
    const ts = await echoServer({ maxBufferedAmount: 128 * 1024, closeTimeout: 50 });
    const clients = collector<WsClient>();
    const gone = collector<{ id: string; code: number }>();
    ts.handler.onConnect(clients.push);
    ts.handler.onDisconnect((c, code) => gone.push({ id: c.id, code }));
    const raw = await rawWsClient(ts.port);
    const id = (await clients.next()).id;
    raw.socket.pause(); // reads nothing from here on

    // Small requests whose answers are 8 KiB each (small enough to be held within a turn),
    // written in bursts; bounded far above what loopback buffers and the limit hold.
    const ask = JSON.stringify({ event: 'big', data: {} });
    ts.handler.onMessage((client, envelope) => {
      if (envelope.event === 'big') ts.handler.send(client.id, 'big', { blob: 'x'.repeat(8192) });
    });
    let dropped = false;
    void gone.next().then(() => {
      dropped = true;
    });
    for (let burst = 0; burst < 2000 && !dropped; burst += 1) {
      pipeline(
        raw,
        Array.from({ length: 50 }, () => ask),
      );
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(dropped).toBe(true);
    expect(gone.items[0]).toEqual({ id, code: 1013 });
    const drop = await ts.logger.waitForCode('PKG_ERR_WS_SLOW_CONSUMER');
    expect(drop.context).toMatchObject({ clientId: id, closeCode: 1013 });
    expect(Number(drop.context?.bufferedAmount)).toBeGreaterThan(128 * 1024);
    expect(ts.handler.getClient(id)).toBeUndefined();
  });
});
