// Model-based test of two server instances sharing a real Redis (fast-check `fc.commands`):
// protocol version 1 clients connect to A or B, join rooms with or without `since`, leave,
// get their TCP connection cut, come back on either instance (a resume on the instance that
// holds the session, a fresh start with `since` on the other), end their session (close
// 1000), and presence is checked. Broadcasts go to the rooms from either instance, also
// racing a join: sent just before it, made while the instance handles it, or kept in Redis
// before it while their pub/sub copies to the joining instance wait in the TCP proxy between
// that instance and Redis until the recovery has answered (so a late copy is certain, not
// left to timing). Rooms keep history in Redis Streams and track presence. Checked while it runs, on what each client receives (nothing deduplicated):
// every room message reaches a client at most once and in order (offsets rising by one,
// across its connections, `since` carrying the last one it saw); a recovery is contiguous
// (`$recovered` stands where the replay ended) and succeeds; no message of a room reaches a
// connection that has not asked to join it, or after its leave was answered; `seq` rises in
// a session. After each presence check and at the end: each instance lists exactly the
// open members of each room. At the end every client comes back and every member has each
// room's last message.
//
// Environment: FC_SEED (default below), FC_RUNS (default 6), FC_PATH (the `path` a failure
// prints, to replay it with the seed), FC_SHRINK=1 (shrink a failure, slow), FC_DEBUG (print
// each run's commands and the recoveries the open connections saw). Needs
// redis-server: with CI=true a missing one fails the run, otherwise the test is skipped.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import WebSocket from 'ws';
import type { Server } from '@pkg/core';
import type { RedisAdapter } from '../src/index';
import {
  HoldingProxy,
  RedisUnderTest,
  redisServerAvailableSync,
  startHistoryServer,
  waitFor,
} from './helpers';

const SEED = Number(process.env['FC_SEED'] ?? 20261128);
const RUNS = Number(process.env['FC_RUNS'] ?? 6);
const PATH = process.env['FC_PATH'];
const SHRINK = process.env['FC_SHRINK'] === '1';

const hasRedisServer = redisServerAvailableSync('@pkg/redis-adapter cluster model test');
const describeRedis = hasRedisServer ? describe : describe.skip;

const ROOMS = ['r0', 'r1'] as const;
type Room = (typeof ROOMS)[number];
type Node = 0 | 1;
const MAX_CLIENTS = 6;

interface Pos {
  epoch: string;
  offset: number;
}

interface Envelope {
  event: string;
  id?: unknown;
  seq?: number;
  data: Record<string, unknown>;
  pos?: Pos & { room: string; namespace: string };
}

class InvariantError extends Error {}

/** One WebSocket connection of a model client. */
interface Conn {
  readonly ws: WebSocket;
  readonly node: Node;
  /** Rooms this connection asked to join (from the request) and has not been answered a leave of. */
  readonly member: Set<Room>;
  readonly received: Envelope[];
}

/**
 * A protocol version 1 client as an application would write it, but without dropping
 * anything it receives twice: what it receives is checked as it arrives.
 */
class ModelClient {
  conn: Conn | null = null;
  /** The instance of its last connection. */
  home: Node = 0;
  status: 'open' | 'cut' | 'ended' = 'open';
  clientId = '';
  session = '';
  lastSeq = 0;
  /** Rooms the server has the client in (joined, not left; kept by a resume). */
  readonly rooms = new Set<Room>();
  /** The last position received per room (what `since` sends). */
  readonly last = new Map<Room, Pos>();
  /** Rooms joined without `since` and no message of them received since: any offset may come next. */
  readonly fresh = new Set<Room>();
  /** Requests sent and not answered. */
  readonly pending = new Set<string>();
  /** Rooms joined with `since` whose `$recovered` has not come. */
  readonly recovering = new Set<Room>();
  readonly violations: string[] = [];
  /** Messages each of its recoveries replayed (for FC_DEBUG). */
  readonly replays: number[] = [];
  #nextId = 0;

