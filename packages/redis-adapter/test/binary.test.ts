// Bytes across instances: two servers share one Redis; JSON (version 0) and binary
// (version 1) clients sit in one room on both. A binary broadcast reaches every version 1
// member on both instances byte for byte (no base64: the Redis stream keeps the frame's
// bytes), JSON reaches everyone, a recovery on the other instance and `$history` replay the
// binary messages as binary frames. Bytes sent to one client of the other instance cross
// as they are too.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { RESP_TYPES, createClient } from 'redis';
import WebSocket from 'ws';
import type { Server } from '@pkg/core';
import { decodeBinaryFrame, encodeBinaryFrame, type BinaryFrame } from '@pkg/wire';
import type { RedisAdapter } from '../src/index';
import { sharedRedisAvailableSync, startHistoryServer, waitFor } from './helpers';

const describeRedis = sharedRedisAvailableSync('@pkg/redis-adapter binary test')
  ? describe
  : describe.skip;

type Got =
  | { readonly kind: 'text'; readonly m: Record<string, unknown> }
  | { readonly kind: 'binary'; readonly f: BinaryFrame };

/** A raw client: version 1 (`pkg.v1` and `$hello`) or 0; keeps what it gets, in order. */
class Peer {
  readonly got: Got[] = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (raw: Buffer, isBinary) => {
      if (!isBinary) {
        this.got.push({ kind: 'text', m: JSON.parse(String(raw)) as Record<string, unknown> });
        return;
      }
      const read = decodeBinaryFrame(new Uint8Array(raw));
      if (read.ok) this.got.push({ kind: 'binary', f: read.frame });
    });
  }

  static async open(url: string, version: 0 | 1): Promise<Peer> {
    const ws = new WebSocket(url, version === 1 ? ['pkg.v1'] : []);
    const peer = new Peer(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    if (version === 1) {
      ws.send(JSON.stringify({ event: '$hello', data: { v: 1 } }));
      await waitFor(() => peer.texts().some((m) => m['event'] === '$welcome'), '$welcome');
    }
    return peer;
  }

  texts(): Array<Record<string, unknown>> {
    return this.got.flatMap((g) => (g.kind === 'text' ? [g.m] : []));
  }

  frames(): BinaryFrame[] {
    return this.got.flatMap((g) => (g.kind === 'binary' ? [g.f] : []));
  }

  async request(event: string, data: unknown, id: string): Promise<Record<string, unknown>> {
    this.ws.send(JSON.stringify({ event, data, id }));
    await waitFor(() => this.texts().some((m) => m['id'] === id), `the answer to ${id}`);
    return this.texts().find((m) => m['id'] === id)!;
  }
}

const same = (a: Uint8Array | undefined, b: Uint8Array): boolean =>
  a !== undefined && Buffer.from(a).equals(Buffer.from(b));

