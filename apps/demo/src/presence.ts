import type { Server } from '@pkg/core';
import type { DemoUser } from './auth';

/**
 * Presence in the demo: every room of every namespace tracks who is in it, whether the
 * page entered it (`room.join`, which joins on the server) or a client called
 * `client.joinRoom` (the built-in `join_room`). The presence key is the identity the auth
 * handler gave (the user's id), so two tabs of one user are one entry with two metas; a
 * guest has no identity and is keyed, and shown, by its client id.
 */
export const PRESENCE_ROOMS = Object.freeze([Object.freeze({ match: '*' })]);

/**
 * The application members of a demo meta: the user's name from the token, none for a guest.
 * (A type alias, not an interface: the server's hook wants a `Record<string, unknown>`.)
 */
export type DemoPresenceMeta = { name?: string };

/** A room's entries by presence key, as `server.presence(room)` resolves. */
export type PresenceState = Awaited<ReturnType<Server['presence']>>;

/** One key of a room as `GET /api/rooms/{room}/presence` lists it. */
export interface PresenceListEntry {
  /** The user's id, or a guest's client id. */
  key: string;
  /** The user's name from the token, or the key for a guest. */
  name: string;
  /** Connections (tabs) of this key in the room. */
  connections: number;
  metas: Array<{ clientId: string; joinedAt: number; name?: string }>;
}

/**
 * The presence hook: the name of the user the token signed in (stored as the client's data
 * `user` by the auth handler), nothing for a guest.
 */
export function createPresenceHook(
  userOf: (clientId: string) => DemoUser | undefined,
): (join: { clientId: string }) => DemoPresenceMeta {
  return ({ clientId }) => {
    const user = userOf(clientId);
    return user ? { name: user.name } : {};
  };
}

/** A room's state as the HTTP route answers it: keys in the order the server gave them. */
export function listPresence(state: PresenceState): PresenceListEntry[] {
  return Object.entries(state).map(([key, entry]) => {
    const metas = entry.metas.map((meta) => {
      const out: PresenceListEntry['metas'][number] = {
        clientId: meta.clientId,
        joinedAt: meta.joinedAt,
      };
      if (typeof meta['name'] === 'string') out.name = meta['name'];
      return out;
    });
    return {
      key,
      name: metas.find((m) => m.name !== undefined)?.name ?? key,
      connections: metas.length,
      metas,
    };
  });
}