  constructor(readonly name: string) {}

  /** Opens a connection to `url` and says `$hello` (with a resume when there is a session). */
  async open(url: string, node: Node): Promise<{ resumed: boolean }> {
    const ws = new WebSocket(url, ['pkg.v1']);
    ws.on('error', () => undefined);
    const conn: Conn = { ws, node, member: new Set(), received: [] };
    let welcomed: (resumed: boolean) => void = () => undefined;
    const welcome = new Promise<boolean>((resolve) => (welcomed = resolve));
    ws.on('message', (raw) => {
      const m = JSON.parse(String(raw)) as Envelope;
      conn.received.push(m);
      if (this.conn !== conn) return;
      if (m.event !== '$welcome') return this.#receive(conn, m);
      // Set up here, before the messages a resume replays right after $welcome.
      const resumed = m.data['resumed'] === true;
      this.clientId = String(m.data['clientId']);
      this.session = String(m.data['session'] ?? '');
      if (resumed) {
        for (const room of this.rooms) conn.member.add(room);
      } else {
        // A new client on the server: a new session, in no room yet.
        this.lastSeq = 0;
        this.rooms.clear();
      }
      welcomed(resumed);
    });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    this.conn = conn;
    this.home = node;
    this.status = 'open';
    const resume =
      this.session === '' ? {} : { resume: { session: this.session, seq: this.lastSeq } };
    ws.send(JSON.stringify({ event: '$hello', data: { v: 1, ...resume } }));
    return { resumed: await withLimit(welcome, `${this.name}: $welcome`) };
  }

  /** Sends `join_room`, with `since` when the client saw a message of the room before. */
  join(room: Room): void {
    const conn = this.conn!;
    const since = this.last.get(room);
    conn.member.add(room);
    this.rooms.add(room);
    if (since === undefined) this.fresh.add(room);
    else this.recovering.add(room);
    this.#request('join_room', since === undefined ? { room } : { room, since });
  }

  leave(room: Room): void {
    this.rooms.delete(room);
    this.#request('leave_room', { room });
  }

  /** Drops the TCP connection without a close frame. */
  cut(): void {
    this.conn?.ws.terminate();
    this.conn = null;
    this.status = 'cut';
    this.pending.clear();
    this.recovering.clear();
  }

  /** Ends the session (close 1000): the client is gone for good. */
  end(): void {
    this.conn?.ws.close(1000);
    this.conn = null;
    this.status = 'ended';
    this.pending.clear();
    this.recovering.clear();
  }

  get settled(): boolean {
    return this.pending.size === 0 && this.recovering.size === 0;
  }

