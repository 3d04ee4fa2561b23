// A scripted server of protocol version 1 for the client's history tests, over real sockets
// (the `ws` package on 127.0.0.1, port 0). It follows the wire flow of room history in
// docs/protocol.md by hand: every publish to a room gets `pos` {room, namespace, epoch,
// offset}; `join_room.since` and `$hello.positions` are answered with the missed messages
// and one `$recovered`; `$history` is answered with the kept ones. Being scripted, a test
// can also make it misbehave on purpose: send a message twice, a malformed `pos`, a replay
// that overlaps what was delivered live.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

interface Kept {
  offset: number;
  text: string;
}

interface Stream {
  epoch: string;
  next: number;
  kept: Kept[];
  /** Offsets handed out and lost (`loseOffsets`). */
  lost?: Array<{ from: number; to: number }>;
}

interface Peer {
  id: string;
  socket: WebSocket;
  rooms: Set<string>;
  /** `$hello.positions` by room (namespace "/" only in this peer). */
  positions: Map<string, { offset: number; epoch: string }>;
}

export interface Received {
  clientId: string;
  event: string;
  data: Record<string, unknown>;
  id?: unknown;
}

export class HistoryPeer {
  readonly #wss: WebSocketServer;
  readonly #streams = new Map<string, Stream>();
  readonly #peers = new Map<string, Peer>();
  #count = 0;
  /** Messages kept per room. */
  size = 100;
  /** False: `$history` requests get no answer at all. */
  answersHistory = true;
  /** When set, `$history` is answered with this `data` instead of the kept messages. */
  historyAnswer: unknown = undefined;
  /** Every message received from clients, in order. */
  readonly received: Received[] = [];

