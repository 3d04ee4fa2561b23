import type { QueryBody, RequestBody, WireTarget } from './wire';

/** What an instance can do for a request from another instance: all of it local. */
export interface LocalOperations {
  count(target: WireTarget): number;
  ids(target: WireTarget): string[];
  /** Whether the WebSocket client is connected to this process. */
  hasClient(clientId: string): boolean;
  /** Writes a serialised envelope to a local client; false when it could not. */
  deliver(clientId: string, text: string): boolean;
  /** Disconnects a local client; false when it is not connected here. */
  disconnect(clientId: string): boolean;
  joinRoom(clientId: string, room: string, namespace: string): void;
  leaveRoom(clientId: string, room: string, namespace: string): void;
  /** `server.revoke` asked by another instance; how many local connections it reached. */
  revoke(identity: string, room: string | null, namespace: string | null): number;
}

/** The part of a reply that answers the request: a count, ids, or whether the client was here. */
export type Answer = { count: number } | { ids: string[] } | { found: boolean };

/**
 * Carries out a request from another instance on this one. Every instance answers every
 * request (the asker counts replies), so a client that is not here is `found: false`.
 * Queries are answered apart (redis-adapter.ts): their answer may take a while.
 */
export function answerRequest(
  body: Exclude<RequestBody, QueryBody>,
  local: LocalOperations,
): Answer {
  switch (body.kind) {
    case 'count':
      return { count: local.count(body.target) };
    case 'ids':
      return { ids: local.ids(body.target) };
    case 'send':
      return { found: local.hasClient(body.clientId) && local.deliver(body.clientId, body.text) };
    case 'disconnect':
      return { found: local.disconnect(body.clientId) };
    case 'joinRoom':
    case 'leaveRoom': {
      if (!local.hasClient(body.clientId)) return { found: false };
      if (body.kind === 'joinRoom') local.joinRoom(body.clientId, body.room, body.namespace);
      else local.leaveRoom(body.clientId, body.room, body.namespace);
      return { found: true };
    }
    case 'revoke':
      return { count: local.revoke(body.identity, body.room, body.namespace) };
  }
}
