// Shared helpers of the integration tests: a Redis to talk to, server instances in child
// processes (test/fixtures/instance.ts, bundled once with esbuild so the child runs the
// sources), and `ws` clients that queue what they receive.
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, Socket, type Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { createClient } from 'redis';
import WebSocket from 'ws';
import {
  NullLogger,
  RoomsController,
  Server,
  ServerConfig,
  type RoomsControllerOptions,
  type ServerConfigOptions,
} from '@pkg/core';
import { RedisAdapter, type RedisAdapterOptions } from '../src/index';

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

/** Whether something answers a Redis PING at host:port. */
export function redisAnswers(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    let answer = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(port, host, () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk.toString();
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'));
    });
  });
}

/**
 * Whether the shared Redis can be used, checked synchronously so that a test file can choose
 * between `describe` and `describe.skip` when it loads: true when Redis at 127.0.0.1:6379 answers; under CI=true a missing Redis
 * throws (the run fails); elsewhere a notice is printed and false returned.
 */
export function sharedRedisAvailableSync(suite: string): boolean {
  const probe = spawnSync(
    process.execPath,
    [
      '-e',
      "const s=require('net').connect(6379,'127.0.0.1',()=>s.write('PING\\r\\n'));s.setTimeout(1000,()=>process.exit(1));s.on('error',()=>process.exit(1));s.on('data',d=>process.exit(String(d).startsWith('+PONG')?0:1));",
    ],
    { stdio: 'ignore' },
  );
  if (probe.status === 0) return true;
  if (process.env['CI'] === 'true') {
    throw new Error(`${suite}: Redis at 127.0.0.1:6379 is unreachable, and CI=true requires it.`);
  }
  console.warn(
    `${suite}: skipped, no Redis at 127.0.0.1:6379 (start one, or set CI=true to fail instead).`,
  );
  return false;
}

/**
 * Whether `redis-server` is installed, for the suites that start their own: under CI=true a
 * missing one throws (the run fails); elsewhere a notice is printed and false returned.
 */
export function redisServerAvailableSync(suite: string): boolean {
  if (spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0) return true;
  if (process.env['CI'] === 'true') {
    throw new Error(`${suite}: redis-server is not installed, and CI=true requires it.`);
  }
  console.warn(`${suite}: skipped, redis-server is not installed.`);
  return false;
}

