// Room history under pressure and on request: live messages held while a history read is
// pending (an adapter whose store answers later), adversarial recoveries, the $history
// request and server.history, and the bounds that keep all of it from leaking.
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  LocalAdapter,
  OnConnect,
  RoomsController,
  Server,
  ServerConfig,
  SocketController,
  type HistoryStore,
} from '../src/index';
import { TestClient, cleanup, startServer } from './helpers';
import {
  CHAT,
  LaterAdapter,
  at,
  join,
  recover,
  request,
  seeOne,
  setup,
  until,
  v1,
  type Message,
  type Pos,
} from './history-kit';

afterEach(cleanup);

describe('live messages during a replay', () => {
  for (const snapshot of ['asked', 'released'] as const) {
    it(`are held until $recovered and sent once each (read sees the stream as ${snapshot})`, async () => {
      const adapter = new LaterAdapter(snapshot);
      const { server: s2, wsUrl } = await startServer(
        [new RoomsController()],
        {
          shutdown_timeout: 200,
          history: [CHAT],
        },
        (srv) => srv.setAdapter(adapter),
      );
      const pos = await seeOne(s2, wsUrl, 'chat:l');
      s2.broadcast('msg', { n: 1 }, { room: 'chat:l' });
      s2.broadcast('msg', { n: 2 }, { room: 'chat:l' });

      const b = await v1(wsUrl);
      request(b, 'join_room', { room: 'chat:l', since: at(pos) }, 'j');
      await b.next('join_room');
      while (adapter.history.reads.length === 0) await new Promise((r) => setTimeout(r, 5));
      // Live while the read is pending: held, not sent.
      s2.broadcast('msg', { n: 3 }, { room: 'chat:l' });
      s2.broadcast('msg', { n: 4 }, { room: 'chat:l' });
      expect(s2.getLoad().recoveries).toBe(1);
      adapter.history.release();
      const got = await until(b, '$recovered');
      s2.broadcast('msg', { n: 5 }, { room: 'chat:l' });
      const replayed = got.filter((m) => m.event === 'msg').map((m) => m.data['n']);
      expect(replayed).toEqual(snapshot === 'asked' ? [1, 2] : [1, 2, 3, 4]);
      expect(got.at(-1)!.data).toMatchObject({ recovered: true, replayed: replayed.length });
      // After $recovered: what the replay did not carry, each once, then live traffic.
      const live = snapshot === 'asked' ? [3, 4, 5] : [5];
      const after: Message[] = [];
      for (const _ of live) after.push((await b.next('msg')) as Message);
      expect(after.map((m) => m.data['n'])).toEqual(live);
      expect(b.pending()).toEqual([]);
      const offsets = [...got, ...after].filter((m) => m.pos).map((m) => m.pos!.offset);
      expect(offsets).toEqual([...offsets].sort((x, y) => x - y));
      expect(new Set(offsets).size).toBe(offsets.length);
      expect(s2.getLoad().recoveries).toBe(0);
    });
  }

  it('are sent after a failed $recovered, also those at or before the position it reports', async () => {
    const adapter = new LaterAdapter('released');
    const { server, wsUrl } = await startServer(
      [new RoomsController()],
      {
        shutdown_timeout: 200,
        history: [CHAT],
      },
      (srv) => srv.setAdapter(adapter),
    );
    const pos = await seeOne(server, wsUrl, 'chat:f');

    const b = await v1(wsUrl);
    // A position of another epoch: the recovery fails and replays nothing.
    const since = { offset: pos.offset, epoch: `${pos.epoch}x` };
    request(b, 'join_room', { room: 'chat:f', since }, 'j');
    await b.next('join_room');
    while (adapter.history.reads.length === 0) await new Promise((r) => setTimeout(r, 5));
    server.broadcast('msg', { n: 1 }, { room: 'chat:f' });
    server.broadcast('msg', { n: 2 }, { room: 'chat:f' });
    adapter.history.release();
    const got = await until(b, '$recovered');
    expect(got.filter((m) => m.event === 'msg')).toEqual([]);
    // The read came after 1 and 2 were kept (the stream stands at pos + 2), yet nothing
    // carried them: the client is told it stands just before them, so a client that drops
    // what it has seen by position (@pkg/client) takes them.
    expect(got.at(-1)!.data).toMatchObject({
      recovered: false,
      reason: 'epoch_changed',
      replayed: 0,
      position: { epoch: pos.epoch, offset: pos.offset },
    });
    // Then live traffic: 3 marks the end of what the client gets.
    server.broadcast('msg', { n: 3 }, { room: 'chat:f' });
    const after: unknown[] = [];
    while (after.at(-1) !== 3) after.push(((await b.next('msg')) as Message).data['n']);
    expect(after).toEqual([1, 2, 3]);
    expect(b.pending()).toEqual([]);
  });

  it('drops what was held when the client leaves during the read (no leak)', async () => {
    const adapter = new LaterAdapter('asked');
    const { server, wsUrl } = await startServer(
      [new RoomsController()],
      {
        shutdown_timeout: 200,
        history: [CHAT],
      },
      (srv) => srv.setAdapter(adapter),
    );
    const pos = await seeOne(server, wsUrl, 'chat:g');
    const b = await v1(wsUrl);
    request(b, 'join_room', { room: 'chat:g', since: at(pos) }, 'j');
    await b.next('join_room');
    server.broadcast('msg', { n: 1 }, { room: 'chat:g' });
    expect(server.getLoad().recoveries).toBe(1);
    await b.close();
    while (server.getLoad().webSocketClients > 0) await new Promise((r) => setTimeout(r, 5));
    expect(server.getLoad().recoveries).toBe(0);
    adapter.history.release();
  });

  it('applies max_pending_requests to $history like any request', async () => {
    const adapter = new LaterAdapter('asked');
    const { server, wsUrl } = await startServer(
      [new RoomsController()],
      {
        shutdown_timeout: 200,
        history: [CHAT],
        max_pending_requests: 2,
      },
      (srv) => srv.setAdapter(adapter),
    );
    void server;
    const b = await v1(wsUrl);
    await join(b, { room: 'chat:p' });
    for (const id of ['h1', 'h2']) request(b, '$history', { room: 'chat:p' }, id);
    // The join's answer was sent: two pending now, a third is refused.
    request(b, '$history', { room: 'chat:p' }, 'h3');
    const refused = (await b.next('error')) as Message;
    expect(refused).toMatchObject({ id: 'h3', data: { code: 'too_many_pending' } });
    adapter.history.release();
    const answers = [(await b.next('$history')) as Message, (await b.next('$history')) as Message];
    expect(answers.map((m) => m.id)).toEqual(['h1', 'h2']);
  });
});

