// Room history and recovery on the real Server over real sockets: positions on broadcasts
// to rooms that keep history, recovery through join_room.since and $hello.positions with
// every answer docs/protocol.md lists, the replay bounds, and room and session recovery
// together. The clients are plain `ws` sockets speaking protocol version 1.
import { afterEach, describe, expect, it } from '@jest/globals';
import { OnConnect, SocketController } from '../src/index';
import { TestClient, cleanup } from './helpers';
import {
  CHAT,
  at,
  join,
  recover,
  request,
  seeOne,
  setup,
  until,
  v1,
  type Message,
} from './history-kit';

afterEach(cleanup);

describe('positions on broadcasts', () => {
  it('numbers every broadcast to a room with history, from 1, in one epoch, and leaves other rooms alone', async () => {
    const { server, url } = await setup();
    const a = await v1(url);
    await join(a, { room: 'chat:1' });
    await join(a, { room: 'plain' }, 'j2');
    server.broadcast('msg', { n: 1 }, { room: 'chat:1' });
    server.broadcast('msg', { n: 2 }, { room: 'chat:1' });
    server.broadcast('msg', { n: 3 }, { room: 'plain' });
    const got = [
      (await a.next('msg')) as Message,
      (await a.next('msg')) as Message,
      (await a.next('msg')) as Message,
    ];
    expect(got[0]!.pos).toEqual({
      room: 'chat:1',
      namespace: '/',
      epoch: expect.any(String),
      offset: 1,
    });
    expect(got[1]!.pos).toEqual({ ...got[0]!.pos, offset: 2 });
    expect(got[2]!.pos).toBeUndefined();
    expect(got.map((m) => m.data['n'])).toEqual([1, 2, 3]);
    // pos and the session's seq coexist on one envelope.
    expect(typeof got[0]!.seq).toBe('number');
  });

  it('reports each position to onPublished while broadcast still returns the local count', async () => {
    const published: unknown[] = [];
    const { server, url } = await setup();
    server.onPublished((p) => published.push(p));
    const a = await v1(url);
    await join(a, { room: 'chat:x' });
    expect(server.broadcast('msg', { n: 1 }, { room: 'chat:x' })).toBe(1);
    const m = (await a.next('msg')) as Message;
    expect(published).toEqual([
      {
        event: 'msg',
        room: 'chat:x',
        namespace: '/',
        position: { epoch: m.pos!.epoch, offset: 1 },
        delivered: 1,
      },
    ]);
  });

  it('keeps the last size messages only', async () => {
    const { server } = await setup();
    for (let n = 1; n <= 8; n += 1) server.broadcast('msg', { n }, { room: 'chat:s' });
    const h = await server.history('chat:s');
    expect(h.messages.map((m) => (m.data as { n: number }).n)).toEqual([4, 5, 6, 7, 8]);
    expect(h.messages.map((m) => m.pos.offset)).toEqual([4, 5, 6, 7, 8]);
    expect(h.position).toEqual({ offset: 8, epoch: h.messages[0]!.pos.epoch });
  });
});

describe('recovery through join_room.since', () => {
  it('replays what was missed, in order, then $recovered true, then live traffic', async () => {
    const { server, url } = await setup();
    const a = await v1(url);
    await join(a, { room: 'chat:r' });
    server.broadcast('msg', { n: 1 }, { room: 'chat:r' });
    const seen = (await a.next('msg')) as Message;
    await a.close();
    server.broadcast('msg', { n: 2 }, { room: 'chat:r' });
    server.broadcast('msg', { n: 3 }, { room: 'chat:r' });

    const b = await v1(url);
    const since = { offset: seen.pos!.offset, epoch: seen.pos!.epoch };
    request(b, 'join_room', { room: 'chat:r', since }, 'j');
    const got = await until(b, '$recovered');
    expect(got.filter((m) => m.event === 'msg').map((m) => m.data['n'])).toEqual([2, 3]);
    expect(got.at(-1)!.data).toEqual({
      room: 'chat:r',
      namespace: '/',
      recovered: true,
      replayed: 2,
      position: { offset: 3, epoch: seen.pos!.epoch },
    });
    server.broadcast('msg', { n: 4 }, { room: 'chat:r' });
    const live = (await b.next('msg')) as Message;
    expect(live.data['n']).toBe(4);
    expect(live.pos!.offset).toBe(4);
  });
});

