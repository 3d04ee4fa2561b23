import type { Server } from '@pkg/core';

/**
 * Presence in the demo: every room of every namespace tracks who is in it, whether the
 * page entered it (`room.join`, which joins on the server) or a client called
 * `client.joinRoom` (the built-in `join_room`). The presence key is the identity the auth
 * handler gave (the user's id), so two tabs of one user are one entry with two metas; a
 * guest has no identity and is keyed by its client id. Every meta carries the name the chat
 * shows (`nameOf` in names.ts): the account's name for a user, `guest-...` for a guest.
 */
export const PRESENCE_ROOMS = Object.freeze([Object.freeze({ match: '*' })]);

/**
 * The application members of a demo meta: the name the chat shows (the account's name for a
 * user, `guest-...` for a guest). Optional: a meta of another application, or one whose
 * hook failed, has none. (A type alias, not an interface: the server's hook wants a
 * `Record<string, unknown>`.)
 */
export type DemoPresenceMeta = { name?: string };

/** A room's entries by presence key, as `server.presence(room)` resolves. */
export type PresenceState = Awaited<ReturnType<Server['presence']>>;

/** One key of a room as `GET /api/rooms/{room}/presence` lists it. */
export interface PresenceListEntry {
  /** The user's id, or a guest's client id. */
  key: string;
  /** The name the chat shows: the account's name, `guest-...` for a guest (else the key). */
  name: string;
  /** Connections (tabs) of this key in the room. */
  connections: number;
  metas: Array<{ clientId: string; joinedAt: number; name?: string }>;
}

/**
 * The presence hook: the name the chat shows for the client (`nameOf`), so the page's
 * "In this room" list and its chat lines name everyone, guests included, the same way. The
 * chat's `room.join` stores a chosen name before it joins, and updates the meta when the
 * name changes in the room.
 */
export function createPresenceHook(
  nameOf: (clientId: string) => string,
): (join: { clientId: string }) => DemoPresenceMeta {
  return ({ clientId }) => ({ name: nameOf(clientId) });
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
