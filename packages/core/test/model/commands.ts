// The commands of the connection-model test: what clients and the server do, each applied
// to the real server and to the model, then every invariant checked (model.ts).
import fc from 'fast-check';
import { AUTH_TIMEOUT, Conn, HELLO_WAIT, SLOW_AUTH, WAIT, type Received } from './harness';
import {
  InvariantError,
  checkDeadlines,
  checkHealth,
  checkSafety,
  observe,
  openClient,
  welcomeOf,
  type Client,
  type Fate,
  type Model,
  type Real,
  type Session,
  type User,
} from './model';

type Cmd = fc.AsyncCommand<Model, Real, false>;

function fail(message: string): never {
  throw new InvariantError(message);
}

/** Turns a bounded wait that ran out into an invariant failure naming what was expected. */
const expectWithin = <T>(p: Promise<T>): Promise<T> => p.catch((err: Error) => fail(err.message));

/** Every command: act, then read what the connections saw and check the invariants. */
abstract class Step implements Cmd {
  abstract check(m: Readonly<Model>): boolean;
  abstract act(m: Model, r: Real): Promise<void>;
  abstract toString(): string;

  async run(m: Model, r: Real): Promise<void> {
    observe(m);
    await this.act(m, r);
    observe(m);
    checkSafety(m, r);
    checkDeadlines(m);
    await checkHealth(m, r);
  }
}

/**
 * Picks the `pick`-th (modulo) of the candidates; undefined when none is left (a connection
 * can close between `check()` and `run()`; the command then does nothing).
 */
function choose<T>(list: T[], pick: number): T | undefined {
  return list.length === 0 ? undefined : list[pick % list.length];
}

const live = (m: Readonly<Model>): Client[] => m.clients.filter((c) => c.phase !== 'closed');
const open = (m: Readonly<Model>): Client[] => m.clients.filter((c) => c.phase === 'open');

async function connect(
  m: Model,
  r: Real,
  options: {
    version: 0 | 1;
    fate: Fate;
    user: User;
    key?: boolean;
    deadline: number;
    heldFor?: number;
  },
): Promise<Client> {
  const tag = `c${m.nextTag++}`;
  const query = `?tag=${tag}&user=${options.user}${options.key ? '&key=good' : ''}`;
  const conn = await Conn.open(`${r.wsUrl}/${query}`, options.version === 1 ? ['pkg.v1'] : []);
  const client: Client = {
    tag,
    version: options.version,
    fate: options.fate,
    user: options.user,
    deadline: Date.now() + options.deadline,
    phase: 'pending',
    conn,
    clientId: undefined,
    session: undefined,
    requests: new Map(),
    heldUntil: Date.now() + (options.heldFor ?? 0),
    nextId: 1,
    earlyMessages: 0,
    resumed: false,
    closedBy: undefined,
  };
  m.clients.push(client);
  return client;
}

/** Waits for a refused connection's error and close; checks the code. */
async function expectRefused(c: Client, codes: number[], errorCodes: string[]): Promise<void> {
  const closed = await expectWithin(
    c.conn.whenClosed(WAIT, `${c.tag}: refused auth did not close`),
  );
  c.phase = 'closed';
  c.closedBy = 'auth';
  if (!codes.includes(closed.code)) {
    fail(`${c.tag}: refused auth closed with ${closed.code}, expected ${codes.join(' or ')}`);
  }
  const error = c.conn.received.find((x) => x.event === 'error' && x.id === undefined);
  const code = (error?.data as { code?: string } | undefined)?.code;
  if (code === undefined || !errorCodes.includes(code)) {
    fail(`${c.tag}: refused auth sent error ${String(code)}, expected ${errorCodes.join(' or ')}`);
  }
}

/** Waits for the `$welcome` of a connection whose auth accepts. */
async function expectWelcome(c: Client): Promise<Record<string, unknown>> {
  const welcome = await expectWithin(
    c.conn.until(
      () => welcomeOf(c) ?? (c.conn.closed ? ({ event: 'closed' } as Received) : undefined),
      WAIT,
      `${c.tag}: no $welcome after accepted auth`,
    ),
  );
  if (welcome.event !== '$welcome') {
    fail(`${c.tag}: accepted auth, but closed ${c.conn.closed?.code} "${c.conn.closed?.reason}"`);
  }
  return welcome.data as Record<string, unknown>;
}

