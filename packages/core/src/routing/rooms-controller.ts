import { SocketOn } from '@pkg/decorators';
import { readStreamPosition, type StreamPosition } from '@pkg/wire';
import { CoreEventErrorCode } from '../errors';
import { DEFAULT_NAMESPACE } from '../ws/namespace-manager';
import { refusal } from '../ws/event-refusal';
import { nameProblem } from '../ws/room-names';
import { SocketController, type ClientCredentials } from './socket-controller';

/**
 * Decides whether a client may join a room in a namespace. Return (or resolve to) `true`
 * to allow; anything else refuses with an `error` event of code `forbidden`. A policy that
 * throws refuses too (the error is logged and the client gets `internal_error`).
 */
export type RoomJoinPolicy = (
  clientId: string,
  room: string,
  namespace: string,
  credentials: ClientCredentials,
) => boolean | RoomGrant | Promise<boolean | RoomGrant>;

/**
 * A join allowed until a time: `expiresAt` (ms since the epoch) or `ttl` (ms). Then the
 * client leaves the room and gets `$revoked` `{room, namespace, reason: "expired"}`; joining
 * the room again asks the policy again and, allowed, grants it anew.
 */
export interface RoomGrant {
  expiresAt?: number;
  ttl?: number;
}

/** No identity and no expiry: a client whose auth handlers gave neither, or none ran. */
const NO_CREDENTIALS: ClientCredentials = Object.freeze({
  identity: undefined,
  expiresAt: undefined,
});

/**
 * The expiry of a join the policy allowed with a {@link RoomGrant} (ms since the epoch);
 * undefined when it allowed it for good (`true`) or refused it (anything else, a grant whose
 * time is not to come included).
 */
function grantExpiry(allowed: unknown, now: number): number | undefined {
  if (typeof allowed !== 'object' || allowed === null) return undefined;
  const { expiresAt, ttl } = allowed as RoomGrant;
  const until =
    typeof expiresAt === 'number' ? expiresAt : typeof ttl === 'number' ? now + ttl : Number.NaN;
  return Number.isFinite(until) && until > now && until - now <= 2_147_483_647
    ? Math.floor(until)
    : undefined;
}

export interface RoomsControllerOptions {
  /** The join policy. Default: every room in every namespace may be joined. */
  canJoin?: RoomJoinPolicy;
  /**
   * Longest room or namespace name accepted, in UTF-16 code units. Default 128; the server's
   * `max_room_name_length` applies as well (the smaller one wins).
   */
  maxNameLength?: number;
}

/** The payload of `join_room` / `leave_room` and of their answers. */
export interface RoomEventPayload {
  room: string;
  namespace: string;
}

/**
 * A ready controller for the room events that browser clients of the protocol send, opt-in
 * (register it with `server.registerController(new RoomsController())`; nothing is on by
 * default):
 *
 * - `join_room` `{room, namespace?, since?}` joins the room (namespace default `/`) when the
 *   `canJoin` policy allows it, sends `room_joined` `{room, namespace}`, and answers a
 *   request (`id`) with `{room, namespace}`. With `since` `{offset, epoch}` (protocol
 *   version 1, a room that keeps history, a client not yet in it) the missed messages and
 *   `$recovered` come first when the history is read at once (the in-memory store), after
 *   `room_joined` and the answer when it is read asynchronously (Redis).
 * - `leave_room` `{room, namespace?}` leaves the room, sends `room_left`, and answers the
 *   same way.
 * - A refusal is one `error` event `{code, message, room, namespace}` (with the request's
 *   `id`): `invalid_payload` for a payload without a usable `room` (a string of 1 to
 *   `maxNameLength` code units, well-formed UTF-16) or a namespace not starting with `/`;
 *   `forbidden` when `canJoin` refuses; `too_many_rooms` at `max_rooms_per_client`; the
 *   adapter's code when it refuses (the Redis adapter's `rate_limited`). Nothing is
 *   joined then.
 */
export class RoomsController extends SocketController {
  readonly #canJoin: RoomJoinPolicy;
  readonly #maxNameLength: number;

