import WebSocket from 'ws';

export interface Envelope {
  event: string;
  data: Record<string, unknown>;
  /** The request's id, on an answer (protocol version 1). */
  id?: number | string;
}

/**
 * A test WebSocket client that queues every envelope it receives, so a test can wait for
 * the next one (`next`) or for a given event (`waitFor`) without timers.
 */
export class TestClient {
  readonly socket: WebSocket;
  /** Envelopes received and not yet taken by next()/waitFor(). */
  readonly inbox: Envelope[] = [];
  private waiters: Array<() => void> = [];
  private closed: Promise<{ code: number; reason: string }>;

  private constructor(socket: WebSocket) {
    this.socket = socket;
    socket.on('message', (raw) => {
      this.inbox.push(JSON.parse(String(raw)) as Envelope);
      this.wake();
    });
    this.closed = new Promise((resolve) => {
      socket.once('close', (code, reason) => {
        this.wake();
        resolve({ code, reason: String(reason) });
      });
    });
  }

  /**
   * Opens a connection; rejects with the HTTP status when the handshake is refused. With
   * `protocol` (`pkg.v1`), the WebSocket subprotocol is offered.
   */
  static connect(
    url: string,
    headers: Record<string, string> = {},
    protocol?: string,
  ): Promise<TestClient> {
    return new Promise((resolve, reject) => {
      const socket =
        protocol === undefined
          ? new WebSocket(url, { headers })
          : new WebSocket(url, protocol, { headers });
      const client = new TestClient(socket);
      socket.once('open', () => resolve(client));
      socket.once('unexpected-response', (req, res) => {
        res.resume();
        req.destroy();
        reject(new HandshakeRefused(res.statusCode ?? 0));
      });
      socket.once('error', reject);
    });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }

  /** Sends `{event, data}`, with `id` (a request of protocol version 1) when given. */
  send(event: string, data: unknown, id?: number | string): void {
    this.socket.send(JSON.stringify(id === undefined ? { event, data } : { event, data, id }));
  }

  /** The next envelope, whatever its event. */
  async next(): Promise<Envelope> {
    for (;;) {
      const envelope = this.inbox.shift();
      if (envelope) return envelope;
      if (this.socket.readyState >= WebSocket.CLOSING) throw new Error('socket closed');
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Takes envelopes until one with `event` arrives, dropping the others. */
  async waitFor(event: string): Promise<Envelope> {
    for (;;) {
      const envelope = await this.next();
      if (envelope.event === event) return envelope;
    }
  }

  /**
   * Sends a `leave_room` for a room it is not in (a marker) and waits for its `room_left`:
   * the server handles one connection's messages in order, so everything it sent to this
   * client earlier has been received by then. Returns the envelopes that arrived before.
   */
  async drain(marker = `marker-${Math.random()}`): Promise<Envelope[]> {
    this.send('leave_room', { room: marker, namespace: '/' });
    const before: Envelope[] = [];
    for (;;) {
      const envelope = await this.next();
      if (envelope.event === 'room_left' && envelope.data.room === marker) return before;
      before.push(envelope);
    }
  }

  /** Closes the connection and waits until it is closed. */
  async close(): Promise<{ code: number; reason: string }> {
    if (
      this.socket.readyState === WebSocket.CONNECTING ||
      this.socket.readyState === WebSocket.OPEN
    ) {
      this.socket.close();
    }
    return this.closed;
  }

  /** Resolves when the server closes the connection. */
  whenClosed(): Promise<{ code: number; reason: string }> {
    return this.closed;
  }
}

export class HandshakeRefused extends Error {
  constructor(readonly status: number) {
    super(`handshake refused with HTTP ${status}`);
  }
}
