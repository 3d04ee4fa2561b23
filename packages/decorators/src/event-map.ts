/**
 * Typed event maps: one interface per direction, written once and shared by the server and
 * `@pkg/client` (the same shape: a member per event, `(data) => answer`).
 *
 *     interface ClientEvents { 'chat.message': (data: { text: string }) => { delivered: boolean } }
 *     interface ServerEvents { 'chat.message': (data: { from: string; text: string }) => void }
 *
 * On the server, `SocketController<Host, ServerEvents, ClientEvents>` types `emit` and
 * `broadcast` with the first map and its `SocketOn` handlers with the second.
 */
import type { EventData } from './types';

/** Any interface whose members are `(data) => answer` functions. */
export type EventsMap<T> = { [K in keyof T]: (data: never) => unknown };

/**
 * The map of an untyped controller: every event name, `data` an object or an array, or
 * bytes (a `Uint8Array`: a binary message of protocol version 1).
 */
export type UntypedEvents = Record<string, (data: EventData | Uint8Array) => unknown>;

/** The event names of a map. */
export type EventName<M> = Extract<keyof M, string>;

/** The `data` type of an event of a map. */
export type EventPayload<M, E extends keyof M> = M[E] extends (data: infer D) => unknown
  ? D
  : never;

/** The answer type of an event of a map (what a handler returns to a request with an `id`). */
export type EventAnswer<M, E extends keyof M> = M[E] extends (...args: never[]) => infer R
  ? Awaited<R>
  : never;

/** `unknown` for a map with a string index signature (untyped), else the map itself. */
export type ListenedEvents<Listen> = string extends keyof Listen ? unknown : Listen;

/**
 * What a controller class declares about the events its `SocketOn` handlers receive.
 * `SocketController` implements it from its `Listen` type parameter; `SocketOn` reads it
 * from the class it decorates. The member exists only in types, never at run time.
 */
export interface SocketEventsDeclaration<Listen> {
  readonly '~listen'?: ListenedEvents<Listen>;
}