/** A free TCP port on 127.0.0.1 (for processes that cannot be told port 0, like redis-server). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      srv.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** A private redis-server on a free port, no persistence; `stop()` / `start()` for fault tests. */
export class PrivateRedis {
  #child: ChildProcess | null = null;
  constructor(readonly port: number) {}

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.start();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    this.#child = child;
    await waitFor(() => redisAnswers(this.port), `redis-server on port ${this.port}`);
  }

  async stop(): Promise<void> {
    const child = this.#child;
    this.#child = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}

/**
 * A TCP proxy on 127.0.0.1 in front of a Redis, for tests that need a command to reach Redis
 * only after something else happened there: while held, what the proxy's clients send is
 * kept here (Redis sees none of it) until `release()` forwards it, in order; what Redis
 * sends passes at once. `holdPushes()` instead keeps back what Redis sends to the adapter's
 * subscriber connections (those named `pkg-sub-...`), so a pub/sub message reaches the
 * instance only at `releasePushes()`, while its other commands are answered at once.
 */
export class HoldingProxy {
  readonly #sockets = new Set<Socket>();
  readonly #server: NetServer;
  #held: Array<{ to: Socket; chunk: Buffer }> | null = null;
  #pushes: Array<{ to: Socket; chunk: Buffer }> | null = null;
  readonly #subscribers = new WeakSet<Socket>();
  #port = 0;

  private constructor(targetPort: number) {
    this.#server = createServer((client) => this.#pair(client, connect(targetPort, '127.0.0.1')));
  }

  static async start(targetPort: number): Promise<HoldingProxy> {
    const proxy = new HoldingProxy(targetPort);
    await new Promise<void>((resolve, reject) => {
      proxy.#server.once('error', reject);
      proxy.#server.listen(0, '127.0.0.1', () => resolve());
    });
    const address = proxy.#server.address();
    proxy.#port = typeof address === 'object' && address ? address.port : 0;
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.#port}`;
  }

  /** Bytes sent by clients and kept back since `hold()`. */
  get heldBytes(): number {
    return this.#held?.reduce((n, h) => n + h.chunk.length, 0) ?? 0;
  }

  hold(): void {
    this.#held ??= [];
  }

  release(): void {
    const held = this.#held ?? [];
    this.#held = null;
    for (const { to, chunk } of held) to.write(chunk);
  }

  /** What Redis sends to subscriber connections since `holdPushes()`, in bytes. */
  get heldPushBytes(): number {
    return this.#pushes?.reduce((n, h) => n + h.chunk.length, 0) ?? 0;
  }

  holdPushes(): void {
    this.#pushes ??= [];
  }

  releasePushes(): void {
    const held = this.#pushes ?? [];
    this.#pushes = null;
    for (const { to, chunk } of held) to.write(chunk);
  }

  stop(): Promise<void> {
    this.release();
    this.releasePushes();
    for (const s of this.#sockets) s.destroy();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }

  #pair(client: Socket, upstream: Socket): void {
    for (const s of [client, upstream]) {
      this.#sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        this.#sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      // node-redis names its connection first (CLIENT SETNAME / HELLO SETNAME).
      if (chunk.includes('pkg-sub-')) this.#subscribers.add(client);
      if (this.#held) this.#held.push({ to: upstream, chunk });
      else upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (this.#pushes && this.#subscribers.has(client)) this.#pushes.push({ to: client, chunk });
      else client.write(chunk);
    });
  }
}

/**
 * A private redis-server and an admin connection to it, for suites that inspect what the
 * adapter wrote: `start()` in beforeAll, `stop()` in afterAll once the suite's servers closed.
 */
export class RedisUnderTest {
  redis!: PrivateRedis;
  admin!: ReturnType<typeof createClient>;

  async start(): Promise<void> {
    this.redis = await PrivateRedis.start();
    this.admin = createClient({ url: this.redis.url });
    this.admin.on('error', () => undefined);
    await this.admin.connect();
  }

  async stop(): Promise<void> {
    if (this.admin?.isOpen) await this.admin.close();
    await this.redis?.stop();
  }
}

/** Polls `check` until it is true; fails after `limitMs` with what was awaited (not a timing assertion). */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string,
  limitMs = 10000,
): Promise<void> {
  const end = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let bundleDir: string | null = null;

/** Bundles test/fixtures/<fixture>.ts once per test file; returns the script path. */
function instanceScript(fixture = 'instance'): string {
  bundleDir ??= mkdtempSync(path.join(tmpdir(), 'pkg-redis-instance-'));
  const script = path.join(bundleDir, `${fixture}.cjs`);
  if (!existsSync(script)) {
    buildSync({
      entryPoints: [path.join(__dirname, 'fixtures', `${fixture}.ts`)],
      outfile: script,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      conditions: ['source'],
      external: ['bufferutil', 'utf-8-validate'],
      logLevel: 'error',
      absWorkingDir: REPO_ROOT,
    });
  }
  return script;
}

/** Removes the bundle made by {@link instanceScript}. */
export function removeBundle(): void {
  if (bundleDir) rmSync(bundleDir, { recursive: true, force: true });
  bundleDir = null;
}

export interface LogLine {
  level: string;
  message: string;
  context?: Record<string, unknown>;
}

/** A server instance in a child process, driven over IPC. */
export class Instance {
  readonly logs: LogLine[] = [];
  #nextId = 0;
  readonly #waiting = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: Error) => void }
  >();

  private constructor(
    readonly child: ChildProcess,
    readonly port: number,
    readonly nodeId: string,
  ) {
    child.on(
      'message',
      (m: {
        id?: number;
        ok?: boolean;
        value?: unknown;
        error?: { message: string; code?: string };
        log?: LogLine;
      }) => {
        if (m.log) this.logs.push(m.log);
        if (m.id === undefined) return;
        const w = this.#waiting.get(m.id);
        this.#waiting.delete(m.id);
        if (!w) return;
        if (m.ok) w.resolve(m.value);
        else
          w.reject(Object.assign(new Error(m.error?.message ?? 'failed'), { code: m.error?.code }));
      },
    );
    child.on('exit', () => {
      for (const w of this.#waiting.values()) w.reject(new Error('instance exited'));
      this.#waiting.clear();
    });
  }

  /** Starts test/fixtures/<fixture>.ts (default `instance`) in a child process. */
  static start(env: Record<string, string>, fixture = 'instance'): Promise<Instance> {
    const child = fork(instanceScript(fixture), [], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    return new Promise((resolve, reject) => {
      child.once('exit', (code) =>
        reject(new Error(`instance exited with ${code} before it was ready`)),
      );
      child.on('message', function onReady(m: { ready?: boolean; port?: number; nodeId?: string }) {
        if (!m.ready) return;
        child.off('message', onReady);
        child.removeAllListeners('exit');
        resolve(new Instance(child, m.port ?? 0, m.nodeId ?? ''));
      });
    });
  }

  get wsUrl(): string {
    return `ws://127.0.0.1:${this.port}/`;
  }

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  call<T = unknown>(cmd: string, args: Record<string, unknown> = {}): Promise<T> {
    this.#nextId += 1;
    const id = this.#nextId;
    return new Promise<T>((resolve, reject) => {
      this.#waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ id, cmd, ...args });
    });
  }

  /** Connects a client and finds its id (the one this instance did not list before). */
  async connect(): Promise<TestClient> {
    const before = new Set(await this.call<string[]>('clients'));
    const client = await TestClient.open(this.wsUrl);
    let id = '';
    await waitFor(async () => {
      const now = await this.call<string[]>('clients');
      id = now.find((c) => !before.has(c)) ?? '';
      return id !== '';
    }, 'the new client to be listed');
    client.id = id;
    return client;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return; // gone (or killed)
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    await this.call('close').catch(() => undefined);
    this.child.disconnect();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([exited, new Promise((r) => (timer = setTimeout(r, 3000)))]);
    clearTimeout(timer);
    if (this.child.exitCode === null) this.child.kill('SIGKILL');
  }
}

export interface Envelope {
  event: string;
  data: Record<string, unknown>;
}

/** A `ws` client that keeps every envelope it receives. */
export class TestClient {
  id = '';
  readonly received: Envelope[] = [];
  closed = false;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (raw) => this.received.push(JSON.parse(String(raw)) as Envelope));
    ws.on('close', () => {
      this.closed = true;
    });
  }

  static open(url: string, headers: Record<string, string> = {}): Promise<TestClient> {
    const ws = new WebSocket(url, { headers });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new TestClient(ws)));
      ws.once('error', reject);
    });
  }

  /** Events received with that name. */
  events(name: string): Envelope[] {
    return this.received.filter((e) => e.event === name);
  }

  close(): void {
    this.ws.close();
  }
}

