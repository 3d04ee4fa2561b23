// The model of the connection-model test: which connections should be open, which sessions
// exist and where they are, what was broadcast to whom, which requests are owed an answer;
// and the invariants checked against what the real server and clients recorded.
import {
  HEALTH_LIMIT,
  SLACK,
  WAIT,
  healthLatency,
  type Conn,
  type ModelServer,
  type Received,
  type ServerEvent,
} from './harness';

export type User = 'alice' | 'bob';
/** What the auth handlers will decide for a connection. */
export type Fate = 'accept' | 'refuse' | 'timeout';

export interface Session {
  clientId: string;
  token: string;
  /** Tokens this session had before a resume rotated them. */
  stale: string[];
  user: User;
  state: 'live' | 'away' | 'ended';
  /** The connection that served it last (open only while `live`). */
  conn: Client;
}

/** One connection of the model. */
export interface Client {
  tag: string;
  version: 0 | 1;
  fate: Fate;
  /** The identity its credentials name (version 1). */
  user: User;
  /** The server must have decided by then (welcome for `accept`, close otherwise). */
  deadline: number;
  /** `pending` until the test sees the connection accepted or closed. */
  phase: 'pending' | 'open' | 'closed';
  conn: Conn;
  clientId: string | undefined;
  session: Session | undefined;
  /** Request ids sent, with the time each was sent. */
  requests: Map<number, number>;
  /**
   * A request sent before this time is certainly held by the authentication (not refused
   * yet), so it is owed an answer even when the authentication then refuses or times out.
   * A later one may reach a connection already closing, which answers nothing.
   */
  heldUntil: number;
  nextId: number;
  /** Messages sent while not accepted (each may run the auth handlers once). */
  earlyMessages: number;
  /** A resumed connection: no OnConnect; what its session missed is replayed. */
  resumed: boolean;
  /** Who closed it: the test (drop), the server on purpose, or the auth decision. */
  closedBy: 'client' | 'server' | 'auth' | undefined;
}

export interface Broadcast {
  n: number;
  room: string | undefined;
  /** Sent as bytes: only version 1 connections may get it. */
  binary: boolean;
  /** Client ids it must reach: open at the time, or away (kept for replay). */
  targets: Set<string>;
  /** Tags of connections whose auth was still running: they may or may not get it. */
  maybe: Set<string>;
}

export interface Model {
  clients: Client[];
  sessions: Session[];
  broadcasts: Broadcast[];
  /** Room members by client id (a session keeps its rooms while away). */
  rooms: Map<string, Set<string>>;
  nextTag: number;
  slowHealth: number;
}

/** The system under test. */
export type Real = ModelServer;

export function newModel(): Model {
  return {
    clients: [],
    sessions: [],
    broadcasts: [],
    rooms: new Map(),
    nextTag: 0,
    slowHealth: 0,
  };
}

export class InvariantError extends Error {}

function fail(message: string): never {
  throw new InvariantError(message);
}

/** Events that are deliveries (only an open connection may get them). */
/**
 * The number of a `news` broadcast: `data.n` of a JSON one, the first four bytes (big-endian)
 * of a binary one; undefined for any other message.
 */
export function newsNumber(m: Received): number | undefined {
  if (m.event !== 'news') return undefined;
  if (m.binary !== true) return (m.data as { n: number }).n;
  const bytes = m.data as Uint8Array;
  return bytes.length < 4 ? -1 : Buffer.from(bytes).readUInt32BE(0);
}

/** The bytes of binary broadcast #n: its number, then bytes that depend on it. */
export function newsBytes(n: number): Uint8Array {
  const bytes = Buffer.alloc(4 + (n % 7) * 300);
  bytes.writeUInt32BE(n, 0);
  for (let i = 4; i < bytes.length; i += 1) bytes[i] = (n * 31 + i) & 0xff;
  return new Uint8Array(bytes);
}

export function isDelivery(m: Received): boolean {
  return m.id === undefined && m.event !== '$welcome' && m.event !== 'error' && m.event !== '$pong';
}

export const welcomeOf = (c: Client): Received | undefined =>
  c.conn.received.find((m) => m.event === '$welcome');

/** Updates phases from what the connections saw (an accepted slow auth, a server close). */
export function observe(model: Model): void {
  for (const c of model.clients) {
    if (c.phase === 'pending') {
      const hello =
        c.version === 1
          ? welcomeOf(c)
          : c.conn.received.find((m) => m.event === 'app.hello' && m.id === undefined);
      if (hello !== undefined && c.fate === 'accept') {
        openClient(model, c, hello);
      } else if (c.conn.closed !== undefined) {
        if (c.fate === 'accept' && c.closedBy === undefined) {
          fail(
            `${c.tag}: its auth accepts, but the server closed it with ${c.conn.closed.code} "${c.conn.closed.reason}"`,
          );
        }
        c.phase = 'closed';
        c.closedBy ??= 'auth';
      }
    }
    if (c.phase === 'open' && c.conn.closed !== undefined && c.closedBy === undefined) {
      fail(
        `${c.tag} (${c.clientId}) was closed by the server with ${c.conn.closed.code} ` +
          `"${c.conn.closed.reason}" although nothing asked for it`,
      );
    }
  }
}

