// Rooms whose names hold separators: a room is keyed by its (namespace, room) pair as a
// whole, so a client that may join `/\nteam` + `secret` reads nothing of `/` + `team\nsecret`
// (history, `$history`, recovery, presence), whatever character the names share.
import { afterEach, describe, expect, it } from '@jest/globals';
import type { PresenceStateData } from '@pkg/wire';
import { RoomsController } from '../src/index';
import { cleanup, startServer } from './helpers';
import { request, until, v1, type Message } from './history-kit';

afterEach(cleanup);

/** Protected rooms of namespace `/`, and the pair a client asks for to reach each. */
const CASES = [
  {
    separator: 'newline',
    room: 'team\nsecret',
    lookalike: { namespace: '/\nteam', room: 'secret' },
  },
  {
    separator: 'NUL',
    room: 'team\u0000secret',
    lookalike: { namespace: '/\u0000team', room: 'secret' },
  },
  { separator: 'colon', room: 'team:secret', lookalike: { namespace: '/:team', room: 'secret' } },
];

async function protectedServer(room: string) {
  const rooms = new RoomsController({
    canJoin: (_clientId, name, namespace) => !(namespace === '/' && name === room),
  });
  return startServer([rooms], {
    shutdown_timeout: 200,
    history: [{ match: '*', size: 10, ttl: 60_000 }],
    presence: [{ match: '*' }],
  });
}

describe('a room whose name holds a separator', () => {
  for (const { separator, room, lookalike } of CASES) {
    it(`keeps its history and presence from a look-alike pair (${separator})`, async () => {
      const { server, wsUrl } = await protectedServer(room);
      const member = await v1(wsUrl);
      const memberId = String(member.received[0]!.data['clientId']);
      server.joinRoom(memberId, room);
      await member.next('$presence');
      server.broadcast('msg', { secret: 1 }, { room });
      const seen = (await member.next('msg')) as Message;

      const intruder = await v1(wsUrl);
      const intruderId = String(intruder.received[0]!.data['clientId']);
      // The policy refuses the protected pair itself.
      request(intruder, 'join_room', { room }, 'refused');
      expect((await intruder.next('error')).data['code']).toBe('forbidden');

      // The look-alike pair is another room: joined with the protected room's position, it
      // replays nothing (that position is of another stream) ...
      const since = { offset: 0, epoch: seen.pos!.epoch };
      request(intruder, 'join_room', { ...lookalike, since }, 'j');
      const recovery = await until(intruder, '$recovered');
      expect((await intruder.next('room_joined')).data).toEqual(lookalike);
      expect(recovery.at(-1)!.data['recovered']).toBe(false);

      // ... its presence lists only the intruder ...
      const presence = (await intruder.next('$presence')).data as unknown as PresenceStateData;
      expect(presence).toMatchObject(lookalike);
      expect(Object.keys(presence.state ?? {})).toEqual([intruderId]);
      const stats = await server.presenceStats(lookalike.room, { namespace: lookalike.namespace });
      expect(stats).toEqual({ connections: 1, keys: 1 });

      // ... and its history is empty.
      request(intruder, '$history', lookalike, 'h');
      const answer = (await until(intruder, '$history')).at(-1)!;
      expect(answer.data['messages']).toEqual([]);
      expect(intruder.received.filter((m) => m.event === 'msg')).toEqual([]);
    });
  }
});