  #request(event: string, data: Record<string, unknown>): void {
    this.#nextId += 1;
    const id = `${event}:${data['room'] as string}:${this.#nextId}`;
    this.pending.add(id);
    this.conn!.ws.send(JSON.stringify({ event, data, id }));
  }

  #violate(message: string): void {
    this.violations.push(`${this.name} (${this.clientId}): ${message}`);
  }

  #receive(conn: Conn, m: Envelope): void {
    if (m.seq !== undefined) {
      if (m.seq <= this.lastSeq) this.#violate(`seq ${m.seq} after ${this.lastSeq}`);
      this.lastSeq = m.seq;
    }
    if (typeof m.id === 'string' && this.pending.delete(m.id)) {
      if (m.event === 'error') this.#violate(`request ${m.id} refused: ${JSON.stringify(m.data)}`);
      if (m.id.startsWith('leave_room:')) conn.member.delete(m.data['room'] as Room);
      return;
    }
    if (m.event === '$recovered') {
      const room = m.data['room'] as Room;
      this.recovering.delete(room);
      this.replays.push(Number(m.data['replayed']));
      const position = m.data['position'] as Pos | undefined;
      if (m.data['recovered'] !== true) {
        this.#violate(`recovery of ${room} failed: ${JSON.stringify(m.data)}`);
      } else if (position !== undefined) {
        const last = this.last.get(room);
        if (last?.epoch !== position.epoch || last.offset !== position.offset) {
          this.#violate(
            `recovery of ${room} not contiguous: $recovered at ${position.offset}, the client at ${last?.offset}`,
          );
        }
      }
      return;
    }
    if (m.event !== 'msg' || m.pos === undefined) return;
    const room = m.pos.room as Room;
    const pos = m.pos;
    if (!conn.member.has(room)) {
      this.#violate(`message ${pos.offset} of ${room} on a connection not in the room`);
    }
    const last = this.last.get(room);
    if (last !== undefined) {
      if (pos.epoch !== last.epoch) {
        this.#violate(`${room}: epoch changed`);
      } else if (pos.offset <= last.offset) {
        this.#violate(`${room}: offset ${pos.offset} again or out of order, after ${last.offset}`);
      } else if (pos.offset !== last.offset + 1 && !this.fresh.has(room)) {
        this.#violate(
          `${room}: offset ${pos.offset} after ${last.offset}, the ones between missed`,
        );
      }
    }
    this.fresh.delete(room);
    this.last.set(room, { epoch: pos.epoch, offset: pos.offset });
  }
}

function withLimit<T>(p: Promise<T>, what: string, ms = 10_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new InvariantError(`gave up waiting for ${what}`)), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

interface Model {
  readonly clients: ModelClient[];
}

/** Broadcasts to make when an instance handles a join of `room` (from its `canJoin`). */
interface AtJoin {
  readonly room: Room;
  readonly via: Node;
  count: number;
}

interface Real {
  readonly servers: readonly [Server, Server];
  /** Between each instance and Redis: holds what Redis pushes to its subscriber connection. */
  readonly proxies: readonly [HoldingProxy, HoldingProxy];
  /** Broadcasts that go out at the moment an instance handles a join, racing its recovery read. */
  readonly atJoin: AtJoin[];
  /** Broadcasts made per room, and kept (numbered in Redis) per room. */
  readonly made: Map<Room, number>;
  readonly kept: Map<Room, number>;
}

const url = (s: Server): string => `ws://127.0.0.1:${s.getPort()}/`;

function broadcast(r: Real, via: Node, room: Room): void {
  const n = (r.made.get(room) ?? 0) + 1;
  r.made.set(room, n);
  r.servers[via].broadcast('msg', { n }, { room });
}

/** Waits until every broadcast made is kept in Redis. */
async function waitKept(r: Real): Promise<void> {
  await waitFor(
    () => ROOMS.every((room) => (r.kept.get(room) ?? 0) === (r.made.get(room) ?? 0)),
    'broadcasts kept',
  ).catch((err: Error) => {
    throw new InvariantError(err.message);
  });
}

/** Waits until every broadcast made is kept, every request answered and every recovery done. */
async function settle(m: Model, r: Real): Promise<void> {
  await waitFor(
    () =>
      ROOMS.every((room) => (r.kept.get(room) ?? 0) === (r.made.get(room) ?? 0)) &&
      m.clients.every((c) => c.status !== 'open' || c.settled),
    'broadcasts kept, requests answered and recoveries done',
  ).catch((err: Error) => {
    throw new InvariantError(err.message);
  });
}

function checkViolations(m: Model): void {
  const all = m.clients.flatMap((c) => c.violations);
  if (all.length > 0) throw new InvariantError(all.join('\n'));
}

