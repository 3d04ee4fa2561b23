import { SocketOn } from '@pkg/decorators';
import { CoreEventErrorCode } from '../errors';
import { DEFAULT_NAMESPACE } from './namespace-manager';
import { SocketController } from '../routing/socket-controller';

/**
 * Decides whether a client may join a room in a namespace. Return (or resolve to) `true`
 * to allow; anything else refuses with an `error` event of code `forbidden`. A policy that
 * throws refuses too (the error is logged and the client gets `internal_error`).
 */
export type RoomJoinPolicy = (
  clientId: string,
  room: string,
  namespace: string,
) => boolean | Promise<boolean>;

export interface RoomsControllerOptions {
  /** The join policy. Default: every room in every namespace may be joined. */
  canJoin?: RoomJoinPolicy;
  /** Longest room or namespace name accepted, in characters. Default 128. */
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
 * - `join_room` `{room, namespace?}` joins the room (namespace default `/`) when the
 *   `canJoin` policy allows it, and answers `room_joined` `{room, namespace}`; a refusal
 *   answers `error` `{code: 'forbidden', message}`.
 * - `leave_room` `{room, namespace?}` leaves the room and answers `room_left`.
 * - A payload without a usable `room` (or with a namespace not starting with `/`) answers
 *   `error` `{code: 'invalid_payload', message}`.
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
        'RoomsController: canJoin must be a function (clientId, room, namespace) => boolean | Promise<boolean>.',
      );
    }
    if (!Number.isSafeInteger(maxNameLength) || maxNameLength < 1) {
      throw new TypeError('RoomsController: maxNameLength must be a positive integer.');
    }
    this.#canJoin = canJoin ?? (() => true);
    this.#maxNameLength = maxNameLength;
  }

  @SocketOn('join_room')
  async onJoinRoom(clientId: string, data: unknown): Promise<void> {
    const target = this.#parse(clientId, 'join_room', data);
    if (!target) return;
    const allowed = await this.#canJoin(clientId, target.room, target.namespace);
    if (allowed !== true) {
      this.getServer().sendEventError(
        clientId,
        CoreEventErrorCode.FORBIDDEN,
        `You may not join room "${target.room}" in namespace "${target.namespace}".`,
        { ...target },
      );
      return;
    }
    this.joinRoom(clientId, target.room, target.namespace);
    this.emit(clientId, 'room_joined', { ...target });
  }

  @SocketOn('leave_room')
  onLeaveRoom(clientId: string, data: unknown): void {
    const target = this.#parse(clientId, 'leave_room', data);
    if (!target) return;
    this.leaveRoom(clientId, target.room, target.namespace);
    this.emit(clientId, 'room_left', { ...target });
  }

  #parse(clientId: string, event: string, data: unknown): RoomEventPayload | null {
    const record =
      typeof data === 'object' && data !== null && !Array.isArray(data)
        ? (data as Record<string, unknown>)
        : {};
    const { room, namespace = DEFAULT_NAMESPACE } = record;
    const max = this.#maxNameLength;
    let problem: string | null = null;
    if (typeof room !== 'string' || room.length === 0 || room.length > max) {
      problem = `"room" must be a string of 1 to ${max} characters`;
    } else if (
      typeof namespace !== 'string' ||
      !namespace.startsWith('/') ||
      namespace.length > max
    ) {
      problem = `"namespace" must be a string starting with "/" of at most ${max} characters`;
    }
    if (problem) {
      this.getServer().sendEventError(
        clientId,
        CoreEventErrorCode.INVALID_PAYLOAD,
        `${event}: ${problem}, e.g. {"room": "lobby", "namespace": "/"}.`,
      );
      return null;
    }
    return { room: room as string, namespace: namespace as string };
  }
}
