/**
 * The chat's event maps, written once: `ChatController` (from `createChatController`) is a
 * `SocketController<ChatHost, ServerEvents, ClientEvents>` (`ChatHost`: the spec's
 * `ControllerHost` with `updatePresence`) and the page's client a
 * `Client<ClientEvents, ServerEvents>`, so both ends are checked against the same types.
 * Types only: nothing here exists at run time.
 */

import type { DemoPresenceMeta } from './presence';

/** A user as the page sees it in `welcome`. */
export interface WelcomeUser {
  id: string;
  name: string;
  role: string;
}

/**
 * Someone entered or left a chat room, sent to that room's members only; `clients` is the
 * number of clients online (on the instance that sent it) at that moment.
 */
export interface Presence {
  clientId: string;
  /** The account's name for a signed-in user, `guest-...` for a guest. */
  name: string;
  room: string;
  clients: number;
  /** When, in Unix seconds (kept in the room's history, the page shows it). */
  timestamp: number;
}

/** What a client sends. */
export interface ClientEvents {
  /**
   * A chat line to one's room; answered (when sent with an id) once it was relayed, or
   * refused with the `error` `not_in_room` (with the same id) when one is in no room.
   */
  'chat.message': (data: { message: string }) => { delivered: true };
  /** Enter a chat room (leaving the previous one), optionally with a display name. */
  'room.join': (data: { room: string; name?: string }) => void;
}

/** What the server sends. */
export interface ServerEvents {
  /** Not an event: the members of a presence meta (`client.presence(room)`), see presence.ts. */
  $presence: (meta: DemoPresenceMeta) => void;
  welcome: (data: {
    clientId: string;
    name: string;
    user: WelcomeUser | null;
    clients: number;
  }) => void;
  'user.joined': (data: Presence) => void;
  'user.left': (data: Presence) => void;
  'chat.message': (data: {
    clientId: string;
    name: string;
    message: string;
    room: string;
    timestamp: number;
  }) => void;
  'room.joined': (data: { room: string; clientId: string; name: string }) => void;
  /** From `POST /api/broadcast`: `room` null when it went to every client. */
  'api.message': (data: { message: string; room: string | null; timestamp: number }) => void;
}

/**
 * The shared document's event maps (`DocController` and the document page's client). A Yjs
 * update travels as bytes, one binary frame each way; the server relays it to the document's
 * other pages without reading it.
 */
export interface DocClientEvents {
  /** Open a document (leaving the one open before); answered with its name. */
  'doc.open': (data: { doc: string }) => { doc: string };
  /** A Yjs update of the open document, relayed to its other pages and kept in its history. */
  'doc.update': (data: Uint8Array) => { relayed: true };
  /** The sender's whole document as one Yjs update (`Y.encodeStateAsUpdate`); relayed and kept alike. */
  'doc.state': (data: Uint8Array) => { relayed: true };
}

/** What the server sends to a document page. */
export interface DocServerEvents {
  'doc.update': (data: Uint8Array) => void;
  'doc.state': (data: Uint8Array) => void;
}