describeRedis('binary messages across instances (one Redis)', () => {
  const keyPrefix = `binary-${randomBytes(6).toString('hex')}`;
  const admin = createClient({ url: 'redis://127.0.0.1:6379' });
  const peers: Peer[] = [];
  let a: Server;
  let b: Server;

  beforeAll(async () => {
    await admin.connect();
    const options = { room: 'doc:*', size: 10, adapter: { keyPrefix } };
    a = await startHistoryServer(options);
    b = await startHistoryServer(options);
  });

  afterEach(() => {
    for (const p of peers.splice(0)) p.ws.terminate();
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    const keys = await admin.keys(`${keyPrefix}:*`);
    if (keys.length > 0) await admin.del(keys);
    await admin.quit();
  });

  async function open(server: Server, version: 0 | 1, room: string): Promise<Peer> {
    const peer = await Peer.open(`ws://127.0.0.1:${server.getPort()}`, version);
    peers.push(peer);
    const joined = await peer.request('join_room', { room }, 'j');
    expect(joined['event']).not.toBe('error');
    return peer;
  }

  const synced = (): Promise<unknown> =>
    Promise.all([a, b].map((s) => (s.getAdapter() as RedisAdapter).synced()));

  it('a room with history: bytes identical on both instances, JSON for everyone; recovery and $history on the other instance replay them', async () => {
    const room = 'doc:1';
    const a1 = await open(a, 1, room);
    const a0 = await open(a, 0, room);
    const b1 = await open(b, 1, room);
    const b0 = await open(b, 0, room);
    await synced();
    const sent = [new Uint8Array(randomBytes(64 * 1024)), Uint8Array.of(0, 0xf5, 0xff, 0x0a)];
    a.broadcast('doc.update', sent[0]!, { room });
    // Broadcasts of two instances are numbered in the order Redis runs them: B's wait for A's.
    for (const p of [a1, b1]) await waitFor(() => p.frames().length === 1, 'the first frame');
    b.broadcast('doc.note', { text: 'hi' }, { room });
    b.broadcast('doc.update', sent[1]!, { room });
    for (const p of [a1, b1]) await waitFor(() => p.frames().length === 2, 'two binary frames');
    for (const p of [a0, b0, a1, b1]) {
      await waitFor(() => p.texts().some((m) => m['event'] === 'doc.note'), 'the JSON note');
    }
    for (const p of [a1, b1]) {
      expect(p.frames().map((f, i) => same(f.data, sent[i]!))).toEqual([true, true]);
      expect(p.frames().map((f) => f.pos?.offset)).toEqual([1, 3]);
    }
    expect([...a0.frames(), ...b0.frames()]).toEqual([]);
    const epoch = b1.frames()[0]!.pos!.epoch;

    // The stream keeps the frame's bytes: the payload is there as it is, not base64.
    const raw = admin.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
    const streams = await raw.keys(`${keyPrefix}:hist:*:s`);
    expect(streams).toHaveLength(1);
    const entries = (await raw.sendCommand(['XRANGE', String(streams[0]), '-', '+'])) as Array<
      [Buffer, Buffer[]]
    >;
    const kept = entries[0]![1][entries[0]![1].findIndex((f) => String(f) === 'd') + 1]!;
    expect(kept.length).toBeLessThan(sent[0]!.length + 64);
    expect(same(kept.subarray(kept.length - sent[0]!.length), sent[0]!)).toBe(true);

    // A client of A comes back on B, from before the first message.
    const c = await Peer.open(`ws://127.0.0.1:${b.getPort()}`, 1);
    peers.push(c);
    c.ws.send(
      JSON.stringify({ event: 'join_room', data: { room, since: { epoch, offset: 0 } }, id: 'j' }),
    );
    await waitFor(() => c.texts().some((m) => m['event'] === '$recovered'), '$recovered');
    const end = c.got.findIndex((g) => g.kind === 'text' && g.m['event'] === '$recovered');
    const replay = c.got
      .slice(0, end)
      .filter((g) => g.kind === 'binary' || g.m['pos'] !== undefined);
    expect(replay.map((g) => g.kind)).toEqual(['binary', 'text', 'binary']);
    const bytes = replay.flatMap((g) => (g.kind === 'binary' ? [g.f.data] : []));
    expect(bytes.map((d, i) => same(d, sent[i]!))).toEqual([true, true]);
    expect(c.got[end]).toMatchObject({ m: { data: { recovered: true, replayed: 3 } } });

    // $history on A: the binary parts, then the answer that points at them.
    const before = a1.got.length;
    const answer = await a1.request('$history', { room }, 'h');
    const parts = a1.got.slice(before).flatMap((g) => (g.kind === 'binary' ? [g.f] : []));
    expect(parts.map((p) => [p.id, p.pos?.offset])).toEqual([
      ['h', 1],
      ['h', 3],
    ]);
    expect(parts.map((p, i) => same(p.data, sent[i]!))).toEqual([true, true]);
    const messages = (answer['data'] as { messages: Array<Record<string, unknown>> }).messages;
    expect(messages.map((m) => m['binary'] ?? m['data'])).toEqual([0, { text: 'hi' }, 1]);
  });

  it('a room without history: a binary broadcast crosses instances byte for byte', async () => {
    const room = 'plain';
    const a1 = await open(a, 1, room);
    const b1 = await open(b, 1, room);
    const b0 = await open(b, 0, room);
    await synced();
    const payload = new Uint8Array(randomBytes(5000));
    a.broadcast('blob', payload, { room });
    b.broadcast('after', { n: 1 }, { room });
    await waitFor(() => b0.texts().some((m) => m['event'] === 'after'), 'the JSON message');
    await waitFor(() => b1.frames().length === 1 && a1.frames().length === 1, 'the frames');
    expect(same(b1.frames()[0]!.data, payload)).toBe(true);
    expect(same(a1.frames()[0]!.data, payload)).toBe(true);
    expect(b0.frames()).toEqual([]);
  });

  it('bytes sent to one client of the other instance arrive as one binary frame, byte for byte', async () => {
    const room = 'direct';
    const b1 = await open(b, 1, room);
    const b0 = await open(b, 0, room);
    await synced();
    const welcome = b1.texts().find((m) => m['event'] === '$welcome')!;
    const b1Id = String((welcome['data'] as Record<string, unknown>)['clientId']);
    const b0Id = (await b.fetchClientIds({ room })).find((id) => id !== b1Id)!;
    const adapter = a.getAdapter() as RedisAdapter;
    const payload = new Uint8Array(randomBytes(20_000));
    payload.set([0x0a, 0x23, 0x7b], 0); // a newline, '#' and '{' where a header could end
    const frame = encodeBinaryFrame({ event: 'direct', data: payload });

    // Found on B: the frame reaches its client as it is.
    expect(await adapter.forward({ type: 'send', clientId: b1Id, text: frame })).toBe(true);
    await waitFor(() => b1.frames().length === 1, 'the forwarded frame');
    expect(b1.frames()[0]!.event).toBe('direct');
    expect(same(b1.frames()[0]!.data, payload)).toBe(true);

    // The server API: `send` to a client id another instance holds.
    const small = Uint8Array.of(0, 1, 2, 0x0a);
    expect(a.send(b1Id, 'again', small)).toBe(true);
    await waitFor(() => b1.frames().length === 2, 'the frame sent with server.send');
    expect([b1.frames()[1]!.event, same(b1.frames()[1]!.data, small)]).toEqual(['again', true]);

    // A version 0 client takes no binary frame, and nobody holds an unknown id: not found.
    expect(await adapter.forward({ type: 'send', clientId: b0Id, text: frame })).toBe(false);
    expect(await adapter.forward({ type: 'send', clientId: 'nobody', text: frame })).toBe(false);
    // A JSON send after them arrives: nothing was left queued or broken on the way.
    expect(a.send(b0Id, 'json', { ok: true })).toBe(true);
    await waitFor(() => b0.texts().some((m) => m['event'] === 'json'), 'the JSON send');
    expect(b0.frames()).toEqual([]);
    for (const s of [a, b]) expect((s.getAdapter() as RedisAdapter).stats().dropped).toBe(0);
  });
});
