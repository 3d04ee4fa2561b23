import { Response, SocketController, type ControllerHost, type Request } from '@pkg/core';
import { HttpRoute, OnConnect, OnDisconnect, SocketOn } from '@pkg/decorators';
import { USER_KEY, type DemoUser } from '../auth';
import type { ClientEvents, ServerEvents } from '../events';
import { NAME_KEY } from '../names';
import { decideRoomJoin } from '../room-policy';
import { ChatMessage, MAX_MESSAGE_LENGTH, RoomJoin } from './chat-schemas';

export { MAX_MESSAGE_LENGTH };

const ROOM_KEY = 'room';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkMessage(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') {
    return '"message" is required and must be a non-empty string.';
  }
  if (value.length > MAX_MESSAGE_LENGTH) {
    return `"message" must be at most ${MAX_MESSAGE_LENGTH} characters.`;
  }
  return undefined;
}

const unixSeconds = (): number => Math.floor(Date.now() / 1000);

/**
 * The spec's sample controller: the status, clients and broadcast HTTP routes, and the chat's
 * WebSocket events (welcome, user.joined / user.left, chat.message, room.join).
 *
 * `user.joined` / `user.left` carry a `room`: `null` when a client connects, and on a
 * disconnect the chat room the client was in (both go to every other client); the room's name
 * when a client enters or leaves that chat room (these go to that room's members only).
 *
 * The events are typed by the maps in `../events.ts`, the same ones the page's client uses.
 */
export class ChatController extends SocketController<ControllerHost, ServerEvents, ClientEvents> {
  private user(clientId: string): DemoUser | undefined {
    return this.getServer().getClientData(clientId, USER_KEY) as DemoUser | undefined;
  }

  private displayName(clientId: string): string | null {
    const name = this.getServer().getClientData(clientId, NAME_KEY);
    if (typeof name === 'string') return name;
    return this.user(clientId)?.name ?? null;
  }

  private chatRoom(clientId: string): string | undefined {
    const room = this.getServer().getClientData(clientId, ROOM_KEY);
    return typeof room === 'string' ? room : undefined;
  }

  private fail(clientId: string, code: string, message: string): void {
    this.getServer().sendEventError(clientId, code, message);
  }

  @HttpRoute('GET', '/api/status')
  status(_request: Request): Response {
    return Response.json({
      status: 'ok',
      clients: this.getClientCount(),
      timestamp: unixSeconds(),
    });
  }

  @HttpRoute('GET', '/api/clients')
  clients(_request: Request): Response {
    const clients = this.getAllClients();
    return Response.json({ count: clients.length, clients });
  }

  @HttpRoute('POST', '/api/broadcast')
  broadcastMessage(request: Request): Response {
    if (!request.isJson()) {
      return Response.json({ error: 'Send a JSON body with Content-Type: application/json.' }, 415);
    }
    // Malformed JSON makes getBody() throw an HttpError that the server answers with 400.
    const body: unknown = request.getBody();
    const problem = checkMessage(isRecord(body) ? body.message : undefined);
    if (problem !== undefined) return Response.json({ error: problem }, 400);
    const message = (body as { message: string }).message;
    this.broadcast('api.message', { message, timestamp: unixSeconds() });
    return Response.json({ success: true });
  }

  @OnConnect()
  connected(clientId: string): void {
    const user = this.user(clientId);
    const name = this.displayName(clientId);
    this.emit(clientId, 'welcome', {
      clientId,
      name,
      user: user ? { id: user.id, name: user.name, role: user.role } : null,
      clients: this.getClientCount(),
    });
    this.broadcast('user.joined', { clientId, name, room: null }, null, null, { except: clientId });
  }

  @OnDisconnect()
  disconnected(clientId: string): void {
    const room = this.chatRoom(clientId) ?? null;
    this.broadcast('user.left', { clientId, name: this.displayName(clientId), room }, null, null, {
      except: clientId,
    });
  }

  /**
   * Relays a chat line; the answer (to a message sent with an id) says it went out. The
   * schema answers invalid data with the error event validation_failed.
   */
  @SocketOn('chat.message', { schema: ChatMessage })
  chatMessage(clientId: string, data: { message: string }): { delivered: boolean } {
    const text = data.message;
    const room = this.chatRoom(clientId);
    const payload = {
      clientId,
      name: this.displayName(clientId),
      message: text,
      room: room ?? null,
      timestamp: unixSeconds(),
    };
    if (room !== undefined) this.broadcast('chat.message', payload, '/', room);
    else this.broadcast('chat.message', payload);
    return { delivered: true };
  }

  @SocketOn('room.join', { schema: RoomJoin })
  roomJoin(clientId: string, data: { room: string; name?: string | undefined }): void {
    const { room, name } = data;
    const decision = decideRoomJoin(this.user(clientId), room, '/');
    if (!decision.allowed) {
      return this.fail(clientId, decision.code, decision.reason);
    }
    const server = this.getServer();
    const previous = this.chatRoom(clientId);
    const before = this.displayName(clientId);
    if (previous !== undefined && previous !== room) this.leaveRoom(clientId, previous);
    this.joinRoom(clientId, room);
    server.setClientData(clientId, ROOM_KEY, room);
    if (typeof name === 'string') server.setClientData(clientId, NAME_KEY, name.trim());
    const after = this.displayName(clientId);
    this.emit(clientId, 'room.joined', { room, clientId, name: after });
    // The members of the rooms concerned hear about the move; joining the room one is
    // already in (to change one's name, say) announces nothing.
    if (previous === room) return;
    if (previous !== undefined) {
      this.broadcast('user.left', { clientId, name: before, room: previous }, '/', previous);
    }
    this.broadcast('user.joined', { clientId, name: after, room }, '/', room, {
      except: clientId,
    });
  }
}
