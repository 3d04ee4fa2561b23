// The real @pkg/core Server set up for the conformance tests of protocol version 1: handlers
// for the test events, optional tokens checked by an auth handler, a recorder of every
// decoded message (control events included) and, in front of the server, a TCP relay that
// can go silent (it keeps reading but drops what the server sends after the upgrade), for
// tests of a peer that does not answer.
import { createServer, connect as tcpConnect, type AddressInfo, type Socket } from 'node:net';
import {
  NullLogger,
  OnDisconnect,
  RoomsController,
  Server,
  ServerConfig,
  SocketController,
  SocketOn,
  type ServerConfigOptions,
} from '@pkg/core';

export type RequestHandler = (data: unknown, clientId: string) => unknown;

export interface V1ServerOptions {
  /** Tokens accepted in `$hello.auth`; undefined: no authentication. */
  tokens?: string[];
  /** Handlers of the events add, fail, nothing, slow, note (others: unknown_event). */
  handlers?: Record<string, RequestHandler>;
  /** More configuration keys (recovery_buffer, recovery_window, ...). */
  config?: ServerConfigOptions;
}

class TestHandlers extends SocketController {
  readonly #handlers: Record<string, RequestHandler>;
  readonly gone: Array<(clientId: string) => void> = [];

  constructor(handlers: Record<string, RequestHandler>) {
    super();
    this.#handlers = handlers;
  }

  #run(event: string, clientId: string, data: unknown): unknown {
    const handler = this.#handlers[event];
    if (handler === undefined) throw new Error(`no handler for ${event} in this test`);
    return handler(data, clientId);
  }

  @SocketOn('add') add(clientId: string, data: unknown): unknown {
    return this.#run('add', clientId, data);
  }
  @SocketOn('fail') fail(clientId: string, data: unknown): unknown {
    return this.#run('fail', clientId, data);
  }
  @SocketOn('nothing') nothing(clientId: string, data: unknown): unknown {
    return this.#run('nothing', clientId, data);
  }
  @SocketOn('slow') slow(clientId: string, data: unknown): unknown {
    return this.#run('slow', clientId, data);
  }
  @SocketOn('note') note(clientId: string, data: unknown): unknown {
    return this.#run('note', clientId, data);
  }

  @OnDisconnect() left(clientId: string): void {
    for (const fn of this.gone.splice(0)) fn(clientId);
  }
}

export class V1Server {
  readonly server: Server;
  readonly #relay: ReturnType<typeof createServer>;
  readonly #controller: TestHandlers;
  readonly #pipes = new Set<Socket>();
  /** Every `$hello` data received, in order. */
  readonly hellos: Array<Record<string, unknown>> = [];
  /** Request URLs of every upgrade. */
  readonly urls: string[] = [];
  /** Messages received from clients (control events included), in order. */
  readonly received: Array<{ event: string; data: unknown; id?: unknown }> = [];
  /** When true, the relay drops everything the server sends after the upgrade. */
  silent = false;

  private constructor(server: Server, relay: ReturnType<typeof createServer>, c: TestHandlers) {
    this.server = server;
    this.#relay = relay;
    this.#controller = c;
  }

  static async start(options: V1ServerOptions = {}): Promise<V1Server> {
    const server = new Server(
      new ServerConfig({
        host: '127.0.0.1',
        port: 0,
        heartbeat_interval: 0,
        shutdown_timeout: 200,
        ...options.config,
      }),
      undefined,
      undefined,
      undefined,
      new NullLogger(),
    );
    const controller = new TestHandlers(options.handlers ?? {});
    server.registerController(controller);
    server.registerController(new RoomsController());
    const { tokens } = options;
    if (tokens) {
      server.addAuthHandler((ctx) =>
        tokens.includes(ctx.auth ?? '') ? true : { status: 401, message: 'Invalid token' },
      );
    }
    await server.run();
    const relay = createServer();
    const handle = new V1Server(server, relay, controller);
    server.addHandshakeMiddleware((ctx) => {
      handle.urls.push(ctx.request.url ?? '');
    });
    server.wsHandler.onMessage((_client, envelope) => {
      if (envelope.event === '$hello') handle.hellos.push(envelope.data as Record<string, unknown>);
      handle.received.push({
        event: envelope.event,
        data: envelope.data,
        ...(envelope.id === undefined ? {} : { id: envelope.id }),
      });
    });
    relay.on('connection', (inbound: Socket) => handle.#pipe(inbound));
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    return handle;
  }

  #pipe(inbound: Socket): void {
    const outbound = tcpConnect(this.server.getPort(), '127.0.0.1');
    this.#pipes.add(inbound);
    this.#pipes.add(outbound);
    let upgraded = false;
    inbound.on('data', (chunk) => outbound.write(chunk));
    outbound.on('data', (chunk) => {
      if (upgraded && this.silent) return;
      upgraded = true;
      inbound.write(chunk);
    });
    const end = (): void => {
      inbound.destroy();
      outbound.destroy();
      this.#pipes.delete(inbound);
      this.#pipes.delete(outbound);
    };
    inbound.on('close', end).on('error', end);
    outbound.on('close', end).on('error', end);
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.#relay.address() as AddressInfo).port}`;
  }

  get connections(): number {
    return this.urls.length;
  }

  /** Resolves with the id of the next client whose OnDisconnect handlers run. */
  nextGone(): Promise<string> {
    return new Promise((resolve) => this.#controller.gone.push(resolve));
  }

  /** Broadcasts to a room of namespace "/". */
  broadcast(room: string, event: string, data: Record<string, unknown>): void {
    this.server.broadcast(event, data, '/', room);
  }

  /** Cuts a client's connection on the server without a close frame. */
  dropTcp(clientId: string): void {
    this.server.clients.get(clientId)?.socket.terminate();
  }

  roomMembers(room: string): string[] {
    return this.server.getNamespaceManager().getClientsInRoom(room);
  }

  async close(): Promise<void> {
    for (const s of this.#pipes) s.destroy();
    await new Promise<void>((resolve) => this.#relay.close(() => resolve()));
    await this.server.close();
  }
}