// ---------------------------------------------------------------- connections

/** A version 0 client, authenticated in the handshake (`?key=good`) or not at all. */
class ConnectV0 extends Step {
  constructor(readonly key: boolean) {
    super();
  }
  check(): boolean {
    return true;
  }
  async act(m: Model, r: Real): Promise<void> {
    const c = await connect(m, r, {
      version: 0,
      fate: this.key ? 'accept' : 'refuse',
      user: 'alice',
      key: this.key,
      deadline: this.key ? 0 : AUTH_TIMEOUT,
    });
    if (!this.key) return;
    const hello = await expectWithin(
      c.conn.next((x) => x.event === 'app.hello', WAIT, `${c.tag}: OnConnect never ran`),
    );
    openClient(m, c, hello);
  }
  toString(): string {
    return `ConnectV0(${this.key ? 'key' : 'no credentials'})`;
  }
}

export type CredKind = 'good' | 'slow' | 'bad' | 'banned' | 'none' | 'never';

/** A version 1 client that says `$hello` with credentials of one kind. */
class ConnectV1 extends Step {
  constructor(
    readonly kind: CredKind,
    readonly user: User,
  ) {
    super();
  }
  check(): boolean {
    return true;
  }
  async act(m: Model, r: Real): Promise<void> {
    const fate: Fate =
      this.kind === 'good' || this.kind === 'slow'
        ? 'accept'
        : this.kind === 'never'
          ? 'timeout'
          : 'refuse';
    const c = await connect(m, r, {
      version: 1,
      fate,
      user: this.user,
      deadline: this.kind === 'slow' ? SLOW_AUTH : this.kind === 'never' ? AUTH_TIMEOUT : 0,
      // Requests sent while a never-settling auth runs are held until auth_timeout.
      heldFor: this.kind === 'never' ? AUTH_TIMEOUT - 100 : 0,
    });
    const data: Record<string, unknown> = { v: 1 };
    if (this.kind !== 'none') data['auth'] = `${this.kind}:${this.user}:${c.tag}`;
    c.conn.send({ event: '$hello', data });
    if (this.kind === 'good') {
      const welcome = await expectWelcome(c);
      if (welcome['resumed'] !== false)
        fail(`${c.tag}: $welcome without resume says resumed ${String(welcome['resumed'])}`);
      observe(m);
    } else if (this.kind === 'bad' || this.kind === 'none') {
      await expectRefused(c, [4401], ['unauthorized']);
    } else if (this.kind === 'banned') {
      await expectRefused(c, [4403], ['forbidden']);
    }
  }
  toString(): string {
    return `ConnectV1(${this.kind}:${this.user})`;
  }
}

/** A `pkg.v1` client whose first message is not `$hello` (it has no credentials). */
class MessageBeforeHello extends Step {
  constructor(readonly withId: boolean) {
    super();
  }
  check(): boolean {
    return true;
  }
  async act(m: Model, r: Real): Promise<void> {
    const c = await connect(m, r, {
      version: 1,
      fate: 'refuse',
      user: 'alice',
      deadline: AUTH_TIMEOUT,
      // Sent at once: the server waits hello_wait for $hello before deciding anything.
      heldFor: HELLO_WAIT,
    });
    sendEcho(c, this.withId);
    await expectWithin(c.conn.whenClosed(AUTH_TIMEOUT + WAIT, `${c.tag}: never closed`));
    observe(m);
  }
  toString(): string {
    return `MessageBeforeHello(${this.withId ? 'with id' : 'no id'})`;
  }
}

/** Sends `echo` (with a fresh id) and returns the id. */
function sendEcho(c: Client, withId = true): number | undefined {
  const data = { tag: c.tag, k: c.nextId };
  if (c.phase !== 'open') c.earlyMessages += 1;
  if (!withId) {
    c.nextId += 1;
    c.conn.send({ event: 'echo', data });
    return undefined;
  }
  const id = c.nextId++;
  c.requests.set(id, Date.now());
  c.conn.send({ event: 'echo', data, id });
  return id;
}

