/**
 * The rooms a client wants to be in and the ones the server confirmed, so that they can be
 * joined again after a reconnect that did not resume the session.
 */
import { ClientError, createClientError } from './errors';
import type { RoomRef } from './events';
import { readErrorData } from '@pkg/wire';

interface Waiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

function key(room: string, namespace: string): string {
  return `${namespace}\u0000${room}`;
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

  isJoined(room: string, namespace: string): boolean {
    return this.#joined.has(key(room, namespace));
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
   * Reads the server events that concern rooms: `room_joined`, `room_left`, an `error`
   * `forbidden` for a room, and `unknown_event` for `join_room` (no RoomsController).
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
      const refusal = (message: string): ClientError =>
        new ClientError('PKG_ERR_CLIENT_REMOTE', message, {
          remoteCode: remote.code,
          data,
          event: 'join_room',
        });
      if (remote.code === 'forbidden' && named) {
        this.refused(
          room,
          namespace,
          refusal(remote.message || `The server refused room "${room}".`),
        );
      } else if (remote.code === 'unknown_event' && record['event'] === 'join_room') {
        this.refuseAll(
          refusal(
            'The server has no handler for join_room: register RoomsController on the server.',
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