describe('adversarial recoveries', () => {
  it('refuses a malformed since with invalid_payload and joins nothing', async () => {
    const { server, url } = await setup();
    const c = await v1(url);
    const bad: unknown[] = [
      { offset: -1, epoch: 'e' },
      { offset: 1.5, epoch: 'e' },
      { offset: '3', epoch: 'e' },
      { offset: 2 ** 53, epoch: 'e' },
      { offset: 1 },
      { offset: 1, epoch: '' },
      { offset: 1, epoch: 'e'.repeat(65) },
      'since',
      [1, 'e'],
    ];
    for (const [i, since] of bad.entries()) {
      const answer = await join(c, { room: 'chat:bad', since }, `b${i}`);
      expect([i, answer.event, answer.data['code']]).toEqual([i, 'error', 'invalid_payload']);
    }
    expect(await server.countClients({ room: 'chat:bad' })).toBe(0);
  });

  it('refuses an epoch of 1 MB in join_room.since and in $hello.positions', async () => {
    const { url } = await setup({ max_message_size: 4 * 1024 * 1024 });
    const epoch = 'e'.repeat(1024 * 1024);
    const c = await v1(url);
    const answer = await join(c, { room: 'chat:big', since: { offset: 1, epoch } });
    expect(answer.data['code']).toBe('invalid_payload');
    const h = await TestClient.connect(url, {}, ['pkg.v1']);
    h.sendRaw(
      JSON.stringify({
        event: '$hello',
        data: { v: 1, positions: [{ room: 'chat:big', namespace: '/', offset: 1, epoch }] },
      }),
    );
    expect(((await h.next('error')) as Message).data['code']).toBe('invalid_payload');
    expect((await h.closed).code).toBe(1008);
  });

  it('closes with 1008 a $hello with 10,000 positions, a lone surrogate, or a negative offset', async () => {
    const { url } = await setup();
    const many = Array.from({ length: 10_000 }, (_, i) => ({
      room: `chat:${i}`,
      namespace: '/',
      offset: 1,
      epoch: 'e',
    }));
    const one = { room: 'chat:1', namespace: '/', offset: 1, epoch: 'e' };
    for (const positions of [
      many,
      [{ ...one, room: 'chat:\ud800' }],
      [{ ...one, offset: -1 }],
      [{ ...one, namespace: 'no-slash' }],
      { room: 'chat:1' },
    ]) {
      const h = await TestClient.connect(url, {}, ['pkg.v1']);
      h.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1, positions } }));
      const error = (await h.next('error')) as Message;
      expect(error.data['code']).toBe('invalid_payload');
      expect(String(error.data['message'])).toMatch(/positions/);
      expect((await h.closed).code).toBe(1008);
    }
  });

  it('refuses a lone surrogate in the room of join_room and of $history', async () => {
    const { url } = await setup();
    const c = await v1(url);
    const answer = await join(c, { room: 'chat:\udc00', since: { offset: 1, epoch: 'e' } });
    expect(answer.data['code']).toBe('invalid_payload');
    request(c, '$history', { room: 'chat:\udc00' }, 'h');
    const refused = (await c.next('error')) as Message;
    expect(refused).toMatchObject({ id: 'h', data: { code: 'invalid_payload' } });
  });

  it('ignores since from a client that did not say $hello (sent before it, as version 0)', async () => {
    const { server, url } = await setup({ hello_wait: 5000 });
    const pos = await seeOne(server, url, 'chat:v0');
    server.broadcast('msg', { n: 1 }, { room: 'chat:v0' });
    // A pkg.v1 connection whose first message is join_room is served as version 0.
    const early = await TestClient.connect(url, {}, ['pkg.v1']);
    const answer = await join(early, { room: 'chat:v0', since: at(pos) });
    expect(answer.data).toEqual({ room: 'chat:v0', namespace: '/' });
    server.broadcast('msg', { n: 2 }, { room: 'chat:v0' });
    const next = (await early.next('msg')) as Message;
    expect(next.data['n']).toBe(2);
    expect(early.received.some((m) => m.event === '$recovered')).toBe(false);
  });

  it('recovers once per membership: a second join_room with since replays nothing and says so', async () => {
    const { server, url } = await setup();
    const pos = await seeOne(server, url, 'chat:twice');
    server.broadcast('msg', { n: 1 }, { room: 'chat:twice' });
    const { client } = await recover(url, 'chat:twice', at(pos));
    await client.next('join_room');
    request(client, 'join_room', { room: 'chat:twice', since: at(pos) }, 'again');
    await client.next('join_room');
    server.broadcast('msg', { n: 2 }, { room: 'chat:twice' });
    const next = (await client.next('msg')) as Message;
    expect(next.data['n']).toBe(2);
    // n: 1 once (the first recovery), then a $recovered of its own for the second join.
    expect(client.received.filter((m) => m.event === 'msg').map((m) => m.data['n'])).toEqual([
      1, 2,
    ]);
    const recovered = client.received.filter((m) => m.event === '$recovered');
    expect(recovered.map((m) => m.data)).toEqual([
      expect.objectContaining({ recovered: true, replayed: 1 }),
      {
        room: 'chat:twice',
        namespace: '/',
        recovered: false,
        reason: 'already_joined',
        replayed: 0,
      },
    ]);
  });

  it('uses a $hello position once, only for its room, and only when the client joins it', async () => {
    class Later extends SocketController {
      @OnConnect()
      enter(clientId: string): void {
        this.joinRoom(clientId, 'chat:other');
      }
    }
    const { server, url } = await setup({}, [new Later()]);
    const pos = await seeOne(server, url, 'chat:later');
    server.broadcast('msg', { n: 1 }, { room: 'chat:later' });
    const b = await v1(url, { v: 1, positions: [pos] });
    // Joined to chat:other in OnConnect: nothing recovered for it (no position).
    server.broadcast('msg', { n: 'other' }, { room: 'chat:other' });
    expect(((await b.next()) as Message).data['n']).toBe('other');
    // The application joins chat:later later: recovered from the hello position.
    const id = [...server.getAllClients()].find((x) =>
      server.namespaceManager.isInRoom(x, 'chat:other'),
    )!;
    server.joinRoom(id, 'chat:later');
    const got = await until(b, '$recovered');
    expect(got.map((m) => m.event)).toEqual(['msg', '$recovered']);
    expect(got[1]!.data).toMatchObject({ room: 'chat:later', recovered: true, replayed: 1 });
    // Leave and join again: the position was used up.
    server.leaveRoom(id, 'chat:later');
    server.joinRoom(id, 'chat:later');
    server.broadcast('msg', { n: 2 }, { room: 'chat:later' });
    expect(((await b.next()) as Message).data['n']).toBe(2);
  });
});