  private constructor(wss: WebSocketServer) {
    this.#wss = wss;
    wss.on('connection', (socket) => this.#accept(socket));
  }

  static async start(): Promise<HistoryPeer> {
    const wss = new WebSocketServer({
      host: '127.0.0.1',
      port: 0,
      handleProtocols: (offered) => (offered.has('pkg.v1') ? 'pkg.v1' : false),
    });
    await new Promise<void>((resolve) => wss.once('listening', resolve));
    return new HistoryPeer(wss);
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.#wss.address() as AddressInfo).port}`;
  }

  /** Ids of the connected clients, oldest first. */
  get clients(): string[] {
    return [...this.#peers.keys()];
  }

  /** The room's stream, created with a new epoch when missing. */
  stream(room: string): Stream {
    let stream = this.#streams.get(room);
    if (!stream) {
      stream = { epoch: randomUUID().slice(0, 8), next: 1, kept: [] };
      this.#streams.set(room, stream);
    }
    return stream;
  }

  /**
   * Loses kept messages `from` to `to` of the room's stream, as a Redis failover loses a
   * master's last writes: a recovery across them replays the rest and says `messages_lost`.
   */
  loseOffsets(room: string, from: number, to: number): void {
    const stream = this.stream(room);
    stream.kept = stream.kept.filter((k) => k.offset < from || k.offset > to);
    (stream.lost ??= []).push({ from, to });
  }

  /** Loses the room's stream: the next publish starts a new epoch. */
  lose(room: string): void {
    this.#streams.delete(room);
  }

  /** Publishes to a room's members with the next position; returns the envelope's text. */
  publish(room: string, event: string, data: Record<string, unknown>): string {
    const stream = this.stream(room);
    const offset = stream.next++;
    const text = JSON.stringify({
      event,
      data,
      pos: { room, namespace: '/', epoch: stream.epoch, offset },
    });
    stream.kept.push({ offset, text });
    if (stream.kept.length > this.size) stream.kept.shift();
    for (const peer of this.#peers.values()) if (peer.rooms.has(room)) peer.socket.send(text);
    return text;
  }

  /** Sends raw text to one client (a duplicate, a malformed `pos`, ...). */
  sendRaw(clientId: string, text: string): void {
    this.#peers.get(clientId)?.socket.send(text);
  }

  /** Joins a client to a room as an application would, recovering it from `$hello.positions`. */
  serverJoin(clientId: string, room: string): void {
    const peer = this.#peers.get(clientId);
    if (!peer) throw new Error(`no client ${clientId}`);
    peer.rooms.add(room);
    const since = peer.positions.get(room);
    if (since) this.#recover(peer, room, since);
  }

  /** Cuts a client's TCP connection without a close frame. */
  cut(clientId: string): void {
    this.#peers.get(clientId)?.socket.terminate();
  }

  async close(): Promise<void> {
    for (const peer of this.#peers.values()) peer.socket.terminate();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }

  #accept(socket: WebSocket): void {
    const peer: Peer = {
      id: `p${++this.#count}`,
      socket,
      rooms: new Set(),
      positions: new Map(),
    };
    this.#peers.set(peer.id, peer);
    socket.on('close', () => this.#peers.delete(peer.id));
    socket.on('message', (raw) => {
      const msg = JSON.parse(String(raw)) as Omit<Received, 'clientId'>;
      this.received.push({ clientId: peer.id, ...msg });
      this.#handle(peer, msg);
    });
  }

  #send(peer: Peer, envelope: Record<string, unknown>): void {
    peer.socket.send(JSON.stringify(envelope));
  }

  #handle(peer: Peer, msg: Omit<Received, 'clientId'>): void {
    const { event, data, id } = msg;
    switch (event) {
      case '$hello': {
        const positions = Array.isArray(data['positions']) ? data['positions'] : [];
        for (const p of positions as Array<Record<string, unknown>>) {
          peer.positions.set(String(p['room']), {
            offset: Number(p['offset']),
            epoch: String(p['epoch']),
          });
        }
        this.#send(peer, {
          event: '$welcome',
          data: { v: 1, clientId: peer.id, heartbeat: null, resumed: false },
        });
        return;
      }
      case 'join_room': {
        const room = String(data['room']);
        peer.rooms.add(room);
        const since = data['since'] as { offset: number; epoch: string } | undefined;
        if (since) this.#recover(peer, room, since);
        this.#send(peer, { event: 'room_joined', data: { room, namespace: '/' } });
        this.#send(peer, { event: 'join_room', data: { room, namespace: '/' }, id });
        return;
      }
      case 'leave_room': {
        const room = String(data['room']);
        peer.rooms.delete(room);
        this.#send(peer, { event: 'room_left', data: { room, namespace: '/' } });
        this.#send(peer, { event: 'leave_room', data: { room, namespace: '/' }, id });
        return;
      }
      case '$history': {
        const room = String(data['room']);
        if (!peer.rooms.has(room)) {
          this.#send(peer, {
            event: 'error',
            id,
            data: { code: 'forbidden', message: `not in room ${room}` },
          });
          return;
        }
        if (!this.answersHistory) return;
        if (this.historyAnswer !== undefined) {
          this.#send(peer, { event: '$history', id, data: this.historyAnswer });
          return;
        }
        const stream = this.stream(room);
        const limit = typeof data['limit'] === 'number' ? data['limit'] : this.size;
        const kept = stream.kept.slice(-limit);
        // The kept texts go in as they are, so the answer is built without parsing them.
        const position = JSON.stringify({ offset: stream.next - 1, epoch: stream.epoch });
        const complete = kept.length === stream.kept.length;
        const body = `{"messages":[${kept.map((k) => k.text).join(',')}],"position":${position},"complete":${complete}}`;
        peer.socket.send(`{"event":"$history","id":${JSON.stringify(id)},"data":${body}}`);
        return;
      }
      default:
        return;
    }
  }

  /** Replays what the client missed in a room after `since`, then `$recovered`. */
  #recover(peer: Peer, room: string, since: { offset: number; epoch: string }): void {
    const stream = this.stream(room);
    const position = { offset: stream.next - 1, epoch: stream.epoch };
    const done = (recovered: boolean, replayed: number, reason?: string): void =>
      this.#send(peer, {
        event: '$recovered',
        data: {
          room,
          namespace: '/',
          recovered,
          ...(reason ? { reason } : {}),
          replayed,
          position,
        },
      });
    if (since.epoch !== stream.epoch) return done(false, 0, 'epoch_changed');
    if (since.offset > position.offset) return done(false, 0, 'invalid_position');
    const missed = stream.kept.filter((k) => k.offset > since.offset);
    const lost = (stream.lost ?? [])
      .filter((r) => r.to > since.offset)
      .map((r) => ({ from: Math.max(r.from, since.offset + 1), to: r.to }));
    const gone = (o: number): boolean => lost.some((r) => o >= r.from && o <= r.to);
    let expected = since.offset + 1;
    while (gone(expected)) expected += 1;
    const first = missed[0]?.offset ?? position.offset + 1;
    if (first !== expected) return done(false, 0, 'too_far_behind');
    for (const k of missed) peer.socket.send(k.text);
    if (lost.length === 0) return done(true, missed.length);
    this.#send(peer, {
      event: '$recovered',
      data: {
        room,
        namespace: '/',
        recovered: false,
        reason: 'messages_lost',
        replayed: missed.length,
        position,
        lost,
      },
    });
  }
}