  constructor(options: RoomsControllerOptions = {}) {
    super();
    if (typeof options !== 'object' || options === null) {
      throw new TypeError('RoomsController: options must be an object such as { canJoin }.');
    }
    const { canJoin, maxNameLength = 128 } = options;
    if (canJoin !== undefined && typeof canJoin !== 'function') {
      throw new TypeError(
        'RoomsController: canJoin must be a function (clientId, room, namespace, credentials) => boolean | { expiresAt } | { ttl }, or a promise of one.',
      );
    }
    if (!Number.isSafeInteger(maxNameLength) || maxNameLength < 1) {
      throw new TypeError('RoomsController: maxNameLength must be a positive integer.');
    }
    this.#canJoin = canJoin ?? (() => true);
    this.#maxNameLength = maxNameLength;
  }

  @SocketOn('join_room')
  async onJoinRoom(clientId: string, data: unknown): Promise<RoomEventPayload> {
    const target = this.#parse('join_room', data);
    const since = this.#since(data, target);
    const credentials = this.getServer().getCredentials?.(clientId) ?? NO_CREDENTIALS;
    const allowed = await this.#canJoin(clientId, target.room, target.namespace, credentials);
    const until = grantExpiry(allowed, Date.now());
    if (allowed !== true && until === undefined) {
      throw refusal(
        CoreEventErrorCode.FORBIDDEN,
        `You may not join room "${target.room}" in namespace "${target.namespace}".`,
        { ...target },
      );
    }
    // Throws (nothing joined) for a name the server refuses or a client at its room cap.
    this.joinRoom(
      clientId,
      target.room,
      target.namespace,
      since === undefined ? undefined : { since },
    );
    // A grant with an expiry (a join again replaces it); without one, the room is for good.
    this.getServer().grantRoom?.(clientId, target.room, target.namespace, until ?? null);
    this.emit(clientId, 'room_joined', { ...target });
    return { ...target };
  }

  @SocketOn('leave_room')
  onLeaveRoom(clientId: string, data: unknown): RoomEventPayload {
    const target = this.#parse('leave_room', data);
    this.leaveRoom(clientId, target.room, target.namespace);
    this.emit(clientId, 'room_left', { ...target });
    return { ...target };
  }

  /** `join_room.since`, checked: a malformed one is an `invalid_payload` refusal. */
  #since(data: unknown, target: RoomEventPayload): StreamPosition | undefined {
    const since = (data as Record<string, unknown>)['since'];
    if (since === undefined || since === null) return undefined;
    const position = readStreamPosition(since);
    if (typeof position === 'string') {
      throw refusal(
        CoreEventErrorCode.INVALID_PAYLOAD,
        `join_room: "since" is not a position (${position}), e.g. {"room": "lobby", "since": {"offset": 41, "epoch": "<epoch of the last pos>"}}.`,
        { ...target },
      );
    }
    return position;
  }

  /** The room and namespace of a payload; throws an `invalid_payload` refusal otherwise. */
  #parse(event: string, data: unknown): RoomEventPayload {
    const record =
      typeof data === 'object' && data !== null && !Array.isArray(data)
        ? (data as Record<string, unknown>)
        : {};
    const { room, namespace = DEFAULT_NAMESPACE } = record;
    const max = this.#maxNameLength;
    let problem = nameProblem('room', room, max);
    if (problem === null) {
      problem =
        typeof namespace === 'string' && !namespace.startsWith('/')
          ? 'the namespace name must start with "/"'
          : nameProblem('namespace', namespace, max);
    }
    if (problem !== null) {
      const known: Record<string, unknown> = {};
      if (typeof room === 'string') known['room'] = room;
      if (typeof namespace === 'string') known['namespace'] = namespace;
      throw refusal(
        CoreEventErrorCode.INVALID_PAYLOAD,
        `${event}: ${problem}, e.g. {"room": "lobby", "namespace": "/"}.`,
        known,
      );
    }
    return { room: room as string, namespace: namespace as string };
  }
}