describe('$history', () => {
  it('answers the kept messages of a room the client is in, with its id, decoded', async () => {
    const { server, url } = await setup();
    const c = await v1(url);
    await join(c, { room: 'chat:h' });
    for (let n = 1; n <= 3; n += 1) server.broadcast('msg', { n }, { room: 'chat:h' });
    const live = [(await c.next('msg')) as Message];
    request(c, '$history', { room: 'chat:h', limit: 2 }, 7);
    const answer = (await c.next('$history')) as Message;
    expect(answer.id).toBe(7);
    expect(answer.data).toEqual({
      messages: [
        { event: 'msg', data: { n: 2 }, pos: { ...live[0]!.pos, offset: 2 } },
        { event: 'msg', data: { n: 3 }, pos: { ...live[0]!.pos, offset: 3 } },
      ],
      position: { offset: 3, epoch: live[0]!.pos!.epoch },
      complete: false,
      // Cut by the limit, not lost: message 1 is still kept.
      reason: 'truncated',
    });
    request(c, '$history', { room: 'chat:h', since: at(live[0]!.pos!) }, 8);
    const since = (await c.next('$history')) as Message;
    expect(since.data).toMatchObject({ complete: true });
    expect((since.data['messages'] as unknown[]).length).toBe(2);
  });

  it('caps limit at history_max_replay', async () => {
    const { server, url } = await setup({ history_max_replay: 2 });
    const c = await v1(url);
    await join(c, { room: 'chat:cap' });
    for (let n = 1; n <= 4; n += 1) server.broadcast('msg', { n }, { room: 'chat:cap' });
    request(c, '$history', { room: 'chat:cap', limit: 1000 }, 'h');
    const answer = (await c.next('$history')) as Message;
    const messages = answer.data['messages'] as Array<{ data: { n: number } }>;
    expect(messages.map((m) => m.data.n)).toEqual([3, 4]);
    expect(answer.data['complete']).toBe(false);
  });

  it('refuses a room the client is not in with forbidden and the id', async () => {
    const { server, url } = await setup();
    server.broadcast('msg', { n: 1 }, { room: 'chat:secret' });
    const c = await v1(url);
    request(c, '$history', { room: 'chat:secret' }, 'h');
    const refused = (await c.next('error')) as Message;
    expect(refused).toMatchObject({
      id: 'h',
      data: { code: 'forbidden', room: 'chat:secret', namespace: '/' },
    });
  });

  it('answers not_kept for a room without history, and refuses $history without an id', async () => {
    const { url } = await setup();
    const c = await v1(url);
    await join(c, { room: 'plain' });
    request(c, '$history', { room: 'plain' }, 'h');
    const answer = (await c.next('$history')) as Message;
    expect(answer.data).toEqual({ messages: [], complete: false, reason: 'not_kept' });
    c.send('$history', { room: 'plain' });
    const refused = (await c.next('error')) as Message;
    expect(refused.data['code']).toBe('invalid_payload');
    expect(refused.id).toBeUndefined();
    for (const data of [
      { room: 'plain', limit: 0 },
      { room: 'plain', since: { offset: -1, epoch: 'e' } },
      [],
    ]) {
      request(c, '$history', data, 'bad');
      expect(((await c.next('error')) as Message).data['code']).toBe('invalid_payload');
    }
  });
});

