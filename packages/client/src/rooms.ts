/**
 * The rooms a client wants to be in and the ones the server confirmed, so that they can be
 * joined again after a reconnect that did not resume the session.
 */
import { ClientError, createClientError } from './errors';
import type { RoomRef } from './events';
import { readErrorData, roomKey } from '@pkg/wire';
import type { InboundMessage } from './protocol';

interface Waiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

/** A room's key in the tables below: `@pkg/wire`'s one encoding of the pair. */
function key(room: string, namespace: string): string {
  return roomKey(namespace, room);
}

/**
 * The `error` codes with which a server refuses a join: the join policy (`forbidden`), the
 * room cap (`too_many_rooms`), a name it does not accept (`invalid_payload`), a budget
 * (`rate_limited`, e.g. the Redis adapter's bound on subscription changes).
 */
const JOIN_REFUSALS: ReadonlySet<string> = new Set([
  'forbidden',
  'too_many_rooms',
  'invalid_payload',
  'rate_limited',
]);

/** The error a refused join rejects with: the server's code, the room and its namespace. */
export function joinRefusal(room: string, namespace: string, data: unknown): ClientError {
  const remote = readErrorData(data);
  const hint =
    remote.code === 'unknown_event'
      ? 'the server has no handler for join_room: register RoomsController on the server'
      : remote.message || remote.code;
  return new ClientError(
    'PKG_ERR_CLIENT_REMOTE',
    `The server refused to join room "${room}" in "${namespace}" (${remote.code}): ${hint}.`,
    { remoteCode: remote.code, data, event: 'join_room', room, namespace },
  );
}

/** Throws a TypeError unless `room` is a non-empty string and `namespace` starts with "/". */
export function checkRoom(method: string, room: unknown, namespace: unknown): void {
  if (typeof room !== 'string' || room.length === 0) {
    throw createClientError(
      TypeError,
      'PKG_ERR_CLIENT_INVALID_ARGUMENT',
      `${method}: room must be a non-empty string such as "lobby".`,
    );
  }
  if (typeof namespace !== 'string' || !namespace.startsWith('/')) {
    throw createClientError(
      TypeError,
      'PKG_ERR_CLIENT_INVALID_ARGUMENT',
      `${method}: namespace must be a string starting with "/" (default "/").`,
    );
  }
}

export class RoomSet {
  /** Joined or being joined: what a fresh connection must join again. */
  readonly #wanted = new Map<string, RoomRef>();
  /** Confirmed by `room_joined` on the current session. */
  readonly #joined = new Map<string, RoomRef>();
  /** Left while disconnected: to leave on the server after a resume. */
  readonly #leaveLater = new Map<string, RoomRef>();
  readonly #joinWaiters = new Map<string, Waiter[]>();
  readonly #leaveWaiters = new Map<string, Waiter[]>();
  /**
   * `join_room` requests sent with an `id` on the current connection, by id; `waited` when
   * a `joinRoom` promise waited for the room as it was sent (not so for a plain rejoin).
   */
  readonly #requests = new Map<string, RoomRef & { waited: boolean }>();
  #nextRequest = 1;

  isJoined(room: string, namespace: string): boolean {
    return this.#joined.has(key(room, namespace));
  }

  /** Joined through `joinRoom` (or being joined): rejoined with `join_room` after a reconnect. */
  isWanted(room: string, namespace: string): boolean {
    return this.#wanted.has(key(room, namespace));
  }