/** Each instance lists exactly the open members of each room (one meta per connection). */
async function checkPresence(m: Model, r: Real): Promise<void> {
  await settle(m, r);
  for (const room of ROOMS) {
    const want = JSON.stringify(
      m.clients
        .filter((c) => c.status === 'open' && c.rooms.has(room))
        .map((c) => c.clientId)
        .sort(),
    );
    for (const server of r.servers) {
      let got = '';
      await waitFor(async () => {
        const state = await server.presence(room);
        const ids = Object.values(state).flatMap((e) => e.metas.map((meta) => meta.clientId));
        got = JSON.stringify(ids.sort());
        return got === want;
      }, 'presence to settle').catch(() => undefined);
      if (got !== want) {
        throw new InvariantError(
          `presence of ${room} on ${server.getPort()}: ${got}, want ${want}`,
        );
      }
    }
  }
}

type Cmd = fc.AsyncCommand<Model, Real, false>;

abstract class Step implements Cmd {
  abstract check(m: Readonly<Model>): boolean;
  abstract act(m: Model, r: Real): Promise<void>;
  abstract toString(): string;

  async run(m: Model, r: Real): Promise<void> {
    await this.act(m, r);
    checkViolations(m);
  }
}

const pickOf = <T>(list: T[], pick: number): T | undefined =>
  list.length === 0 ? undefined : list[pick % list.length];
const openClients = (m: Readonly<Model>): ModelClient[] =>
  m.clients.filter((c) => c.status === 'open');

class Connect extends Step {
  constructor(readonly node: Node) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return m.clients.length < MAX_CLIENTS;
  }
  async act(m: Model, r: Real): Promise<void> {
    const c = new ModelClient(`c${m.clients.length}`);
    m.clients.push(c);
    await c.open(url(r.servers[this.node]), this.node);
  }
  toString(): string {
    return `Connect(${this.node})`;
  }
}

/**
 * How broadcasts race a join: sent just before the join, made as the instance handles it
 * (from `canJoin`), or kept in Redis before the join while their pub/sub copies to the
 * joining instance wait in its proxy until the recovery is over (`late`).
 */
type Race = 'before' | 'handled' | 'late';

/** Makes `count` broadcasts to `room` from `via`, racing the join the client sends next. */
function race(r: Real, how: Race, count: number, via: Node, room: Room): void {
  if (count === 0) return;
  if (how === 'handled') r.atJoin.push({ room, via, count });
  else for (let i = 0; i < count; i++) broadcast(r, via, room);
}

/**
 * Sends the client's joins of `rooms` with their races, then waits for the answers and
 * recoveries; with `late` the joining instance gets the racing broadcasts only afterwards.
 */
async function joinRacing(
  c: ModelClient,
  r: Real,
  rooms: readonly Room[],
  how: Race,
  count: number,
  via: Node,
  m: Model,
): Promise<void> {
  const proxy = r.proxies[c.home];
  if (how === 'late') proxy.holdPushes();
  try {
    for (const room of rooms) race(r, how, count, via, room);
    if (how === 'late') await waitKept(r);
    for (const room of rooms) c.join(room);
    await settle(m, r);
  } finally {
    if (how === 'late') proxy.releasePushes();
  }
  await settle(m, r);
}

/** Joins a room it is not in, while `count` broadcasts to that room from `via` race it. */
class Join extends Step {
  constructor(
    readonly pick: number,
    readonly room: Room,
    readonly how: Race,
    readonly count: number,
    readonly via: Node,
  ) {
    super();
  }
  check(): boolean {
    return true;
  }
  async act(m: Model, r: Real): Promise<void> {
    const c = pickOf(
      openClients(m).filter((x) => !x.rooms.has(this.room)),
      this.pick,
    );
    if (c === undefined) return;
    await joinRacing(c, r, [this.room], this.how, this.count, this.via, m);
  }
  toString(): string {
    return `Join(${this.pick}, ${this.room}, ${this.count} from ${this.via} ${this.how})`;
  }
}