describe('what docs/protocol.md promises a client about $history and recovery', () => {
  it('$history with since and a small limit pages forward: truncated until the last page', async () => {
    const { server, url } = await setup({ history: [{ match: 'chat:*', size: 50, ttl: 60_000 }] });
    const c = await v1(url);
    await join(c, { room: 'chat:pages' });
    for (let n = 1; n <= 5; n += 1) server.broadcast('msg', { n }, { room: 'chat:pages' });
    const first = (await c.next('msg')) as Message;
    let since = { offset: 0, epoch: first.pos!.epoch };
    const pages: Array<{ n: number[]; complete: unknown; reason: unknown }> = [];
    for (let page = 0; page < 5; page += 1) {
      request(c, '$history', { room: 'chat:pages', since, limit: 2 }, `p${page}`);
      const answer = (await c.next('$history')) as Message;
      expect(answer.id).toBe(`p${page}`);
      const messages = answer.data['messages'] as Array<{ data: { n: number }; pos: Pos }>;
      pages.push({
        n: messages.map((m) => m.data.n),
        complete: answer.data['complete'],
        reason: answer.data['reason'],
      });
      if (answer.data['complete'] === true) break;
      since = at(messages.at(-1)!.pos);
    }
    expect(pages).toEqual([
      { n: [1, 2], complete: false, reason: 'truncated' },
      { n: [3, 4], complete: false, reason: 'truncated' },
      { n: [5], complete: true, reason: undefined },
    ]);
  });

  it('tells a cut by limit (truncated) apart from a loss (too_far_behind)', async () => {
    const { server, url } = await setup(); // chat:* keeps 5 messages
    const c = await v1(url);
    await join(c, { room: 'chat:lost' });
    for (let n = 1; n <= 8; n += 1) server.broadcast('msg', { n }, { room: 'chat:lost' });
    const first = (await c.next('msg')) as Message;
    // Messages 1-3 are gone: a since before them is a loss, whatever the limit.
    request(c, '$history', { room: 'chat:lost', since: at(first.pos!), limit: 2 }, 'lost');
    const lost = (await c.next('$history')) as Message;
    expect(lost.data).toMatchObject({ complete: false, reason: 'too_far_behind' });
    // Without since, the newest two of the five kept: a cut, nothing lost.
    request(c, '$history', { room: 'chat:lost', limit: 2 }, 'cut');
    const cut = (await c.next('$history')) as Message;
    const n = (cut.data['messages'] as Array<{ data: { n: number } }>).map((m) => m.data.n);
    expect({ n, reason: cut.data['reason'] }).toEqual({ n: [7, 8], reason: 'truncated' });
    // Asking for all that is kept is complete: older messages are not kept, not cut.
    request(c, '$history', { room: 'chat:lost' }, 'all');
    const all = (await c.next('$history')) as Message;
    expect(all.data).toMatchObject({ complete: true });
    expect((all.data['messages'] as unknown[]).length).toBe(5);
  });

  it('stops at the byte bound with truncated, from the oldest after since', async () => {
    const { server, url } = await setup({
      history: [{ match: 'chat:*', size: 50, ttl: 60_000 }],
      history_max_replay_bytes: 400,
    });
    const c = await v1(url);
    await join(c, { room: 'chat:bytes' });
    const text = 'x'.repeat(100);
    for (let n = 1; n <= 6; n += 1) server.broadcast('msg', { n, text }, { room: 'chat:bytes' });
    const first = (await c.next('msg')) as Message;
    request(c, '$history', { room: 'chat:bytes', since: { ...at(first.pos!), offset: 0 } }, 'b');
    const answer = (await c.next('$history')) as Message;
    const n = (answer.data['messages'] as Array<{ data: { n: number } }>).map((m) => m.data.n);
    expect(n[0]).toBe(1);
    expect(n.length).toBeGreaterThan(0);
    expect(n.length).toBeLessThan(6);
    expect(n).toEqual(n.map((_, i) => i + 1));
    expect(answer.data).toMatchObject({ complete: false, reason: 'truncated' });
  });

  it('refuses every limit that is not a whole number from 1, with the id, and reads a huge one as the cap', async () => {
    const { server, url } = await setup({ history_max_replay: 3 });
    const c = await v1(url);
    await join(c, { room: 'chat:limit' });
    for (let n = 1; n <= 4; n += 1) server.broadcast('msg', { n }, { room: 'chat:limit' });
    const bad: unknown[] = [0, -1, 1.5, '2', null, true, {}, [], 2 ** 53, Number.MAX_VALUE];
    for (const [i, limit] of bad.entries()) {
      request(c, '$history', { room: 'chat:limit', limit }, `bad${i}`);
      const refused = (await c.next('error')) as Message;
      expect({ limit, id: refused.id, code: refused.data['code'] }).toEqual({
        limit,
        id: `bad${i}`,
        code: 'invalid_payload',
      });
      expect(refused.data['message']).toMatch(/"limit" must be a whole number of messages from 1/);
    }
    // Still open, and a limit above history_max_replay is read as it (3 of the 4 kept).
    request(c, '$history', { room: 'chat:limit', limit: Number.MAX_SAFE_INTEGER }, 'big');
    const big = (await c.next('$history')) as Message;
    expect(big.id).toBe('big');
    expect((big.data['messages'] as unknown[]).length).toBe(3);
    expect(big.data).toMatchObject({ complete: false, reason: 'truncated' });
  });

  it('answers a join_room with since for a room the server already joined (from $hello.positions) with already_joined', async () => {
    class Lobby extends SocketController {
      @OnConnect()
      enter(clientId: string): void {
        this.joinRoom(clientId, 'chat:auto');
      }
    }
    const { server, url } = await setup({}, [new Lobby()]);
    const pos = await seeOne(server, url, 'chat:auto');
    server.broadcast('msg', { n: 1 }, { room: 'chat:auto' });
    const position = { room: 'chat:auto', namespace: '/', ...at(pos) };
    const c = await v1(url, { v: 1, positions: [position] });
    // The server's join used the position: one replay, one $recovered.
    const got = await until(c, '$recovered');
    expect(got.filter((m) => m.event === 'msg').map((m) => m.data['n'])).toEqual([1]);
    expect(got.at(-1)!.data).toMatchObject({ recovered: true, replayed: 1 });
    // The client also sends join_room with since (it cannot know the server joined it).
    request(c, 'join_room', { room: 'chat:auto', since: at(pos) }, 'again');
    const second = await until(c, '$recovered');
    expect(second.filter((m) => m.event === 'msg')).toEqual([]);
    expect(second.at(-1)!.data).toEqual({
      room: 'chat:auto',
      namespace: '/',
      recovered: false,
      reason: 'already_joined',
      replayed: 0,
    });
    const answer = await join(c, { room: 'chat:auto' }, 'again2');
    expect(answer.data).toEqual({ room: 'chat:auto', namespace: '/' });
    // A join without since of a room it is in says nothing about recovery.
    server.broadcast('msg', { n: 2 }, { room: 'chat:auto' });
    expect(((await c.next('msg')) as Message).data['n']).toBe(2);
    expect(c.received.filter((m) => m.event === '$recovered')).toHaveLength(2);
  });

  it('leaving a room never joined is accepted and changes nothing, twice', async () => {
    const { url } = await setup();
    const c = await v1(url);
    for (const id of ['l1', 'l2']) {
      request(c, 'leave_room', { room: 'never' }, id);
      const left = await c.next('room_left');
      expect(left.data).toEqual({ room: 'never', namespace: '/' });
      const answer = (await c.next('leave_room')) as Message;
      expect(answer).toMatchObject({ id, data: { room: 'never', namespace: '/' } });
    }
    expect(c.received.some((m) => m.event === 'error')).toBe(false);
  });
});