/** A connection the test saw accepted: learns its id and opens its session. */
export function openClient(model: Model, c: Client, hello: Received): void {
  c.phase = 'open';
  if (c.version === 0) {
    c.clientId = (hello.data as { clientId: string }).clientId;
    return;
  }
  const data = hello.data as { clientId: string; session?: string; resumed?: boolean };
  c.clientId = data.clientId;
  if (c.session === undefined && typeof data.session === 'string') {
    c.session = {
      clientId: data.clientId,
      token: data.session,
      stale: [],
      user: c.user,
      state: 'live',
      conn: c,
    };
    model.sessions.push(c.session);
  }
}

// ---------------------------------------------------------------- invariants

/** Checks everything that must hold at any moment. Throws InvariantError. */
export function checkSafety(model: Model, real: Real): void {
  const log = real.recorder.log;
  const byTag = new Map(model.clients.map((c) => [c.tag, c]));
  const connects = new Map<string, number>();
  const disconnects = new Map<string, number>();
  const authCalls = new Map<string, number>();
  log.forEach((e: ServerEvent, i) => {
    if (e.kind === 'connect') {
      if (connects.has(e.id)) fail(`OnConnect ran twice for ${e.id} (log #${i})`);
      connects.set(e.id, i);
      const c = e.tag === undefined ? undefined : byTag.get(e.tag);
      if (c !== undefined && c.fate !== 'accept') {
        fail(
          `OnConnect ran for ${c.tag}, whose auth was ${c.fate === 'refuse' ? 'refused' : 'never settled'}`,
        );
      }
    } else if (e.kind === 'disconnect') {
      if (disconnects.has(e.id)) fail(`OnDisconnect ran twice for ${e.id} (log #${i})`);
      if (!connects.has(e.id)) fail(`OnDisconnect ran for ${e.id} without OnConnect first`);
      disconnects.set(e.id, i);
    } else if (e.kind === 'handler') {
      if (!connects.has(e.id) || disconnects.has(e.id)) {
        fail(
          `handler "${e.event}" ran for ${e.id} (${e.tag}) ${
            connects.has(e.id) ? 'after its OnDisconnect' : 'before (without) its OnConnect'
          }: it was not open`,
        );
      }
      const c = e.tag === undefined ? undefined : byTag.get(e.tag);
      if (c !== undefined && c.fate !== 'accept') {
        fail(
          `handler "${e.event}" ran for ${c.tag}, a connection the auth handlers did not accept`,
        );
      }
    } else if (e.tag !== undefined) {
      authCalls.set(e.tag, (authCalls.get(e.tag) ?? 0) + 1);
    }
  });
  for (const c of model.clients) {
    const calls = authCalls.get(c.tag) ?? 0;
    // One check per $hello, one without credentials, and at most one per early message.
    const bound = 2 + c.earlyMessages;
    if (calls > bound) {
      fail(
        `the auth handlers ran ${calls} times for ${c.tag} (at most ${bound}): a refused message was replayed`,
      );
    }
    checkConnection(model, c);
  }
}