class Leave extends Step {
  constructor(
    readonly pick: number,
    readonly room: Room,
  ) {
    super();
  }
  check(): boolean {
    return true;
  }
  async act(m: Model, r: Real): Promise<void> {
    const c = pickOf(
      openClients(m).filter((x) => x.rooms.has(this.room)),
      this.pick,
    );
    if (c === undefined) return;
    c.leave(this.room);
    await settle(m, r);
  }
  toString(): string {
    return `Leave(${this.pick}, ${this.room})`;
  }
}

class Broadcast extends Step {
  constructor(
    readonly via: Node,
    readonly room: Room,
    readonly count: number,
  ) {
    super();
  }
  check(): boolean {
    return true;
  }
  async act(m: Model, r: Real): Promise<void> {
    for (let i = 0; i < this.count; i++) broadcast(r, this.via, this.room);
    await settle(m, r);
  }
  toString(): string {
    return `Broadcast(${this.via}, ${this.room}, ${this.count})`;
  }
}

class Cut extends Step {
  constructor(readonly pick: number) {
    super();
  }
  check(): boolean {
    return true;
  }
  async act(m: Model): Promise<void> {
    pickOf(openClients(m), this.pick)?.cut();
  }
  toString(): string {
    return `Cut(${this.pick})`;
  }
}

/**
 * A cut client comes back: on the instance that holds its session it resumes (its rooms
 * kept, what it missed replayed by `seq`); on the other it starts fresh and joins its rooms
 * again with `since`, while `race` broadcasts to them from `via` are in flight.
 */
class Return extends Step {
  constructor(
    readonly pick: number,
    readonly other: boolean,
    readonly how: Race,
    readonly count: number,
    readonly via: Node,
  ) {
    super();
  }
  check(): boolean {
    return true;
  }
  async act(m: Model, r: Real): Promise<void> {
    const c = pickOf(
      m.clients.filter((x) => x.status === 'cut'),
      this.pick,
    );
    if (c === undefined) return;
    await comeBack(c, r, m, this.other, this.how, this.count, this.via);
  }
  toString(): string {
    return `Return(${this.pick}, ${this.other ? 'other' : 'same'}, ${this.count} from ${this.via} ${this.how})`;
  }
}

async function comeBack(
  c: ModelClient,
  r: Real,
  m: Model,
  other: boolean,
  how: Race,
  count: number,
  via: Node,
): Promise<void> {
  const node: Node = other ? ((1 - c.home) as Node) : c.home;
  const rooms = [...c.rooms];
  const { resumed } = await c.open(url(r.servers[node]), node);
  if (resumed) return settle(m, r);
  await joinRacing(c, r, rooms, how, count, via, m);
}

/**
 * A client's connection is cut, `missed` broadcasts go to its rooms meanwhile, and it comes
 * back (see {@link Return}) while `count` more race its joins.
 */
class Move extends Step {
  constructor(
    readonly pick: number,
    readonly missed: number,
    readonly other: boolean,
    readonly how: Race,
    readonly count: number,
    readonly via: Node,
  ) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return openClients(m).some((c) => c.rooms.size > 0);
  }
  async act(m: Model, r: Real): Promise<void> {
    const c = pickOf(
      openClients(m).filter((x) => x.rooms.size > 0),
      this.pick,
    );
    if (c === undefined) return;
    c.cut();
    for (const rm of c.rooms) for (let i = 0; i < this.missed; i++) broadcast(r, this.via, rm);
    await settle(m, r);
    await comeBack(c, r, m, this.other, this.how, this.count, this.via);
  }
  toString(): string {
    return `Move(${this.pick}, ${this.missed} missed, ${this.other ? 'other' : 'same'}, ${this.count} from ${this.via} ${this.how})`;
  }
}

class End extends Step {
  constructor(readonly pick: number) {
    super();
  }
  check(): boolean {
    return true;
  }
  async act(m: Model): Promise<void> {
    pickOf(openClients(m), this.pick)?.end();
  }
  toString(): string {
    return `End(${this.pick})`;
  }
}