export type ResumeKind = 'own' | 'foreign' | 'stale';

const lastSeq = (c: Client | undefined): number =>
  c === undefined ? 0 : Math.max(0, ...c.conn.received.map((x) => x.seq ?? 0));

/** A version 1 client that resumes a session with a token: its own, another user's, an old one. */
class Resume extends Step {
  constructor(
    readonly kind: ResumeKind,
    readonly pick: number,
  ) {
    super();
  }
  #targets(m: Readonly<Model>): Array<{ session: Session; token: string }> {
    if (this.kind === 'stale') {
      return m.sessions.flatMap((s) => [
        ...s.stale.map((token) => ({ session: s, token })),
        ...(s.state === 'ended' ? [{ session: s, token: s.token }] : []),
      ]);
    }
    return m.sessions
      .filter((s) => s.state !== 'ended')
      .map((s) => ({ session: s, token: s.token }));
  }
  check(m: Readonly<Model>): boolean {
    return this.#targets(m).length > 0;
  }
  async act(m: Model, r: Real): Promise<void> {
    const target = choose(this.#targets(m), this.pick);
    if (target === undefined) return;
    const s = target.session;
    const user: User = this.kind === 'foreign' ? (s.user === 'alice' ? 'bob' : 'alice') : s.user;
    const old = s.conn;
    const wasLive = s.state === 'live';
    const c = await connect(m, r, { version: 1, fate: 'accept', user, deadline: 0 });
    if (this.kind === 'own' && old !== undefined) old.closedBy = 'server';
    const seq = lastSeq(old);
    const lastNews = Math.max(
      0,
      ...(old?.conn.received ?? [])
        .filter((x) => x.event === 'news')
        .map((x) => (x.data as { n: number }).n),
    );
    c.conn.send({
      event: '$hello',
      data: { v: 1, auth: `good:${user}:${c.tag}`, resume: { session: target.token, seq } },
    });
    const welcome = await expectWelcome(c);
    if (this.kind !== 'own') {
      // A stale token: the session is gone or the token was rotated; the reason's name
      // (unknown, expired, ended, ...) is not pinned here, only that one is given.
      const want = this.kind === 'foreign' ? ['identity'] : ['unknown', 'expired', 'ended'];
      if (welcome['resumed'] !== false || !want.includes(welcome['reason'] as string)) {
        fail(
          `${c.tag}: resume with a ${this.kind} token answered resumed ${String(welcome['resumed'])} reason ${String(welcome['reason'])}, expected false / ${want.join(' or ')}`,
        );
      }
      if (welcome['clientId'] === s.clientId)
        fail(`${c.tag}: a refused resume kept the session's client id`);
      observe(m);
      return;
    }
    if (welcome['resumed'] !== true) {
      fail(
        `${c.tag}: resume of its own ${s.state} session answered resumed ${String(welcome['resumed'])} reason ${String(welcome['reason'])}`,
      );
    }
    if (welcome['clientId'] !== s.clientId)
      fail(`${c.tag}: resumed under ${String(welcome['clientId'])}, not ${s.clientId}`);
    if (typeof welcome['session'] !== 'string' || welcome['session'] === target.token) {
      fail(`${c.tag}: the session token was not rotated on resume`);
    }
    if (wasLive && old !== undefined) {
      const closed = await expectWithin(
        old.conn.whenClosed(WAIT, `${old.tag}: the connection taken over was not closed`),
      );
      if (closed.code !== 4409)
        fail(`${old.tag}: taken over, closed with ${closed.code} instead of 4409`);
      old.phase = 'closed';
    }
    s.stale.push(s.token);
    s.token = welcome['session'] as string;
    s.state = 'live';
    s.conn = c;
    c.session = s;
    c.resumed = true;
    openClient(m, c, welcomeOf(c)!);
    const replay = m.broadcasts
      .filter((b) => b.n > lastNews && b.targets.has(s.clientId))
      .map((b) => b.n);
    for (const n of replay) {
      await expectWithin(
        c.conn.next(
          (x) => x.event === 'news' && (x.data as { n: number }).n === n,
          WAIT,
          `${c.tag}: broadcast #${n} not replayed after resume`,
        ),
      );
    }
  }
  toString(): string {
    return `Resume(${this.kind} token, #${this.pick})`;
  }
}

