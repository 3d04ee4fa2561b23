/**
 * Namespaces and rooms of the clients connected to this process.
 *
 * A client may be a member of several namespaces; it is put in `/` when it connects. Rooms
 * live inside a namespace, and joining a room in a namespace also makes the client a member
 * of that namespace. Every join and leave is O(1) (Maps of Sets, indexed both ways); empty
 * rooms and namespaces are removed at once, so memory follows the live membership only.
 */
import { DEFAULT_MAX_ROOM_NAME_LENGTH, nameProblem, quoteName, roomError } from './room-names';

export const DEFAULT_NAMESPACE = '/';

/** Limits of a {@link NamespaceManager}; the server passes its configuration. */
export interface NamespaceManagerOptions {
  /** Rooms one client may be in at once, over all namespaces; 0 = no limit. Default 128. */
  maxRoomsPerClient?: number;
  /** Longest room or namespace name (UTF-16 code units). Default 128. */
  maxNameLength?: number;
}

const EMPTY: ReadonlySet<string> = new Set<string>();

/** Counts of what the manager holds, e.g. to check that nothing leaks. */
export interface NamespaceStats {
  /** Namespaces with at least one member. */
  readonly namespaces: number;
  /** Rooms with at least one member, over all namespaces. */
  readonly rooms: number;
  /** Clients that are a member of at least one namespace or room. */
  readonly clients: number;
}

/** One namespace and the rooms of it a client is in. */
export interface ClientMembership {
  readonly namespace: string;
  readonly rooms: readonly string[];
}

function checkName(kind: 'client id' | 'room' | 'namespace', value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new TypeError(
      `NamespaceManager: the ${kind} must be a non-empty string, got ${
        typeof value === 'string' ? 'an empty string' : typeof value
      }.`,
    );
  }
  return value;
}

/** Told after a client entered (`joined`) or left a room; see {@link NamespaceManager.setRoomListener}. */
export type RoomListener = (
  joined: boolean,
  clientId: string,
  room: string,
  namespace: string,
) => void;

export class NamespaceManager {
  readonly #maxRooms: number;
  #roomListener: RoomListener | null = null;
  readonly #maxName: number;
  /** namespace -> its member client ids */
  readonly #namespaces = new Map<string, Set<string>>();
  /** namespace -> room -> member client ids */
  readonly #rooms = new Map<string, Map<string, Set<string>>>();
  /**
   * client id -> namespaces it is a member of. A client in one namespace (nearly every
   * client: `/`) shares that namespace's one-member set from #alone instead of owning a
   * Set; the set is copied when a second namespace is joined (see #ownNamespaces).
   */
  readonly #clientNamespaces = new Map<string, Set<string>>();
  /** namespace -> the shared set holding only it (never changed once made). */
  readonly #alone = new Map<string, Set<string>>();
  /** client id -> namespace -> rooms it is in */
  readonly #clientRooms = new Map<string, Map<string, Set<string>>>();

  constructor(options: NamespaceManagerOptions = {}) {
    const { maxRoomsPerClient = 128, maxNameLength = DEFAULT_MAX_ROOM_NAME_LENGTH } = options;
    if (!Number.isSafeInteger(maxRoomsPerClient) || maxRoomsPerClient < 0) {
      throw new TypeError(
        'NamespaceManager: maxRoomsPerClient must be a whole number of rooms (0 = no limit).',
      );
    }
    if (!Number.isSafeInteger(maxNameLength) || maxNameLength < 1) {
      throw new TypeError('NamespaceManager: maxNameLength must be a positive whole number.');
    }
    this.#maxRooms = maxRoomsPerClient;
    this.#maxName = maxNameLength;
  }

  /**
   * One listener told of every room a client actually enters or leaves, whichever path
   * changed it (the server's presence tracking uses it). It must not throw.
   */
  setRoomListener(listener: RoomListener | null): void {
    this.#roomListener = listener;
  }

  /** Rooms one client may be in at once (0 = no limit). */
  get maxRoomsPerClient(): number {
    return this.#maxRooms;
  }

  /** Longest room or namespace name accepted. */
  get maxNameLength(): number {
    return this.#maxName;
  }

