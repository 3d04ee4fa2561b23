// The server sends bytes (protocol version 1, docs/protocol.md "Binary frames"), over real
// sockets: emit, send, broadcast and emitWithAck of a Uint8Array put one binary frame on
// the wire per receiver, bytes unchanged, beside JSON; a version 0 client never gets one
// (skipped and counted); a schema bounds the bytes a handler accepts.
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import WebSocket from 'ws';
import { SocketOn } from '@pkg/decorators';
import { decodeBinaryFrame, encodeBinaryFrame, type BinaryFrame } from '@pkg/wire';
import { SocketController, bytesSchema, type Server } from '../src/index';
import { cleanup, startServer } from './helpers';

afterEach(cleanup);

interface Peer {
  readonly ws: WebSocket;
  readonly id: string;
  readonly texts: Array<Record<string, unknown>>;
  readonly frames: BinaryFrame[];
  /** Raw binary messages as received (to check their length). */
  readonly raw: Buffer[];
}

const peers = new Set<WebSocket>();
afterEach(async () => {
  for (const ws of peers) ws.terminate();
  peers.clear();
});

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i += 1) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

/** A client of version 1 (`pkg.v1` and `$hello`) or of version 0 (neither). */
async function connect(url: string, version: 0 | 1, server: Server): Promise<Peer> {
  const before = new Set(server.getAllClients());
  const ws = new WebSocket(url, version === 1 ? ['pkg.v1'] : []);
  peers.add(ws);
  const peer: Peer = { ws, id: '', texts: [], frames: [], raw: [] };
  ws.on('message', (raw: Buffer, isBinary) => {
    if (!isBinary) {
      peer.texts.push(JSON.parse(String(raw)) as Record<string, unknown>);
      return;
    }
    peer.raw.push(raw);
    const read = decodeBinaryFrame(new Uint8Array(raw));
    if (read.ok) peer.frames.push(read.frame);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  if (version === 1) {
    ws.send(JSON.stringify({ event: '$hello', data: { v: 1 } }));
    await waitFor(() => peer.texts.some((t) => t['event'] === '$welcome'));
  }
  await waitFor(() => server.getAllClients().some((id) => !before.has(id)));
  const id = server.getAllClients().find((c) => !before.has(c))!;
  return { ...peer, id, texts: peer.texts, frames: peer.frames, raw: peer.raw };
}

function same(a: Uint8Array | undefined, b: Uint8Array): boolean {
  return a !== undefined && Buffer.from(a).equals(Buffer.from(b));
}

class Room extends SocketController {
  @SocketOn('join')
  join(clientId: string): { ok: true } {
    this.joinRoom(clientId, 'doc');
    return { ok: true };
  }

  @SocketOn('upload', { schema: bytesSchema({ minLength: 1, maxLength: 4 }) })
  upload(_clientId: string, data: Uint8Array): { size: number } {
    return { size: data.length };
  }
}

async function joined(peer: Peer): Promise<void> {
  peer.ws.send(JSON.stringify({ event: 'join', data: {}, id: 'j' }));
  await waitFor(() => peer.texts.some((t) => t['id'] === 'j'));
}

describe('sending bytes', () => {
  it('emit and send put one binary frame on the wire, bytes unchanged; a version 0 client gets none', async () => {
    const app = new Room();
    const { server, wsUrl } = await startServer([app]);
    const one = await connect(wsUrl, 1, server);
    const zero = await connect(wsUrl, 0, server);
    const bytes = new Uint8Array(randomBytes(3000));
    expect(app.emit(one.id, 'blob', bytes)).toBe(true);
    expect(server.send(one.id, 'blob', Buffer.from('abc'))).toBe(true);
    // Refused for the version 0 client: nothing is sent, the call says so.
    expect(app.emit(zero.id, 'blob', bytes)).toBe(false);
    expect(server.send(zero.id, 'blob', bytes)).toBe(false);
    // JSON still goes to both, in order behind the bytes.
    server.send(one.id, 'after', { n: 1 });
    server.send(zero.id, 'after', { n: 1 });
    await waitFor(() => one.texts.some((t) => t['event'] === 'after'));
    await waitFor(() => zero.texts.some((t) => t['event'] === 'after'));
    expect(one.frames.map((f) => f.event)).toEqual(['blob', 'blob']);
    expect(same(one.frames[0]!.data, bytes)).toBe(true);
    expect(Buffer.from(one.frames[1]!.data).toString()).toBe('abc');
    // The session numbers binary messages with the text ones, in one sequence.
    const seqs = [one.frames[0]!.seq, one.frames[1]!.seq, one.texts.at(-1)!['seq']];
    expect(seqs).toEqual([1, 2, 3]);
    expect(zero.raw).toEqual([]);
    expect(zero.texts.map((t) => t['event'])).toEqual(['after']);
    // One frame per message: the payload plus a header of at most 64 bytes.
    expect(one.raw[0]!.length - bytes.length).toBeLessThanOrEqual(64);
  });

  it('a broadcast of bytes reaches every version 1 member with the same bytes, skips and counts version 0 ones', async () => {
    const app = new Room();
    const { server, wsUrl, base } = await startServer([app], { metrics_path: '/metrics' });
    const a = await connect(wsUrl, 1, server);
    const b = await connect(wsUrl, 1, server);
    const old = await connect(wsUrl, 0, server);
    for (const p of [a, b, old]) await joined(p);
    const bytes = new Uint8Array(randomBytes(64 * 1024));
    // Counts the version 1 members only.
    expect(app.broadcast('doc.update', bytes, '/', 'doc')).toBe(2);
    expect(server.broadcast('doc.update', bytes, { room: 'doc', except: a.id })).toBe(1);
    // JSON to the same room reaches all three.
    expect(server.broadcast('doc.note', { text: 'hi' }, '/', 'doc')).toBe(3);
    for (const p of [a, b, old])
      await waitFor(() => p.texts.some((t) => t['event'] === 'doc.note'));
    expect(a.frames).toHaveLength(1);
    expect(b.frames).toHaveLength(2);
    for (const f of [...a.frames, ...b.frames]) {
      expect(f.event).toBe('doc.update');
      expect(same(f.data, bytes)).toBe(true);
    }
    // Each receiver's own seq, appended to one header.
    expect(b.frames.map((f) => f.seq)).toEqual([1, 2]);
    expect(old.raw).toEqual([]);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/^pkg_ws_binary_skipped_total 2$/m);
  });

  it('emitWithAck of bytes: one binary request with rid; the bytes of a binary $ack resolve it; a version 0 client is refused at send', async () => {
    const { server, wsUrl } = await startServer([new Room()]);
    const one = await connect(wsUrl, 1, server);
    // The client echoes every request in bytes.
    one.ws.on('message', (raw: Buffer, isBinary) => {
      if (!isBinary) return;
      const read = decodeBinaryFrame(new Uint8Array(raw));
      if (!read.ok || read.frame.rid === undefined) return;
      one.ws.send(encodeBinaryFrame({ event: '$ack', rid: read.frame.rid, data: read.frame.data }));
    });
    const bytes = new Uint8Array(randomBytes(64 * 1024));
    const answer = await server.emitWithAck(one.id, 'sign', bytes);
    expect(answer).toBeInstanceOf(Uint8Array);
    expect(same(answer as Uint8Array, bytes)).toBe(true);
    expect(one.frames[0]).toMatchObject({ event: 'sign', rid: expect.any(String) });
    const zero = await connect(wsUrl, 0, server);
    await expect(server.emitWithAck(zero.id, 'sign', bytes)).rejects.toMatchObject({
      code: 'PKG_ERR_CORE_PROTOCOL_UNSUPPORTED',
    });
    expect(zero.raw).toEqual([]);
  });

  it('a bad event name for bytes is a TypeError at the call, nothing sent', async () => {
    const { server, wsUrl } = await startServer([new Room()]);
    const one = await connect(wsUrl, 1, server);
    expect(() => server.send(one.id, 'bad name', Uint8Array.of(1))).toThrow(TypeError);
    expect(() => server.broadcast('x'.repeat(256), Uint8Array.of(1))).toThrow(RangeError);
    await expect(server.emitWithAck(one.id, '$nope', Uint8Array.of(1))).rejects.toThrow(TypeError);
    server.send(one.id, 'after', {});
    await waitFor(() => one.texts.some((t) => t['event'] === 'after'));
    expect(one.raw).toEqual([]);
  });

  it('a pkg.v1 connection that never says $hello is served as version 0: no binary frame either way', async () => {
    const app = new Room();
    const { server, wsUrl } = await startServer([app], { hello_wait: 50 });
    const before = new Set(server.getAllClients());
    const ws = new WebSocket(wsUrl, ['pkg.v1']);
    peers.add(ws);
    const texts: Array<Record<string, unknown>> = [];
    const raw: Buffer[] = [];
    ws.on('message', (data: Buffer, isBinary) => {
      if (isBinary) raw.push(data);
      else texts.push(JSON.parse(String(data)) as Record<string, unknown>);
    });
    await new Promise((resolve) => ws.once('open', resolve));
    await waitFor(() => server.getAllClients().some((id) => !before.has(id)));
    const id = server.getAllClients().find((c) => !before.has(c))!;
    expect(app.emit(id, 'blob', Uint8Array.of(1, 2))).toBe(false);
    expect(server.broadcast('blob', Uint8Array.of(1, 2))).toBe(0);
    ws.send(encodeBinaryFrame({ event: 'upload', data: Uint8Array.of(1) }));
    await waitFor(() => texts.some((t) => t['event'] === 'error'));
    expect(texts.find((t) => t['event'] === 'error')).toMatchObject({
      data: { code: 'binary_not_supported' },
    });
    server.send(id, 'after', {});
    await waitFor(() => texts.some((t) => t['event'] === 'after'));
    expect(raw).toEqual([]);
  });

  it('bytesSchema bounds the bytes a handler accepts; JSON for it is refused', async () => {
    const { server, wsUrl } = await startServer([new Room()]);
    const one = await connect(wsUrl, 1, server);
    const send = (data: Uint8Array, id: number): void =>
      one.ws.send(encodeBinaryFrame({ event: 'upload', id, data }));
    send(Uint8Array.of(1, 2, 3, 4), 1);
    send(Uint8Array.of(1, 2, 3, 4, 5), 2);
    send(new Uint8Array(0), 3);
    one.ws.send(JSON.stringify({ event: 'upload', data: { size: 1 }, id: 4 }));
    await waitFor(() => one.texts.filter((t) => t['id'] !== undefined).length === 4);
    const byId = new Map(one.texts.map((t) => [t['id'], t]));
    expect(byId.get(1)).toMatchObject({ event: 'upload', data: { size: 4 } });
    for (const id of [2, 3, 4]) {
      expect(byId.get(id)).toMatchObject({ event: 'error', data: { code: 'validation_failed' } });
    }
    expect(JSON.stringify(byId.get(2))).toContain('at most 4 bytes');
    expect(() => bytesSchema({ maxLength: -1 })).toThrow(TypeError);
    expect(() => bytesSchema({ minLength: 5, maxLength: 4 })).toThrow(TypeError);
  });
});