// ---------------------------------------------------------------- messages

/** `echo` with or without an id, from any connection still open on the client side. */
class Send extends Step {
  constructor(
    readonly pick: number,
    readonly withId: boolean,
  ) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return live(m).length > 0;
  }
  async act(m: Model): Promise<void> {
    const c = choose(live(m), this.pick);
    if (c === undefined) return;
    const id = sendEcho(c, this.withId);
    if (id === undefined || c.phase !== 'open') return;
    const answer = await expectWithin(
      c.conn.next((x) => x.id === id, WAIT, `${c.tag}: echo id ${id} not answered`),
    );
    if (answer.event !== 'echo') fail(`${c.tag}: echo id ${id} answered ${JSON.stringify(answer)}`);
  }
  toString(): string {
    return `Send(#${this.pick}, ${this.withId ? 'with id' : 'no id'})`;
  }
}

export type RoomName = 'lobby' | 'emoji' | 'empty' | 'lone surrogate' | 'very long';
const ROOM: Record<RoomName, string> = {
  lobby: 'lobby',
  emoji: 'r\ud83d\ude00',
  empty: '',
  'lone surrogate': 'x\ud800',
  // Far past any documented limit of a room name.
  'very long': 'r'.repeat(5000),
};
const VALID = new Set<RoomName>(['lobby', 'emoji']);

/** `join_room` from an open connection, with a good or an odd room name. */
class Join extends Step {
  constructor(
    readonly pick: number,
    readonly room: RoomName,
    readonly withId: boolean,
  ) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return open(m).length > 0;
  }
  async act(m: Model, r: Real): Promise<void> {
    const c = choose(open(m), this.pick);
    if (c === undefined) return;
    const room = ROOM[this.room];
    const valid = VALID.has(this.room);
    const data = { room, tag: c.tag };
    const before = c.conn.received.length;
    const later = (x: Received): boolean => c.conn.received.indexOf(x) >= before;
    if (this.withId) {
      const id = c.nextId++;
      c.requests.set(id, Date.now());
      c.conn.send({ event: 'join_room', data, id });
      const answer = await expectWithin(
        c.conn.next((x) => x.id === id, WAIT, `${c.tag}: join_room id ${id} not answered`),
      );
      if (valid && answer.event === 'error')
        fail(`${c.tag}: join_room ${JSON.stringify(room)} refused: ${JSON.stringify(answer)}`);
      if (!valid && answer.event !== 'error') {
        fail(
          `${c.tag}: join_room ${JSON.stringify(room)} (${this.room}) answered ${JSON.stringify(answer)}, not an error with its id`,
        );
      }
      if (!valid && (answer.data as { code?: string }).code !== 'invalid_payload') {
        fail(
          `${c.tag}: join_room (${this.room}) refused with ${JSON.stringify(answer.data)}, not invalid_payload`,
        );
      }
    } else {
      c.conn.send({ event: 'join_room', data });
      await expectWithin(
        c.conn.next(
          (x) =>
            later(x) &&
            (valid ? x.event === 'room_joined' : x.event === 'error' && x.id === undefined),
          WAIT,
          `${c.tag}: join_room ${this.room} without id got no ${valid ? 'room_joined' : 'error'}`,
        ),
      );
    }
    const members = r.server.getNamespaceManager().getClientsInRoom(room);
    if (valid) {
      if (!members.includes(c.clientId!)) fail(`${c.tag}: joined ${this.room} but is not a member`);
      if (!m.rooms.has(room)) m.rooms.set(room, new Set());
      m.rooms.get(room)!.add(c.clientId!);
    } else if (members.includes(c.clientId!)) {
      fail(`${c.tag}: a refused join (${this.room}) left it a member of ${JSON.stringify(room)}`);
    }
  }
  toString(): string {
    return `Join(#${this.pick}, ${this.room}, ${this.withId ? 'with id' : 'no id'})`;
  }
}