  /**
   * Throws what {@link joinRoom} would throw for that client, room and namespace, without
   * changing anything: `PKG_ERR_CORE_INVALID_ROOM_NAME` (TypeError) for a malformed name,
   * `PKG_ERR_CORE_TOO_MANY_ROOMS` (RangeError) when the client is at the room cap.
   */
  checkJoin(clientId: string, room: string, namespace: string = DEFAULT_NAMESPACE): void {
    checkName('client id', clientId);
    const problem =
      nameProblem('room', room, this.#maxName) ??
      nameProblem('namespace', namespace, this.#maxName);
    if (problem !== null) {
      throw roomError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ROOM_NAME',
        `joinRoom: ${problem}. Nothing was joined.`,
        room,
        namespace,
      );
    }
    const max = this.#maxRooms;
    if (max === 0 || this.isInRoom(clientId, room, namespace)) return;
    if (this.roomCount(clientId) >= max) {
      throw roomError(
        RangeError,
        'PKG_ERR_CORE_TOO_MANY_ROOMS',
        `joinRoom: the client is already in ${max} rooms (max_rooms_per_client), so it cannot join ${quoteName(room)}; leave a room first.`,
        room,
        namespace,
      );
    }
  }

  /** Rooms the client is in, over all namespaces. */
  roomCount(clientId: string): number {
    let n = 0;
    const byNamespace = this.#clientRooms.get(clientId);
    if (byNamespace) for (const rooms of byNamespace.values()) n += rooms.size;
    return n;
  }

  /** namespace -> member client ids (read-only view). */
  get namespaces(): ReadonlyMap<string, ReadonlySet<string>> {
    return this.#namespaces;
  }

  /** namespace -> room -> member client ids (read-only view). */
  get rooms(): ReadonlyMap<string, ReadonlyMap<string, ReadonlySet<string>>> {
    return this.#rooms;
  }

  /** client id -> its namespaces (read-only view). */
  get clientNamespaces(): ReadonlyMap<string, ReadonlySet<string>> {
    return this.#clientNamespaces;
  }

  /** client id -> namespace -> its rooms (read-only view). */
  get clientRooms(): ReadonlyMap<string, ReadonlyMap<string, ReadonlySet<string>>> {
    return this.#clientRooms;
  }

  /** Makes the client a member of the namespace (default `/`). Joining twice is harmless. */
  joinNamespace(clientId: string, namespace: string = DEFAULT_NAMESPACE): void {
    checkName('client id', clientId);
    checkName('namespace', namespace);
    const problem = nameProblem('namespace', namespace, this.#maxName);
    if (problem !== null) {
      throw roomError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ROOM_NAME',
        `joinNamespace: ${problem}. Nothing was joined.`,
        undefined,
        namespace,
      );
    }
    let members = this.#namespaces.get(namespace);
    if (!members) {
      members = new Set();
      this.#namespaces.set(namespace, members);
    }
    members.add(clientId);
    const own = this.#clientNamespaces.get(clientId);
    if (own === undefined) this.#clientNamespaces.set(clientId, this.#aloneIn(namespace));
    else if (!own.has(namespace)) this.#ownNamespaces(clientId, own).add(namespace);
  }

  /** The shared set of the one namespace `namespace`. */
  #aloneIn(namespace: string): Set<string> {
    let set = this.#alone.get(namespace);
    if (set === undefined) {
      set = new Set([namespace]);
      this.#alone.set(namespace, set);
    }
    return set;
  }

  /** The client's own (changeable) set of namespaces: a copy of a shared one. */
  #ownNamespaces(clientId: string, current: Set<string>): Set<string> {
    if (this.#alone.get([...current][0]!) !== current) return current;
    const own = new Set(current);
    this.#clientNamespaces.set(clientId, own);
    return own;
  }

  /**
   * Takes the client out of a namespace and out of every room in it. Without a namespace,
   * the client leaves every namespace and room it is in (as on disconnect).
   */
  leaveNamespace(clientId: string, namespace?: string): void {
    checkName('client id', clientId);
    if (namespace === undefined) {
      const own = this.#clientNamespaces.get(clientId);
      this.leaveAllRooms(clientId);
      if (own) for (const ns of [...own]) this.#dropNamespaceMembership(clientId, ns);
      return;
    }
    checkName('namespace', namespace);
    const rooms = this.#clientRooms.get(clientId)?.get(namespace);
    if (rooms) for (const room of [...rooms]) this.leaveRoom(clientId, room, namespace);
    this.#dropNamespaceMembership(clientId, namespace);
  }

  /**
   * Puts the client in a room of a namespace (default `/`), and in that namespace. Throws
   * before changing anything when a name is malformed or the client is at the room cap
   * (see {@link checkJoin}); joining a room the client is in is harmless.
   */
  joinRoom(clientId: string, room: string, namespace: string = DEFAULT_NAMESPACE): void {
    checkName('room', room);
    checkName('namespace', namespace);
    this.checkJoin(clientId, room, namespace);
    this.joinNamespace(clientId, namespace);
    let byRoom = this.#rooms.get(namespace);
    if (!byRoom) {
      byRoom = new Map();
      this.#rooms.set(namespace, byRoom);
    }
    let members = byRoom.get(room);
    if (!members) {
      members = new Set();
      byRoom.set(room, members);
    }
    const added = !members.has(clientId);
    members.add(clientId);
    let byNamespace = this.#clientRooms.get(clientId);
    if (!byNamespace) {
      byNamespace = new Map();
      this.#clientRooms.set(clientId, byNamespace);
    }
    let own = byNamespace.get(namespace);
    if (!own) {
      own = new Set();
      byNamespace.set(namespace, own);
    }
    own.add(room);
    if (added) this.#roomListener?.(true, clientId, room, namespace);
  }