/** Joins every client to `chat:auto` in OnConnect, as an application that owns membership. */
class AutoJoin extends SocketController {
  @OnConnect()
  enter(clientId: string): void {
    this.joinRoom(clientId, 'chat:auto');
  }
}

describe('recovery through $hello.positions', () => {
  it('recovers a room the application joins the client to in OnConnect', async () => {
    const { server, url } = await setup({}, [new AutoJoin()]);
    const a = await v1(url);
    server.broadcast('msg', { n: 1 }, { room: 'chat:auto' });
    const seen = (await a.next('msg')) as Message;
    await a.close();
    server.broadcast('msg', { n: 2 }, { room: 'chat:auto' });

    const b = await v1(url, { v: 1, positions: [seen.pos] });
    const got = await until(b, '$recovered');
    expect(got.map((m) => m.event)).toEqual(['msg', '$recovered']);
    expect(got[0]!.data).toEqual({ n: 2 });
    expect(got[1]!.data).toMatchObject({ room: 'chat:auto', recovered: true, replayed: 1 });
  });
});

describe('every answer of a recovery', () => {
  it('not_kept: a room without history, and the join still succeeds', async () => {
    const { url } = await setup();
    const { client, before, recovered } = await recover(url, 'plain', { offset: 3, epoch: 'e' });
    expect(before).toEqual([]);
    expect(recovered.data).toEqual({
      room: 'plain',
      namespace: '/',
      recovered: false,
      reason: 'not_kept',
      replayed: 0,
    });
    const answer = (await client.next('join_room')) as Message;
    expect(answer).toMatchObject({ id: 'j', data: { room: 'plain', namespace: '/' } });
  });

  it('epoch_changed: a position of another stream, answered with the current position', async () => {
    const { server, url } = await setup();
    const pos = await seeOne(server, url, 'chat:e');
    const { before, recovered } = await recover(url, 'chat:e', { offset: 1, epoch: 'gone-epoch' });
    expect(before).toEqual([]);
    expect(recovered.data).toEqual({
      room: 'chat:e',
      namespace: '/',
      recovered: false,
      reason: 'epoch_changed',
      replayed: 0,
      position: at(pos),
    });
  });

  it('invalid_position: an offset past the end (also the largest safe integer), then a normal join answer', async () => {
    const { server, url } = await setup();
    const pos = await seeOne(server, url, 'chat:i');
    let last = pos.offset;
    for (const far of [false, true]) {
      const offset = far ? Number.MAX_SAFE_INTEGER : last + 1;
      const { client, recovered } = await recover(url, 'chat:i', { offset, epoch: pos.epoch });
      expect(recovered.data).toMatchObject({
        recovered: false,
        reason: 'invalid_position',
        replayed: 0,
        position: { offset: last, epoch: pos.epoch },
      });
      expect(((await client.next('join_room')) as Message).id).toBe('j');
      // A member like any other: live traffic flows, no error, no second $recovered.
      server.broadcast('msg', { n: offset }, { room: 'chat:i' });
      last += 1;
      const live = (await client.next('msg')) as Message;
      expect(live.data['n']).toBe(offset);
      expect(client.pending().map((m) => m.event)).toEqual(['room_joined']);
      await client.close();
    }
  });

  it('too_far_behind: more missed than the room keeps (size)', async () => {
    const { server, url } = await setup();
    const pos = await seeOne(server, url, 'chat:z');
    for (let n = 1; n <= CHAT.size + 1; n += 1) server.broadcast('msg', { n }, { room: 'chat:z' });
    const { before, recovered } = await recover(url, 'chat:z', at(pos));
    expect(before).toEqual([]);
    expect(recovered.data).toMatchObject({
      recovered: false,
      reason: 'too_far_behind',
      replayed: 0,
      position: { offset: pos.offset + CHAT.size + 1, epoch: pos.epoch },
    });
  });

  it('too_far_behind: a missed message older than the ttl', async () => {
    const { server, url } = await setup({ history: [{ match: 'short', size: 50, ttl: 1000 }] });
    const pos = await seeOne(server, url, 'short');
    server.broadcast('msg', { n: 1 }, { room: 'short' });
    // n 2 keeps the room alive while n 1 grows older than the ttl.
    await new Promise((r) => setTimeout(r, 600));
    server.broadcast('msg', { n: 2 }, { room: 'short' });
    await new Promise((r) => setTimeout(r, 600));
    const { before, recovered } = await recover(url, 'short', at(pos));
    expect(before).toEqual([]);
    expect(recovered.data).toMatchObject({ recovered: false, reason: 'too_far_behind' });
  });

  it('too_far_behind: more than history_max_replay missed, or more than history_max_replay_bytes', async () => {
    const { server, url } = await setup({
      history: [{ match: '*', size: 100, ttl: 60_000 }],
      history_max_replay: 3,
      history_max_replay_bytes: 500,
    });
    const count = await seeOne(server, url, 'count');
    for (let n = 1; n <= 4; n += 1) server.broadcast('msg', { n }, { room: 'count' });
    const many = await recover(url, 'count', at(count));
    expect(many.recovered.data).toMatchObject({ recovered: false, reason: 'too_far_behind' });
    expect(many.before).toEqual([]);

    const bytes = await seeOne(server, url, 'bytes');
    server.broadcast('msg', { text: 'x'.repeat(300) }, { room: 'bytes' });
    server.broadcast('msg', { text: 'y'.repeat(300) }, { room: 'bytes' });
    const big = await recover(url, 'bytes', at(bytes));
    expect(big.recovered.data).toMatchObject({ recovered: false, reason: 'too_far_behind' });
    expect(big.before).toEqual([]);

    // Exactly at the bounds: recovered.
    server.broadcast('msg', { n: 5 }, { room: 'count' });
    const fits = await recover(url, 'count', { offset: count.offset + 2, epoch: count.epoch });
    expect(fits.before.map((m) => m.data['n'])).toEqual([3, 4, 5]);
    expect(fits.recovered.data).toMatchObject({ recovered: true, replayed: 3 });
  });

  it('recovered with nothing missed: replayed 0 and the position the client already has', async () => {
    const { server, url } = await setup();
    const pos = await seeOne(server, url, 'chat:n');
    const { before, recovered } = await recover(url, 'chat:n', at(pos));
    expect(before).toEqual([]);
    expect(recovered.data).toEqual({
      room: 'chat:n',
      namespace: '/',
      recovered: true,
      replayed: 0,
      position: at(pos),
    });
  });
});

