// Binary messages against a small real `ws` server written here (not @pkg/core): it speaks
// `$hello` / `$welcome` and the binary frame of @pkg/wire, so the client's encoder and
// decoder meet the same codec the server uses. Bytes in, bytes out, one frame each.
import { afterEach, describe, expect, it } from '@jest/globals';
import { once } from 'node:events';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import {
  SUBPROTOCOL,
  decodeBinaryFrame,
  encodeAnswer,
  encodeBinaryFrame,
  encodeEnvelope,
  type BinaryFrame,
} from '@pkg/wire';
import {
  Client,
  ClientError,
  type ClientOptions,
  type DefaultEvents,
  type EventsMap,
} from '../src/index';

/** What the test server received: text envelopes parsed, binary frames decoded. */
type Received = { text: Record<string, unknown> } | { frame: BinaryFrame };

interface TinyServer {
  url: string;
  port: number;
  received: Received[];
  /** The server side of the latest connection. */
  socket: () => WebSocket;
  /** Resolves with the next thing the server receives. */
  next: () => Promise<Received>;
  close: () => Promise<void>;
}

const stops: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/**
 * A version 1 server in a few lines: selects `pkg.v1`, answers `$hello` with `$welcome`,
 * echoes a binary request (`echo`) as a binary answer with its `id`, answers `size` with
 * the byte count as JSON, and records everything else.
 */
