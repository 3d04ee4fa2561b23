// The real side of the model-based connection test: one Server on 127.0.0.1 port 0 with a
// probe controller that records every OnConnect, OnDisconnect and handler call, an auth
// handler whose behaviour the credential string chooses, and `ws` clients that record
// everything they receive. Waits are bounded waits on events; nothing sleeps in a loop.
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { decodeBinaryFrame } from '@pkg/wire';
import type { WsContext } from '@pkg/decorators';
import { NullLogger } from '@pkg/logger';
import {
  OnConnect,
  OnDisconnect,
  RoomsController,
  Server,
  ServerConfig,
  SocketController,
  SocketOn,
  type AuthResult,
} from '@pkg/core';

/** Short deadlines, so a never-settling auth handler resolves within a step or two. */
export const AUTH_TIMEOUT = 300;
export const HELLO_WAIT = 100;
/** How long the `slow:*` credentials take to be accepted. */
export const SLOW_AUTH = 60;
/** Slack on top of a server deadline before the test calls it missed. */
export const SLACK = 1000;
/** Longest bounded wait for one expected event. */
export const WAIT = 2000;
/** The one timing check: `/health` answers within this (two misses in a row fail). */
export const HEALTH_LIMIT = 100;

/** One line of what the server did, in order. */
export type ServerEvent =
  | { kind: 'connect'; id: string; tag: string | undefined }
  | { kind: 'disconnect'; id: string }
  | { kind: 'handler'; id: string; event: string; tag: string | undefined }
  | { kind: 'auth'; tag: string | undefined; auth: string | undefined; resume: unknown };

/** Envelope as a client receives it; a binary frame's members, `data` its bytes. */
export interface Received {
  event: string;
  data: unknown;
  id?: unknown;
  rid?: unknown;
  seq?: number;
  /** A binary frame (protocol version 1). */
  binary?: true;
}

/** Records in order everything the server does for the model's clients. */
export class Recorder {
  readonly log: ServerEvent[] = [];
  #waiters: Array<() => void> = [];

  push(event: ServerEvent): void {
    this.log.push(event);
    for (const fn of this.#waiters.splice(0)) fn();
  }

  /** Resolves with the first logged event that matches, or rejects after `ms`. */
  waitFor(match: (e: ServerEvent) => boolean, ms: number, what: string): Promise<ServerEvent> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const hit = this.log.find(match);
        if (hit === undefined) return false;
        clearTimeout(timer);
        resolve(hit);
        return true;
      };
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== listen);
        reject(new Error(`the server did not log ${what} within ${ms} ms`));
      }, ms);
      const listen = (): void => {
        if (!check()) this.#waiters.push(listen);
      };
      listen();
    });
  }
}

/** Handlers of the test application: every call is recorded with the client id. */
class ProbeController extends SocketController {
  constructor(readonly recorder: Recorder) {
    super();
  }

  @OnConnect()
  connected(clientId: string): void {
    const tag = this.getServer().getClientData(clientId, 'tag') as string | undefined;
    this.recorder.push({ kind: 'connect', id: clientId, tag });
    this.emit(clientId, 'app.hello', { clientId });
  }

  @OnDisconnect()
  disconnected(clientId: string): void {
    this.recorder.push({ kind: 'disconnect', id: clientId });
  }

  @SocketOn('echo')
  echo(_clientId: string, data: unknown): unknown {
    return data;
  }
}

/** Returned by the auth handler for `alice` / `bob` (an identity, the fixed semantics). */
function accepted(user: string): AuthResult {
  // MODEL_AUTH_RESULT=boolean returns plain `true`, for a server that predates identities.
  if (process.env['MODEL_AUTH_RESULT'] === 'boolean') return true;
  return { identity: user } as unknown as AuthResult;
}

/** Resolves after a macrotask: an auth loop on the server yields instead of freezing jest. */
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export interface ModelServer {
  server: Server;
  recorder: Recorder;
  wsUrl: string;
  healthUrl: string;
}

/**
 * Starts the server under test. Credentials (`$hello.auth`) are `<kind>:<user>:<tag>`:
 * `good` accepts, `slow` accepts after SLOW_AUTH ms, `bad` refuses 401, `banned` 403,
 * `never` never settles. Without `auth`, a client accepted by the handshake (`?key=good`)
 * is accepted; any other is refused.
 */
