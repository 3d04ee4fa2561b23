/**
 * The connection without a server: the `Connection` object alone, then the protocol layer
 * over a fake transport (no sockets) with fake timers. Every move of the state table, and
 * for each state a message early, twice and never.
 */
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import type { LoggerInterface } from '@pkg/logger';
import { MAX_AUTH_LENGTH, SUBPROTOCOL, encodeError, type RequestId } from '@pkg/wire';
import type { Envelope, WebSocketHandler, WsClient } from '@pkg/ws-protocol';
import { ClientRegistry } from '../ws/client-registry';
import type { Routes } from '../routing/ws-dispatch';
import { ConnectionTable } from './connections';
import type { AuthResult } from './auth';
import { Connection, ConnectionState as S, MOVES, canMove } from './connection';
import type { ConnectionStateName } from './connection';
import { ProtocolV1, type ProtocolV1Options } from './protocol-v1';
import type { Session } from './session';

const STATES = Object.values(S);
const T0 = 1_000_000;

const silent: LoggerInterface = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  exception: () => undefined,
} as unknown as LoggerInterface;

function fakeClient(id: string, v1 = true): WsClient {
  return {
    id,
    socket: { protocol: v1 ? SUBPROTOCOL : '' },
    ip: '10.0.0.1',
    data: {},
    request: undefined,
  } as unknown as WsClient;
}

const env = (event: string, data: unknown = {}, id?: number): Envelope =>
  ({ event, data, ...(id === undefined ? {} : { id }) }) as unknown as Envelope;

/** The shortest way from `handshaken` to each state. */
const PATHS: Record<ConnectionStateName, ConnectionStateName[]> = {
  handshaken: [],
  awaiting_hello: [S.AWAITING_HELLO],
  authenticating: [S.AUTHENTICATING],
  open: [S.OPEN],
  closing: [S.CLOSING],
  closed: [S.CLOSED],
  away: [S.OPEN, S.AWAY],
};

function connectionIn(state: ConnectionStateName): Connection {
  const conn = new Connection(fakeClient('c'), true);
  for (const to of PATHS[state]) conn.move(to, T0);
  return conn;
}

beforeEach(() => {
  jest.useFakeTimers({ now: T0 });
});
afterEach(() => {
  jest.useRealTimers();
});

