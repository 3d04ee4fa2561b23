import {
  Response,
  SocketController,
  type ControllerHost,
  type HttpMiddlewareFn,
  type Request,
  type Server,
} from '@pkg/core';
import { HttpRoute, OnConnect, OnDisconnect, RateLimit, SocketOn } from '@pkg/decorators';
import { requireRole } from '../auth';
import type { ClientEvents, ServerEvents } from '../events';
import { BASE_LIMITS, type DemoLimits } from '../limits';
import { NAME_KEY, nameOf, userOf } from '../names';
import { decideRoomJoin } from '../room-policy';
import { BroadcastBody, ChatMessage, MAX_MESSAGE_LENGTH, RoomJoin } from './chat-schemas';

export { MAX_MESSAGE_LENGTH };

const ROOM_KEY = 'room';

/** `error` code of a `chat.message` from a client that has joined no chat room. */
export const NOT_IN_ROOM = 'not_in_room';

/**
 * A chat event refused. Thrown by a handler, it is answered as the `error`
 * `{code, message, ...data}`, with the request's `id` when the message had one (so the
 * client's `emitWithAck` rejects with that code, and no answer goes out beside it): core
 * answers any thrown error that carries an `eventCode` (and `eventData`) so.
 */
export class ChatRefusal extends Error {
  constructor(
    readonly eventCode: string,
    message: string,
    readonly eventData: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ChatRefusal';
  }
}

const unixSeconds = (): number => Math.floor(Date.now() / 1000);

/** What the chat controller needs of its server: the spec's host, and presence updates. */
type ChatHost = ControllerHost & Pick<Server, 'updatePresence'>;

/** The chat room the client is in, set by `room.join`. */
function roomOf(host: ControllerHost, clientId: string): string | undefined {
  const room = host.getClientData(clientId, ROOM_KEY);
  return typeof room === 'string' ? room : undefined;
}

/** 415 unless the body is sent as JSON (before the schema reads it). */
const requireJson: HttpMiddlewareFn = (request, next) =>
  request.isJson()
    ? next()
    : Response.json({ error: 'Send a JSON body with Content-Type: application/json.' }, 415);

/**
 * The spec's sample controller: the status, clients and broadcast HTTP routes, and the chat's
 * WebSocket events (welcome, user.joined / user.left, chat.message, room.join).
 *
 * Chat happens inside a room only: a client in no room gets the `error` `not_in_room`.
 * `user.joined` / `user.left` go to the members of the room concerned, never to anyone
 * else (a private room's name stays among its members), and carry the online count, so a
 * page never has to ask `/api/status` when someone comes or goes.
 *
 * The rate-limit budgets come from `limits` (RATE_LIMIT_SCALE applied), which is why the
 * class is made by a function: decorator arguments are fixed when the class is defined.
 * The events are typed by the maps in `../events.ts`, the same ones the page's client uses.
 */
export function createChatController(limits: DemoLimits = BASE_LIMITS) {
  class DemoChatController extends SocketController<ChatHost, ServerEvents, ClientEvents> {
    @HttpRoute('GET', '/api/status')
    @RateLimit(limits.status)
    status(_request: Request): Response {
      return Response.json({
        status: 'ok',
        clients: this.getClientCount(),
        timestamp: unixSeconds(),
      });
    }

    @HttpRoute('GET', '/api/clients')
    @RateLimit(limits.status)
    clients(_request: Request): Response {
      const clients = this.getAllClients();
      return Response.json({ count: clients.length, clients });
    }

    /**
     * Admins only (401 without a token, 403 for another role), then the rate limit, then the
     * schema (400 `validation_failed`). With `room`, only that room's members receive it.
     */
    @HttpRoute('POST', '/api/broadcast', {
      middlewares: [requireRole('admin'), requireJson],
      body: BroadcastBody,
    })
    @RateLimit(limits.broadcast)
    broadcastMessage(_request: Request, input: { body: { message: string; room?: string } }) {
      const { message, room } = input.body;
      const payload = { message, room: room ?? null, timestamp: unixSeconds() };
      if (room === undefined) this.broadcast('api.message', payload);
      else this.broadcast('api.message', payload, '/', room);
      return Response.json({ success: true });
    }

    @OnConnect()
    connected(clientId: string): void {
      const user = userOf(this.getServer(), clientId);
      this.emit(clientId, 'welcome', {
        clientId,
        name: nameOf(this.getServer(), clientId),
        user: user ? { id: user.id, name: user.name, role: user.role } : null,
        clients: this.getClientCount(),
      });
    }

    @OnDisconnect()
    disconnected(clientId: string): void {
      const room = roomOf(this.getServer(), clientId);
      if (room === undefined) return;
      this.broadcast(
        'user.left',
        {
          clientId,
          name: nameOf(this.getServer(), clientId),
          room,
          clients: this.getClientCount(),
          timestamp: unixSeconds(),
        },
        '/',
        room,
        { except: clientId },
      );
    }

    /**
     * Relays a chat line to the sender's room; the answer (to a message sent with an id)
     * says that it went out. A client in no room is refused with `not_in_room` (with the
     * request's id); the schema answers invalid data with `validation_failed`.
     */
    @SocketOn('chat.message', { schema: ChatMessage })
    @RateLimit(limits.chatMessage)
    chatMessage(clientId: string, data: { message: string }): { delivered: true } {
      const room = roomOf(this.getServer(), clientId);
      if (room === undefined) {
        throw new ChatRefusal(
          NOT_IN_ROOM,
          'Join a room before you chat: send room.join {"room": "lobby"} first.',
          { event: 'chat.message' },
        );
      }
      const payload = {
        clientId,
        name: nameOf(this.getServer(), clientId),
        message: data.message,
        room,
        timestamp: unixSeconds(),
      };
      this.broadcast('chat.message', payload, '/', room);
      return { delivered: true };
    }

    @SocketOn('room.join', { schema: RoomJoin })
    @RateLimit(limits.roomJoin)
    roomJoin(clientId: string, data: { room: string; name?: string | undefined }): void {
      const { room, name } = data;
      const decision = decideRoomJoin(userOf(this.getServer(), clientId), room, '/');
      if (!decision.allowed) throw new ChatRefusal(decision.code, decision.reason, { room });
      const server = this.getServer();
      const previous = roomOf(server, clientId);
      const before = nameOf(server, clientId);
      if (previous !== undefined && previous !== room) this.leaveRoom(clientId, previous);
      // The name first: the room's presence meta (the presence hook) carries it.
      if (typeof name === 'string') server.setClientData(clientId, NAME_KEY, name.trim());
      const after = nameOf(server, clientId);
      this.joinRoom(clientId, room);
      server.setClientData(clientId, ROOM_KEY, room);
      this.emit(clientId, 'room.joined', { room, clientId, name: after });
      // The members of the rooms concerned hear about the move; joining the room one is
      // already in (to change one's name, say) announces nothing but the new name in the
      // room's presence.
      if (previous === room) {
        if (after !== before) server.updatePresence(clientId, room, { name: after });
        return;
      }
      const clients = this.getClientCount();
      const timestamp = unixSeconds();
      if (previous !== undefined) {
        this.broadcast(
          'user.left',
          { clientId, name: before, room: previous, clients, timestamp },
          '/',
          previous,
        );
      }
      this.broadcast(
        'user.joined',
        { clientId, name: after, room, clients, timestamp },
        '/',
        room,
        { except: clientId },
      );
    }
  }
  return new DemoChatController();
}

/** The controller `createChatController` returns. */
export type ChatController = ReturnType<typeof createChatController>;
