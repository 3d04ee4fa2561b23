/**
 * Typed event maps. One interface per direction, written once and shared with the server:
 *
 *     interface ClientEvents { 'chat.message': (data: { text: string }) => { delivered: boolean } }
 *     interface ServerEvents { 'chat.message': (data: { from: string; text: string }) => void }
 *
 * The parameter is the event's `data`; the return type is the answer (`emitWithAck` on the
 * client side, a handler's return value for a request from the server).
 */
import type {
  HistoryIncompleteReason,
  LostRange,
  RecoveryFailureReason,
  RoomPosition,
  StreamPosition,
} from '@pkg/wire';
import type { ClientError } from './errors';

/** Any interface whose members are `(data) => answer` functions. */
export type EventsMap<T> = { [K in keyof T]: (data: never) => unknown };

/** The map used when none is given: every event, data and answer `unknown`. */
export type DefaultEvents = Record<string, (data: unknown) => unknown>;

/**
 * The event names of a map. Names starting with `$` are not events: `$presence` types the
 * metas of `client.presence()`.
 */
export type EventName<M> = Exclude<Extract<keyof M, string>, `$${string}`>;

/** The `data` type of an event. */
export type EventData<M, E extends keyof M> = M[E] extends (data: infer D) => unknown ? D : never;

/** The answer type of an event. */
export type EventAnswer<M, E extends keyof M> = M[E] extends (...args: never[]) => infer R
  ? Awaited<R>
  : never;

/** What `connect` reports. */
export interface ConnectInfo {
  /** Protocol version the server speaks: 1, or 0 for a server without `$hello`. */
  protocol: 0 | 1;
  /** The client id the server gave in `$welcome` (version 1 only). */
  clientId: string | undefined;
  /** True when the previous session was resumed: same id, rooms and missed messages. */
  resumed: boolean;
  /** Why a resume was refused (`expired`, `unknown`, `overflow`, `identity`): the client started fresh. */
  freshReason?: string;
}

/**
 * Why the client stopped reconnecting after the server closed: `server_disconnect` (1000,
 * `disconnectClient`), `policy_violation` (1008), `unauthorized` (4401 or a 401 upgrade),
 * `forbidden` (4403 or 403), `session_taken_over` (4409, another connection resumed the session).
 */
export type StopCause =
  'server_disconnect' | 'policy_violation' | 'unauthorized' | 'forbidden' | 'session_taken_over';

/** What `disconnect` reports. */
export interface DisconnectInfo {
  /** The close code (1006 when the connection was lost without a close frame). */
  code: number;
  reason: string;
  /** Whether the client is going to reconnect on its own. */
  willReconnect: boolean;
  /** When the server sent the client away: why it does not reconnect. */
  cause?: StopCause;
}

/** What `reconnect_stopped` reports. */
export interface StopInfo {
  /** The close code of the server (1006 for a refused upgrade). */
  code: number;
  reason: string;
  cause: StopCause;
  /** The same error `connect()` rejects with. */
  error: ClientError;
}

/** The `data` of an `error` event sent by the server (`code`, `message`, extra fields). */
export interface ServerErrorData {
  code: string;
  message: string;
  [field: string]: unknown;
}

/**
 * What `recovered` reports, once per room the client asked to recover after a reconnect
 * (with `join_room.since` or `$hello.positions`), after the missed messages were handed to
 * the listeners: `recovered` true when nothing was missed, false with a `reason` when some
 * messages are gone (`epoch_changed`, `too_far_behind`, `not_kept`, `invalid_position`):
 * reload that room's state then, for example with `client.history()`. `already_joined`: the
 * client was in the room already, so nothing was replayed (it received the room's messages
 * live). `messages_lost`: every kept message was replayed, but those at the offsets in `lost`
 * are kept nowhere (a Redis failover lost them): reload what they would have changed.
 */
export interface RecoveredInfo {
  room: string;
  namespace: string;
  recovered: boolean;
  reason?: RecoveryFailureReason;
  /** How many missed messages the server replayed before this report. */
  replayed: number;
  /** With `messages_lost`: the offsets the replay skipped, oldest first. */
  lost?: LostRange[];
}

