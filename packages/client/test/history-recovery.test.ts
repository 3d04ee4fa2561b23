// Room recovery on the client, over real sockets against the scripted server of
// test/history-peer.ts: the client remembers each room's last position, sends it on
// reconnect (`join_room.since` for rooms it joined, `$hello.positions` for rooms the server
// joined it to), hands the missed messages to its listeners in order and once, and reports
// each room's recovery with `recovered`, also when it cannot name a position.
import { describe, expect, it } from '@jest/globals';
import { HISTORY_LIMITS } from '@pkg/wire';
import type { RecoveredInfo } from '../src/index';
import { connected, cut, lastHello, start, waitForHistoryRequest } from './history-kit';
import type { HistoryPeer } from './history-peer';
import { next } from './helpers';

describe('recovery of a room joined with joinRoom', () => {
  it('sends since on the rejoin, delivers the missed messages once and in order, then reports recovered', async () => {
    const peer = await start();
    const c = await connected(peer);
    await c.client.joinRoom('r');
    for (let n = 1; n <= 3; n++) peer.publish('r', 'chat.said', { n });
    await c.said.waitFor(3);
    const away = await cut(peer, c);
    for (let n = 4; n <= 6; n++) peer.publish('r', 'chat.said', { n });
    const recovered = next<RecoveredInfo>(c.client, 'recovered');
    await away.back();
    expect(await recovered).toEqual({ room: 'r', namespace: '/', recovered: true, replayed: 3 });
    const epoch = peer.stream('r').epoch;
    const join = peer.received.filter((m) => m.event === 'join_room').pop()!;
    expect(join.data).toEqual({ room: 'r', namespace: '/', since: { offset: 3, epoch } });
    peer.publish('r', 'chat.said', { n: 7 });
    expect(await c.said.waitFor(7)).toEqual([1, 2, 3, 4, 5, 6, 7].map((n) => ({ n, offset: n })));
    // joinRoom rooms recover through since, not through $hello.positions.
    expect(lastHello(peer)['positions']).toBeUndefined();
  });

  it('recovers a room it joined before any of its messages reached it (the position read at the join)', async () => {
    const peer = await start();
    const c = await connected(peer);
    peer.publish('r', 'chat.said', { n: 0 }); // before the client is in the room
    await c.client.joinRoom('r');
    await waitForHistoryRequest(peer);
    const away = await cut(peer, c);
    peer.publish('r', 'chat.said', { n: 1 });
    peer.publish('r', 'chat.said', { n: 2 });
    const recovered = next<RecoveredInfo>(c.client, 'recovered');
    await away.back();
    expect(await recovered).toEqual({ room: 'r', namespace: '/', recovered: true, replayed: 2 });
    const join = peer.received.filter((m) => m.event === 'join_room').pop()!;
    expect(join.data).toEqual({
      room: 'r',
      namespace: '/',
      since: { offset: 1, epoch: peer.stream('r').epoch },
    });
    expect((await c.said.waitFor(2)).map((s) => s.n)).toEqual([1, 2]);
  });

  it('says recovered: false after a move when it never learnt the room position (its read got no answer)', async () => {
    const peer = await start();
    peer.answersHistory = false;
    const c = await connected(peer);
    peer.publish('r', 'chat.said', { n: 0 }); // before the client is in the room
    await c.client.joinRoom('r');
    await waitForHistoryRequest(peer);
    const away = await cut(peer, c);
    peer.publish('r', 'chat.said', { n: 1 });
    const recovered = next<RecoveredInfo>(c.client, 'recovered');
    await away.back();
    expect(await recovered).toEqual({
      room: 'r',
      namespace: '/',
      recovered: false,
      reason: 'epoch_changed',
      replayed: 0,
    });
    const join = peer.received.filter((m) => m.event === 'join_room').pop()!;
    expect(join.data).toEqual({ room: 'r', namespace: '/', since: { offset: 0, epoch: '-' } });
    peer.publish('r', 'chat.said', { n: 2 });
    expect((await c.said.waitFor(1)).map((s) => s.n)).toEqual([2]);
  });

  it('drops a message the server sends again (same epoch, offset not above the last)', async () => {
    const peer = await start();
    const c = await connected(peer);
    await c.client.joinRoom('r');
    const first = peer.publish('r', 'chat.said', { n: 1 });
    const second = peer.publish('r', 'chat.said', { n: 2 });
    peer.sendRaw(c.id, second);
    peer.sendRaw(c.id, first);
    peer.publish('r', 'chat.said', { n: 3 });
    await c.said.waitFor(3);
    await c.client.history('r'); // a round trip: everything sent before it has arrived
    expect(c.said.items.map((s) => s.n)).toEqual([1, 2, 3]);
  });

  it('takes a message of a new epoch even with a lower offset, and keeps the new epoch', async () => {
    const peer = await start();
    const c = await connected(peer);
    await c.client.joinRoom('r');
    for (let n = 1; n <= 3; n++) peer.publish('r', 'chat.said', { n });
    peer.lose('r');
    peer.publish('r', 'chat.said', { n: 4 }); // offset 1 of a new epoch
    peer.publish('r', 'chat.said', { n: 5 });
    expect((await c.said.waitFor(5)).map((s) => [s.n, s.offset])).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 1],
      [5, 2],
    ]);
  });

  it('hands over every kept message and reports the lost offsets with messages_lost, then takes the live messages after it', async () => {
    const peer = await start();
    const c = await connected(peer);
    await c.client.joinRoom('r');
    peer.publish('r', 'chat.said', { n: 1 });
    await c.said.waitFor(1);
    const away = await cut(peer, c);
    for (let n = 2; n <= 8; n++) peer.publish('r', 'chat.said', { n });
    peer.loseOffsets('r', 4, 5);
    const recovered = next<RecoveredInfo>(c.client, 'recovered');
    await away.back();
    const info = await recovered;
    expect(info).toMatchObject({
      room: 'r',
      recovered: false,
      reason: 'messages_lost',
      replayed: 5,
      lost: [{ from: 4, to: 5 }],
    });
    peer.publish('r', 'chat.said', { n: 9 });
    expect((await c.said.waitFor(7)).map((s) => s.n)).toEqual([1, 2, 3, 6, 7, 8, 9]);
  });

  it.each([
    ['epoch_changed', (peer: HistoryPeer) => peer.lose('r'), 6],
    [
      'too_far_behind',
      (peer: HistoryPeer) => {
        peer.size = 3;
      },
      7,
    ],
  ])(
    'reports recovered: false with %s, replays nothing and takes the live messages after it',
    async (reason, lose, after) => {
      const peer = await start();
      const c = await connected(peer);
      await c.client.joinRoom('r');
      peer.publish('r', 'chat.said', { n: 1 });
      await c.said.waitFor(1);
      const away = await cut(peer, c);
      lose(peer);
      for (let n = 2; n <= 6; n++) peer.publish('r', 'chat.said', { n });
      const recovered = next<RecoveredInfo>(c.client, 'recovered');
      await away.back();
      expect(await recovered).toEqual({
        room: 'r',
        namespace: '/',
        recovered: false,
        reason,
        replayed: 0,
      });
      peer.publish('r', 'chat.said', { n: 7 });
      expect((await c.said.waitFor(2)).map((s) => [s.n, s.offset])).toEqual([
        [1, 1],
        [7, after],
      ]);
    },
  );

  it('stands at the position $recovered gives when the client was ahead of the stream (invalid_position)', async () => {
    const peer = await start();
    const c = await connected(peer);
    await c.client.joinRoom('r');
    peer.publish('r', 'chat.said', { n: 1 });
    const epoch = peer.stream('r').epoch;
    // A position far past the stream's end, as a server that lost its tail could leave.
    peer.sendRaw(
      c.id,
      JSON.stringify({
        event: 'chat.said',
        data: { n: 0 },
        pos: { room: 'r', namespace: '/', epoch, offset: 50 },
      }),
    );
    await c.said.waitFor(2);
    const away = await cut(peer, c);
    const recovered = next<RecoveredInfo>(c.client, 'recovered');
    await away.back();
    expect(await recovered).toMatchObject({ recovered: false, reason: 'invalid_position' });
    peer.publish('r', 'chat.said', { n: 2 }); // offset 2: not dropped, the client moved back
    expect((await c.said.waitFor(3)).map((s) => s.n)).toEqual([1, 0, 2]);
  });

  it('forgets the position of a room it leaves, and everything on disconnect()', async () => {
    const peer = await start();
    const c = await connected(peer);
    await c.client.joinRoom('r');
    await c.client.joinRoom('s');
    peer.publish('r', 'chat.said', { n: 1 });
    peer.publish('s', 'chat.said', { n: 2 });
    await c.said.waitFor(2);
    await c.client.leaveRoom('r');
    await c.client.joinRoom('r');
    const joins = (): Array<Record<string, unknown>> =>
      peer.received.filter((m) => m.event === 'join_room').map((m) => m.data);
    expect(joins().pop()).toEqual({ room: 'r', namespace: '/' });
    c.client.disconnect();
    await c.client.connect();
    await c.client.joinRoom('s');
    expect(joins().pop()).toEqual({ room: 's', namespace: '/' });
    expect(lastHello(peer)['positions']).toBeUndefined();
  });

  it('sends no position with recovery: false, but still drops a message seen twice', async () => {
    const peer = await start();
    const c = await connected(peer, { recovery: false });
    await c.client.joinRoom('r');
    const text = peer.publish('r', 'chat.said', { n: 1 });
    peer.sendRaw(c.id, text);
    peer.publish('r', 'chat.said', { n: 2 });
    await c.said.waitFor(2);
    const away = await cut(peer, c);
    await away.back();
    await c.client.joinRoom('r');
    const join = peer.received.filter((m) => m.event === 'join_room').pop()!;
    expect(join.data).toEqual({ room: 'r', namespace: '/' });
    expect(c.said.items.map((s) => s.n)).toEqual([1, 2]);
  });
});

