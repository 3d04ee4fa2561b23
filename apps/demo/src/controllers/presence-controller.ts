import { Response, SocketController, type Request } from '@pkg/core';
import { HttpRoute, RateLimit } from '@pkg/decorators';
import { z } from 'zod';
import { authenticate } from '../auth';
import type { DemoLimits } from '../limits';
import { listPresence, type PresenceState } from '../presence';
import { ROOM_NAME, decideRoomJoin } from '../room-policy';

const RoomParams = z.object({
  room: z.string().regex(ROOM_NAME, 'A room name is 1-32 letters, digits, "_", "." or "-".'),
});

/**
 * `GET /api/rooms/{room}/presence`: who is in a room of namespace `/`, cluster-wide (with
 * `REDIS_URL`, every instance's connections). The room policy applies as for joining: a
 * `private-*` room's members are listed only to a signed-in user (401 otherwise), so its
 * name and members stay among signed-in users. An invalid room name is a 400
 * `validation_failed`; an empty room lists nobody.
 */
export function createPresenceController(
  limits: DemoLimits,
  presence: (room: string) => Promise<PresenceState>,
) {
  class PresenceController extends SocketController {
    @HttpRoute('GET', '/api/rooms/{room}/presence', { params: RoomParams })
    @RateLimit(limits.status)
    async roomPresence(request: Request, input: { params: { room: string } }): Promise<Response> {
      const { room } = input.params;
      const key = request.getQuery('key');
      const auth = authenticate(
        request.getHeader('authorization') ?? undefined,
        typeof key === 'string' ? key : undefined,
      );
      if (auth.kind === 'invalid') return Response.json({ error: 'Invalid token.' }, 401);
      const decision = decideRoomJoin(auth.kind === 'user' ? auth.user : undefined, room, '/');
      if (!decision.allowed) {
        return Response.json({ error: decision.reason }, decision.code === 'forbidden' ? 401 : 400);
      }
      const list = listPresence(await presence(room));
      return Response.json({
        room,
        keys: list.length,
        connections: list.reduce((sum, entry) => sum + entry.connections, 0),
        list,
      });
    }
  }
  return new PresenceController();
}
