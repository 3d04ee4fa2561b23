// A recovery delivers each missed message once, also when a message's live copy reaches the
// server only after the recovery's read returned it (a store across the network, such as
// Redis pub/sub). The adapter here keeps each message at once and hands its copy over when
// the test says, after `$recovered`: the copy must not reach the recovering client again,
// whether it is connected then, has no session, or is away and resumes later.
import { afterEach, describe, expect, it } from '@jest/globals';
import { RoomsController, type ServerConfigOptions } from '../src/index';
import { TestClient, cleanup, startServer } from './helpers';
import { CHAT, LateCopyAdapter, at, join, request, until, v1, type Message } from './history-kit';

afterEach(cleanup);

const ROOM = 'chat:late';

async function scene(config: ServerConfigOptions = {}) {
  const adapter = new LateCopyAdapter();
  const { server, wsUrl: url } = await startServer(
    [new RoomsController()],
    { shutdown_timeout: 200, history: [CHAT], ...config },
    (s) => s.setAdapter(adapter),
  );
  // A member that sees each message when its copy is delivered.
  const watcher = await v1(url);
  await join(watcher, { room: ROOM });
  server.broadcast('msg', { n: 1 }, { room: ROOM });
  const first = (await watcher.next('msg')) as Message;
  // Message 2 is kept; its copy waits.
  adapter.holding = true;
  server.broadcast('msg', { n: 2 }, { room: ROOM });
  const late = await TestClient.connect(url, {}, ['pkg.v1']);
  late.sendRaw(JSON.stringify({ event: '$hello', data: { v: 1 } }));
  const welcome = await late.next('$welcome');
  request(late, 'join_room', { room: ROOM, since: at(first.pos!) }, 'j');
  const before = await until(late, '$recovered');
  expect(before.at(-1)!.data).toMatchObject({ recovered: true, replayed: 1 });
  const replayed = before.filter((m) => m.event === 'msg');
  expect(replayed.map((m) => m.pos!.offset)).toEqual([first.pos!.offset + 1]);
  expect(watcher.pending().filter((m) => m.event === 'msg')).toEqual([]); // 2 not delivered yet
  return {
    server,
    url,
    adapter,
    watcher,
    late,
    token: welcome.data['session'] as string,
    replayed,
  };
}

/** The `n` of the room messages among `received`. */
const numbers = (received: Message[]): unknown[] =>
  received.filter((m) => m.event === 'msg').map((m) => m.data['n']);

describe('a live copy that arrives after the recovery read returned its message', () => {
  it.each([
    ['with a session', {}],
    ['without a session', { recovery_window: 0 }],
  ])('is not delivered again to a connected client (%s)', async (_name, config) => {
    const { server, adapter, watcher, late } = await scene(config);
    adapter.releaseCopies();
    expect((await watcher.next('msg')).data['n']).toBe(2);
    server.broadcast('msg', { n: 3 }, { room: ROOM });
    expect((await watcher.next('msg')).data['n']).toBe(3);
    await late.next('msg'); // 3 reached it too
    expect(numbers(late.received as Message[])).toEqual([2, 3]);
  });

  it('is not kept for a resume while the client is away', async () => {
    const { server, url, adapter, watcher, late, token, replayed } = await scene();
    late.ws.terminate();
    await late.closed;
    while (server.getLoad().awaySessions === 0) await new Promise((r) => setTimeout(r, 5));
    adapter.releaseCopies();
    expect((await watcher.next('msg')).data['n']).toBe(2);
    server.broadcast('msg', { n: 3 }, { room: ROOM });
    expect((await watcher.next('msg')).data['n']).toBe(3);
    const back = await TestClient.connect(url, {}, ['pkg.v1']);
    const seq = replayed.at(-1)!.seq!;
    back.sendRaw(
      JSON.stringify({ event: '$hello', data: { v: 1, resume: { session: token, seq } } }),
    );
    expect((await back.next('$welcome')).data['resumed']).toBe(true);
    expect((await back.next('msg')).data['n']).toBe(3);
    server.broadcast('msg', { n: 4 }, { room: ROOM });
    await back.next('msg');
    expect(numbers(back.received as Message[])).toEqual([3, 4]);
  });

  it('is dropped only up to the position the recovery reached', async () => {
    const { server, adapter, watcher, late } = await scene();
    // Message 3 is kept after the recovery: its late copy is new to the client.
    server.broadcast('msg', { n: 3 }, { room: ROOM });
    adapter.releaseCopies();
    expect(numbers([await watcher.next('msg'), await watcher.next('msg')] as Message[])).toEqual([
      2, 3,
    ]);
    await late.next('msg');
    expect(numbers(late.received as Message[])).toEqual([2, 3]);
  });
});