/**
 * A server in this process on 127.0.0.1 port 0 whose rooms matching `room` keep their last
 * `size` messages in Redis (through a RedisAdapter made with `adapter`), with
 * RoomsController, no heartbeat and a short shutdown; resolves once the adapter is ready.
 */
export async function startHistoryServer(options: {
  room: string;
  size: number;
  adapter: RedisAdapterOptions;
  /** More server configuration (for example `recovery_window: 0`). */
  config?: ServerConfigOptions;
  /** Options of its RoomsController (a `canJoin` that acts when a join is handled). */
  rooms?: RoomsControllerOptions;
}): Promise<Server> {
  const server = new Server(
    new ServerConfig({
      host: '127.0.0.1',
      port: 0,
      heartbeat_interval: 0,
      shutdown_timeout: 200,
      history: [{ match: options.room, size: options.size, ttl: 60_000 }],
      ...options.config,
    }),
    undefined,
    undefined,
    undefined,
    new NullLogger(),
  );
  const adapter = new RedisAdapter(options.adapter);
  server.setAdapter(adapter);
  server.registerController(new RoomsController(options.rooms));
  await server.run();
  await adapter.ready();
  return server;
}

/** A message a version 1 client receives. */
export interface V1Message {
  event: string;
  data: Record<string, unknown>;
  id?: unknown;
  /** Its place in a room that keeps history. */
  pos?: { epoch: string; offset: number };
}

/**
 * A version 1 `ws` client that queues what it receives: `$hello` (with `auth` when given)
 * is said and `$welcome` awaited by `open`.
 */
export class V1Client {
  readonly received: V1Message[] = [];
  readonly closed: Promise<number>;
  #waiters: Array<{ match: (m: V1Message) => boolean; resolve: (m: V1Message) => void }> = [];
  #queue: V1Message[] = [];

  private constructor(readonly ws: WebSocket) {
    this.closed = new Promise((resolve) => ws.once('close', (code) => resolve(code)));
    ws.on('message', (raw) => {
      const m = JSON.parse(String(raw)) as V1Message;
      this.received.push(m);
      const i = this.#waiters.findIndex((w) => w.match(m));
      if (i >= 0) this.#waiters.splice(i, 1)[0]!.resolve(m);
      else this.#queue.push(m);
    });
  }

  static async open(url: string, auth?: string): Promise<V1Client> {
    const ws = new WebSocket(url, ['pkg.v1']);
    const client = new V1Client(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    client.request('$hello', auth === undefined ? { v: 1 } : { v: 1, auth });
    const first = await client.next();
    if (first.event !== '$welcome') {
      throw new Error(`expected $welcome first, got ${JSON.stringify(first)}`);
    }
    return client;
  }

  request(event: string, data: unknown, id?: unknown): void {
    this.ws.send(JSON.stringify(id === undefined ? { event, data } : { event, data, id }));
  }

  /** The next message matching (default: any). */
  next(match: (m: V1Message) => boolean = () => true): Promise<V1Message> {
    const i = this.#queue.findIndex(match);
    if (i >= 0) return Promise.resolve(this.#queue.splice(i, 1)[0]!);
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }

  /** What arrived and was not taken by `next` yet. */
  pending(): V1Message[] {
    return [...this.#queue];
  }

  /** The answer to request `id` (a result or an `error`). */
  answer(id: unknown): Promise<V1Message> {
    return this.next((m) => m.id === id);
  }
}
