import { z } from 'zod';
import { Response, SocketController, type Request } from '@pkg/core';
import { HttpRoute, RateLimit } from '@pkg/decorators';
import { USER_KEY, requireAuth, requireRole, type DemoUser, type SessionTokens } from '../auth';
import { ROOM_NAME } from '../room-policy';

/**
 * The body of `POST /api/admin/revoke`: the user id to take out of `room` (or, without a
 * room, off the server). Unknown keys are refused.
 */
export const RevokeBody = z.strictObject({
  user: z.string().min(1).max(64),
  room: z
    .string()
    .regex(ROOM_NAME, 'A room name is 1-32 letters, digits, "_", "." or "-".')
    .optional(),
});

/**
 * Credentials that expire: `POST /api/token` trades a demo token for a short-lived session
 * token (the page signs in with it and refreshes it before it expires), and
 * `POST /api/admin/revoke` (admins only) takes a user out of a room, or off the server, on
 * every instance (`server.revoke`).
 */
export class CredentialsController extends SocketController {
  readonly #sessions: SessionTokens;
  readonly #revoke: (user: string, room: string | undefined) => Promise<number>;

  constructor(
    sessions: SessionTokens,
    revoke: (user: string, room: string | undefined) => Promise<number>,
  ) {
    super();
    this.#sessions = sessions;
    this.#revoke = revoke;
  }

  /** A session token for the caller (401 without a valid demo token), and when it expires. */
  @HttpRoute('POST', '/api/token', { middlewares: [requireAuth] })
  @RateLimit(30, 60)
  token(request: Request): Response {
    const user = request.getAttribute<DemoUser>(USER_KEY)!;
    return Response.json(this.#sessions.issue(user));
  }

  /** Admins only: how many connections of the user were reached. */
  @HttpRoute('POST', '/api/admin/revoke', {
    middlewares: [requireRole('admin')],
    body: RevokeBody,
  })
  async revoke(_request: Request, input: { body: { user: string; room?: string } }) {
    const { user, room } = input.body;
    const revoked = await this.#revoke(user, room);
    return Response.json({ user, room: room ?? null, revoked });
  }
}