/**
 * The second argument of a server event's listener: `position` is the message's place in
 * its room's history (rooms that keep history), useful to match a live message with one
 * that `history()` returned.
 */
export interface MessageInfo {
  position?: RoomPosition;
}

/** Options of `history()`. */
export interface HistoryOptions {
  /** The room's namespace. Default `'/'`. */
  namespace?: string;
  /** At most this many messages (the newest ones); the server caps it. */
  limit?: number;
  /** The messages after this position instead of the last ones. */
  since?: StreamPosition;
  /** Milliseconds before the promise rejects with PKG_ERR_CLIENT_ACK_TIMEOUT. */
  timeout?: number;
}

/** One kept message, typed by the `Listen` map: its event, its data and its position. */
export type HistoryEntry<Listen> = {
  [E in EventName<Listen>]: { event: E; data: EventData<Listen, E>; pos: RoomPosition };
}[EventName<Listen>];

/**
 * What `history()` resolves with: the kept messages, oldest first; the room's current
 * position (offset 0 for a room that kept nothing yet; absent when the store could not be
 * read); `complete` false when the answer is not everything asked for: `reason`
 * `truncated` when it stopped at `limit` or the server's bounds (nothing is lost: ask again,
 * with `since` set to the last message's `pos` to page forward), another reason when `since`
 * could not be served; `messages_lost` with the offsets in `lost` that a failover lost (the
 * messages around them are in the answer).
 */
export interface HistoryResult<Listen> {
  messages: Array<HistoryEntry<Listen>>;
  position?: StreamPosition;
  complete: boolean;
  reason?: HistoryIncompleteReason;
  lost?: LostRange[];
}

/**
 * Events of the client itself. Their names are reserved: a server message with one of
 * these names (other than `error`) is not delivered.
 */
export interface LifecycleEvents {
  connect: (info: ConnectInfo) => void;
  disconnect: (info: DisconnectInfo) => void;
  /** A connection attempt failed, or the server refused the client (then no retry). */
  connect_error: (error: ClientError) => void;
  reconnecting: (info: { attempt: number; delay: number }) => void;
  reconnect: (info: { attempt: number }) => void;
  reconnect_failed: (info: { attempts: number }) => void;
  /** The server sent the client away (see {@link StopCause}): no automatic reconnect. */
  reconnect_stopped: (info: StopInfo) => void;
  /** An `error` event from the server that answers no request. */
  error: (data: ServerErrorData) => void;
  /** One room's recovery after a reconnect is over (see {@link RecoveredInfo}). */
  recovered: (info: RecoveredInfo) => void;
  /**
   * The server accepted new credentials (`$refresh`, sent before `$welcome.expiresAt` with
   * what the `auth` function returns): they expire at `expiresAt` (null: never).
   */
  refreshed: (info: { expiresAt: number | null }) => void;
  /**
   * A refresh of the credentials failed (`auth()` threw, or the server refused them): tried
   * again in `retryIn` ms, or null when no time is left (the server then closes with 4419
   * and the client reconnects, asking `auth()` again).
   */
  refresh_error: (info: { error: ClientError; retryIn: number | null }) => void;
  /** The server took the client out of a room (`revoked` by the application, or `expired`). */
  revoked: (info: { room: string; namespace: string; reason: 'revoked' | 'expired' }) => void;
}

export type LifecycleEventName = keyof LifecycleEvents;

/** Names `on` accepts: the lifecycle events and the server's events. */
export type ListenName<Listen> = LifecycleEventName | EventName<Listen>;

/** The handler type of a name `on` accepts. */
export type Listener<Listen, E> = E extends LifecycleEventName
  ? LifecycleEvents[E]
  : E extends keyof Listen
    ? (
        data: EventData<Listen, E>,
        info: MessageInfo,
      ) => EventAnswer<Listen, E> | Promise<EventAnswer<Listen, E>>
    : never;

/** Options of one `emitWithAck` call. */
export interface AckOptions {
  /** Milliseconds before the promise rejects with PKG_ERR_CLIENT_ACK_TIMEOUT. */
  timeout?: number;
}

/** A room as the built-in room events name it. */
export interface RoomRef {
  room: string;
  namespace: string;
}
