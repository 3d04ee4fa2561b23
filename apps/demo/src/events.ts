/**
 * The chat's event maps, written once: `ChatController` is a
 * `SocketController<ControllerHost, ServerEvents, ClientEvents>` and the page's client a
 * `Client<ClientEvents, ServerEvents>`, so both ends are checked against the same types.
 * Types only: nothing here exists at run time.
 */

/** A user as the page sees it in `welcome`. */
export interface WelcomeUser {
  id: string;
  name: string;
  role: string;
}

/** Someone connected, entered a room or left one (`room` null: connected / not in a room). */
export interface Presence {
  clientId: string;
  name: string | null;
  room: string | null;
}

/** What a client sends. */
export interface ClientEvents {
  /** A chat line; answered (when sent with an id) with whether it was relayed. */
  'chat.message': (data: { message: string }) => { delivered: boolean };
  /** Enter a chat room (leaving the previous one), optionally with a display name. */
  'room.join': (data: { room: string; name?: string }) => void;
}

/** What the server sends. */
export interface ServerEvents {
  welcome: (data: {
    clientId: string;
    name: string | null;
    user: WelcomeUser | null;
    clients: number;
  }) => void;
  'user.joined': (data: Presence) => void;
  'user.left': (data: Presence) => void;
  'chat.message': (data: {
    clientId: string;
    name: string | null;
    message: string;
    room: string | null;
    timestamp: number;
  }) => void;
  'room.joined': (data: { room: string; clientId: string; name: string | null }) => void;
  'api.message': (data: { message: string; timestamp: number }) => void;
}
