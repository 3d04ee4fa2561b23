// A broadcast's `except` holds for its history too: a client a broadcast left out does not
// get that message later from `$history` or from a recovery, while everyone else does; an
// exclusion too long to keep hides the message from every client's read, which then says it
// is not complete. Real `ws` clients, the in-memory store.
import { afterEach, describe, expect, it } from '@jest/globals';
import { MAX_KEPT_EXCEPT } from '../src/index';
import { cleanup } from './helpers';
import { at, join, request, setup, until, v1, type Message } from './history-kit';

afterEach(cleanup);

const ROOM = 'chat:except';
const numbers = (messages: readonly Message[]): unknown[] =>
  messages.filter((m) => m.event === 'msg').map((m) => m.data['n']);

describe('history and recovery honour a broadcast except', () => {
  it('leave the message out for the client the broadcast left out, only for it', async () => {
    const { server, url } = await setup();
    const left = await v1(url);
    const other = await v1(url);
    const leftId = String(left.received[0]!.data['clientId']);
    await join(left, { room: ROOM });
    await join(other, { room: ROOM });
    server.broadcast('msg', { n: 0 }, { room: ROOM });
    const seen = (await left.next('msg')) as Message;
    server.broadcast('msg', { n: 1 }, { room: ROOM, except: leftId });
    server.broadcast('msg', { n: 2 }, { room: ROOM });
    expect(((await left.next('msg')) as Message).data['n']).toBe(2);

    request(left, '$history', { room: ROOM }, 'h');
    const mine = (await until(left, '$history')).at(-1)!.data;
    expect(mine['complete']).toBe(true);
    expect((mine['messages'] as Message[]).map((m) => m.data['n'])).toEqual([0, 2]);

    request(other, '$history', { room: ROOM }, 'h');
    const theirs = (await until(other, '$history')).at(-1)!.data;
    expect((theirs['messages'] as Message[]).map((m) => m.data['n'])).toEqual([0, 1, 2]);

    request(left, 'leave_room', { room: ROOM }, 'l');
    await left.next('room_left');
    request(left, 'join_room', { room: ROOM, since: at(seen.pos!) }, 'j');
    const replay = await until(left, '$recovered');
    expect(numbers(replay)).toEqual([2]);
    expect(replay.at(-1)!.data).toMatchObject({ recovered: true, replayed: 1 });
  });

  it('hides a message whose except is too long to keep from every client, incomplete', async () => {
    const { server, url } = await setup();
    const left = await v1(url);
    const other = await v1(url);
    const leftId = String(left.received[0]!.data['clientId']);
    await join(left, { room: ROOM });
    await join(other, { room: ROOM });
    const many = [leftId, ...Array.from({ length: MAX_KEPT_EXCEPT }, (_, i) => `gone-${i}`)];
    server.broadcast('msg', { n: 1 }, { room: ROOM, except: many });
    server.broadcast('msg', { n: 2 }, { room: ROOM });
    expect(((await other.next('msg')) as Message).data['n']).toBe(1);
    for (const client of [left, other]) {
      request(client, '$history', { room: ROOM }, 'h');
      const answer = (await until(client, '$history')).at(-1)!.data;
      expect((answer['messages'] as Message[]).map((m) => m.data['n'])).toEqual([2]);
      expect(answer).toMatchObject({ complete: false, reason: 'too_far_behind' });
    }
    const all = await server.history(ROOM);
    expect(all.messages.map((m) => (m.data as { n: number }).n)).toEqual([1, 2]);
  });
});