class PresenceCheck extends Step {
  check(): boolean {
    return true;
  }
  async act(m: Model, r: Real): Promise<void> {
    await checkPresence(m, r);
  }
  toString(): string {
    return 'PresenceCheck';
  }
}

const node = fc.constantFrom<Node>(0, 1);
const room = fc.constantFrom<Room>(...ROOMS);
const pick = fc.nat({ max: 7 });

const how = fc.constantFrom<Race>('before', 'handled', 'late');
const count = fc.integer({ min: 0, max: 3 });

/** Each arbitrary `weight` times: cuts, returns and joins are what recoveries are made of. */
const weighted = (weight: number, arb: fc.Arbitrary<Cmd>): Array<fc.Arbitrary<Cmd>> =>
  Array.from({ length: weight }, () => arb);

const commands: Array<fc.Arbitrary<Cmd>> = [
  ...weighted(
    1,
    node.map((n) => new Connect(n)),
  ),
  ...weighted(
    3,
    fc.tuple(pick, room, how, count, node).map(([p, rm, h, n, via]) => new Join(p, rm, h, n, via)),
  ),
  ...weighted(
    2,
    fc.tuple(pick, room).map(([p, rm]) => new Leave(p, rm)),
  ),
  ...weighted(
    2,
    fc
      .tuple(node, room, fc.integer({ min: 1, max: 3 }))
      .map(([via, rm, n]) => new Broadcast(via, rm, n)),
  ),
  ...weighted(
    3,
    pick.map((p) => new Cut(p)),
  ),
  ...weighted(
    4,
    fc
      .tuple(pick, fc.constantFrom(true, true, false), how, count, node)
      .map(([p, other, h, n, via]) => new Return(p, other, h, n, via)),
  ),
  ...weighted(
    4,
    fc
      .tuple(pick, fc.integer({ min: 0, max: 3 }), fc.boolean(), how, count, node)
      .map(([p, missed, other, h, n, via]) => new Move(p, missed, other, h, n, via)),
  ),
  ...weighted(
    1,
    pick.map((p) => new End(p)),
  ),
  ...weighted(1, fc.constant(new PresenceCheck())),
];

