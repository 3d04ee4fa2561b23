/**
 * Test helpers: a plain node:http server with a WebSocketHandler on its `upgrade` event, a
 * logger that records, `ws` clients, and raw `net` sockets that speak just enough RFC 6455
 * to misbehave on purpose. Everything opened here is closed by `cleanup()`.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocket } from 'ws';
import type { ClientOptions } from 'ws';
import { AbstractLogger } from '@pkg/logger';
import type { LogContext } from '@pkg/logger';
import { WebSocketHandler } from '../src/index';
import type { WebSocketHandlerOptions } from '../src/index';

export interface LogLine {
  level: string;
  message: string;
  context: LogContext | undefined;
}

/** A LoggerInterface that keeps every line for assertions. */
export class RecordingLogger extends AbstractLogger {
  readonly lines: LogLine[] = [];
  /** Resolvers waiting for a line with a given context code. */
  readonly #waiting: { code: string; resolve: (line: LogLine) => void }[] = [];

  log(level: string, message: string, context?: LogContext): void {
    const line = { level, message, context };
    this.lines.push(line);
    for (const w of [...this.#waiting]) {
      if (context?.code === w.code) {
        this.#waiting.splice(this.#waiting.indexOf(w), 1);
        w.resolve(line);
      }
    }
  }
  // Keeps the thrown value itself, so tests can assert on it.
  override exception(error: unknown, context?: LogContext): void {
    this.log('error', error instanceof Error ? error.message : String(error), {
      ...context,
      exception: error,
    });
  }

  /** Lines whose context carries `code`. */
  withCode(code: string): LogLine[] {
    return this.lines.filter((l) => l.context?.code === code);
  }

  /** Resolves with the first line (already logged or future) whose context carries `code`. */
  waitForCode(code: string): Promise<LogLine> {
    const seen = this.withCode(code)[0];
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.#waiting.push({ code, resolve }));
  }
}

export interface TestServer {
  handler: WebSocketHandler;
  logger: RecordingLogger;
  server: Server;
  port: number;
  url: string;
  /** Results of every performHandshake call, in order. */
  handshakes: Promise<boolean>[];
}

const servers: TestServer[] = [];
const sockets: (WebSocket | Socket)[] = [];

/** Starts a node:http server on 127.0.0.1:0 whose upgrades go to a new WebSocketHandler. */
export async function startServer(options: WebSocketHandlerOptions = {}): Promise<TestServer> {
  const logger = new RecordingLogger();
  const handler = new WebSocketHandler({ logger, heartbeatInterval: 0, ...options });
  const server = createServer((_req, res) => {
    res.writeHead(426, { 'Content-Type': 'text/plain' });
    res.end('Upgrade Required');
  });
  const handshakes: Promise<boolean>[] = [];
  // Every server-side socket, so that cleanup can end even a half-finished handshake.
  server.on('connection', (socket) => sockets.push(socket));
  server.on('upgrade', (req, socket, head) => {
    handshakes.push(handler.performHandshake(req, socket, head));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const ts = { handler, logger, server, port, url: `ws://127.0.0.1:${port}`, handshakes };
  servers.push(ts);
  return ts;
}

/** Opens a `ws` client and resolves once it is open (rejects on a refused handshake). */
export async function openClient(url: string, options: ClientOptions = {}): Promise<WebSocket> {
  const ws = new WebSocket(url, options);
  sockets.push(ws);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  ws.on('error', () => {});
  return ws;
}

export interface RefusedHandshake {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Opens a `ws` client that is expected to be refused; resolves with the HTTP answer. */
export function refusedClient(url: string, options: ClientOptions = {}): Promise<RefusedHandshake> {
  const ws = new WebSocket(url, options);
  sockets.push(ws);
  ws.on('error', () => {});
  return new Promise((resolve, reject) => {
    ws.once('open', () => reject(new Error('the handshake was accepted')));
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
  });
}

/** The next text message a client receives, parsed. */
export async function nextMessage(ws: WebSocket): Promise<{ event: string; data: unknown }> {
  const [raw] = (await once(ws, 'message')) as [Buffer];
  return JSON.parse(raw.toString('utf8')) as { event: string; data: unknown };
}

/** Resolves with the close code and reason a client sees. */
export async function closed(ws: WebSocket): Promise<{ code: number; reason: string }> {
  if (ws.readyState === WebSocket.CLOSED) throw new Error('already closed');
  const [code, reason] = (await once(ws, 'close')) as [number, Buffer];
  return { code, reason: reason.toString('utf8') };
}

/** A raw TCP connection to the test server. */
export async function rawSocket(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => {});
  await once(socket, 'connect');
  return socket;
}

/** Everything the server sends until it closes the connection. */
export async function rawExchange(port: number, request: string): Promise<string> {
  const socket = await rawSocket(port);
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.write(request);
  await once(socket, 'close');
  return Buffer.concat(chunks).toString('latin1');
}

export const VALID_KEY = 'dGhlIHNhbXBsZSBub25jZQ==';

/** An opening handshake with the given request line and header overrides (null removes). */
export function upgradeRequest(
  headers: Record<string, string | null> = {},
  requestLine = 'GET / HTTP/1.1',
): string {
  const all: Record<string, string | null> = {
    Host: '127.0.0.1',
    Upgrade: 'websocket',
    Connection: 'Upgrade',
    'Sec-WebSocket-Key': VALID_KEY,
    'Sec-WebSocket-Version': '13',
    ...headers,
  };
  const lines = Object.entries(all)
    .filter((e): e is [string, string] => e[1] !== null)
    .map(([k, v]) => `${k}: ${v}`);
  return `${requestLine}\r\n${lines.join('\r\n')}\r\n\r\n`;
}

/**
 * A raw client that completes the handshake and then does only what the test tells it:
 * it never answers pings or close frames on its own.
 */
export interface RawWsClient {
  socket: Socket;
  /** Every frame received after the handshake (unmasked server frames), in order. */
  frames: { opcode: number; payload: Buffer }[];
  /** Resolves with the next frame of the given opcode. */
  nextFrame(opcode: number): Promise<Buffer>;
  /** Sends a masked frame (as a client must). */
  sendFrame(opcode: number, payload: Buffer | string, mask?: boolean): void;
}

export async function rawWsClient(port: number, path = '/'): Promise<RawWsClient> {
  const socket = await rawSocket(port);
  socket.write(upgradeRequest({}, `GET ${path} HTTP/1.1`));
  let buffer = Buffer.alloc(0);
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      buffer = Buffer.concat([buffer, chunk]);
      const end = buffer.indexOf('\r\n\r\n');
      if (end === -1) return;
      const head = buffer.subarray(0, end).toString('latin1');
      buffer = buffer.subarray(end + 4);
      socket.removeListener('data', onData);
      if (!head.startsWith('HTTP/1.1 101')) reject(new Error(head));
      else resolve();
    };
    socket.on('data', onData);
  });
  // Keep whatever came after the 101 in the frame buffer: it is pushed back below.
  socket.pause();
  if (buffer.length > 0) socket.unshift(buffer);