describe('server.history and bounds', () => {
  it('reads through the store, validates its arguments, and forgets idle rooms (no leak)', async () => {
    const { server } = await setup({ history: [{ match: 'idle:*', size: 3, ttl: 1000 }] });
    for (let i = 0; i < 50; i += 1) server.broadcast('msg', { i }, { room: `idle:${i}` });
    expect(server.getLoad().historyRooms).toBe(50);
    const h = await server.history('idle:7');
    expect(h.messages).toEqual([
      { event: 'msg', data: { i: 7 }, pos: { room: 'idle:7', namespace: '/', ...h.position! } },
    ]);
    expect(await server.history('other')).toEqual({
      messages: [],
      complete: false,
      reason: 'not_kept',
    });
    expect(() => server.history('')).toThrow(TypeError);
    expect(() => server.history('idle:1', { limit: 0 })).toThrow(/limit/);
    expect(() => server.history('idle:1', { since: { offset: -1, epoch: 'e' } })).toThrow(/since/);
    const since = await server.history('idle:7', {
      since: { offset: 0, epoch: h.position!.epoch },
    });
    expect(since).toMatchObject({ complete: true, messages: [{ data: { i: 7 } }] });

    const deadline = Date.now() + 5000;
    while (server.getLoad().historyRooms > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(server.getLoad().historyRooms).toBe(0);
  });

  it('refuses an adapter whose history is not a HistoryStore', () => {
    const idle = new Server(new ServerConfig({ port: 0 }));
    const broken = Object.assign(new LocalAdapter(), { history: {} as HistoryStore });
    expect(() => idle.setAdapter(broken)).toThrow(/history must be a HistoryStore/);
    expect(() => idle.setAdapter(new LaterAdapter('asked'))).not.toThrow();
  });

  it('keepHistory keeps one room, checked like the config', async () => {
    const { server } = await setup({ history: [] });
    expect(() => server.keepHistory('r', { size: 0, ttl: 10 })).toThrow(/size/);
    expect(() => server.keepHistory('r', { size: 1, ttl: 10, namespace: 'x' })).toThrow(
      /namespace/,
    );
    server.keepHistory('r', { size: 2, ttl: 60_000 });
    for (let n = 1; n <= 3; n += 1) server.broadcast('msg', { n }, { room: 'r' });
    const h = await server.history('r');
    expect(h.messages.map((m) => m.pos.offset)).toEqual([2, 3]);
  });
});