export async function startModelServer(): Promise<ModelServer> {
  const recorder = new Recorder();
  const server = new Server(
    new ServerConfig({
      host: '127.0.0.1',
      port: 0,
      heartbeat_interval: 0,
      health_check_path: '/health',
      auth_timeout: AUTH_TIMEOUT,
      hello_wait: HELLO_WAIT,
      recovery_window: 60_000,
      shutdown_timeout: 500,
      ws_error_reply_interval: 0,
      ws_max_protocol_errors: 10_000,
    }),
    undefined,
    undefined,
    undefined,
    new NullLogger(),
  );
  server.registerController(new ProbeController(recorder));
  server.registerController(new RoomsController());
  server.addHandshakeMiddleware((ctx) => {
    const tag = ctx.query.get('tag');
    if (tag !== null) ctx.data['tag'] = tag;
    if (ctx.query.get('key') === 'good') ctx.data['user'] = 'carol';
  });
  server.addWebSocketMiddleware((ctx: WsContext, next: () => Promise<void>) => {
    const data = ctx.data as { tag?: unknown };
    const tag = typeof data.tag === 'string' ? data.tag : undefined;
    recorder.push({ kind: 'handler', id: ctx.clientId, event: ctx.event, tag });
    return next();
  });
  server.addAuthHandler(async (ctx) => {
    const context = ctx as typeof ctx & { resume?: unknown };
    const tag = ctx.data['tag'] as string | undefined;
    recorder.push({ kind: 'auth', tag, auth: ctx.auth, resume: context.resume });
    await tick();
    if (ctx.auth === undefined) return ctx.data['user'] !== undefined ? true : false;
    const [kind, user = 'alice'] = ctx.auth.split(':');
    switch (kind) {
      case 'good':
        return accepted(user);
      case 'slow':
        await new Promise((resolve) => setTimeout(resolve, SLOW_AUTH));
        return accepted(user);
      case 'banned':
        return { status: 403, message: 'Banned' };
      case 'never':
        return new Promise<AuthResult>(() => undefined);
      default:
        return { status: 401, message: 'Invalid token' };
    }
  });
  await server.run();
  const port = server.getPort();
  const healthUrl = `http://127.0.0.1:${port}/health`;
  // One unmeasured request first: the first fetch of a server pays for the connection.
  await (await fetch(healthUrl)).arrayBuffer();
  return { server, recorder, wsUrl: `ws://127.0.0.1:${port}`, healthUrl };
}

/** One real connection: everything it receives, in order, and how it closed. */
export class Conn {
  readonly received: Received[] = [];
  closed: { code: number; reason: string } | undefined;
  readonly ws: WebSocket;
  #waiters: Array<() => void> = [];

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on('message', (raw: Buffer, isBinary) => {
      if (isBinary) {
        const read = decodeBinaryFrame(new Uint8Array(raw));
        // A frame the client cannot read is recorded as such: the invariants reject it.
        this.received.push(
          read.ok ? { ...read.frame, binary: true } : { event: '?binary', data: raw, binary: true },
        );
      } else this.received.push(JSON.parse(String(raw)) as Received);
      this.#wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.#wake();
    });
    ws.on('error', () => undefined);
  }

  static async open(url: string, protocols: string[]): Promise<Conn> {
    const ws = new WebSocket(url, protocols);
    const conn = new Conn(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return conn;
  }

  #wake(): void {
    for (const fn of this.#waiters.splice(0)) fn();
  }

  /** Resolves once `done()` holds (checked on every message and on close), or rejects. */
  until<T>(done: () => T | undefined, ms: number, what: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== check);
        reject(new Error(`${what}: not within ${ms} ms`));
      }, ms);
      const check = (): void => {
        const value = done();
        if (value !== undefined) {
          clearTimeout(timer);
          resolve(value);
        } else {
          this.#waiters.push(check);
        }
      };
      check();
    });
  }

  /** The first received envelope that matches, waiting for it if needed. */
  next(match: (m: Received) => boolean, ms: number, what: string): Promise<Received> {
    return this.until(() => this.received.find(match), ms, what);
  }

  whenClosed(ms: number, what: string): Promise<{ code: number; reason: string }> {
    return this.until(() => this.closed, ms, what);
  }

  /** Sends one envelope; false (nothing sent) once the connection is closing. */
  send(envelope: Record<string, unknown>): boolean {
    if (this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(JSON.stringify(envelope));
    return true;
  }

  /** Sends one binary frame; false (nothing sent) once the connection is closing. */
  sendBinary(frame: Uint8Array): boolean {
    if (this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(frame);
    return true;
  }
}

/** Every `/health` latency measured (ms), for the summary the test prints. */
export const healthSamples: number[] = [];

/** Measures one `/health` answer; the caller fails on two slow answers in a row. */
export async function healthLatency(url: string): Promise<number> {
  const start = performance.now();
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`/health answered ${res.status}`);
  const ms = performance.now() - start;
  healthSamples.push(ms);
  return ms;
}