/** What one connection received must fit its state. */
function checkConnection(model: Model, c: Client): void {
  const received = c.conn.received;
  const welcomes = received.filter((m) => m.event === '$welcome');
  if (c.fate !== 'accept' && welcomes.length > 0) {
    fail(
      `${c.tag} got $welcome although its auth ${c.fate === 'refuse' ? 'was refused' : 'never settled'}`,
    );
  }
  let opened = false;
  let lastSeq = 0;
  const news = new Set<number>();
  const answers = new Map<unknown, number>();
  for (const [i, m] of received.entries()) {
    if (m.event === '$welcome') opened = true;
    if (m.id !== undefined) {
      const n = (answers.get(m.id) ?? 0) + 1;
      answers.set(m.id, n);
      if (n > 1)
        fail(`${c.tag} got ${n} answers to request id ${String(m.id)}: ${JSON.stringify(m)}`);
      if (!c.requests.has(m.id as number))
        fail(`${c.tag} got an answer to id ${String(m.id)} it never sent`);
    }
    if (!isDelivery(m)) continue;
    if (c.version === 0 && !opened) {
      if (m.event !== 'app.hello') {
        fail(
          `${c.tag} (version 0) got "${m.event}" before OnConnect's message: it was not open (#${i} ${JSON.stringify(m)})`,
        );
      }
      opened = true;
    }
    if (!opened || c.fate !== 'accept') {
      fail(`${c.tag} got the delivery ${JSON.stringify(m)} while not open (auth: ${c.fate})`);
    }
    if (typeof m.seq === 'number') {
      if (m.seq <= lastSeq) fail(`${c.tag} got seq ${m.seq} after seq ${lastSeq}`);
      if (lastSeq === 0 && !c.resumed && c.version === 1 && m.seq !== 1) {
        fail(`${c.tag}: the first seq of a new session is ${m.seq}, not 1`);
      }
      lastSeq = m.seq;
    }
    if (m.binary === true && c.version === 0) {
      fail(`${c.tag} (version 0) got a binary frame: ${m.event}`);
    }
    if (m.event === 'news') {
      const n = newsNumber(m)!;
      if (news.has(n)) fail(`${c.tag} got broadcast #${n} twice`);
      news.add(n);
      const b = model.broadcasts.find((x) => x.n === n);
      if (b !== undefined && b.binary !== (m.binary === true)) {
        fail(`${c.tag} got broadcast #${n} as ${m.binary ? 'bytes' : 'JSON'}`);
      }
      if (b?.binary === true && !Buffer.from(m.data as Uint8Array).equals(newsBytes(n))) {
        fail(`${c.tag} got the bytes of broadcast #${n} changed`);
      }
      const allowed =
        b !== undefined &&
        ((c.clientId !== undefined && b.targets.has(c.clientId)) ||
          (b.room === undefined && b.maybe.has(c.tag)));
      if (!allowed) {
        fail(
          `${c.tag} (${c.clientId ?? 'no id'}) got broadcast #${n}${b?.room ? ` to room ${JSON.stringify(b.room)}` : ''}, which did not target it`,
        );
      }
    }
  }
}

/** Measures /health once; two answers over HEALTH_LIMIT ms in a row fail. */
export async function checkHealth(model: Model, real: Real): Promise<void> {
  const ms = await healthLatency(real.healthUrl);
  model.slowHealth = ms > HEALTH_LIMIT ? model.slowHealth + 1 : 0;
  if (model.slowHealth >= 2)
    fail(`/health took ${ms.toFixed(1)} ms (over ${HEALTH_LIMIT} ms twice in a row)`);
}

/** Deadlines the server must have met by now. */
export function checkDeadlines(model: Model): void {
  const now = Date.now();
  for (const c of model.clients) {
    if (c.phase !== 'pending' || now <= c.deadline + SLACK) continue;
    fail(
      c.fate === 'accept'
        ? `${c.tag}: accepted auth, but no $welcome ${SLACK} ms past its deadline`
        : `${c.tag}: auth ${c.fate === 'refuse' ? 'refused' : 'never settled'}, but the connection is still open ${SLACK} ms after auth_timeout`,
    );
  }
}

/**
 * Waits until nothing is in flight: every pending connection decided, every owed answer
 * received. Bounded by each connection's deadline.
 */
export async function quiesce(model: Model): Promise<void> {
  for (const c of model.clients) {
    if (c.phase === 'pending') {
      const ms = Math.max(0, c.deadline + SLACK - Date.now());
      await c.conn
        .until(
          () =>
            c.conn.closed !== undefined ||
            welcomeOf(c) !== undefined ||
            c.conn.received.some((m) => m.event === 'app.hello')
              ? true
              : undefined,
          ms,
          `${c.tag}: the server did not decide its auth (${c.fate})`,
        )
        .catch((err: Error) => fail(err.message));
    }
  }
  observe(model);
  for (const c of model.clients) {
    for (const [id, sentAt] of c.requests) {
      // Owed: on a connection still open, and every request held by a refused (or timed
      // out) authentication. Not owed: the test dropped the connection, or the server
      // closed it on purpose (disconnectClient, takeover, close()).
      const owed =
        (c.phase === 'open' && c.fate === 'accept') ||
        (c.fate !== 'accept' && c.closedBy === 'auth' && sentAt < c.heldUntil);
      if (!owed) continue;
      await c.conn
        .next((m) => m.id === id, WAIT, `${c.tag}: request id ${id} never answered`)
        .catch((err: Error) => fail(err.message));
    }
  }
}

/** Counts at a quiet moment: only open connections count. */
export async function checkCounts(model: Model, real: Real): Promise<void> {
  const open = model.clients.filter((c) => c.phase === 'open').length;
  const count = real.server.getClientCount();
  if (count !== open) fail(`getClientCount() is ${count}, but ${open} connections are open`);
  // countClients may count sessions that are away; a slow auth that was accepted just as
  // the test dropped its connection may have left one the model does not know of.
  const away = model.sessions.filter((s) => s.state === 'away').length;
  const racing = model.clients.filter(
    (c) => c.fate === 'accept' && c.closedBy === 'client' && c.clientId === undefined,
  ).length;
  const counted = await real.server.countClients();
  if (counted < open || counted > open + away + racing) {
    fail(
      `countClients() is ${counted}, but ${open} connections are open and ${away} sessions away`,
    );
  }
}
