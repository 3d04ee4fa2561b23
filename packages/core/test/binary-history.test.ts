// Bytes through sessions, room history and recovery (docs/protocol.md, "Binary messages in
// requests, answers, sessions and history"), over real sockets: a session's away buffer, a
// room recovery and `$history` replay binary messages as binary frames, bytes unchanged, in
// order with the text ones; server.history gives the bytes back.
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import { RoomsController, type Server } from '../src/index';
import { Peer, closePeers, sameBytes, waitFor } from './binary-kit';
import { cleanup, startServer } from './helpers';

afterEach(async () => {
  closePeers();
  await cleanup();
});

const CHAT = { match: 'chat:*', size: 10, ttl: 60_000 };

async function setUp(): Promise<{ server: Server; url: string }> {
  const { server, wsUrl } = await startServer([new RoomsController()], { history: [CHAT] });
  return { server, url: wsUrl };
}

const bytesOf = (n: number): Uint8Array => new Uint8Array(randomBytes(n));

describe('bytes in sessions', () => {
  it('a session keeps what it missed while away, bytes included, and a resume replays them as binary frames with their seq', async () => {
    const { server, url } = await setUp();
    const a = await Peer.connect(url, { v: 1 });
    const { clientId, session } = a.welcome as { clientId: string; session: string };
    await a.request('join_room', { room: 'plain' }, 'j');
    const first = bytesOf(100);
    server.send(clientId, 'blob', first);
    await waitFor(() => a.frames().length === 1);
    const seen = a.frames()[0]!.seq!;
    await a.drop();
    await waitFor(() => server.getAllClients().length === 0);
    // Away: kept for the session, and counted as delivered.
    const missed = [bytesOf(64 * 1024), bytesOf(1)];
    expect(server.send(clientId, 'blob', missed[0]!)).toBe(true);
    server.send(clientId, 'note', { n: 1 });
    expect(server.broadcast('blob', missed[1]!, { room: 'plain' })).toBe(1);
    const back = await Peer.connect(url, { v: 1, resume: { session, seq: seen } });
    expect(back.welcome).toMatchObject({ resumed: true, clientId });
    await waitFor(() => back.got.length >= 4);
    const replay = back.got.slice(1, 4);
    expect(replay.map((r) => r.kind)).toEqual(['binary', 'text', 'binary']);
    const [x, note, y] = replay;
    if (x?.kind !== 'binary' || y?.kind !== 'binary' || note?.kind !== 'text') return;
    expect(sameBytes(x.f.data, missed[0]!)).toBe(true);
    expect(sameBytes(y.f.data, missed[1]!)).toBe(true);
    expect([x.f.seq, note.m['seq'], y.f.seq]).toEqual([seen + 1, seen + 2, seen + 3]);
  });
});

describe('bytes in room history', () => {
  it('live binary messages carry pos; a recovery and $history replay them as bytes, in order with JSON; a version 0 member gets the JSON only', async () => {
    const { server, url } = await setUp();
    const a = await Peer.connect(url, { v: 1 });
    const old = await Peer.connect(url);
    await a.request('join_room', { room: 'chat:a' }, 'j');
    await old.request('join_room', { room: 'chat:a' }, 'j');
    const sent = [bytesOf(10), bytesOf(64 * 1024)];
    server.broadcast('note', { n: 0 }, { room: 'chat:a' });
    const firstPos = await (async () => {
      await waitFor(() => a.texts().some((m) => m['event'] === 'note'));
      return a.texts().find((m) => m['event'] === 'note')!['pos'] as {
        epoch: string;
        offset: number;
      };
    })();
    // Counted for the version 1 member only.
    expect(server.broadcast('doc.update', sent[0]!, { room: 'chat:a' })).toBe(1);
    server.broadcast('note', { n: 1 }, { room: 'chat:a' });
    server.broadcast('doc.update', sent[1]!, { room: 'chat:a' });
    await waitFor(() => a.frames().length === 2);
    await waitFor(() => old.texts().filter((m) => m['event'] === 'note').length === 2);
    expect(a.frames().map((f) => f.pos)).toEqual([
      { room: 'chat:a', namespace: '/', epoch: firstPos.epoch, offset: 2 },
      { room: 'chat:a', namespace: '/', epoch: firstPos.epoch, offset: 4 },
    ]);
    expect(old.got.filter((r) => r.kind === 'binary')).toEqual([]);

    // A recovery from the first message: the three after it, as they were sent.
    const b = await Peer.connect(url, { v: 1 });
    b.ws.send(
      JSON.stringify({
        event: 'join_room',
        data: { room: 'chat:a', since: { epoch: firstPos.epoch, offset: firstPos.offset } },
        id: 'j',
      }),
    );
    await waitFor(() => b.texts().some((m) => m['event'] === '$recovered'));
    const end = b.got.findIndex((r) => r.kind === 'text' && r.m['event'] === '$recovered');
    const replay = b.got
      .slice(0, end)
      .filter((r) => r.kind === 'binary' || r.m['event'] === 'note');
    expect(replay.map((r) => (r.kind === 'binary' ? r.f.pos?.offset : r.m['pos']))).toEqual([
      2,
      { room: 'chat:a', namespace: '/', epoch: firstPos.epoch, offset: 3 },
      4,
    ]);
    const replayed = replay.flatMap((r) => (r.kind === 'binary' ? [r.f.data] : []));
    expect(replayed.map((d, i) => sameBytes(d, sent[i]!))).toEqual([true, true]);
    expect(b.got[end]).toMatchObject({ m: { data: { recovered: true, replayed: 3 } } });

    // $history: the binary parts first (id and pos), then the one JSON answer.
    const before = b.got.length;
    const answer = await b.request('$history', { room: 'chat:a' }, 'h');
    const parts = b.got.slice(before).flatMap((r) => (r.kind === 'binary' ? [r.f] : []));
    expect(parts.map((p) => [p.event, p.id, p.pos?.offset])).toEqual([
      ['doc.update', 'h', 2],
      ['doc.update', 'h', 4],
    ]);
    expect(parts.map((p, i) => sameBytes(p.data, sent[i]!))).toEqual([true, true]);
    const messages = (answer['data'] as { messages: Array<Record<string, unknown>> }).messages;
    expect(messages.map((m) => [m['event'], m['binary'], m['data']])).toEqual([
      ['note', undefined, { n: 0 }],
      ['doc.update', 0, undefined],
      ['note', undefined, { n: 1 }],
      ['doc.update', 1, undefined],
    ]);
    expect(answer['pos']).toBeUndefined();

    // server.history gives the bytes back.
    const kept = await server.history('chat:a');
    const data = kept.messages.filter((m) => m.event === 'doc.update').map((m) => m.data);
    expect(data.map((d, i) => sameBytes(d, sent[i]!))).toEqual([true, true]);
  });
});