  /**
   * Records a wanted room; resolves on `room_joined`, rejects when the server refuses it or
   * with PKG_ERR_CLIENT_ACK_TIMEOUT (and forgets the room) after `timeout` ms.
   */
  join(room: string, namespace: string, timeout: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        this.#dropWaiter(this.#joinWaiters, room, namespace, waiter);
        const k = key(room, namespace);
        if (!this.#joinWaiters.has(k) && !this.#joined.has(k)) this.#wanted.delete(k);
        reject(
          new ClientError(
            'PKG_ERR_CLIENT_ACK_TIMEOUT',
            `No room_joined for room "${room}" in "${namespace}" within ${timeout} ms: is RoomsController registered on the server?`,
            { event: 'join_room' },
          ),
        );
      }, timeout);
      this.#want(room, namespace, waiter);
    });
  }

  /**
   * Forgets a room; while connected resolves on `room_left` (or rejects after `timeout`),
   * while disconnected at once (a resumed session leaves it on the server later).
   */
  leave(room: string, namespace: string, connected: boolean, timeout: number): Promise<void> {
    if (!connected) {
      this.#unwant(room, namespace, false);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject,
      };
      const timer = setTimeout(() => {
        this.#dropWaiter(this.#leaveWaiters, room, namespace, waiter);
        reject(
          new ClientError(
            'PKG_ERR_CLIENT_ACK_TIMEOUT',
            `No room_left for room "${room}" in "${namespace}" within ${timeout} ms.`,
            { event: 'leave_room' },
          ),
        );
      }, timeout);
      this.#unwant(room, namespace, true, waiter);
    });
  }

  #want(room: string, namespace: string, waiter: Waiter): void {
    const k = key(room, namespace);
    this.#wanted.set(k, { room, namespace });
    this.#leaveLater.delete(k);
    this.#push(this.#joinWaiters, k, waiter);
  }

  #unwant(room: string, namespace: string, connected: boolean, waiter?: Waiter): void {
    const k = key(room, namespace);
    const wasJoined = this.#joined.has(k);
    this.#wanted.delete(k);
    this.#joined.delete(k);
    if (!connected && wasJoined) this.#leaveLater.set(k, { room, namespace });
    if (waiter) this.#push(this.#leaveWaiters, k, waiter);
  }

  /**
   * A `join_room` is about to be sent with an `id` (protocol version 1): returns the id, a
   * string (`join-<n>`) so that it never meets the numeric ids of `emitWithAck`.
   */
  request(room: string, namespace: string): string {
    const id = `join-${this.#nextRequest++}`;
    const waited = this.#joinWaiters.has(key(room, namespace));
    this.#requests.set(id, { room, namespace, waited });
    return id;
  }

  /**
   * An answer with an `id`: when it answers a `join_room`, settles that room (joined, or
   * refused with the server's code) and returns `{ waited }`, whether a `joinRoom` promise
   * waited for it when it was sent (a rejoin after a reconnect may have none). Undefined
   * for any other answer.
   */
  answer(message: InboundMessage): { waited: boolean } | undefined {
    if (typeof message.id !== 'string') return undefined;
    const target = this.#requests.get(message.id);
    if (!target) return undefined;
    this.#requests.delete(message.id);
    const { room, namespace, waited } = target;
    if (message.event === 'error') {
      this.refused(room, namespace, joinRefusal(room, namespace, message.data));
    } else {
      this.joined(room, namespace);
    }
    return { waited };
  }

  /**
   * Reads the server events that concern rooms: `room_joined`, `room_left`, and the `error`
   * events without an `id` that refuse a join (from a server that does not answer ids):
   * `forbidden`, or `too_many_rooms` / `invalid_payload` / `rate_limited` naming a room not
   * joined; and `unknown_event` for `join_room` (no RoomsController).
   */
  observe(event: string, data: unknown): void {
    if (typeof data !== 'object' || data === null) return;
    const record = data as Record<string, unknown>;
    const { room, namespace } = record;
    const named = typeof room === 'string' && typeof namespace === 'string';
    if (event === 'room_joined' && named) this.joined(room, namespace);
    else if (event === 'room_left' && named) this.left(room, namespace);
    else if (event === 'error') {
      const remote = readErrorData(data);
      if (named && JOIN_REFUSALS.has(remote.code)) {
        // A refusal of a room already confirmed (e.g. of a leave) is not a refused join.
        if (remote.code !== 'forbidden' && this.#joined.has(key(room, namespace))) return;
        this.refused(room, namespace, joinRefusal(room, namespace, data));
      } else if (remote.code === 'unknown_event' && record['event'] === 'join_room') {
        this.refuseAll(
          new ClientError(
            'PKG_ERR_CLIENT_REMOTE',
            'The server has no handler for join_room: register RoomsController on the server.',
            { remoteCode: remote.code, data, event: 'join_room' },
          ),
        );
      }
    }
  }

  /** A `room_joined` arrived. */
  joined(room: string, namespace: string): void {
    const k = key(room, namespace);
    this.#joined.set(k, { room, namespace });
    this.#wanted.set(k, { room, namespace });
    for (const w of this.#joinWaiters.get(k) ?? []) w.resolve();
    this.#joinWaiters.delete(k);
  }

  /** A `room_left` arrived. */
  left(room: string, namespace: string): void {
    const k = key(room, namespace);
    for (const w of this.#leaveWaiters.get(k) ?? []) w.resolve();
    this.#leaveWaiters.delete(k);
  }

  /** The server refused a join: forget the room and reject whoever waits for it. */
  refused(room: string, namespace: string, error: Error): boolean {
    const k = key(room, namespace);
    const waiters = this.#joinWaiters.get(k);
    const known = this.#wanted.delete(k) || waiters !== undefined;
    this.#joined.delete(k);
    for (const w of waiters ?? []) w.reject(error);
    this.#joinWaiters.delete(k);
    return known;
  }

  /** The server took the client out of a room (`$revoked`): it is neither joined nor wanted. */
  revoked(room: string, namespace: string): void {
    const k = key(room, namespace);
    this.#wanted.delete(k);
    this.#joined.delete(k);
    this.#leaveLater.delete(k);
  }

  /** The server cannot join rooms at all: reject every waiting join and forget those rooms. */
  refuseAll(error: Error): void {
    for (const [k, list] of this.#joinWaiters) {
      if (!this.#joined.has(k)) this.#wanted.delete(k);
      for (const w of list) w.reject(error);
    }
    this.#joinWaiters.clear();
  }

  #dropWaiter(map: Map<string, Waiter[]>, room: string, namespace: string, waiter: Waiter): void {
    const k = key(room, namespace);
    const list = (map.get(k) ?? []).filter((w) => w !== waiter);
    if (list.length) map.set(k, list);
    else map.delete(k);
  }

  /**
   * A new connection is established. Resumed: the server kept the rooms; returns the joins
   * still unconfirmed and the leaves made while away. Fresh: every wanted room is joined
   * again.
   */
  onConnected(resumed: boolean): { join: RoomRef[]; leave: RoomRef[] } {
    // Requests of an earlier connection get no answer: their rooms are joined again below.
    this.#requests.clear();
    if (!resumed) this.#joined.clear();
    const join = [...this.#wanted.entries()]
      .filter(([k]) => !this.#joined.has(k))
      .map(([, r]) => r);
    const leave = resumed ? [...this.#leaveLater.values()] : [];
    this.#leaveLater.clear();
    // Leaves waiting for `room_left` from a lost connection are done: the room is not rejoined.
    for (const list of this.#leaveWaiters.values()) for (const w of list) w.resolve();
    this.#leaveWaiters.clear();
    return { join, leave };
  }

  /** Forgets everything (disconnect()), rejecting the waiting joins. */
  clear(error: Error): void {
    for (const list of this.#joinWaiters.values()) for (const w of list) w.reject(error);
    for (const list of this.#leaveWaiters.values()) for (const w of list) w.resolve();
    this.#joinWaiters.clear();
    this.#leaveWaiters.clear();
    this.#requests.clear();
    this.#wanted.clear();
    this.#joined.clear();
    this.#leaveLater.clear();
  }

  #push(map: Map<string, Waiter[]>, k: string, waiter: Waiter): void {
    const list = map.get(k) ?? [];
    list.push(waiter);
    map.set(k, list);
  }

  list(): RoomRef[] {
    return [...this.#joined.values()].map((r) => ({ ...r }));
  }
}
