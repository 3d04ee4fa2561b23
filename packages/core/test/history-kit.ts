// Shared pieces of the room-history tests: a server with RoomsController and a history
// pattern, version 1 clients driven frame by frame, and an adapter whose history store
// answers reads later, as a store across the network does.
import { expect } from '@jest/globals';
import {
  LocalAdapter,
  MemoryHistoryStore,
  RoomsController,
  type HistoryPolicy,
  type HistoryQuery,
  type HistoryRead,
  type HistoryStore,
  type KeptTarget,
  type MemoryHistoryStoreOptions,
  type PositionTemplate,
  type PublishedMessage,
  type Server,
  type ServerConfigOptions,
  type SocketController,
} from '../src/index';
import { TestClient, deferred, startServer, type Envelope } from './helpers';

export interface Pos {
  room: string;
  namespace: string;
  epoch: string;
  offset: number;
}

export interface Message extends Envelope {
  id?: unknown;
  seq?: number;
  pos?: Pos;
}

export const CHAT = { match: 'chat:*', size: 5, ttl: 60_000 };

export async function setup(
  config: ServerConfigOptions = {},
  controllers: SocketController[] = [],
): Promise<{ server: Server; url: string }> {
  const { server, wsUrl } = await startServer([new RoomsController(), ...controllers], {
    shutdown_timeout: 200,
    history: [CHAT],
    ...config,
  });
  return { server, url: wsUrl };
}

/** A version 1 client that said $hello (with `data`) and got $welcome. */
export async function v1(
  url: string,
  data: Record<string, unknown> = { v: 1 },
): Promise<TestClient> {
  const client = await TestClient.connect(url, {}, ['pkg.v1']);
  client.sendRaw(JSON.stringify({ event: '$hello', data }));
  const welcome = await client.next();
  expect(welcome.event).toBe('$welcome');
  return client;
}

export const request = (client: TestClient, event: string, data: unknown, id: unknown): void =>
  client.sendRaw(JSON.stringify({ event, data, id }));

/** Joins a room through RoomsController and waits for the answer. */
export async function join(
  client: TestClient,
  data: Record<string, unknown>,
  id = 'j',
): Promise<Message> {
  request(client, 'join_room', data, id);
  for (;;) {
    const m = (await client.next()) as Message;
    if (m.id === id) return m;
  }
}

/** The next envelopes up to and including the first of `event`. */
export async function until(client: TestClient, event: string): Promise<Message[]> {
  const out: Message[] = [];
  for (;;) {
    const m = (await client.next()) as Message;
    out.push(m);
    if (m.event === event) return out;
  }
}

/** Joins as a fresh v1 client, sees one message of `room`, leaves; returns its position. */
export async function seeOne(server: Server, url: string, room: string): Promise<Pos> {
  const a = await v1(url);
  await join(a, { room });
  server.broadcast('msg', { n: 0 }, { room });
  const seen = (await a.next('msg')) as Message;
  await a.close();
  return seen.pos!;
}

/** Recovers `room` from `pos` on a fresh v1 client; returns what came before `$recovered` and it. */
export async function recover(
  url: string,
  room: string,
  since: unknown,
): Promise<{ client: TestClient; before: Message[]; recovered: Message }> {
  const b = await v1(url);
  request(b, 'join_room', { room, since }, 'j');
  const got = await until(b, '$recovered');
  return { client: b, before: got.slice(0, -1), recovered: got.at(-1)! };
}

export const at = (pos: Pos) => ({ offset: pos.offset, epoch: pos.epoch });

/**
 * A history store that answers reads later, as a store across the network does: reads wait
 * for `release()`; `snapshot` says whether the read sees the stream as it was when asked
 * (`asked`) or when released (`released`). Publications are kept and delivered at once.
 */
export class LaterStore implements HistoryStore {
  readonly memory: MemoryHistoryStore;
  readonly #gate = deferred();
  readonly reads: number[] = [];

  constructor(
    deliver: MemoryHistoryStoreOptions['deliver'],
    readonly snapshot: 'asked' | 'released',
  ) {
    this.memory = new MemoryHistoryStore({ deliver });
  }

  release(): void {
    this.#gate.resolve();
  }

  publish(target: KeptTarget, template: PositionTemplate, policy: HistoryPolicy): PublishedMessage {
    return this.memory.publish(target, template, policy);
  }

  async read(namespace: string, room: string, query: HistoryQuery): Promise<HistoryRead> {
    this.reads.push(Date.now());
    const early = this.snapshot === 'asked' ? this.memory.read(namespace, room, query) : undefined;
    await this.#gate.promise;
    return early ?? this.memory.read(namespace, room, query);
  }
}

export class LaterAdapter extends LocalAdapter {
  readonly history: LaterStore;

  constructor(snapshot: 'asked' | 'released') {
    super();
    this.history = new LaterStore((text, target) => this.broadcast(text, target), snapshot);
  }

  override close(): void {
    this.history.memory.close();
    super.close();
  }
}

/**
 * An adapter whose history store keeps each message at once but, while `holding`, delivers
 * it only at `releaseCopies()`: as a message kept in Redis reaches an instance over
 * pub/sub, possibly after a recovery's read already returned it.
 */
export class LateCopyAdapter extends LocalAdapter {
  readonly history: MemoryHistoryStore;
  holding = false;
  readonly #copies: Array<() => void> = [];

  constructor() {
    super();
    this.history = new MemoryHistoryStore({
      deliver: (text, target) => {
        if (!this.holding) return this.broadcast(text, target);
        this.#copies.push(() => this.broadcast(text, target));
        return 0;
      },
    });
  }

  releaseCopies(): void {
    this.holding = false;
    for (const copy of this.#copies.splice(0)) copy();
  }

  override close(): void {
    this.history.close();
    super.close();
  }
}