/** A second `$hello` on an open version 1 connection: refused, the connection stays. */
class SecondHello extends Step {
  constructor(readonly pick: number) {
    super();
  }
  #targets(m: Readonly<Model>): Client[] {
    return open(m).filter((c) => c.version === 1);
  }
  check(m: Readonly<Model>): boolean {
    return this.#targets(m).length > 0;
  }
  async act(m: Model): Promise<void> {
    const c = choose(this.#targets(m), this.pick);
    if (c === undefined) return;
    const before = c.conn.received.length;
    c.conn.send({ event: '$hello', data: { v: 1, auth: `good:${c.user}:${c.tag}` } });
    const error = await expectWithin(
      c.conn.next(
        (x) => c.conn.received.indexOf(x) >= before && x.event === 'error',
        WAIT,
        `${c.tag}: a second $hello was not refused`,
      ),
    );
    if ((error.data as { code?: string }).code !== 'invalid_envelope') {
      fail(`${c.tag}: a second $hello answered ${JSON.stringify(error)}`);
    }
  }
  toString(): string {
    return `SecondHello(#${this.pick})`;
  }
}

// ---------------------------------------------------------------- drops and the server

/** The TCP connection drops (no close frame). */
class Drop extends Step {
  constructor(readonly pick: number) {
    super();
  }
  check(m: Readonly<Model>): boolean {
    return live(m).length > 0;
  }
  async act(m: Model, r: Real): Promise<void> {
    const c = choose(live(m), this.pick);
    if (c === undefined) return;
    const wasOpen = c.phase === 'open';
    c.closedBy = 'client';
    c.conn.ws.terminate();
    await expectWithin(c.conn.whenClosed(WAIT, `${c.tag}: terminate did not close`));
    c.phase = 'closed';
    if (!wasOpen || c.clientId === undefined) return;
    const id = c.clientId;
    if (c.session !== undefined) {
      c.session.state = 'away';
      c.session.conn = undefined;
      await expectWithin(
        bounded(
          () => !r.server.getAllClients().includes(id),
          `${c.tag}: the server never saw the drop`,
        ),
      );
    } else {
      for (const members of m.rooms.values()) members.delete(id);
      await expectWithin(
        r.recorder.waitFor(
          (e) => e.kind === 'disconnect' && e.id === id,
          WAIT,
          `OnDisconnect of ${c.tag} after a drop`,
        ),
      );
    }
  }
  toString(): string {
    return `Drop(#${this.pick})`;
  }
}

/** Polls a condition of the server that has no event, every 5 ms, for at most WAIT ms. */
function bounded(done: () => boolean, what: string): Promise<void> {
  const until = Date.now() + WAIT;
  return new Promise((resolve, reject) => {
    const poll = (): void => {
      if (done()) resolve();
      else if (Date.now() > until) reject(new Error(`${what} within ${WAIT} ms`));
      else setTimeout(poll, 5);
    };
    poll();
  });
}

/** `server.broadcast` to everyone or to a room. */
class Broadcast extends Step {
  constructor(readonly room: 'lobby' | null) {
    super();
  }
  check(): boolean {
    return true;
  }
  async act(m: Model, r: Real): Promise<void> {
    const n = m.broadcasts.length + 1;
    const members = this.room === null ? undefined : (m.rooms.get(this.room) ?? new Set<string>());
    const targets = new Set<string>();
    const inScope = (id: string): boolean => members === undefined || members.has(id);
    for (const c of m.clients)
      if (c.phase === 'open' && inScope(c.clientId!)) targets.add(c.clientId!);
    for (const s of m.sessions)
      if (s.state === 'away' && inScope(s.clientId)) targets.add(s.clientId);
    const maybe = new Set(
      m.clients.filter((c) => c.phase === 'pending' && c.fate === 'accept').map((c) => c.tag),
    );
    m.broadcasts.push({ n, room: this.room ?? undefined, targets, maybe });
    if (this.room === null) r.server.broadcast('news', { n });
    else r.server.broadcast('news', { n }, '/', this.room);
    for (const c of m.clients) {
      if (c.phase !== 'open' || !targets.has(c.clientId!)) continue;
      await expectWithin(
        c.conn.next(
          (x) => x.event === 'news' && (x.data as { n: number }).n === n,
          WAIT,
          `${c.tag}: broadcast #${n} not delivered`,
        ),
      );
    }
  }
  toString(): string {
    return `Broadcast(${this.room ?? 'everyone'})`;
  }
}

