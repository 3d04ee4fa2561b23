import {
  RoomsController,
  type RateLimitRule,
  type RoomEventPayload,
  type RoomsControllerOptions,
} from '@pkg/core';
import { RateLimit, SocketOn } from '@pkg/decorators';

/**
 * The built-in `RoomsController` (`join_room` / `leave_room`) with a budget on `join_room`:
 * like `room.join`, every new room name costs a Redis subscription with `REDIS_URL`. The
 * subclass declares the event again with `RateLimit`, which replaces the inherited route;
 * the work stays the base class's.
 */
export function createRoomsController(
  joinLimit: RateLimitRule,
  options: RoomsControllerOptions,
): RoomsController {
  class LimitedRoomsController extends RoomsController {
    @SocketOn('join_room')
    @RateLimit(joinLimit)
    override onJoinRoom(clientId: string, data: unknown): Promise<RoomEventPayload> {
      return super.onJoinRoom(clientId, data);
    }
  }
  return new LimitedRoomsController(options);
}