describeRedis('two instances sharing Redis, under random client histories', () => {
  const env = new RedisUnderTest();
  let proxies: [HoldingProxy, HoldingProxy];
  let run = 0;
  /** Recoveries that replayed at least one message, over all runs. */
  let replaying = 0;

  beforeAll(async () => {
    await env.start();
    proxies = [await HoldingProxy.start(env.redis.port), await HoldingProxy.start(env.redis.port)];
  });
  afterAll(async () => {
    for (const p of proxies ?? []) await p.stop();
    await env.stop();
  });

  async function startReal(): Promise<Real> {
    run += 1;
    const keyPrefix = `model${run}`;
    const atJoin: AtJoin[] = [];
    // Filled in below, before any client connects.
    const built: { real?: Real } = {};
    const canJoin = (_clientId: string, room: string): boolean => {
      const i = atJoin.findIndex((a) => a.room === room);
      if (i >= 0 && built.real !== undefined) {
        const [a] = atJoin.splice(i, 1);
        for (let k = 0; k < a!.count; k++) broadcast(built.real, a!.via, a!.room);
      }
      return true;
    };
    const start = (n: Node): Promise<Server> =>
      startHistoryServer({
        room: 'r*',
        size: 1000,
        adapter: { url: proxies[n].url, keyPrefix },
        config: { presence: [{ match: 'r*' }], presence_interval: 20 },
        rooms: { canJoin },
      });
    const servers = [await start(0), await start(1)] as const;
    const kept = new Map<Room, number>();
    for (const s of servers) {
      s.onPublished((p) => kept.set(p.room as Room, (kept.get(p.room as Room) ?? 0) + 1));
    }
    built.real = { servers, proxies, atJoin, made: new Map(), kept };
    return built.real;
  }

  /** Four clients, two on each instance, two of them in both rooms, one message per room. */
  async function begin(m: Model, r: Real): Promise<void> {
    for (const n of [0, 1, 0, 1] as const) {
      const c = new ModelClient(`c${m.clients.length}`);
      m.clients.push(c);
      await c.open(url(r.servers[n]), n);
    }
    for (const c of m.clients.slice(0, 2)) for (const rm of ROOMS) c.join(rm);
    await settle(m, r);
    for (const s of r.servers) await (s.getAdapter() as RedisAdapter).synced();
    for (const rm of ROOMS) broadcast(r, 0, rm);
    await settle(m, r);
    checkViolations(m);
  }

  /** Every client comes back, one more message per room, and every member has it. */
  async function finish(m: Model, r: Real): Promise<void> {
    for (const c of m.clients.filter((x) => x.status === 'cut')) {
      await comeBack(c, r, m, false, 'before', 0, 0);
    }
    await settle(m, r);
    for (const s of r.servers) await (s.getAdapter() as RedisAdapter).synced();
    for (const rm of ROOMS) broadcast(r, 1, rm);
    await settle(m, r);
    for (const rm of ROOMS) {
      const end = r.made.get(rm)!;
      const members = openClients(m).filter((c) => c.rooms.has(rm));
      await waitFor(
        () => members.every((c) => c.last.get(rm)?.offset === end),
        `every member of ${rm} to get message ${end}`,
      ).catch(() => undefined);
      for (const c of members) {
        if (c.last.get(rm)?.offset !== end) {
          throw new InvariantError(
            `${c.name} (${c.clientId}) stands at ${c.last.get(rm)?.offset} in ${rm}, the room at ${end}`,
          );
        }
      }
    }
    checkViolations(m);
    await checkPresence(m, r);
  }

  function transcript(m: Model): string {
    return m.clients
      .map((c) => {
        const seen = (c.conn?.received ?? [])
          .map((e) =>
            e.pos ? `${e.pos.room}@${e.pos.offset}${e.seq ? `#${e.seq}` : ''}` : e.event,
          )
          .join(' ');
        return `  ${c.name} ${c.status} ${c.clientId} rooms [${[...c.rooms].join(',')}]: ${seen}`;
      })
      .join('\n');
  }

  it(`delivers each room message once, in order, to members only (${RUNS} runs, seed ${SEED})`, async () => {
    const started = Date.now();
    const property = fc.asyncProperty(
      fc.commands(commands, { maxCommands: 25, size: 'max' }),
      async (cmds) => {
        const real = await startReal();
        const model: Model = { clients: [] };
        try {
          await begin(model, real);
          await fc.asyncModelRun(() => ({ model, real }), cmds);
          await finish(model, real);
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          throw new InvariantError(`${message}\ncurrent connections:\n${transcript(model)}`);
        } finally {
          replaying += model.clients.flatMap((c) => c.replays).filter((n) => n > 0).length;
          for (const p of proxies) p.releasePushes();
          if (process.env['FC_DEBUG'] !== undefined) {
            const replays = model.clients.flatMap((c) => c.replays);
            process.stdout.write(`${String(cmds)}\n  recoveries replayed: ${replays.join(' ')}\n`);
          }
          for (const c of model.clients) c.conn?.ws.terminate();
          for (const s of real.servers) await s.close();
        }
      },
    );
    await fc.assert(property, {
      numRuns: RUNS,
      seed: SEED,
      endOnFailure: !SHRINK,
      ...(PATH === undefined ? {} : { path: PATH }),
    });
    process.stdout.write(
      `cluster model: ${RUNS} runs in ${Date.now() - started} ms, ${replaying} recoveries that replayed messages\n`,
    );
    // The runs recovered rooms (a model that never replays would check nothing of recovery).
    expect(replaying).toBeGreaterThan(0);
  }, 240_000);
});