/** `server.disconnectClient` of an open connection or of a session that is away. */
class Disconnect extends Step {
  constructor(readonly pick: number) {
    super();
  }
  #targets(m: Readonly<Model>): string[] {
    return [
      ...open(m).map((c) => c.clientId!),
      ...m.sessions.filter((s) => s.state === 'away').map((s) => s.clientId),
    ];
  }
  check(m: Readonly<Model>): boolean {
    return this.#targets(m).length > 0;
  }
  async act(m: Model, r: Real): Promise<void> {
    const id = choose(this.#targets(m), this.pick);
    if (id === undefined) return;
    const c = open(m).find((x) => x.clientId === id);
    if (c !== undefined) c.closedBy = 'server';
    r.server.disconnectClient(id);
    if (c !== undefined) {
      const closed = await expectWithin(
        c.conn.whenClosed(WAIT, `${c.tag}: disconnectClient did not close it`),
      );
      if (closed.code !== 1000)
        fail(`${c.tag}: disconnectClient closed with ${closed.code}, not 1000`);
      c.phase = 'closed';
    }
    const s = m.sessions.find((x) => x.clientId === id && x.state !== 'ended');
    if (s !== undefined) {
      s.state = 'ended';
      s.conn = undefined;
    }
    for (const members of m.rooms.values()) members.delete(id);
    await expectWithin(
      r.recorder.waitFor(
        (e) => e.kind === 'disconnect' && e.id === id,
        WAIT,
        `OnDisconnect of ${id} after disconnectClient`,
      ),
    );
  }
  toString(): string {
    return `Disconnect(#${this.pick})`;
  }
}

const pick = fc.nat({ max: 7 });
const user = fc.constantFrom<User>('alice', 'bob');

/** The command arbitraries; `only` (comma-separated names) restricts them, for diagnosis. */
export function commandArbitraries(only?: string): Array<fc.Arbitrary<Cmd>> {
  const all: Record<string, fc.Arbitrary<Cmd>> = {
    ConnectV0: fc.boolean().map((key) => new ConnectV0(key)),
    ConnectV1: fc
      .tuple(
        fc.constantFrom<CredKind>('good', 'good', 'good', 'slow', 'bad', 'banned', 'none', 'never'),
        user,
      )
      .map(([kind, u]) => new ConnectV1(kind, u)),
    MessageBeforeHello: fc.boolean().map((withId) => new MessageBeforeHello(withId)),
    Resume: fc
      .tuple(fc.constantFrom<ResumeKind>('own', 'foreign', 'stale'), pick)
      .map(([kind, p]) => new Resume(kind, p)),
    Send: fc.tuple(pick, fc.boolean()).map(([p, withId]) => new Send(p, withId)),
    Join: fc
      .tuple(
        pick,
        fc.constantFrom<RoomName>('lobby', 'emoji', 'empty', 'lone surrogate', 'very long'),
        fc.boolean(),
      )
      .map(([p, room, withId]) => new Join(p, room, withId)),
    SecondHello: pick.map((p) => new SecondHello(p)),
    Drop: pick.map((p) => new Drop(p)),
    Broadcast: fc.constantFrom<'lobby' | null>(null, 'lobby').map((room) => new Broadcast(room)),
    Disconnect: pick.map((p) => new Disconnect(p)),
  };
  const names = only === undefined || only === '' ? Object.keys(all) : only.split(',');
  // Weights: most commands need a connection, and resumes need sessions and drops.
  const weight: Record<string, number> = {
    ConnectV1: 4,
    ConnectV0: 2,
    Resume: 3,
    Send: 2,
    Drop: 2,
    Broadcast: 2,
    Join: 2,
  };
  return names.flatMap((name) => {
    const arb = all[name.trim()];
    if (arb === undefined)
      throw new Error(`FC_COMMANDS: unknown command ${name}; use ${Object.keys(all).join(', ')}`);
    return Array.from({ length: weight[name.trim()] ?? 1 }, () => arb);
  });
}