describe('room recovery and session recovery together', () => {
  it('numbers replayed messages in the session, so a resume after a drop replays them again', async () => {
    const { server, url } = await setup();
    const pos = await seeOne(server, url, 'chat:both');
    server.broadcast('msg', { n: 1 }, { room: 'chat:both' });
    server.broadcast('msg', { n: 2 }, { room: 'chat:both' });
    const b = await TestClient.connect(url, {}, ['pkg.v1']);
    b.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1 } }));
    const welcome = await b.next('$welcome');
    const token = welcome.data['session'] as string;
    request(b, 'join_room', { room: 'chat:both', since: at(pos) }, 'j');
    const got = (await until(b, '$recovered')).filter((m) => m.event === 'msg');
    expect(got.map((m) => [m.data['n'], m.seq])).toEqual([
      [1, 1],
      [2, 2],
    ]);
    // The connection is lost (no close frame): the session waits for a resume.
    b.ws.terminate();
    await b.closed;
    while (server.getLoad().awaySessions === 0) await new Promise((r) => setTimeout(r, 5));
    const c = await TestClient.connect(url, {}, ['pkg.v1']);
    c.sendRaw(
      JSON.stringify({ event: '$hello', data: { v: 1, resume: { session: token, seq: 0 } } }),
    );
    expect((await c.next('$welcome')).data['resumed']).toBe(true);
    const again = [(await c.next('msg')) as Message, (await c.next('msg')) as Message];
    expect(again.map((m) => [m.data['n'], m.seq, m.pos!.offset])).toEqual([
      [1, 1, pos.offset + 1],
      [2, 2, pos.offset + 2],
    ]);
  });
});
