import type { DemoUser } from './auth';

/** Room names the demo accepts: 1-32 letters, digits, `_`, `-` or `.`. */
export const ROOM_NAME = /^[A-Za-z0-9_.-]{1,32}$/;

/** Namespace that only admins may use. */
export const ADMIN_NAMESPACE = '/admin';

export type RoomDecision =
  | { readonly allowed: true }
  | {
      readonly allowed: false;
      /** `invalid_payload` for a malformed room name, `forbidden` for a refused join. */
      readonly code: 'invalid_payload' | 'forbidden';
      readonly reason: string;
    };

/**
 * Who may join which room, shared by the chat's `room.join` and the built-in
 * `join_room` of RoomsController:
 * - namespace `/`: any valid room name; rooms named `private-*` need a signed-in user;
 * - namespace `/admin`: admins only;
 * - any other namespace: nobody.
 */
export function decideRoomJoin(
  user: DemoUser | undefined,
  room: string,
  namespace: string,
): RoomDecision {
  if (!ROOM_NAME.test(room)) {
    return {
      allowed: false,
      code: 'invalid_payload',
      reason: 'Room names are 1-32 characters: letters, digits, "_", "-" or ".".',
    };
  }
  if (namespace === '/') {
    if (room.startsWith('private-') && !user) {
      return {
        allowed: false,
        code: 'forbidden',
        reason: `Room "${room}" is for signed-in users; connect with a token.`,
      };
    }
    return { allowed: true };
  }
  if (namespace === ADMIN_NAMESPACE) {
    return user?.role === 'admin'
      ? { allowed: true }
      : {
          allowed: false,
          code: 'forbidden',
          reason: `Namespace "${ADMIN_NAMESPACE}" is for admins only.`,
        };
  }
  return {
    allowed: false,
    code: 'forbidden',
    reason: `Namespace "${namespace}" does not exist in this demo.`,
  };
}
