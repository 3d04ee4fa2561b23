// A small server of protocol version 1 (docs/protocol.md) on a real `ws` WebSocketServer,
// written from the document, so that the client's side of the version 1 features can be
// checked over real sockets before @pkg/core implements them. It is a conformance
// partner, not a mock: every exchange goes through TCP and the WebSocket framing.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';

interface Session {
  clientId: string;
  token: string;
  rooms: Set<string>;
  /** Highest seq dropped from the buffer. */
  dropped: number;
  buffer: Array<{ seq: number; text: string }>;
  socket: WebSocket | null;
  tcp: Socket | null;
  expired: boolean;
  pending: Map<string, { resolve: (v: unknown) => void; reject: (e: Error) => void }>;
}

export type RequestHandler = (data: unknown, clientId: string) => unknown;

export interface ProtocolServerOptions {
  /** Tokens accepted in `$hello.auth`; undefined: no authentication. */
  tokens?: string[];
  /** Handlers of client events (their result answers requests with an id). */
  handlers?: Record<string, RequestHandler>;
  /** Messages kept per session for replay. */
  bufferSize?: number;
}

export class ProtocolServer {
  readonly #wss: WebSocketServer;
  readonly #options: ProtocolServerOptions;
  readonly sessions = new Map<string, Session>();
  /** Every `$hello` received, in order. */
  readonly hellos: Array<Record<string, unknown>> = [];
  /** Request URLs of every upgrade. */
  readonly urls: string[] = [];
  /** Events received from clients (control events included), in order. */
  readonly received: Array<{ event: string; data: unknown; id?: unknown }> = [];
  /** When true, the server reads but never answers anything (a dead peer). */
  silent = false;
  #counter = 0;
  /** One seq counter for the whole server, as docs/protocol.md says. */
  #seq = 0;