describe('recovery of a room the server joined the client to', () => {
  it('sends the position in $hello.positions and recovers when the server joins it again', async () => {
    const peer = await start();
    const c = await connected(peer);
    peer.serverJoin(c.id, 'lobby');
    peer.publish('lobby', 'chat.said', { n: 1 });
    await c.said.waitFor(1);
    const away = await cut(peer, c);
    peer.publish('lobby', 'chat.said', { n: 2 });
    peer.publish('lobby', 'chat.said', { n: 3 });
    const id = await away.back();
    const epoch = peer.stream('lobby').epoch;
    expect(lastHello(peer)['positions']).toEqual([
      { room: 'lobby', namespace: '/', offset: 1, epoch },
    ]);
    const recovered = next<RecoveredInfo>(c.client, 'recovered');
    peer.serverJoin(id, 'lobby');
    expect(await recovered).toEqual({
      room: 'lobby',
      namespace: '/',
      recovered: true,
      replayed: 2,
    });
    expect((await c.said.waitFor(3)).map((s) => s.n)).toEqual([1, 2, 3]);
  });

  it(`sends at most ${HISTORY_LIMITS.maxHelloPositions} positions, the most recently updated`, async () => {
    const peer = await start();
    const c = await connected(peer);
    const count = HISTORY_LIMITS.maxHelloPositions + 5;
    for (let i = 0; i < count; i++) {
      peer.serverJoin(c.id, `room-${i}`);
      peer.publish(`room-${i}`, 'chat.said', { n: i });
    }
    await c.said.waitFor(count);
    const away = await cut(peer, c);
    await away.back();
    const positions = lastHello(peer)['positions'] as Array<{ room: string }>;
    expect(positions).toHaveLength(HISTORY_LIMITS.maxHelloPositions);
    expect(positions[0]!.room).toBe(`room-${count - 1}`);
    expect(positions.map((p) => p.room)).not.toContain('room-4');
    expect(positions.map((p) => p.room)).toContain('room-5');
  });
});