  /** Takes the client out of one room. The client stays in the namespace. */
  leaveRoom(clientId: string, room: string, namespace: string = DEFAULT_NAMESPACE): void {
    checkName('client id', clientId);
    checkName('room', room);
    checkName('namespace', namespace);
    const byRoom = this.#rooms.get(namespace);
    const members = byRoom?.get(room);
    let removed = false;
    if (byRoom && members) {
      removed = members.delete(clientId);
      if (members.size === 0) byRoom.delete(room);
      if (byRoom.size === 0) this.#rooms.delete(namespace);
    }
    const byNamespace = this.#clientRooms.get(clientId);
    const own = byNamespace?.get(namespace);
    if (byNamespace && own) {
      own.delete(room);
      if (own.size === 0) byNamespace.delete(namespace);
      if (byNamespace.size === 0) this.#clientRooms.delete(clientId);
    }
    if (removed) this.#roomListener?.(false, clientId, room, namespace);
  }

  /** Takes the client out of every room in every namespace; namespace membership stays. */
  leaveAllRooms(clientId: string): void {
    checkName('client id', clientId);
    const byNamespace = this.#clientRooms.get(clientId);
    if (!byNamespace) return;
    for (const [namespace, rooms] of [...byNamespace]) {
      for (const room of [...rooms]) this.leaveRoom(clientId, room, namespace);
    }
  }

  /** Removes every trace of the client (used on disconnect). */
  removeClient(clientId: string): void {
    this.leaveNamespace(clientId);
  }

  /** Ids of the clients in a room, as a new array. */
  getClientsInRoom(room: string, namespace: string = DEFAULT_NAMESPACE): string[] {
    return [...this.roomMembers(room, namespace)];
  }

  /** Ids of the clients in a namespace, as a new array. */
  getClientsInNamespace(namespace: string = DEFAULT_NAMESPACE): string[] {
    return [...this.namespaceMembers(namespace)];
  }

  /** Names of the rooms the client is in within one namespace (default `/`). */
  getRoomsForClient(clientId: string, namespace: string = DEFAULT_NAMESPACE): string[] {
    return [...(this.#clientRooms.get(clientId)?.get(namespace) ?? EMPTY)];
  }

  /** Namespaces the client is a member of. */
  getNamespacesForClient(clientId: string): string[] {
    return [...(this.#clientNamespaces.get(clientId) ?? EMPTY)];
  }

  /** Every namespace of the client with its rooms there. */
  getMemberships(clientId: string): ClientMembership[] {
    return this.getNamespacesForClient(clientId).map((namespace) => ({
      namespace,
      rooms: this.getRoomsForClient(clientId, namespace),
    }));
  }

  /** Whether the client is in the room. */
  isInRoom(clientId: string, room: string, namespace: string = DEFAULT_NAMESPACE): boolean {
    return this.#rooms.get(namespace)?.get(room)?.has(clientId) ?? false;
  }

  /** Whether the client is a member of the namespace. */
  isInNamespace(clientId: string, namespace: string = DEFAULT_NAMESPACE): boolean {
    return this.#namespaces.get(namespace)?.has(clientId) ?? false;
  }

  /** The live member set of a room, without copying (do not keep it across awaits). */
  roomMembers(room: string, namespace: string = DEFAULT_NAMESPACE): ReadonlySet<string> {
    return this.#rooms.get(namespace)?.get(room) ?? EMPTY;
  }

  /** The live member set of a namespace, without copying. */
  namespaceMembers(namespace: string = DEFAULT_NAMESPACE): ReadonlySet<string> {
    return this.#namespaces.get(namespace) ?? EMPTY;
  }

  /** How many namespaces, rooms and clients are held. */
  getStats(): NamespaceStats {
    let rooms = 0;
    for (const byRoom of this.#rooms.values()) rooms += byRoom.size;
    const clients = new Set([...this.#clientNamespaces.keys(), ...this.#clientRooms.keys()]);
    return { namespaces: this.#namespaces.size, rooms, clients: clients.size };
  }

  #dropNamespaceMembership(clientId: string, namespace: string): void {
    const members = this.#namespaces.get(namespace);
    if (members) {
      members.delete(clientId);
      if (members.size === 0) {
        this.#namespaces.delete(namespace);
        // No client holds the shared set of an empty namespace any more.
        this.#alone.delete(namespace);
      }
    }
    const own = this.#clientNamespaces.get(clientId);
    if (own === undefined || !own.has(namespace)) return;
    if (own.size === 1) this.#clientNamespaces.delete(clientId);
    else own.delete(namespace);
  }
}