describe('Connection: the state table', () => {
  it('starts handshaken, with nothing held, pending, armed or opened', () => {
    const conn = new Connection(fakeClient('c1'), false);
    expect(conn.state).toBe(S.HANDSHAKEN);
    expect(conn.id).toBe('c1');
    expect(conn.v1).toBe(false);
    expect([conn.hello, conn.opened, conn.final, conn.takenOver, conn.timed]).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
    expect([conn.heldCount, conn.pending, conn.expiredCount, conn.positionsLeft]).toEqual([
      0, 0, 0, 0,
    ]);
    expect([conn.identity, conn.refusal, conn.refused, conn.session]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(conn.authStarted).toBe(0);
  });

  for (const from of STATES) {
    for (const to of STATES) {
      const allowed = MOVES[from].includes(to);
      it(`${from} -> ${to}: ${allowed ? 'moves' : 'refused'}`, () => {
        const conn = connectionIn(from);
        expect(conn.state).toBe(from);
        expect(canMove(from, to)).toBe(allowed);
        if (allowed) {
          expect(conn.move(to, T0)).toBe(from);
          expect(conn.state).toBe(to);
        } else {
          expect(() => conn.move(to, T0)).toThrow(`Connection c: no move from ${from} to ${to}.`);
          expect(conn.state).toBe(from);
        }
      });
    }
  }

  it('closed and away are final; every other state can close', () => {
    expect(MOVES.closed).toEqual([]);
    expect(MOVES.away).toEqual([]);
    for (const s of STATES.filter((x) => x !== S.CLOSED && x !== S.AWAY)) {
      expect(canMove(s, S.CLOSED)).toBe(true);
    }
    expect(canMove(S.OPEN, S.AWAY)).toBe(true);
    expect(STATES.filter((s) => canMove(s, S.AWAY))).toEqual([S.OPEN]);
  });

  it('a move clears the deadline of the state it leaves', () => {
    const conn = connectionIn(S.AWAITING_HELLO);
    const fired = jest.fn();
    conn.arm(100, fired);
    expect(conn.timed).toBe(true);
    conn.move(S.AUTHENTICATING, T0);
    expect(conn.timed).toBe(false);
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(1000);
    expect(fired).not.toHaveBeenCalled();
  });

  it('a deadline fires once, after its time, and is then disarmed', () => {
    const conn = connectionIn(S.AUTHENTICATING);
    const fired = jest.fn();
    conn.arm(100, fired);
    jest.advanceTimersByTime(99);
    expect(fired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
    expect(conn.timed).toBe(false);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('arming again replaces the deadline (one at a time)', () => {
    const conn = connectionIn(S.AUTHENTICATING);
    const first = jest.fn();
    const second = jest.fn();
    conn.arm(100, first);
    conn.arm(200, second);
    expect(jest.getTimerCount()).toBe(1);
    jest.advanceTimersByTime(500);
    expect(first).not.toHaveBeenCalled();
    expect(second).toHaveBeenCalledTimes(1);
  });

  it('open marks it opened; authenticating starts the auth clock once', () => {
    const conn = new Connection(fakeClient('c'), true);
    conn.move(S.AUTHENTICATING, 5);
    expect(conn.authStarted).toBe(5);
    conn.move(S.AWAITING_HELLO, 6);
    conn.move(S.AUTHENTICATING, 7);
    expect(conn.authStarted).toBe(5);
    expect(conn.opened).toBe(false);
    conn.move(S.OPEN, 8);
    expect(conn.opened).toBe(true);
    conn.move(S.CLOSING, 9);
    expect(conn.opened).toBe(true);
  });

  for (const to of [S.CLOSING, S.CLOSED] as const) {
    it(`entering ${to} drops what was held; awaiting_hello, authenticating and open keep it`, () => {
      const conn = new Connection(fakeClient('c'), true);
      conn.hold(env('a'));
      conn.move(S.AWAITING_HELLO, T0);
      conn.move(S.AUTHENTICATING, T0);
      expect(conn.heldCount).toBe(1);
      conn.move(S.OPEN, T0);
      expect(conn.heldCount).toBe(1);
      conn.move(to, T0);
      expect(conn.heldCount).toBe(0);
    });
  }

  it('entering away drops what was held', () => {
    const conn = connectionIn(S.OPEN);
    conn.hold(env('a'));
    conn.move(S.AWAY, T0);
    expect(conn.heldCount).toBe(0);
  });
});

describe('Connection: what it owns', () => {
  it('holds at most max messages and hands them back in order, once', () => {
    const conn = connectionIn(S.AUTHENTICATING);
    expect(conn.hold(env('a'), 2)).toBe(true);
    expect(conn.hold(env('b'), 2)).toBe(true);
    expect(conn.hold(env('c'), 2)).toBe(false);
    expect(conn.heldCount).toBe(2);
    expect(conn.takeFirstHeld()?.event).toBe('a');
    expect(conn.takeHeld().map((e) => e.event)).toEqual(['b']);
    expect(conn.takeHeld()).toEqual([]);
    expect(conn.takeFirstHeld()).toBeUndefined();
  });

  it('refuse keeps the refusal and hands back what was held', () => {
    const conn = connectionIn(S.AUTHENTICATING);
    conn.hold(env('a', {}, 1));
    const refusal = { code: 'unauthorized', message: 'no' };
    expect(conn.refuse(refusal).map((e) => e.event)).toEqual(['a']);
    expect(conn.refused).toBe(refusal);
    expect(conn.heldCount).toBe(0);
  });

  it('counts pending requests up to max, and never below zero', () => {
    const conn = connectionIn(S.OPEN);
    expect(conn.admit(2)).toBe(true);
    expect(conn.admit(2)).toBe(true);
    expect(conn.admit(2)).toBe(false);
    expect(conn.pending).toBe(2);
    conn.answered();
    expect(conn.pending).toBe(1);
    conn.answered();
    conn.answered();
    expect(conn.pending).toBe(0);
    expect(conn.admit(1)).toBe(true);
  });

  it('remembers expired requests once each, at most max, forgetting the oldest first', () => {
    const conn = connectionIn(S.OPEN);
    expect(conn.wasExpired(1)).toBe(false);
    conn.expire(1, 2);
    conn.expire(2, 2);
    conn.expire(3, 2);
    expect(conn.expiredCount).toBe(2);
    expect(conn.wasExpired(1)).toBe(false);
    expect(conn.wasExpired(2)).toBe(true);
    expect(conn.wasExpired(2)).toBe(false);
    expect(conn.wasExpired(3)).toBe(true);
    expect(conn.expiredCount).toBe(0);
  });

  it('settle: a request answered handler_timeout gets no second answer; others count answered', () => {
    const conn = connectionIn(S.OPEN);
    conn.admit(5);
    conn.admit(5);
    conn.expire(1, 5);
    expect(conn.settle(1)).toBe(false);
    expect(conn.pending).toBe(2);
    expect(conn.settle(1)).toBe(true);
    expect(conn.pending).toBe(1);
    expect(conn.settle(2)).toBe(true);
    expect(conn.pending).toBe(0);
  });

  it('auth rounds: only the latest round, while authenticating, is current', () => {
    const conn = connectionIn(S.AUTHENTICATING);
    const first = conn.beginAuth();
    const second = conn.beginAuth();
    expect(second).toBe(first + 1);
    expect(conn.isCurrentAuth(first)).toBe(false);
    expect(conn.isCurrentAuth(second)).toBe(true);
    conn.move(S.OPEN, T0);
    expect(conn.isCurrentAuth(second)).toBe(false);
  });

  it('hello, identity, the refusal without credentials, final', () => {
    const conn = connectionIn(S.AWAITING_HELLO);
    conn.saidHello(undefined);
    expect(conn.hello).toBe(true);
    expect(conn.positionsLeft).toBe(0);
    conn.identify('ann');
    expect(conn.identity).toBe('ann');
    const refusal = { status: 401 as const, message: 'no' };
    conn.awaitCredentials(refusal);
    expect(conn.refusal).toBe(refusal);
    conn.finalise();
    expect(conn.final).toBe(true);
  });

  it('takes each $hello position out once, by room and namespace', () => {
    const conn = connectionIn(S.OPEN);
    const given = [
      { room: 'a', namespace: '/', offset: 1, epoch: 'e' },
      { room: 'a', namespace: '/x', offset: 2, epoch: 'e' },
    ];
    conn.saidHello(given);
    expect(conn.positionsLeft).toBe(2);
    expect(conn.takePosition('b', '/')).toBeUndefined();
    expect(conn.takePosition('a', '/x')).toEqual(given[1]);
    expect(conn.takePosition('a', '/x')).toBeUndefined();
    expect(conn.positionsLeft).toBe(1);
    expect(conn.takePosition('a', '/')).toEqual(given[0]);
    expect(conn.positionsLeft).toBe(0);
    expect(given).toHaveLength(2);
    conn.saidHello([]);
    expect(conn.positionsLeft).toBe(0);
  });

  it('sessions: attach, resume under a new name, give up on a takeover', () => {
    const conn = connectionIn(S.OPEN);
    const session = { clientId: 'old', replayed: undefined } as unknown as Session;
    conn.attach(session);
    expect(conn.session).toBe(session);
    const renamed = fakeClient('old');
    conn.resume(renamed, session);
    expect(conn.client).toBe(renamed);
    expect(conn.id).toBe('old');
    const rejected = jest.fn();
    conn.serverRequests.add('r1', {
      event: 'q',
      resolve: () => undefined,
      reject: rejected,
      timer: setTimeout(() => undefined, 1000),
    });
    conn.takeOver(undefined);
    expect(rejected).toHaveBeenCalledTimes(1);
    expect(jest.getTimerCount()).toBe(0);
    expect(conn.session).toBeUndefined();
    expect(conn.takenOver).toBe(true);
    expect(conn.id).toBe('old');
    conn.takeOver(fakeClient('old~1'));
    expect(conn.id).toBe('old~1');
  });

  it('$history: one runs, the others queue in order; the budget is made once', () => {
    const conn = connectionIn(S.OPEN);
    expect(conn.historyQueued).toBe(-1);
    expect(conn.startHistory(env('$history', {}, 1))).toBe(true);
    expect(conn.historyQueued).toBe(0);
    expect(conn.startHistory(env('$history', {}, 2))).toBe(false);
    expect(conn.startHistory(env('$history', {}, 3))).toBe(false);
    expect(conn.nextHistory()?.id).toBe(2);
    expect(conn.nextHistory()?.id).toBe(3);
    expect(conn.historyQueued).toBe(0);
    expect(conn.nextHistory()).toBeUndefined();
    expect(conn.historyQueued).toBe(-1);
    const make = jest.fn(() => ({}) as never);
    const budget = conn.historyBudget(make);
    expect(conn.historyBudget(make)).toBe(budget);
    expect(make).toHaveBeenCalledTimes(1);
  });

  it('recoveries: one per room at a time; only the current one finishes', () => {
    const conn = connectionIn(S.OPEN);
    const hold = { messages: [], overflow: false, marks: conn.marks };
    const other = { messages: [], overflow: false, marks: conn.marks };
    expect(conn.recovering).toBe(0);
    expect(conn.startRecovery('k', hold)).toBe(true);
    expect(conn.startRecovery('k', other)).toBe(false);
    expect(conn.recoveryOf('k')).toBe(hold);
    expect(conn.recoveryOf('j')).toBeUndefined();
    expect(conn.recovering).toBe(1);
    expect(conn.finishRecovery('k', other)).toBe(false);
    expect(conn.finishRecovery('k', hold)).toBe(true);
    expect(conn.finishRecovery('k', hold)).toBe(false);
    expect(conn.recovering).toBe(0);
  });

  it("the application's data: from the handshake, set, read whole or by key, inherited once", () => {
    const client = { ...fakeClient('c'), data: { user: 'ada' } } as unknown as WsClient;
    const conn = new Connection(client, true);
    expect(conn.getData('user')).toBe('ada');
    conn.setData('seen', 1);
    expect(conn.getData()).toEqual({ user: 'ada', seen: 1 });
    expect(conn.getData(null)).toEqual({ user: 'ada', seen: 1 });
    expect(conn.getData('none')).toBeUndefined();
    const bare = new Connection(fakeClient('d'), true);
    expect(bare.getData()).toEqual({});
    expect(bare.getData('user')).toBeUndefined();
    bare.inherit(conn);
    expect(bare.getData()).toEqual({ user: 'ada', seen: 1 });
    bare.inherit(undefined);
    bare.inherit(bare);
    expect(bare.getData('user')).toBe('ada');
  });

  it('connected until leave(); its data stays readable after', () => {
    const conn = connectionIn(S.OPEN);
    conn.setData('k', 'v');
    expect(conn.connected).toBe(true);
    conn.leave();
    expect(conn.connected).toBe(false);
    expect(conn.getData('k')).toBe('v');
  });

  it('handlers at work: counted while they run, each finished once, all taken out at the end', () => {
    const conn = connectionIn(S.OPEN);
    const a = Promise.resolve();
    const b = Promise.resolve();
    expect(conn.working).toBe(0);
    expect(conn.finishWork(a)).toBe(false);
    conn.startWork(a);
    conn.startWork(b);
    expect(conn.working).toBe(2);
    expect(conn.finishWork(a)).toBe(true);
    expect(conn.finishWork(a)).toBe(false);
    expect(conn.working).toBe(1);
    expect([...conn.takeWork()]).toEqual([b]);
    expect(conn.working).toBe(0);
    expect([...conn.takeWork()]).toEqual([]);
    expect(conn.finishWork(b)).toBe(false);
  });

  it('the OnConnect phase is kept until it settles, and only the current one is cleared', async () => {
    const conn = connectionIn(S.OPEN);
    expect(conn.connectPhase).toBeUndefined();
    let finish!: () => void;
    const first = new Promise<void>((resolve) => (finish = resolve));
    conn.startConnect(first);
    expect(conn.connectPhase).toBe(first);
    const second = new Promise<void>(() => undefined);
    conn.startConnect(second);
    finish();
    await first;
    await Promise.resolve();
    expect(conn.connectPhase).toBe(second);
    const third = Promise.resolve();
    conn.startConnect(third);
    await third;
    await Promise.resolve();
    expect(conn.connectPhase).toBeUndefined();
  });

  it('credentials: identified with an expiry; one refresh at a time; a refused one keeps the expiry', () => {
    const conn = connectionIn(S.OPEN);
    expect(conn.expiresAt).toBeUndefined();
    conn.identify('ann', T0 + 1000);
    expect(conn.identity).toBe('ann');
    expect(conn.expiresAt).toBe(T0 + 1000);
    expect(conn.refreshing).toBe(false);
    expect(conn.startRefresh()).toBe(true);
    expect(conn.refreshing).toBe(true);
    expect(conn.startRefresh()).toBe(false);
    conn.endRefresh(false, T0 + 9999);
    expect(conn.refreshing).toBe(false);
    expect(conn.expiresAt).toBe(T0 + 1000);
    expect(conn.startRefresh()).toBe(true);
    conn.endRefresh(true, T0 + 5000);
    expect(conn.expiresAt).toBe(T0 + 5000);
    expect(conn.startRefresh()).toBe(true);
    conn.endRefresh(true, undefined);
    expect(conn.expiresAt).toBeUndefined();
    conn.identify('bob');
    expect(conn.expiresAt).toBeUndefined();
  });

  it('disarm() clears the armed deadline of an open connection', () => {
    const conn = connectionIn(S.OPEN);
    const fired = jest.fn();
    conn.arm(100, fired);
    expect(conn.timed).toBe(true);
    conn.disarm();
    expect(conn.timed).toBe(false);
    jest.advanceTimersByTime(200);
    expect(fired).not.toHaveBeenCalled();
    conn.disarm();
    expect(conn.timed).toBe(false);
  });

  it('room grants: each expires once at its time, a new grant replaces the old, ungrant and end() clear them', () => {
    const conn = connectionIn(S.OPEN);
    const expired: string[] = [];
    expect(conn.grants).toBe(0);
    conn.grant('a', 100, () => expired.push('a'));
    conn.grant('b', 300, () => expired.push('b'));
    expect(conn.grants).toBe(2);
    conn.grant('a', 500, () => expired.push('a2'));
    expect(conn.grants).toBe(2);
    jest.advanceTimersByTime(300);
    expect(expired).toEqual(['b']);
    expect(conn.grants).toBe(1);
    conn.ungrant('nope');
    conn.ungrant('a');
    expect(conn.grants).toBe(0);
    jest.advanceTimersByTime(1000);
    expect(expired).toEqual(['b']);
    conn.grant('c', 100, () => expired.push('c'));
    conn.end();
    expect(conn.grants).toBe(0);
    jest.advanceTimersByTime(1000);
    expect(expired).toEqual(['b']);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('end() releases everything: no deadline, nothing held, remembered, queued or marked', () => {
    const conn = connectionIn(S.AUTHENTICATING);
    conn.arm(1000, () => {
      throw new Error('must not fire');
    });
    conn.hold(env('a'));
    conn.expire(1, 10);
    conn.saidHello([{ room: 'a', namespace: '/', offset: 1, epoch: 'e' }]);
    conn.startHistory(env('$history', {}, 1));
    conn.startHistory(env('$history', {}, 2));
    conn.marks.replayed = new Map([['k', { offset: 1, epoch: 'e' }]]);
    conn.startRecovery('k', { messages: [], overflow: false, marks: conn.marks });
    const rejected = jest.fn();
    conn.serverRequests.add('r1', {
      event: 'q',
      resolve: () => undefined,
      reject: rejected,
      timer: setTimeout(() => undefined, 1000),
    });
    conn.end();
    expect(rejected).toHaveBeenCalledTimes(1);
    expect(conn.serverRequests.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
    expect(conn.timed).toBe(false);
    expect([conn.heldCount, conn.expiredCount, conn.positionsLeft]).toEqual([0, 0, 0]);
    expect(conn.historyQueued).toBe(-1);
    expect(conn.recovering).toBe(0);
    expect(conn.marks.replayed).toBeUndefined();
    jest.advanceTimersByTime(5000);
  });
});

// ------------------------------------------------------------------ over a fake transport

interface Sent {
  to: string;
  text: string;
}

class FakeTransport {
  readonly sent: Sent[] = [];
  readonly refusals: Array<{ to: string; code: string; id: unknown }> = [];
  readonly closes: Array<{ to: string; code: number }> = [];
  readonly clients = new Map<string, WsClient>();

  sendRaw(to: string, text: string): boolean {
    this.sent.push({ to, text });
    return true;
  }
  sendToMany(ids: Iterable<string>, text: string): number {
    let n = 0;
    for (const id of ids) n += this.sendRaw(id, text) ? 1 : 0;
    return n;
  }
  sendError(to: string, code: string, message: string, id?: RequestId): boolean {
    return this.refuse(to, code, message, {}, id);
  }
  /** The handler's one door for errors: recorded, and sent as the real one sends it. */
  refuse(
    to: string,
    code: string,
    message: string,
    extra: Readonly<Record<string, unknown>> = {},
    id?: RequestId,
  ): boolean {
    this.refusals.push({ to, code, id });
    this.sent.push({ to, text: encodeError(code, message, id, extra) });
    return true;
  }
  disconnect(to: string, code: number): boolean {
    this.closes.push({ to, code });
    return true;
  }
  renameClient(from: string, to: string): WsClient | undefined {
    const client = this.clients.get(from);
    if (client === undefined) return undefined;
    this.clients.delete(from);
    const renamed = { ...client, id: to } as WsClient;
    this.clients.set(to, renamed);
    return renamed;
  }
  events(to: string): string[] {
    return this.sent
      .filter((s) => s.to === to)
      .map((s) => (JSON.parse(s.text) as { event: string }).event);
  }
  welcome(to: string): Record<string, unknown> | undefined {
    const text = this.sent.filter((s) => s.to === to && s.text.includes('"$welcome"')).at(-1)?.text;
    return text === undefined
      ? undefined
      : (JSON.parse(text) as { data: Record<string, unknown> }).data;
  }
}

interface Rig {
  p: ProtocolV1;
  ws: FakeTransport;
  clients: ClientRegistry;
  started: string[];
  dispatched: Array<{ id: string; event: string }>;
  ended: string[];
  connect(id: string, v1?: boolean): WsClient;
  /** The connection of a client id now. */
  conn(id: string): Connection;
  send(client: WsClient, envelope: Envelope): void;
}

function rig(
  options: {
    auth?: (ctx: { auth: string | undefined }) => AuthResult | Promise<AuthResult>;
    recoveryWindow?: number;
    helloWait?: number;
  } = {},
): Rig {
  const ws = new FakeTransport();
  const connections = new ConnectionTable();
  const clients = new ClientRegistry(connections);
  const started: string[] = [];
  const dispatched: Array<{ id: string; event: string }> = [];
  const ended: string[] = [];
  // The routes record the messages that reach them (no OnConnect handlers: no phase to
  // wait for); the rooms record when a client starts (joins its namespace) and ends.
  const routes: Routes = {
    hasConnectHandlers: false,
    dispatch: (id, event) => {
      dispatched.push({ id, event });
      return undefined;
    },
    dispatchSpecialEvent: () => Promise.resolve(),
  };
  const o: ProtocolV1Options = {
    wsHandler: ws as unknown as WebSocketHandler,
    connections,
    clients,
    messages: {
      routes,
      ws: ws as unknown as WebSocketHandler,
      logger: silent,
      observability: {
        holder: { metrics: null },
        observers: { messagesPassThrough: () => true, message: () => undefined },
      },
      tracing: null,
      maxPending: 0,
      handlerTimeout: 0,
      connectTimeout: 0,
    },
    logger: silent,
    recoveryWindow: options.recoveryWindow ?? 60_000,
    recoveryBuffer: 16,
    maxAwaySessions: 0,
    maxAwaySessionsPerAddress: 0,
    ipv6Subnet: 64,
    authTimeout: 1000,
    refreshGrace: 500,
    helloWait: options.helloWait ?? 500,
    maxPendingRequests: 2,
    maxPendingServerRequests: 4,
    ackTimeout: 1000,
  };
  const p = new ProtocolV1(o);
  p.serveRooms({
    connected: (id) => void started.push(id),
    disconnected: (id) => void ended.push(id),
    leaveRoom: () => undefined,
  });
  if (options.auth !== undefined) p.addAuthHandler(options.auth);
  return {
    p,
    ws,
    clients,
    started,
    dispatched,
    ended,
    conn: (id) => connections.get(id)!,
    connect(id, v1 = true) {
      const client = fakeClient(id, v1);
      ws.clients.set(id, client);
      p.connected(client);
      return client;
    },
    send(client, envelope) {
      p.onMessage(ws.clients.get(client.id) ?? client, envelope);
    },
  };
}

const stateOf = (r: Rig, id: string): string | undefined =>
  r.p
    .connectionStates()
    .filter(([, , n]) => n > 0)
    .map(([state]) => state)
    .find(() => r.p.clientInfo(id) !== undefined);

describe('ProtocolV1 over a fake transport: each state, messages early, twice, never', () => {
  it('awaiting_hello, never: served as version 0 after hello_wait, no sooner', () => {
    const r = rig();
    r.connect('a');
    jest.advanceTimersByTime(499);
    expect(r.started).toEqual([]);
    expect(r.p.connectionStates()).toContainEqual([S.AWAITING_HELLO, '1', 1]);
    jest.advanceTimersByTime(1);
    expect(r.started).toEqual(['a']);
    expect(r.p.load().openClients).toBe(1);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('awaiting_hello, early: an event before $hello serves it as version 0, and is dispatched', () => {
    const r = rig();
    const c = r.connect('a');
    r.send(c, env('chat'));
    expect(r.started).toEqual(['a']);
    expect(r.dispatched).toEqual([{ id: 'a', event: 'chat' }]);
    expect(r.p.clientInfo('a')).toEqual({ v1: false, identity: undefined, away: false });
  });

  it('awaiting_hello: $hello welcomes and opens; a second $hello is refused, not dispatched', () => {
    const r = rig();
    const c = r.connect('a');
    r.send(c, env('$hello', { v: 1 }));
    expect(r.ws.events('a')).toEqual(['$welcome']);
    expect(r.started).toEqual(['a']);
    expect(jest.getTimerCount()).toBe(0);
    r.send(c, env('$hello', { v: 1 }));
    expect(r.ws.refusals.map((x) => x.code)).toEqual(['invalid_envelope']);
    expect(r.dispatched).toEqual([]);
    expect(r.ws.events('a')).toEqual(['$welcome', 'error']);
  });

  it('a malformed $hello is answered invalid_payload and closes 1008', () => {
    const r = rig();
    const c = r.connect('a');
    r.send(c, env('$hello', 'nope'));
    expect(r.ws.refusals.map((x) => x.code)).toEqual(['invalid_payload']);
    expect(r.ws.closes).toEqual([{ to: 'a', code: 1008 }]);
    expect(r.started).toEqual([]);
    r.send(c, env('chat', {}, 1));
    expect(r.dispatched).toEqual([]);
  });

  it('$ping is answered $pong in every state but closing', () => {
    const r = rig({ auth: () => new Promise<AuthResult>(() => undefined) });
    const c = r.connect('a');
    r.send(c, env('$ping'));
    r.send(c, env('$hello', { v: 1, auth: 'x' }));
    r.send(c, env('$ping'));
    expect(r.ws.events('a')).toEqual(['$pong', '$pong']);
    jest.advanceTimersByTime(1000);
    r.send(c, env('$ping'));
    jest.advanceTimersByTime(1);
    expect(r.ws.closes).toEqual([{ to: 'a', code: 4401 }]);
    expect(r.ws.events('a').filter((e) => e === '$pong')).toHaveLength(2);
  });

  it('authenticating: messages are held, then dispatched in order after acceptance', async () => {
    let accept: (v: AuthResult) => void = () => undefined;
    const r = rig({ auth: () => new Promise<AuthResult>((res) => (accept = res)) });
    const c = r.connect('a');
    r.send(c, env('$hello', { v: 1, auth: 'x' }));
    r.send(c, env('one'));
    r.send(c, env('two', {}, 7));
    expect(r.dispatched).toEqual([]);
    accept({ identity: 'ann' });
    await Promise.resolve();
    await Promise.resolve();
    expect(r.dispatched.map((d) => d.event)).toEqual(['one', 'two']);
    expect(r.p.clientInfo('a')).toEqual({ v1: true, identity: 'ann', away: false });
    expect(jest.getTimerCount()).toBe(0);
  });

  it('authenticating: past max_pending_requests a request is answered busy, a message dropped', () => {
    const r = rig({ auth: () => new Promise<AuthResult>(() => undefined) });
    const c = r.connect('a');
    r.send(c, env('$hello', { v: 1, auth: 'x' }));
    r.send(c, env('one', {}, 1));
    r.send(c, env('two', {}, 2));
    r.send(c, env('three', {}, 3));
    r.send(c, env('four'));
    expect(r.ws.refusals).toEqual([{ to: 'a', code: 'busy', id: 3 }]);
    r.send(c, env('$hello', { v: 1 }));
    expect(r.ws.refusals.map((x) => x.code)).toEqual(['busy', 'invalid_envelope']);
    jest.advanceTimersByTime(1002);
    expect(r.ws.closes).toEqual([{ to: 'a', code: 4401 }]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('authenticating, never: auth_timeout answers held requests and closes 4401', () => {
    const r = rig({ auth: () => new Promise<AuthResult>(() => undefined) });
    const c = r.connect('a');
    r.send(c, env('$hello', { v: 1, auth: 'x' }));
    r.send(c, env('one', {}, 1));
    r.send(c, env('two'));
    jest.advanceTimersByTime(999);
    expect(r.ws.closes).toEqual([]);
    jest.advanceTimersByTime(1);
    jest.advanceTimersByTime(1);
    const errors = r.ws.sent.map((s) => JSON.parse(s.text) as { event: string; id?: number });
    expect(errors.map((e) => [e.event, e.id])).toEqual([
      ['error', undefined],
      ['error', 1],
    ]);
    expect(r.ws.closes).toEqual([{ to: 'a', code: 4401 }]);
    expect(r.dispatched).toEqual([]);
    // closing, late: a request on its way gets the refusal with its id; nothing else.
    r.send(c, env('three', {}, 3));
    r.send(c, env('four'));
    expect(r.ws.sent.map((s) => (JSON.parse(s.text) as { id?: number }).id)).toEqual([
      undefined,
      1,
      3,
    ]);
    r.p.disconnected(c, 4401);
    expect(r.ended).toEqual([]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('a refusal answers held requests, closes 4403 one turn later, and opens nothing', () => {
    const r = rig({ auth: () => ({ status: 403, message: 'go away' }) });
    const c = r.connect('a');
    r.send(c, env('$hello', { v: 1, auth: 'x' }));
    expect(r.ws.closes).toEqual([]);
    r.send(c, env('early', {}, 8));
    jest.advanceTimersByTime(1);
    expect(r.ws.closes).toEqual([{ to: 'a', code: 4403 }]);
    expect(r.started).toEqual([]);
    r.send(c, env('late', {}, 9));
    expect(r.dispatched).toEqual([]);
    expect(r.ws.sent.map((x) => (JSON.parse(x.text) as { id?: number }).id)).toEqual([
      undefined,
      8,
      9,
    ]);
    expect(r.ws.sent[0]?.text).toContain('forbidden');
  });

  it('version 0 refused without credentials waits for a $hello with some, then opens', () => {
    const r = rig({ auth: (ctx) => ctx.auth === 'good' });
    const c = r.connect('a', false);
    expect(r.started).toEqual([]);
    expect(r.p.connectionStates()).toContainEqual([S.AWAITING_HELLO, '1', 1]);
    r.send(c, env('$hello', { v: 1, auth: 'good' }));
    expect(r.started).toEqual(['a']);
    expect(r.ws.events('a')).toEqual(['$welcome']);
  });

  it('refused without credentials: a message other than $hello is refused, not dispatched', () => {
    const r = rig({ auth: (ctx) => ctx.auth === 'good' });
    const c = r.connect('a', false);
    r.send(c, env('chat', {}, 4));
    expect(r.dispatched).toEqual([]);
    expect(r.ws.sent.map((s) => (JSON.parse(s.text) as { id?: number }).id)).toEqual([
      undefined,
      4,
    ]);
    jest.advanceTimersByTime(1);
    expect(r.ws.closes).toEqual([{ to: 'a', code: 4401 }]);
  });

  it('refused without credentials, never: auth_timeout closes 4401', () => {
    const r = rig({ auth: (ctx) => ctx.auth === 'good' });
    r.connect('a', false);
    jest.advanceTimersByTime(999);
    expect(r.ws.closes).toEqual([]);
    jest.advanceTimersByTime(2);
    expect(r.ws.closes).toEqual([{ to: 'a', code: 4401 }]);
  });

  it('open: requests past max_pending_requests are answered too_many_pending', () => {
    const r = rig({ helloWait: 0 });
    const c = r.connect('a');
    for (const id of [1, 2, 3]) r.send(c, env('e', {}, id));
    expect(r.dispatched).toHaveLength(2);
    expect(r.ws.refusals).toEqual([{ to: 'a', code: 'too_many_pending', id: 3 }]);
    r.p.outbound.answerTo(r.conn('a'), 'e', 1, null);
    r.send(c, env('e', {}, 4));
    expect(r.dispatched).toHaveLength(3);
  });

  it('open: an answer after handler_timeout is dropped, so each request gets one answer', () => {
    const r = rig({ helloWait: 0 });
    const c = r.connect('a');
    r.send(c, env('e', {}, 1));
    r.p.outbound.expire(r.conn('a'), 1, 'late');
    expect(r.p.outbound.answerTo(r.conn('a'), 'e', 1, { x: 1 })).toBe(0);
    expect(r.ws.refusals).toEqual([{ to: 'a', code: 'handler_timeout', id: 1 }]);
    expect(r.p.outbound.answerTo(r.conn('a'), 'e', 2, null)).toBeGreaterThan(0);
  });

  it('open, dropped: the session waits away; a resume takes it back under the old id', () => {
    const r = rig();
    const a = r.connect('a');
    r.send(a, env('$hello', { v: 1 }));
    const token = r.ws.welcome('a')?.['session'] as string;
    r.p.outbound.send('a', 'news', { n: 1 });
    r.p.disconnected(a, 1006);
    expect(r.p.clientInfo('a')).toEqual({ v1: true, identity: undefined, away: true });
    expect(r.ended).toEqual([]);
    r.p.outbound.send('a', 'news', { n: 2 });
    const b = r.connect('b');
    r.send(b, env('$hello', { v: 1, resume: { session: token, seq: 1 } }));
    expect(r.ws.welcome('a')).toMatchObject({ clientId: 'a', resumed: true });
    expect(r.ws.events('a')).toEqual(['$welcome', 'news', '$welcome', 'news']);
    expect(r.p.clientInfo('b')).toBeUndefined();
    expect([...r.p.openClientIds()]).toEqual(['a']);
    expect(r.started).toEqual(['a']);
    r.send(r.ws.clients.get('a')!, env('chat'));
    expect(r.dispatched).toEqual([{ id: 'a', event: 'chat' }]);
  });

  it("a resume keeps the client's data under its id, whether the session was away or taken over", () => {
    const r = rig();
    const a = r.connect('a');
    r.send(a, env('$hello', { v: 1 }));
    const token = r.ws.welcome('a')?.['session'] as string;
    r.clients.setData('a', 'user', 'ada');
    r.p.disconnected(a, 1006);
    expect(r.clients.getType('a')).toBe('ws');
    expect(r.clients.getData('a', 'user')).toBe('ada');
    const b = r.connect('b');
    r.clients.setData('b', 'fresh', true);
    r.send(b, env('$hello', { v: 1, resume: { session: token, seq: 0 } }));
    expect(r.clients.getData('a')).toEqual({ user: 'ada' });
    expect(r.clients.getType('b')).toBeUndefined();
    const token2 = r.ws.welcome('a')?.['session'] as string;
    const c = r.connect('c');
    r.send(c, env('$hello', { v: 1, resume: { session: token2, seq: 0 } }));
    expect(r.ws.closes).toEqual([{ to: 'a~1', code: 4409 }]);
    expect(r.clients.getData('a')).toEqual({ user: 'ada' });
    r.p.disconnected(r.ws.clients.get('a~1')!, 4409);
    expect(r.clients.getData('a', 'user')).toBe('ada');
    expect(r.ended).toEqual([]);
  });

  it('a resume of a connected session takes it over: the old one closes 4409 and ends nothing', () => {
    const r = rig();
    const a = r.connect('a');
    r.send(a, env('$hello', { v: 1 }));
    const token = r.ws.welcome('a')?.['session'] as string;
    const b = r.connect('b');
    r.send(b, env('$hello', { v: 1, resume: { session: token, seq: 0 } }));
    expect(r.ws.closes).toEqual([{ to: 'a~1', code: 4409 }]);
    r.p.disconnected(r.ws.clients.get('a~1')!, 4409);
    expect(r.ended).toEqual([]);
    expect([...r.p.openClientIds()]).toEqual(['a']);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('end: a closed client leaves no connection, timer or data; OnDisconnect runs once', () => {
    const r = rig({ recoveryWindow: 0 });
    const a = r.connect('a');
    r.send(a, env('$hello', { v: 1 }));
    r.p.disconnected(a, 1000);
    r.p.disconnected(a, 1000);
    expect(r.ended).toEqual(['a']);
    expect(r.p.clientInfo('a')).toBeUndefined();
    expect([...r.p.localClientIds()]).toEqual([]);
    expect(r.p.load()).toEqual({ openClients: 0, sessions: 0, awaySessions: 0, sessionBytes: 0 });
    expect(r.clients.types.has('a')).toBe(false);
    expect(jest.getTimerCount()).toBe(0);
    // A message that still arrives for the ended client reaches no handler.
    r.send(a, env('chat'));
    expect(r.dispatched).toEqual([]);
  });

  it('a connection closed before it opened runs no OnDisconnect and forgets its data', () => {
    const r = rig();
    const a = r.connect('a');
    r.p.disconnected(a, 1000);
    expect(r.ended).toEqual([]);
    expect(r.clients.types.has('a')).toBe(false);
    expect(jest.getTimerCount()).toBe(0);
    expect(stateOf(r, 'a')).toBeUndefined();
  });

  it('disconnectClient of an open client: its session ends with the connection', () => {
    const r = rig();
    const a = r.connect('a');
    r.send(a, env('$hello', { v: 1 }));
    expect(r.p.endSession('a')).toBe(false);
    r.p.disconnected(a, 1006);
    expect(r.ended).toEqual(['a']);
    expect(r.p.load().sessions).toBe(0);
  });

  it('server close ends away sessions', async () => {
    const r = rig();
    const a = r.connect('a');
    r.send(a, env('$hello', { v: 1 }));
    r.p.disconnected(a, 1006);
    expect(r.p.endSession('a')).toBe(true);
    expect(r.ended).toEqual(['a']);
    expect(r.p.endSession('a')).toBe(false);
    const b = r.connect('b');
    r.send(b, env('$hello', { v: 1 }));
    r.p.disconnected(b, 1006);
    await r.p.close();
    expect(r.ended).toEqual(['a', 'b']);
    expect(r.p.load().sessions).toBe(0);
  });
});

// ------------------------------------------------------------------ model-based, in process

/** One client as the model sees it: its phase is a state of the state table. */
interface ModelClient {
  state: ConnectionStateName;
  hello: boolean;
  /** When awaiting_hello ends (model clock). */
  deadline: number;
}

interface Model {
  clients: Map<string, ModelClient>;
  away: number;
  now: number;
  started: string[];
  next: number;
}

/** Moves a model client, checking the move against the state table itself. */
function moveTo(c: ModelClient, to: ConnectionStateName): void {
  expect(canMove(c.state, to)).toBe(true);
  c.state = to;
}

function check(m: Model, r: Rig): void {
  const expected = new Map<string, number>();
  for (const c of m.clients.values()) {
    if (c.state === S.CLOSED || c.state === S.AWAY) continue;
    const key = `${c.state}:${c.hello || c.state === S.AWAITING_HELLO ? '1' : '0'}`;
    expected.set(key, (expected.get(key) ?? 0) + 1);
  }
  const seen = new Map<string, number>();
  for (const [state, v, n] of r.p.connectionStates()) {
    if (state === S.AWAY) expect(n).toBe(m.away);
    else seen.set(`${state}:${v}`, n);
  }
  expect(seen).toEqual(expected);
  expect(r.started).toEqual(m.started);
  const open = [...m.clients].filter(([, c]) => c.state === S.OPEN).map(([id]) => id);
  expect([...r.p.openClientIds()].sort()).toEqual(open.sort());
}

type Cmd = fc.Command<Model, Rig>;

const live = (m: Model, i: number): [string, ModelClient] | undefined => {
  const entries = [...m.clients].filter(([, c]) => c.state !== S.CLOSED && c.state !== S.AWAY);
  return entries.length === 0 ? undefined : entries[i % entries.length];
};

class Connect implements Cmd {
  constructor(readonly v1: boolean) {}
  check = (m: Readonly<Model>): boolean => m.clients.size < 6;
  run(m: Model, r: Rig): void {
    const id = `c${m.next}`;
    m.next += 1;
    r.connect(id, this.v1);
    const c: ModelClient = { state: S.HANDSHAKEN, hello: false, deadline: m.now + 500 };
    m.clients.set(id, c);
    if (this.v1) moveTo(c, S.AWAITING_HELLO);
    else {
      moveTo(c, S.OPEN);
      m.started.push(id);
    }
    check(m, r);
  }
  toString = (): string => `connect(${this.v1 ? 'v1' : 'v0'})`;
}

class Send implements Cmd {
  constructor(
    readonly i: number,
    readonly what: 'hello' | 'event' | 'ping' | 'bad-hello',
  ) {}
  check = (): boolean => true;
  run(m: Model, r: Rig): void {
    const found = live(m, this.i);
    if (found === undefined) return;
    const [id, c] = found;
    const before = r.dispatched.length;
    const event =
      this.what === 'hello'
        ? env('$hello', { v: 1 })
        : this.what === 'bad-hello'
          ? env('$hello', 'bad')
          : this.what === 'ping'
            ? env('$ping')
            : env('chat');
    r.send(r.ws.clients.get(id)!, event);
    let dispatched = false;
    if (c.state === S.AWAITING_HELLO) {
      if (this.what === 'hello') {
        c.hello = true;
        moveTo(c, S.OPEN);
        m.started.push(id);
      } else if (this.what === 'bad-hello') {
        moveTo(c, S.CLOSING);
      } else if (this.what === 'event') {
        moveTo(c, S.OPEN);
        m.started.push(id);
        dispatched = true;
      }
    } else if (c.state === S.OPEN) {
      if (this.what === 'event') dispatched = true;
      else if (this.what === 'hello' && !c.hello) c.hello = true;
      else if (this.what === 'bad-hello' && !c.hello) moveTo(c, S.CLOSING);
    }
    expect(r.dispatched.length - before).toBe(dispatched ? 1 : 0);
    check(m, r);
  }
  toString = (): string => `send(${this.i}, ${this.what})`;
}

class Wait implements Cmd {
  constructor(readonly ms: number) {}
  check = (): boolean => true;
  run(m: Model, r: Rig): void {
    jest.advanceTimersByTime(this.ms);
    m.now += this.ms;
    for (const [id, c] of m.clients) {
      if (c.state === S.AWAITING_HELLO && c.deadline <= m.now) {
        moveTo(c, S.OPEN);
        m.started.push(id);
      }
    }
    check(m, r);
  }
  toString = (): string => `wait(${this.ms})`;
}

class Drop implements Cmd {
  constructor(
    readonly i: number,
    readonly code: number,
  ) {}
  check = (): boolean => true;
  run(m: Model, r: Rig): void {
    const found = live(m, this.i);
    if (found === undefined) return;
    const [id, c] = found;
    const ended = r.ended.length;
    r.p.disconnected(r.ws.clients.get(id)!, this.code);
    const keep = c.state === S.OPEN && c.hello && this.code === 1006;
    const opened = m.started.includes(id);
    if (keep) {
      moveTo(c, S.AWAY);
      m.away += 1;
    } else moveTo(c, S.CLOSED);
    expect(r.ended.length - ended).toBe(!keep && opened ? 1 : 0);
    check(m, r);
  }
  toString = (): string => `drop(${this.i}, ${this.code})`;
}

describe('the connection, model-based in process (phases = the state table)', () => {
  it('random connects, messages early / twice / never, waits and drops agree with the model', () => {
    const commands = [
      fc.boolean().map((v1) => new Connect(v1)),
      fc
        .tuple(
          fc.nat(5),
          fc.constantFrom('hello', 'event', 'ping', 'bad-hello') as fc.Arbitrary<Send['what']>,
        )
        .map(([i, what]) => new Send(i, what)),
      fc.constantFrom(100, 499, 500, 1000).map((ms) => new Wait(ms)),
      fc.tuple(fc.nat(5), fc.constantFrom(1000, 1006, 4409)).map(([i, code]) => new Drop(i, code)),
    ];
    fc.assert(
      fc.property(fc.commands(commands, { maxCommands: 40 }), (cmds) => {
        jest.clearAllTimers();
        const r = rig();
        const m: Model = { clients: new Map(), away: 0, now: 0, started: [], next: 0 };
        fc.modelRun(() => ({ model: m, real: r }), cmds);
        // Every connection ends: nothing stays armed, nothing stays open.
        for (const [id, c] of m.clients) {
          if (c.state !== S.CLOSED && c.state !== S.AWAY)
            r.p.disconnected(r.ws.clients.get(id)!, 1000);
        }
        // Away sessions end after the recovery window: OnDisconnect once per OnConnect.
        jest.advanceTimersByTime(60_001);
        expect(jest.getTimerCount()).toBe(0);
        expect([...r.p.openClientIds()]).toEqual([]);
        expect(r.p.load()).toEqual({
          openClients: 0,
          sessions: 0,
          awaySessions: 0,
          sessionBytes: 0,
        });
        expect([...r.ended].sort()).toEqual([...m.started].sort());
      }),
      { numRuns: 60 },
    );
  });
});

describe('$hello and $welcome over a fake transport', () => {
  it('a fresh welcome: version, client id, no heartbeat, the session and its window', () => {
    const r = rig();
    r.send(r.connect('a'), env('$hello', { v: 1 }));
    const w = r.ws.welcome('a')!;
    expect(w).toEqual({
      v: 1,
      clientId: 'a',
      heartbeat: null,
      session: expect.any(String),
      recovery: { window: 60_000 },
      resumed: false,
    });
  });

  it('without recovery: no session in the welcome; a resume is refused unknown', () => {
    const r = rig({ recoveryWindow: 0 });
    r.send(r.connect('a'), env('$hello', { v: 1, resume: { session: 's', seq: 0 } }));
    expect(r.ws.welcome('a')).toEqual({
      v: 1,
      clientId: 'a',
      heartbeat: null,
      resumed: false,
      reason: 'unknown',
    });
    expect(r.started).toEqual(['a']);
  });

  it('auth sent but no auth handler: the welcome says auth unused', () => {
    const r = rig();
    r.send(r.connect('a'), env('$hello', { v: 1, auth: 'secret' }));
    expect(r.ws.welcome('a')).toMatchObject({ auth: 'unused', resumed: false });
  });

  it('credentials over the limit are refused 401 before any handler runs', () => {
    const handler = jest.fn(() => true);
    const r = rig({ auth: handler });
    r.send(r.connect('a'), env('$hello', { v: 1, auth: 'x'.repeat(MAX_AUTH_LENGTH + 1) }));
    jest.advanceTimersByTime(1);
    expect(handler).not.toHaveBeenCalled();
    expect(r.ws.closes).toEqual([{ to: 'a', code: 4401 }]);
    expect(r.ws.sent[0]?.text).toContain(`longer than ${MAX_AUTH_LENGTH}`);
  });

  it('credentials at the limit reach the handlers, which see the session a resume names', () => {
    const seen: unknown[] = [];
    const r = rig({
      auth: (ctx) => {
        seen.push((ctx as { resume?: unknown }).resume);
        return { identity: 'ann' };
      },
    });
    r.send(r.connect('a'), env('$hello', { v: 1, auth: 'x'.repeat(MAX_AUTH_LENGTH) }));
    const token = r.ws.welcome('a')?.['session'] as string;
    expect(r.p.clientInfo('a')).toEqual({ v1: true, identity: 'ann', away: false });
    r.p.disconnected(r.ws.clients.get('a')!, 1006);
    r.send(r.connect('b'), env('$hello', { v: 1, auth: 'y', resume: { session: token, seq: 0 } }));
    expect(seen).toEqual([undefined, { clientId: 'a', identity: 'ann' }]);
    expect(r.ws.welcome('a')).toMatchObject({ clientId: 'a', resumed: true });
    expect(r.ws.welcome('b')).toBeUndefined();
  });

  it('a resume under another identity is refused identity and opens a fresh client', () => {
    let who = 'ann';
    const r = rig({ auth: () => ({ identity: who }) });
    r.send(r.connect('a'), env('$hello', { v: 1, auth: 'x' }));
    const token = r.ws.welcome('a')?.['session'] as string;
    r.p.disconnected(r.ws.clients.get('a')!, 1006);
    who = 'bob';
    r.send(r.connect('b'), env('$hello', { v: 1, auth: 'x', resume: { session: token, seq: 0 } }));
    expect(r.ws.welcome('b')).toMatchObject({ clientId: 'b', resumed: false, reason: 'identity' });
    expect(r.started).toEqual(['a', 'b']);
    expect(r.p.clientInfo('a')).toEqual({ v1: true, identity: 'ann', away: true });
  });

  it('a resume past the session buffer is refused overflow and ends the old client', () => {
    const r = rig();
    r.send(r.connect('a'), env('$hello', { v: 1 }));
    const token = r.ws.welcome('a')?.['session'] as string;
    r.p.disconnected(r.ws.clients.get('a')!, 1006);
    // More than the session's buffer (16) while away: what came after seq 0 is lost.
    for (let n = 0; n < 20; n += 1) r.p.outbound.send('a', 'news', { n });
    r.send(r.connect('b'), env('$hello', { v: 1, resume: { session: token, seq: 0 } }));
    expect(r.ended).toEqual(['a']);
    expect(r.ws.welcome('b')).toMatchObject({ clientId: 'b', resumed: false, reason: 'overflow' });
    expect(r.started).toEqual(['a', 'b']);
  });

  it('a resume whose socket cannot be renamed is refused ended', () => {
    const r = rig();
    r.send(r.connect('a'), env('$hello', { v: 1 }));
    const token = r.ws.welcome('a')?.['session'] as string;
    r.p.disconnected(r.ws.clients.get('a')!, 1006);
    const b = r.connect('b');
    r.ws.clients.delete('b');
    r.p.onMessage(b, env('$hello', { v: 1, resume: { session: token, seq: 0 } }));
    expect(r.ended).toEqual(['a']);
    expect(r.ws.welcome('b')).toMatchObject({ resumed: false, reason: 'ended' });
    expect(r.p.clientInfo('a')).toBeUndefined();
  });

  it('the fresh client of a granted resume is forgotten; the resumed one keeps its data', () => {
    const r = rig();
    r.send(r.connect('a'), env('$hello', { v: 1 }));
    const token = r.ws.welcome('a')?.['session'] as string;
    r.p.disconnected(r.ws.clients.get('a')!, 1006);
    r.send(r.connect('b'), env('$hello', { v: 1, resume: { session: token, seq: 0 } }));
    expect(r.clients.types.has('b')).toBe(false);
    expect(r.p.clientInfo('b')).toBeUndefined();
    expect(r.p.clientInfo('a')).toEqual({ v1: true, identity: undefined, away: false });
    expect(r.started).toEqual(['a']);
  });

  it('a late $hello (served as version 0): a fresh session, a resume refused unknown, auth unused', () => {
    const r = rig({ helloWait: 0 });
    const c = r.connect('a');
    r.send(c, env('$hello', { v: 1, auth: 'k', resume: { session: 'x', seq: 0 } }));
    expect(r.ws.welcome('a')).toMatchObject({
      clientId: 'a',
      resumed: false,
      reason: 'unknown',
      auth: 'unused',
      session: expect.any(String),
    });
    r.send(c, env('$hello', { v: 1 }));
    expect(r.ws.refusals.map((x) => x.code)).toEqual(['invalid_envelope']);
    r.p.disconnected(c, 1006);
    expect(r.p.clientInfo('a')).toEqual({ v1: true, identity: undefined, away: true });
  });

  it('a late $hello without resume or auth says neither', () => {
    const r = rig({ helloWait: 0 });
    r.send(r.connect('a'), env('$hello', { v: 1 }));
    const w = r.ws.welcome('a')!;
    expect('reason' in w).toBe(false);
    expect('auth' in w).toBe(false);
  });

  it('$hello.positions are kept on the connection until used', () => {
    const r = rig();
    const positions = [{ room: 'r', namespace: '/', offset: 1, epoch: 'e' }];
    r.send(r.connect('a'), env('$hello', { v: 1, positions }));
    expect(r.ws.welcome('a')).toMatchObject({ resumed: false });
  });
});

// ------------------------------------------------------------------ credentials, model-based

/** A client of the credentials model: open, closing (server closed it), away or closed. */
interface CredClient {
  state: 'open' | 'closing' | 'away' | 'closed';
  identity: string;
  /** Model clock. */
  expiresAt: number;
  /** The close code the server sent, if it closed it. */
  closed?: number;
  token: string;
}

interface CredModel {
  clients: Map<string, CredClient>;
  now: number;
  next: number;
  rid: number;
}

type CredCmd = fc.Command<CredModel, Rig>;

const GRACE = 500;

/** Tokens `<identity>:<ttl ms>`; `bad` is refused. */
const credentials = (ctx: { auth: string | undefined }): AuthResult => {
  if (ctx.auth === undefined || ctx.auth === 'bad') return false;
  const [identity, ttl] = ctx.auth.split(':');
  return { identity: identity!, ttl: Number(ttl) };
};

function credCheck(m: CredModel, r: Rig): void {
  const open = [...m.clients].filter(([, c]) => c.state === 'open').map(([id]) => id);
  expect([...r.p.openClientIds()].sort()).toEqual(open.sort());
  for (const [id, c] of m.clients) {
    const codes = r.ws.closes.filter((x) => x.to === id).map((x) => x.code);
    expect({ id, codes }).toEqual({ id, codes: c.closed === undefined ? [] : [c.closed] });
  }
}

const pick = (
  m: CredModel,
  i: number,
  state: CredClient['state'],
): [string, CredClient] | undefined => {
  const found = [...m.clients].filter(([, c]) => c.state === state);
  return found.length === 0 ? undefined : found[i % found.length];
};

class CredConnect implements CredCmd {
  constructor(
    readonly identity: string,
    readonly ttl: number,
  ) {}
  check = (m: Readonly<CredModel>): boolean => m.clients.size < 6;
  run(m: CredModel, r: Rig): void {
    const id = `k${m.next}`;
    m.next += 1;
    r.send(r.connect(id), env('$hello', { v: 1, auth: `${this.identity}:${this.ttl}` }));
    expect(r.ws.welcome(id)).toMatchObject({ expiresAt: T0 + m.now + this.ttl });
    const token = r.ws.welcome(id)!['session'] as string;
    m.clients.set(id, {
      state: 'open',
      identity: this.identity,
      expiresAt: m.now + this.ttl,
      token,
    });
    credCheck(m, r);
  }
  toString = (): string => `connect(${this.identity}:${this.ttl})`;
}

class CredRefresh implements CredCmd {
  constructor(
    readonly i: number,
    readonly kind: 'same' | 'other' | 'bad',
    readonly ttl: number,
  ) {}
  check = (): boolean => true;
  run(m: CredModel, r: Rig): void {
    const found = pick(m, this.i, 'open');
    if (found === undefined) return;
    const [id, c] = found;
    m.rid += 1;
    const rid = m.rid;
    const auth = this.kind === 'bad' ? 'bad' : `${this.kind === 'same' ? c.identity : `not-${c.identity}`}:${this.ttl}`; // prettier-ignore
    r.send(r.ws.clients.get(id)!, env('$refresh', { auth }, rid));
    const answers = r.ws.sent
      .filter((s) => s.to === id)
      .map(
        (s) => JSON.parse(s.text) as { event: string; id?: number; data: Record<string, unknown> },
      )
      .filter((e) => e.id === rid);
    expect(answers).toHaveLength(1);
    if (this.kind === 'same') {
      expect(answers[0]).toMatchObject({
        event: '$refresh',
        data: { expiresAt: T0 + m.now + this.ttl },
      });
      c.expiresAt = m.now + this.ttl;
    } else {
      expect(answers[0]!.event).toBe('error');
      expect(answers[0]!.data['code']).toBe(this.kind === 'bad' ? 'unauthorized' : 'forbidden');
    }
    credCheck(m, r);
  }
  toString = (): string => `refresh(${this.i}, ${this.kind}, ${this.ttl})`;
}

class CredWait implements CredCmd {
  constructor(readonly ms: number) {}
  check = (): boolean => true;
  run(m: CredModel, r: Rig): void {
    jest.advanceTimersByTime(this.ms);
    m.now += this.ms;
    for (const c of m.clients.values()) {
      if (c.state === 'open' && c.expiresAt + GRACE <= m.now) {
        c.state = 'closing';
        c.closed = 4419;
      }
    }
    credCheck(m, r);
  }
  toString = (): string => `wait(${this.ms})`;
}

class CredRevoke implements CredCmd {
  constructor(readonly identity: string) {}
  check = (): boolean => true;
  run(m: CredModel, r: Rig): void {
    let expected = 0;
    for (const c of m.clients.values()) {
      if (c.identity !== this.identity) continue;
      if (c.state === 'open') {
        c.state = 'closing';
        c.closed = 4403;
        expected += 1;
      } else if (c.state === 'away') {
        c.state = 'closed';
        expected += 1;
      }
    }
    expect(r.p.revokeLocal(this.identity, null, null)).toBe(expected);
    credCheck(m, r);
  }
  toString = (): string => `revoke(${this.identity})`;
}

class CredDrop implements CredCmd {
  constructor(readonly i: number) {}
  check = (): boolean => true;
  run(m: CredModel, r: Rig): void {
    const found = [...m.clients].filter(([, c]) => c.state === 'open' || c.state === 'closing');
    if (found.length === 0) return;
    const [id, c] = found[this.i % found.length]!;
    r.p.disconnected(r.ws.clients.get(id)!, 1006);
    // A dropped open connection waits away; one the server closed is gone for good.
    c.state = c.state === 'open' ? 'away' : 'closed';
    credCheck(m, r);
  }
  toString = (): string => `drop(${this.i})`;
}

/** A resume of an away session, with a `$refresh` sent right behind its `$hello`. */
class CredResume implements CredCmd {
  constructor(
    readonly i: number,
    readonly ttl: number,
  ) {}
  check = (): boolean => true;
  run(m: CredModel, r: Rig): void {
    const found = pick(m, this.i, 'away');
    if (found === undefined) return;
    const [id, c] = found;
    const fresh = `k${m.next}`;
    m.next += 1;
    const client = r.connect(fresh);
    m.rid += 1;
    r.send(client, env('$hello', { v: 1, auth: `${c.identity}:${this.ttl}`, resume: { session: c.token, seq: 0 } })); // prettier-ignore
    const resumed = r.ws.welcome(id);
    expect(resumed).toMatchObject({ resumed: true, expiresAt: T0 + m.now + this.ttl });
    c.token = resumed!['session'] as string;
    c.state = 'open';
    c.expiresAt = m.now + this.ttl;
    // The refresh right behind the resume reaches the resumed connection.
    r.send(
      r.ws.clients.get(id)!,
      env('$refresh', { auth: `${c.identity}:${this.ttl * 2}` }, m.rid),
    );
    c.expiresAt = m.now + this.ttl * 2;
    const answer = r.ws.sent
      .filter((s) => s.to === id)
      .map(
        (s) => JSON.parse(s.text) as { event: string; id?: number; data: Record<string, unknown> },
      )
      .find((e) => e.id === m.rid);
    expect(answer).toMatchObject({ event: '$refresh', data: { expiresAt: T0 + c.expiresAt } });
    credCheck(m, r);
  }
  toString = (): string => `resume(${this.i}, ${this.ttl})`;
}

describe('credentials, model-based in process: refresh, expiry, revocation, resumes', () => {
  it('random connects, refreshes (same identity, another, refused, after expiry), waits, revocations, drops and resumes agree with the model', () => {
    const identity = fc.constantFrom('ann', 'bob');
    const ttl = fc.constantFrom(300, 800, 2000);
    const commands = [
      fc.tuple(identity, ttl).map(([who, t]) => new CredConnect(who, t)),
      fc
        .tuple(
          fc.nat(5),
          fc.constantFrom('same', 'other', 'bad') as fc.Arbitrary<CredRefresh['kind']>,
          ttl,
        )
        .map(([i, kind, t]) => new CredRefresh(i, kind, t)),
      fc.constantFrom(100, 299, 400, 700).map((ms) => new CredWait(ms)),
      identity.map((who) => new CredRevoke(who)),
      fc.nat(5).map((i) => new CredDrop(i)),
      fc.tuple(fc.nat(5), ttl).map(([i, t]) => new CredResume(i, t)),
    ];
    fc.assert(
      fc.property(fc.commands(commands, { maxCommands: 40 }), (cmds) => {
        jest.clearAllTimers();
        const r = rig({ auth: credentials });
        const m: CredModel = { clients: new Map(), now: 0, next: 0, rid: 0 };
        fc.modelRun(() => ({ model: m, real: r }), cmds);
        for (const [id, c] of m.clients) {
          if (c.state === 'open' || c.state === 'closing')
            r.p.disconnected(r.ws.clients.get(id)!, 1000);
        }
        jest.advanceTimersByTime(60_001);
        expect(jest.getTimerCount()).toBe(0);
        expect([...r.p.openClientIds()]).toEqual([]);
      }),
      { numRuns: 60 },
    );
  });
});

describe('$refresh early, on a connection that is not open', () => {
  it('before $hello: the connection is served without credentials, refused, and the request answered once', () => {
    const r = rig({ auth: credentials });
    const a = r.connect('a');
    r.send(a, env('$refresh', { auth: 'ann:1000' }, 1));
    expect(r.ws.refusals).toEqual([
      { to: 'a', code: 'unauthorized', id: undefined },
      { to: 'a', code: 'unauthorized', id: 1 },
    ]);
    expect(r.ws.sent.some((s) => s.text.includes('"$refresh"'))).toBe(false);
    jest.advanceTimersByTime(1);
    expect(r.ws.closes).toEqual([{ to: 'a', code: 4401 }]);
    expect(r.started).toEqual([]);
  });

  it('without auth handlers: answered with no expiry, the connection stays open', () => {
    const r = rig({ helloWait: 0 });
    const a = r.connect('a');
    r.send(a, env('$refresh', { auth: 'x' }, 1));
    const answer = r.ws.sent.find((s) => s.text.includes('"$refresh"'));
    expect(JSON.parse(answer!.text)).toEqual({
      event: '$refresh',
      id: 1,
      data: { expiresAt: null },
    });
    expect([...r.p.openClientIds()]).toEqual(['a']);
  });
});