  const frames: { opcode: number; payload: Buffer }[] = [];
  const queue: { opcode: number; payload: Buffer }[] = [];
  const waiters: { opcode: number; resolve: (p: Buffer) => void }[] = [];
  let pending = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    for (;;) {
      if (pending.length < 2) return;
      const opcode = pending[0]! & 0x0f;
      let length = pending[1]! & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (pending.length < 4) return;
        length = pending.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (pending.length < 10) return;
        length = Number(pending.readBigUInt64BE(2));
        offset = 10;
      }
      if (pending.length < offset + length) return;
      const payload = pending.subarray(offset, offset + length);
      pending = pending.subarray(offset + length);
      frames.push({ opcode, payload });
      const i = waiters.findIndex((w) => w.opcode === opcode);
      if (i !== -1) waiters.splice(i, 1)[0]!.resolve(payload);
      else queue.push({ opcode, payload });
    }
  });
  socket.resume();
  return {
    socket,
    frames,
    nextFrame(opcode) {
      const i = queue.findIndex((f) => f.opcode === opcode);
      if (i !== -1) return Promise.resolve(queue.splice(i, 1)[0]!.payload);
      return new Promise((resolve) => waiters.push({ opcode, resolve }));
    },
    sendFrame(opcode, payload, mask = true) {
      const data = Buffer.from(payload);
      if (data.length > 125) throw new Error('short frames only');
      const key = Buffer.from([1, 2, 3, 4]);
      const header = Buffer.from([0x80 | opcode, (mask ? 0x80 : 0) | data.length]);
      const body = mask ? data.map((b, i) => b ^ key[i % 4]!) : data;
      socket.write(mask ? Buffer.concat([header, key, body]) : Buffer.concat([header, body]));
    },
  };
}

/** Waits for `n` calls recorded in `list` (pushed by a listener), event-driven. */
export function collector<T>(): { items: T[]; push: (item: T) => void; next: () => Promise<T> } {
  const items: T[] = [];
  const waiters: ((item: T) => void)[] = [];
  let delivered = 0;
  return {
    items,
    push(item) {
      items.push(item);
      const w = waiters.shift();
      if (w) {
        delivered += 1;
        w(item);
      }
    },
    next() {
      if (delivered < items.length) {
        const item = items[delivered]!;
        delivered += 1;
        return Promise.resolve(item);
      }
      return new Promise((resolve) => waiters.push(resolve));
    },
  };
}

/** Closes every client, raw socket and server opened by these helpers. */
export async function cleanup(): Promise<void> {
  for (const s of sockets.splice(0)) {
    if (s instanceof WebSocket) s.terminate();
    else s.destroy();
  }
  for (const ts of servers.splice(0)) {
    await ts.handler.closeAll(1001, 'test over', 0);
    ts.server.closeAllConnections();
    await new Promise<void>((resolve) => ts.server.close(() => resolve()));
  }
}