async function tinyServer(): Promise<TinyServer> {
  const wss = new WebSocketServer({
    port: 0,
    host: '127.0.0.1',
    handleProtocols: (offered) => (offered.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
  });
  await once(wss, 'listening');
  const received: Received[] = [];
  const waiters: Array<(r: Received) => void> = [];
  let latest: WebSocket | undefined;
  const record = (r: Received): void => {
    const w = waiters.shift();
    if (w) w(r);
    else received.push(r);
  };
  wss.on('connection', (ws) => {
    latest = ws;
    ws.on('message', (raw: Buffer, isBinary: boolean) => {
      if (!isBinary) {
        const text = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
        if (text['event'] === '$history' && text['id'] !== undefined) {
          // Two kept binary messages: their bytes first (parts with the id and a pos), then
          // the JSON answer that lists them by their index among the parts.
          const id = text['id'] as number;
          const pos = (offset: number) => ({ room: 'doc:1', namespace: '/', epoch: 'e', offset });
          ws.send(
            encodeBinaryFrame({ event: 'doc.update', id, pos: pos(2), data: Uint8Array.of(2) }),
          );
          ws.send(
            encodeBinaryFrame({ event: 'doc.update', id, pos: pos(3), data: Uint8Array.of(3, 3) }),
          );
          ws.send(
            encodeAnswer('$history', id, {
              messages: [
                { event: 'note', data: { text: 'json' }, pos: pos(1) },
                { event: 'doc.update', pos: pos(2), binary: 0 },
                { event: 'doc.update', pos: pos(3), binary: 1 },
                { event: 'doc.update', pos: pos(4), binary: 2 }, // its part never came
              ],
              position: { offset: 4, epoch: 'e' },
              complete: true,
            }),
          );
          return;
        }
        if (text['event'] === '$hello') {
          ws.send(
            encodeEnvelope('$welcome', { v: 1, clientId: 'c1', heartbeat: null, resumed: false }),
          );
          return;
        }
        record({ text });
        return;
      }
      const read = decodeBinaryFrame(raw);
      if (!read.ok) throw new Error(`the client sent a bad frame: ${read.message}`);
      const { frame } = read;
      if (frame.event === 'echo' && frame.id !== undefined) {
        ws.send(encodeBinaryFrame({ event: 'echo', id: frame.id, data: frame.data }));
      } else if (frame.event === 'size' && frame.id !== undefined) {
        ws.send(encodeAnswer('size', frame.id, { bytes: frame.data.length }));
      } else record({ frame });
    });
  });
  const { port } = wss.address() as AddressInfo;
  const server: TinyServer = {
    url: `ws://127.0.0.1:${port}`,
    port,
    received,
    socket: () => latest!,
    next: () => {
      const r = received.shift();
      return r ? Promise.resolve(r) : new Promise((resolve) => waiters.push(resolve));
    },
    close: async () => {
      for (const c of wss.clients) c.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
  stops.push(server.close);
  return server;
}

function client<E extends EventsMap<E> = DefaultEvents, L extends EventsMap<L> = DefaultEvents>(
  url: string,
  options: ClientOptions = {},
): Client<E, L> {
  const c = new Client<E, L>(url, {
    WebSocket: WebSocket as never,
    reconnection: false,
    ...options,
  });
  stops.push(() => c.disconnect());
  return c;
}

const pattern = (n: number): Uint8Array =>
  Uint8Array.from({ length: n }, (_, i) => (i * 13) & 0xff);
const equal = (a: Uint8Array, b: Uint8Array): boolean => Buffer.from(a).equals(Buffer.from(b));

interface ClientEvents {
  echo: (data: Uint8Array) => Uint8Array;
  size: (data: Uint8Array) => { bytes: number };
  'doc.update': (data: Uint8Array) => void;
  note: (data: { text: string }) => void;
}
interface ServerEvents {
  'doc.update': (data: Uint8Array) => void;
  sign: (data: Uint8Array) => Uint8Array;
}

/** Compile-time checks (tsc -p tsconfig.test.json): the maps type bytes like any data. */
export function typeChecks(c: Client<ClientEvents, ServerEvents>): void {
  c.emit('doc.update', new Uint8Array(1));
  c.emit('doc.update', Buffer.from('a')); // a Buffer is a Uint8Array
  // @ts-expect-error doc.update carries bytes, not an object
  c.emit('doc.update', { text: 'x' });
  // @ts-expect-error note carries an object, not bytes
  c.emit('note', new Uint8Array(1));
  const echoed: Promise<Uint8Array> = c.emitWithAck('echo', new Uint8Array(1));
  // @ts-expect-error the answer of echo is bytes
  const wrong: Promise<string> = c.emitWithAck('echo', new Uint8Array(1));
  void echoed;
  void wrong;
  c.on('doc.update', (data) => void data.byteLength);
  // @ts-expect-error a request of the server for sign is answered with bytes
  c.on('sign', () => 'signed');
}

describe('binary messages of @pkg/client', () => {
  it('emit(event, bytes) sends one binary frame, bytes unchanged (empty, 0x00 and 0xff too)', async () => {
    const server = await tinyServer();
    const c = client<ClientEvents, ServerEvents>(server.url);
    await c.connect();
    expect(c.protocol).toBe(1);
    const payloads = [
      pattern(1000),
      new Uint8Array(0),
      new Uint8Array(70).fill(0),
      new Uint8Array(70).fill(0xff),
    ];
    for (const data of payloads) c.emit('doc.update', data);
    c.emit('note', { text: 'still JSON' });
    for (const data of payloads) {
      const r = await server.next();
      expect('frame' in r && r.frame.event).toBe('doc.update');
      expect('frame' in r && equal(r.frame.data, data)).toBe(true);
    }
    expect(await server.next()).toEqual({ text: { event: 'note', data: { text: 'still JSON' } } });
  });

  it('emitWithAck with bytes: an echo of 64 KiB resolves to equal bytes, a JSON answer to JSON', async () => {
    const server = await tinyServer();
    const c = client<ClientEvents, ServerEvents>(server.url);
    await c.connect();
    const payload = pattern(64 * 1024);
    const back = await c.emitWithAck('echo', payload);
    expect(back).toBeInstanceOf(Uint8Array);
    expect(equal(back, payload)).toBe(true);
    expect(await c.emitWithAck('size', payload)).toEqual({ bytes: 64 * 1024 });
  });

  it('delivers incoming binary frames to listeners as Uint8Array, in seq order, dropping repeats', async () => {
    const server = await tinyServer();
    const c = client<ClientEvents, ServerEvents>(server.url);
    const got: Array<{ data: Uint8Array; info: unknown }> = [];
    c.on('doc.update', (data, info) => void got.push({ data, info }));
    await c.connect();
    const pos = { room: 'doc:1', namespace: '/', epoch: 'e1', offset: 1 };
    const ws = server.socket();
    ws.send(encodeBinaryFrame({ event: 'doc.update', seq: 1, pos, data: pattern(10) }));
    ws.send(encodeBinaryFrame({ event: 'doc.update', seq: 1, pos, data: pattern(10) })); // a repeat
    ws.send(encodeBinaryFrame({ event: 'doc.update', seq: 2, data: new Uint8Array(0) }));
    ws.send(Uint8Array.of(0xf5, 9, 0, 0)); // not a frame this client reads: dropped
    ws.send(encodeEnvelope('doc.update', { json: true }));
    await new Promise((r) => setTimeout(r, 100));
    expect(got).toHaveLength(3);
    expect(got[0]!.data).toBeInstanceOf(Uint8Array);
    expect(equal(got[0]!.data, pattern(10))).toBe(true);
    expect(got[0]!.info).toEqual({ position: pos });
    expect(got[1]!.data.length).toBe(0);
    expect(got[2]!.data).toEqual({ json: true });
  });

  it('history() puts the binary parts that came before the answer into its entries', async () => {
    const server = await tinyServer();
    const c = client<ClientEvents, ServerEvents>(server.url);
    const live: unknown[] = [];
    c.on('doc.update', (data) => void live.push(data));
    await c.connect();
    const answer = await c.history('doc:1');
    expect(answer.messages.map((m) => [m.event, m.pos.offset])).toEqual([
      ['note', 1],
      ['doc.update', 2],
      ['doc.update', 3],
    ]);
    expect(answer.messages[1]!.data).toBeInstanceOf(Uint8Array);
    expect([...(answer.messages[2]!.data as Uint8Array)]).toEqual([3, 3]);
    expect(live).toEqual([]); // the parts are the answer's, not live messages
  });

  it('answers a binary server request with bytes as one binary $ack', async () => {
    const server = await tinyServer();
    const c = client<ClientEvents, ServerEvents>(server.url);
    c.on('sign', (data) => Uint8Array.from(data, (b) => b ^ 0xff));
    await c.connect();
    server
      .socket()
      .send(encodeBinaryFrame({ event: 'sign', rid: 'r7', data: Uint8Array.of(1, 2, 3) }));
    const r = await server.next();
    expect('frame' in r && r.frame.event).toBe('$ack');
    expect('frame' in r && r.frame.rid).toBe('r7');
    expect('frame' in r && [...r.frame.data]).toEqual([0xfe, 0xfd, 0xfc]);
  });

  it('buffers binary emits while disconnected and sends them once connected', async () => {
    const server = await tinyServer();
    const c = client<ClientEvents, ServerEvents>(server.url);
    c.emit('doc.update', pattern(5));
    const ack = c.emitWithAck('echo', pattern(6));
    await c.connect();
    const r = await server.next();
    expect('frame' in r && equal(r.frame.data, pattern(5))).toBe(true);
    expect(equal(await ack, pattern(6))).toBe(true);
  });

  it('refuses bytes on a version 0 connection and bad names before sending', async () => {
    const server = await tinyServer();
    const c = client<ClientEvents, ServerEvents>(server.url, { protocol: 'basic' });
    await c.connect();
    expect(c.protocol).toBe(0);
    expect(() => c.emit('doc.update', pattern(3))).toThrow(ClientError);
    await expect(c.emitWithAck('echo', pattern(3))).rejects.toMatchObject({
      code: 'PKG_ERR_CLIENT_REMOTE',
    });
    const loose = client(server.url);
    expect(() => loose.emit('bad name', pattern(1))).toThrow(TypeError);
  });
});

describe('bytes on the wire', () => {
  it('client.emit of a 64 KiB payload costs at most 64 KiB + 64 B (counted by a TCP relay)', async () => {
    const server = await tinyServer();
    let up = 0;
    let counting = false;
    const pipes: Socket[] = [];
    const relay = createServer((inbound) => {
      const outbound = connect(server.port, '127.0.0.1');
      pipes.push(inbound, outbound);
      inbound.on('data', (chunk: Buffer) => {
        if (counting) up += chunk.length;
      });
      inbound.pipe(outbound);
      outbound.pipe(inbound);
      inbound.on('error', () => outbound.destroy());
      outbound.on('error', () => inbound.destroy());
    });
    relay.listen(0, '127.0.0.1');
    await once(relay, 'listening');
    stops.push(
      () =>
        new Promise<void>((resolve) => {
          for (const p of pipes) p.destroy();
          relay.close(() => resolve());
        }),
    );
    const c = client<ClientEvents, ServerEvents>(
      `ws://127.0.0.1:${(relay.address() as AddressInfo).port}`,
    );
    await c.connect();
    await new Promise((r) => setTimeout(r, 50));
    counting = true;
    const payload = new Uint8Array(64 * 1024).fill(0xff);
    c.emit('doc.update', payload);
    const r = await server.next();
    expect('frame' in r && equal(r.frame.data, payload)).toBe(true);
    expect(up).toBeGreaterThanOrEqual(64 * 1024);
    expect(up).toBeLessThanOrEqual(64 * 1024 + 64);
  });
});