  private constructor(wss: WebSocketServer, options: ProtocolServerOptions) {
    this.#wss = wss;
    this.#options = options;
    wss.on('connection', (socket, req) => this.#accept(socket, req));
  }

  static async start(options: ProtocolServerOptions = {}): Promise<ProtocolServer> {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
    return new ProtocolServer(wss, options);
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.#wss.address() as AddressInfo).port}`;
  }

  get connections(): number {
    return this.urls.length;
  }

  /** Sends an event to a session; buffered (with `seq`) when the session has one. */
  send(clientId: string, event: string, data: unknown): void {
    const session = this.#byClient(clientId);
    const seq = ++this.#seq;
    const text = JSON.stringify({ event, data, seq });
    session.buffer.push({ seq, text });
    if (session.buffer.length > (this.#options.bufferSize ?? 1000)) {
      session.dropped = session.buffer.shift()!.seq;
    }
    if (session.socket?.readyState === WebSocket.OPEN) session.socket.send(text);
  }

  /** Broadcasts to every session in a room, connected or within its window. */
  broadcast(room: string, event: string, data: unknown): void {
    for (const s of this.sessions.values()) {
      if (!s.expired && s.rooms.has(room)) this.send(s.clientId, event, data);
    }
  }

  /** A request to the client (`rid`); resolves with `$ack` data, rejects on `$nack`. */
  request(clientId: string, event: string, data: unknown): Promise<unknown> {
    const session = this.#byClient(clientId);
    const rid = `r${++this.#counter}`;
    return new Promise((resolve, reject) => {
      session.pending.set(rid, { resolve, reject });
      session.socket!.send(JSON.stringify({ event, data, rid }));
    });
  }

  /** Cuts a client's TCP connection without a close frame. */
  dropTcp(clientId: string): void {
    const session = this.#byClient(clientId);
    session.socket = null;
    session.tcp?.destroy();
  }

  /** Ends every session's recovery window. */
  expireSessions(): void {
    for (const s of this.sessions.values()) s.expired = true;
  }

  /** Sessions that are in a room. */
  roomMembers(room: string): string[] {
    return [...this.sessions.values()].filter((s) => s.rooms.has(room)).map((s) => s.clientId);
  }

  async close(): Promise<void> {
    for (const client of this.#wss.clients) client.terminate();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }

  #byClient(clientId: string): Session {
    for (const s of this.sessions.values()) if (s.clientId === clientId) return s;
    throw new Error(`no session for ${clientId}`);
  }

  #accept(socket: WebSocket, req: IncomingMessage): void {
    this.urls.push(req.url ?? '');
    let session: Session | null = null;
    const write = (message: Record<string, unknown>): void => {
      if (!this.silent && socket.readyState === WebSocket.OPEN)
        socket.send(JSON.stringify(message));
    };
    socket.on('close', () => {
      if (session && session.socket === socket) session.socket = null;
    });
    socket.on('message', (raw) => {
      const message = JSON.parse(String(raw)) as Record<string, unknown>;
      const event = String(message['event']);
      this.received.push({
        event,
        data: message['data'],
        ...('id' in message ? { id: message['id'] } : {}),
      });
      if (this.silent) return;
      if (session === null) {
        if (event !== '$hello') {
          write({ event: 'error', data: { code: 'unauthorized', message: 'say $hello first' } });
          return;
        }
        session = this.#hello(
          socket,
          req.socket,
          message['data'] as Record<string, unknown>,
          write,
        );
        return;
      }
      this.#handle(session, event, message, write);
    });
  }

  #hello(
    socket: WebSocket,
    tcp: Socket,
    hello: Record<string, unknown>,
    write: (m: Record<string, unknown>) => void,
  ): Session | null {
    this.hellos.push(hello);
    const { tokens } = this.#options;
    if (tokens && !tokens.includes(String(hello['auth']))) {
      write({
        event: 'error',
        data: { code: 'unauthorized', message: 'Invalid token', status: 401 },
      });
      socket.close(4401, 'Invalid token');
      return null;
    }
    const resume = hello['resume'] as { session?: string; seq?: number } | undefined;
    const previous = resume?.session ? this.sessions.get(resume.session) : undefined;
    const heartbeat = hello['heartbeat'] ?? null;
    let reason: string | undefined;
    if (previous && !previous.expired) {
      const from = resume?.seq ?? 0;
      if (previous.dropped <= from) {
        previous.socket = socket;
        previous.tcp = tcp;
        write({
          event: '$welcome',
          data: {
            v: 1,
            clientId: previous.clientId,
            heartbeat,
            session: previous.token,
            recovery: { window: 120000 },
            resumed: true,
          },
        });
        for (const m of previous.buffer) if (m.seq > from) socket.send(m.text);
        return previous;
      }
      reason = 'overflow';
    } else if (resume) reason = previous ? 'expired' : 'unknown';
    if (previous) this.sessions.delete(previous.token);
    const session: Session = {
      clientId: `c${++this.#counter}`,
      token: randomUUID(),
      rooms: new Set(),
      dropped: 0,
      buffer: [],
      socket,
      tcp,
      expired: false,
      pending: new Map(),
    };
    this.sessions.set(session.token, session);
    write({
      event: '$welcome',
      data: {
        v: 1,
        clientId: session.clientId,
        heartbeat,
        session: session.token,
        recovery: { window: 120000 },
        resumed: false,
        ...(reason ? { reason } : {}),
      },
    });
    return session;
  }

  #handle(
    session: Session,
    event: string,
    message: Record<string, unknown>,
    write: (m: Record<string, unknown>) => void,
  ): void {
    const data = message['data'];
    const id = message['id'];
    if (event === '$ping') return write({ event: '$pong', data: {} });
    if (event === '$ack' || event === '$nack') {
      const rid = String(message['rid']);
      const pending = session.pending.get(rid);
      session.pending.delete(rid);
      if (event === '$ack') pending?.resolve(data);
      else pending?.reject(Object.assign(new Error('nack'), { data }));
      return;
    }
    if (event === 'join_room' || event === 'leave_room') {
      const { room, namespace } = data as { room: string; namespace: string };
      if (event === 'join_room') session.rooms.add(room);
      else session.rooms.delete(room);
      this.send(session.clientId, event === 'join_room' ? 'room_joined' : 'room_left', {
        room,
        namespace,
      });
      return;
    }
    const handler = this.#options.handlers?.[event];
    if (!handler) {
      if (id !== undefined) {
        write({ event: 'error', id, data: { code: 'unknown_event', message: `no ${event}` } });
      }
      return;
    }
    void (async () => {
      try {
        const result = await handler(data, session.clientId);
        if (id !== undefined) write({ event, id, data: result === undefined ? null : result });
      } catch (err) {
        if (id !== undefined) {
          write({
            event: 'error',
            id,
            data: { code: 'internal_error', message: (err as Error).message },
          });
        }
      }
    })();
  }
}
