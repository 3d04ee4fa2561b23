// Commands that open connections: version 0 with or without handshake credentials, version
// 1 with `$hello` and credentials of every kind, a message before `$hello`, and resumes
// with the session's own token, another user's token, or an old one.
import { AUTH_TIMEOUT, Conn, HELLO_WAIT, SLOW_AUTH, WAIT, type Received } from './harness';
import {
  newsNumber,
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
import { Step, choose, expectWithin, fail, sendEcho } from './step';

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
export class ConnectV0 extends Step {
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
export class ConnectV1 extends Step {
  /** `early`: an `echo` sent right behind `$hello`, held while the auth handlers run. */
  constructor(
    readonly kind: CredKind,
    readonly user: User,
    readonly early: 'none' | 'with id' | 'no id' = 'none',
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
    if (this.early !== 'none') sendEcho(c, this.early === 'with id');
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
    return `ConnectV1(${this.kind}:${this.user}${this.early === 'none' ? '' : `, echo ${this.early}`})`;
  }
}

/** A `pkg.v1` client whose first message is not `$hello` (it has no credentials). */
export class MessageBeforeHello extends Step {
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

/**
 * `own`: the token of a session that is away (same identity); `takeover`: of a session whose
 * connection is open (same identity); `foreign`: of any session, under the other identity;
 * `stale`: a token rotated away or of a session that ended.
 */
export type ResumeKind = 'own' | 'takeover' | 'foreign' | 'stale';

/** What the session's connections received so far: the highest seq, the last broadcast. */
function seen(m: Model, s: Session): { seq: number; news: number } {
  const received = m.clients.filter((c) => c.session === s).flatMap((c) => c.conn.received);
  return {
    seq: Math.max(0, ...received.map((x) => x.seq ?? 0)),
    news: Math.max(0, ...received.flatMap((x) => newsNumber(x) ?? [])),
  };
}

/** A version 1 client that resumes a session with a token: its own, another user's, an old one. */
export class Resume extends Step {
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
    const wanted = (s: Session): boolean =>
      this.kind === 'own'
        ? s.state === 'away'
        : this.kind === 'takeover'
          ? s.state === 'live'
          : s.state !== 'ended';
    return m.sessions.filter(wanted).map((s) => ({ session: s, token: s.token }));
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
    const own = this.kind === 'own' || this.kind === 'takeover';
    if (own && wasLive) old.closedBy = 'server';
    const { seq, news: lastNews } = seen(m, s);
    c.conn.send({
      event: '$hello',
      data: { v: 1, auth: `good:${user}:${c.tag}`, resume: { session: target.token, seq } },
    });
    const welcome = await expectWelcome(c);
    if (!own) {
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
    if (wasLive) {
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
          (x) => newsNumber(x) === n,
          WAIT,
          `${c.tag}: broadcast #${n} not replayed after resume`,
        ),
      );
    }
    const again = c.conn.received.find((x) => x.seq !== undefined && x.seq <= seq);
    if (again !== undefined) {
      fail(`${c.tag}: resumed after seq ${seq}, but got ${JSON.stringify(again)} again`);
    }
  }
  toString(): string {
    return `Resume(${this.kind} token, #${this.pick})`;
  }
}
