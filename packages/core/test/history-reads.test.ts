// Reading a room's history never makes a room: recoveries (`join_room.since`) and
// `$history` requests for rooms that never had a message leave nothing in the in-memory
// store, and a quiet room's position still recovers once messages come. Real `ws` clients.
import { afterEach, describe, expect, it } from '@jest/globals';
import { cleanup } from './helpers';
import { join, request, setup, until, v1, type Message, type Pos } from './history-kit';

afterEach(cleanup);

describe('history reads of rooms that never had a message', () => {
  it('keep nothing, whether recovered or read', async () => {
    const { server, url } = await setup();
    const client = await v1(url);
    for (let i = 0; i < 8; i += 1) {
      const room = `chat:never-${i}`;
      request(client, 'join_room', { room, since: { offset: 3, epoch: 'made-up' } }, `j${i}`);
      const recovered = (await until(client, '$recovered')).at(-1)!;
      expect(recovered.data).toMatchObject({ room, recovered: false, reason: 'epoch_changed' });
      request(client, '$history', { room }, `h${i}`);
      const answer = (await until(client, '$history')).at(-1)!;
      expect(answer.data).toMatchObject({ messages: [], complete: true, position: { offset: 0 } });
    }
    expect(server.getLoad().historyRooms).toBe(0);
  });

  it('answer a position that recovers the messages that came after it', async () => {
    const { server, url } = await setup();
    const reader = await v1(url);
    await join(reader, { room: 'chat:quiet' });
    request(reader, '$history', { room: 'chat:quiet' }, 'h');
    const quiet = (await until(reader, '$history')).at(-1)!.data['position'] as Pos;
    expect(quiet.offset).toBe(0);
    expect(server.getLoad().historyRooms).toBe(0);
    await reader.close();

    for (let n = 1; n <= 3; n += 1) server.broadcast('msg', { n }, { room: 'chat:quiet' });
    const back = await v1(url);
    request(back, 'join_room', { room: 'chat:quiet', since: quiet }, 'j');
    const got = await until(back, '$recovered');
    expect(got.at(-1)!.data).toMatchObject({ recovered: true, replayed: 3 });
    expect(got.filter((m: Message) => m.event === 'msg').map((m) => m.data['n'])).toEqual([
      1, 2, 3,
    ]);
    expect(server.getLoad().historyRooms).toBe(1);
  });
});
