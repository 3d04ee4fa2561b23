/**
 * Protocol version 1 on the server (docs/protocol.md): `$hello` / `$welcome`, the message
 * heartbeat (`$ping` / `$pong`, close 4408), authentication of `$hello.auth` by auth
 * handlers, answers to client requests (`id`, at most `max_pending_requests` pending per
 * connection), requests to the client (`emitWithAck`, `rid`, `$ack` / `$nack`), and
 * connection state recovery (sessions, `seq`, replay). It sits between the WebSocket
 * handler and the dispatcher: every decoded message passes here first; a message without
 * `id` from a client that never says `$hello` is dispatched exactly as in version 0.
 * Only a connection that negotiated the subprotocol `pkg.v1` in its handshake waits for
 * `$hello` before `OnConnect`; every other connection starts at once, as in version 0.
 */
import type { LoggerInterface } from '@pkg/logger';
import {
  PROTOCOL_V1_SUBPROTOCOL,
  prepareAnswer,
  prepareMessage,
  type Envelope,
  type EventData,
  type RequestId,
  type WebSocketHandler,
  type WsClient,
} from '@pkg/ws-protocol';
import { ServerRequests, type EmitWithAckOptions } from './acks';
import type { ClientRegistry } from '../ws/client-registry';
import { CoreEventErrorCode, createCoreError } from '../errors';
import { isThenable } from '../routing/middleware';
import { SessionStore, withSeq, type ResumeRefusal, type Session } from './session';

/** What an auth handler sees. */
export interface AuthContext {
  readonly clientId: string;
  /** `$hello.auth`; undefined when the client sent none (or is a version 0 client). */
  readonly auth: string | undefined;
  /** What handshake middleware put in `ctx.data` (becomes the client's data). */
  readonly data: Readonly<Record<string, unknown>>;
  readonly ip: string;
}

/** A refusal: 401 (`unauthorized`, close 4401) or 403 (`forbidden`, close 4403). */
export interface AuthRefusal {
  status: 401 | 403;
  message: string;
}

/** `true` or nothing accepts, `false` refuses with 401 "Unauthorized", or a refusal. */
export type AuthResult = boolean | undefined | void | AuthRefusal;

/** Checks a client's credentials before its `OnConnect` handlers run. */
export type AuthHandler = (context: AuthContext) => AuthResult | Promise<AuthResult>;

/** Longest `$hello.auth`. */
export const MAX_AUTH_LENGTH = 8192;
/** Longest session token accepted in `$hello.resume`. */
const MAX_SESSION_LENGTH = 128;
/** Heartbeat values are clamped to this range (ms). */
export const HEARTBEAT_MIN = 1000;
export const HEARTBEAT_MAX = 300_000;
const PONG = '{"event":"$pong","data":{}}';

const CLOSE_NORMAL = 1000;
const CLOSE_GOING_AWAY = 1001;
const CLOSE_POLICY = 1008;
const CLOSE_UNAUTHORIZED = 4401;
const CLOSE_FORBIDDEN = 4403;
const CLOSE_TIMEOUT = 4408;
/** Closes after which a session is not kept. */
const FINAL_CLOSES = new Set([
  CLOSE_NORMAL,
  CLOSE_GOING_AWAY,
  CLOSE_POLICY,
  CLOSE_UNAUTHORIZED,
  CLOSE_FORBIDDEN,
]);

interface Heartbeat {
  interval: number;
  timeout: number;
}

interface Hello {
  v: number;
  auth: string | undefined;
  heartbeat: Heartbeat | undefined;
  resume: { session: string; seq: number } | undefined;
}

/** One connection, as this layer keeps it. */
interface Conn {
  client: WsClient;
  /** Said `$hello` (version 1). */
  hello: boolean;
  /** Auth handlers accepted it (true at once when there are none). */
  authed: boolean;
  /** `OnConnect` ran (or the session was resumed): messages are dispatched. */
  started: boolean;
  /** Messages held while an auth handler runs. */
  queue: Envelope[] | undefined;
  /** Client requests whose answer is not sent yet. */
  pending: number;
  /**
   * Requests already answered `handler_timeout` whose handler may still finish: its late
   * result or failure is dropped, so each request gets exactly one answer. At most
   * `max_pending_requests` are remembered (the oldest is forgotten first).
   */
  expired: Set<RequestId> | undefined;
  /** Silence (ms) after which a heartbeat client is closed; 0: no heartbeat. */
  silence: number;
  lastSeen: number;
  session: Session | undefined;
  timer: NodeJS.Timeout | undefined;
  /** The connection ends its session (disconnectClient). */
  final: boolean;
}

/** What the protocol layer needs, handed over once. */
export interface ProtocolV1Options {
  readonly wsHandler: WebSocketHandler;
  readonly clients: ClientRegistry;
  readonly logger: LoggerInterface;
  readonly recoveryWindow: number;
  readonly recoveryBuffer: number;
  readonly authTimeout: number;
  readonly helloWait: number;
  readonly maxPendingRequests: number;
  readonly maxPendingServerRequests: number;
  readonly ackTimeout: number;
  /** Makes the client a member of its namespace and runs its `OnConnect` handlers. */
  readonly start: (clientId: string) => void;
  /** Hands a message to the dispatcher. */
  readonly dispatch: (client: WsClient, envelope: Envelope) => void;
  /** The client is gone for good: out of rooms, `OnDisconnect`, then `done`. */
  readonly end: (clientId: string, done: () => void) => void;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const clamp = (ms: number): number => Math.min(HEARTBEAT_MAX, Math.max(HEARTBEAT_MIN, ms));

/** Reads `$hello.data`; a string says what is malformed. */
function readHello(data: unknown): Hello | string {
  if (!isRecord(data)) return 'the data of $hello must be an object such as {"v": 1}';
  const { v, auth, heartbeat, resume } = data;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) {
    return '"v" must be a positive integer (the highest protocol version the client speaks)';
  }
  if (auth !== undefined && typeof auth !== 'string') return '"auth" must be a string';
  let hb: Heartbeat | undefined;
  if (heartbeat !== undefined && heartbeat !== null) {
    const ok = (x: unknown): boolean => x === undefined || (typeof x === 'number' && x > 0);
    if (!isRecord(heartbeat) || !ok(heartbeat['interval']) || !ok(heartbeat['timeout'])) {
      return '"heartbeat" must be {"interval": ms, "timeout": ms}';
    }
    hb = {
      interval: clamp(Math.round((heartbeat['interval'] as number | undefined) ?? 25_000)),
      timeout: clamp(Math.round((heartbeat['timeout'] as number | undefined) ?? 20_000)),
    };
  }
  let r: Hello['resume'];
  if (resume !== undefined && resume !== null) {
    if (
      !isRecord(resume) ||
      typeof resume['session'] !== 'string' ||
      resume['session'].length === 0 ||
      resume['session'].length > MAX_SESSION_LENGTH ||
      typeof resume['seq'] !== 'number' ||
      !Number.isSafeInteger(resume['seq']) ||
      resume['seq'] < 0
    ) {
      return '"resume" must be {"session": "<token from $welcome>", "seq": <last seq processed>}';
    }
    r = { session: resume['session'], seq: resume['seq'] };
  }
  return { v, auth, heartbeat: hb, resume: r };
}

/** A close reason fits 123 bytes of UTF-8. */
function closeReason(message: string): string {
  let reason = message;
  while (Buffer.byteLength(reason) > 123) reason = reason.slice(0, -1);
  return reason;
}

export class ProtocolV1 {
  readonly #o: ProtocolV1Options;
  readonly #ws: WebSocketHandler;
  readonly #conns = new Map<string, Conn>();
  readonly #auth: AuthHandler[] = [];
  readonly #requests: ServerRequests;
  readonly #sessions: SessionStore | undefined;
  /** Connections with a heartbeat, checked by one sweep. */
  readonly #beating = new Set<Conn>();
  #sweep: NodeJS.Timeout | undefined;
  #closing = false;

  constructor(options: ProtocolV1Options) {
    this.#o = options;
    this.#ws = options.wsHandler;
    this.#requests = new ServerRequests({
      maxPerClient: options.maxPendingServerRequests,
      defaultTimeout: options.ackTimeout,
    });
    this.#sessions =
      options.recoveryWindow > 0
        ? new SessionStore({
            window: options.recoveryWindow,
            bufferSize: options.recoveryBuffer,
            onExpired: (session) => this.#endClient(session.clientId),
          })
        : undefined;
  }

  /** Adds an auth handler; with one or more, a client passes them all before `OnConnect`. */
  addAuthHandler(handler: AuthHandler): void {
    if (typeof handler !== 'function') {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_ARGUMENT',
        'addAuthHandler expects a function (context) => true | false | {status, message}.',
      );
    }
    this.#auth.push(handler);
  }

  // ------------------------------------------------------------------ connections

  /**
   * A new connection: one that negotiated `pkg.v1` waits for `$hello` (at most
   * `hello_wait`); any other starts at once, as in version 0.
   */
  readonly connected = (client: WsClient): void => {
    const conn: Conn = {
      client,
      hello: false,
      authed: this.#auth.length === 0,
      started: false,
      queue: undefined,
      pending: 0,
      expired: undefined,
      silence: 0,
      lastSeen: 0,
      session: undefined,
      timer: undefined,
      final: false,
    };
    this.#conns.set(client.id, conn);
    this.#o.clients.markWebSocket(client.id, client.data);
    const wait = this.#o.helloWait;
    if (wait === 0 || client.socket.protocol !== PROTOCOL_V1_SUBPROTOCOL) {
      this.#startV0(conn, 0);
      return;
    }
    conn.timer = setTimeout(() => {
      conn.timer = undefined;
      if (!conn.hello && !conn.started && conn.queue === undefined) this.#startV0(conn, wait);
    }, wait);
  };

  /** The connection closed. Keeps the session of a dropped version 1 client, else ends it. */
  readonly disconnected = (client: WsClient, code: number): void => {
    const conn = this.#conns.get(client.id);
    if (conn === undefined) return;
    this.#conns.delete(client.id);
    this.#beating.delete(conn);
    clearTimeout(conn.timer);
    this.#requests.dropClient(client.id);
    const { session } = conn;
    if (
      session !== undefined &&
      this.#sessions !== undefined &&
      !this.#closing &&
      !conn.final &&
      !FINAL_CLOSES.has(code)
    ) {
      this.#sessions.away(session);
      return;
    }
    if (session !== undefined) this.#sessions?.end(session);
    if (!conn.started && conn.authed && conn.queue === undefined) {
      // Gone while the server waited for $hello: to the application it was connected, so
      // it sees OnConnect then OnDisconnect, as in version 0.
      this.#start(conn);
    }
    if (conn.started) {
      this.#endClient(client.id);
    } else {
      this.#o.clients.markDisconnected(client.id);
      this.#o.clients.forgetData(client.id);
    }
  };

  /** `disconnectClient`: the session ends with the connection, or at once when it is away. */
  endSession(clientId: string): boolean {
    const conn = this.#conns.get(clientId);
    if (conn !== undefined) {
      conn.final = true;
      return false;
    }
    const session = this.#sessions?.ofClient(clientId);
    if (session === undefined || session.connected) return false;
    this.#sessions!.end(session);
    this.#endClient(clientId);
    return true;
  }

  /** Server close: sessions without a connection end (their `OnDisconnect` runs). */
  close(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#sweep);
    this.#sweep = undefined;
    const away = this.#sessions?.endAll() ?? [];
    return Promise.all(
      away.map((s) => new Promise<void>((resolve) => this.#endClient(s.clientId, resolve))),
    ).then(() => undefined);
  }

  #endClient(clientId: string, done?: () => void): void {
    this.#o.clients.markDisconnected(clientId);
    this.#o.end(clientId, () => {
      this.#o.clients.forgetData(clientId);
      done?.();
    });
  }

  /** Starts a connection without `$hello` (yet); `waited`: ms it already waited for one. */
  #startV0(conn: Conn, waited: number): void {
    if (conn.authed) {
      this.#start(conn);
      return;
    }
    // Authenticated in the handshake (the handler accepts without auth)? Else wait for $hello.
    this.#authenticate(conn, undefined, (refusal) => {
      if (refusal === undefined) return this.#start(conn);
      const left = this.#o.authTimeout - waited;
      conn.timer = setTimeout(
        () => {
          conn.timer = undefined;
          if (conn.hello || conn.started) return;
          this.#ws.sendError(
            conn.client.id,
            CoreEventErrorCode.AUTH_TIMEOUT,
            `No $hello with credentials within ${this.#o.authTimeout} ms.`,
          );
          this.#ws.disconnect(conn.client.id, CLOSE_TIMEOUT, 'auth timeout');
        },
        Math.max(0, left),
      );
    });
  }

  #start(conn: Conn): void {
    if (conn.started) return;
    conn.started = true;
    clearTimeout(conn.timer);
    conn.timer = undefined;
    this.#o.start(conn.client.id);
  }

  /**
   * Runs the auth handlers in order; `then` gets undefined (accepted) or the first refusal.
   * Messages that arrive meanwhile are held, then handled in order.
   */
  #authenticate(
    conn: Conn,
    auth: string | undefined,
    then: (refusal: AuthRefusal | undefined) => void,
    first?: Envelope,
  ): void {
    const context: AuthContext = Object.freeze({
      clientId: conn.client.id,
      auth,
      data: conn.client.data,
      ip: conn.client.ip,
    });
    conn.queue = first === undefined ? [] : [first];
    const handlers = [...this.#auth];
    const finish = (refusal: AuthRefusal | undefined): void => {
      if (refusal === undefined) conn.authed = true;
      const held = conn.queue ?? [];
      conn.queue = undefined;
      if (this.#conns.get(conn.client.id) !== conn) return;
      then(refusal);
      for (const envelope of held) this.onMessage(conn.client, envelope);
    };
    const fail = (err: unknown): void => {
      this.#o.logger.exception(err, { code: 'PKG_ERR_CORE_HANDLER_FAILED', phase: 'auth' });
      finish({ status: 401, message: 'Authentication failed' });
    };
    const step = (i: number): void => {
      if (i === handlers.length) return finish(undefined);
      let result: unknown;
      try {
        result = handlers[i]!(context);
      } catch (err) {
        return fail(err);
      }
      const next = (value: unknown): void => {
        const refusal = toRefusal(value);
        if (refusal !== undefined) finish(refusal);
        else step(i + 1);
      };
      if (isThenable(result)) Promise.resolve(result).then(next, fail);
      else next(result);
    };
    step(0);
  }

  #refuse(conn: Conn, refusal: AuthRefusal, id?: RequestId): void {
    const forbidden = refusal.status === 403;
    const data = {
      code: forbidden ? CoreEventErrorCode.FORBIDDEN : CoreEventErrorCode.UNAUTHORIZED,
      message: refusal.message,
      status: refusal.status,
    };
    this.#o.logger.info('WebSocket client refused by an auth handler', {
      code: forbidden ? 'PKG_ERR_CORE_FORBIDDEN' : 'PKG_ERR_CORE_UNAUTHORIZED',
      clientId: conn.client.id,
      status: refusal.status,
    });
    this.#ws.sendRaw(
      conn.client.id,
      JSON.stringify(id === undefined ? { event: 'error', data } : { event: 'error', id, data }),
    );
    this.#ws.disconnect(
      conn.client.id,
      forbidden ? CLOSE_FORBIDDEN : CLOSE_UNAUTHORIZED,
      closeReason(refusal.message),
    );
  }

  // ------------------------------------------------------------------ inbound

  /** The `message` listener: control events here, the rest to the dispatcher. */
  readonly onMessage = (client: WsClient, envelope: Envelope): void => {
    const conn = this.#conns.get(client.id);
    if (conn === undefined) return this.#o.dispatch(client, envelope);
    if (conn.silence > 0) conn.lastSeen = Date.now();
    if (conn.queue !== undefined) {
      if (conn.queue.length < this.#o.maxPendingRequests) conn.queue.push(envelope);
      return;
    }
    switch (envelope.event) {
      case '$hello':
        return this.#hello(conn, envelope.data);
      case '$ping':
        this.#ws.sendRaw(client.id, PONG);
        return;
      case '$ack':
      case '$nack':
        this.#requests.settle(client.id, envelope.rid!, envelope.event === '$ack', envelope.data);
        return;
      default:
        break;
    }
    if (!conn.started) {
      clearTimeout(conn.timer);
      conn.timer = undefined;
      if (!conn.authed) {
        if (conn.hello) {
          // Between $hello and the auth decision messages are held; here auth was refused.
          return;
        }
        this.#authenticate(
          conn,
          undefined,
          (refusal) => {
            if (refusal === undefined) this.#start(conn);
            else this.#refuse(conn, refusal, envelope.id);
          },
          envelope,
        );
        return;
      }
      this.#start(conn);
    }
    const { id } = envelope;
    if (id !== undefined) {
      if (conn.pending >= this.#o.maxPendingRequests) {
        this.#ws.refuse(
          client.id,
          CoreEventErrorCode.TOO_MANY_PENDING,
          `Too many unanswered requests: at most ${this.#o.maxPendingRequests} at once; wait for answers first.`,
          {},
          false,
          id,
        );
        return;
      }
      conn.pending += 1;
    }
    this.#o.dispatch(client, envelope);
  };

  #hello(conn: Conn, data: unknown): void {
    const id = conn.client.id;
    if (conn.hello) {
      // A protocol error of the client: counted and spaced like the other refusals.
      this.#ws.refuse(
        id,
        CoreEventErrorCode.INVALID_ENVELOPE,
        '$hello was already received on this connection; it is sent once, first.',
      );
      return;
    }
    const hello = readHello(data);
    if (typeof hello === 'string') {
      this.#ws.sendError(id, CoreEventErrorCode.INVALID_PAYLOAD, `Malformed $hello: ${hello}.`);
      this.#ws.disconnect(id, CLOSE_POLICY, 'malformed $hello');
      return;
    }
    conn.hello = true;
    clearTimeout(conn.timer);
    conn.timer = undefined;
    if (hello.auth !== undefined && hello.auth.length > MAX_AUTH_LENGTH) {
      this.#refuse(conn, {
        status: 401,
        message: `Credentials longer than ${MAX_AUTH_LENGTH} characters`,
      });
      return;
    }
    if (conn.authed) {
      this.#welcome(conn, hello);
      return;
    }
    this.#authenticate(conn, hello.auth, (refusal) => {
      if (refusal === undefined) this.#welcome(conn, hello);
      else this.#refuse(conn, refusal);
    });
  }

  #welcome(conn: Conn, hello: Hello): void {
    if (hello.heartbeat !== undefined) {
      conn.silence = hello.heartbeat.interval + hello.heartbeat.timeout;
      conn.lastSeen = Date.now();
      this.#beating.add(conn);
      this.#armSweep();
    }
    const sessions = this.#sessions;
    let reason: ResumeRefusal | undefined;
    if (hello.resume !== undefined && sessions !== undefined) {
      const outcome = conn.started
        ? { refused: 'unknown' as const }
        : sessions.resume(hello.resume.session, hello.resume.seq);
      if ('session' in outcome) {
        if (this.#resume(conn, outcome.session, hello, outcome.replay)) return;
        reason = 'unknown';
      } else {
        reason = outcome.refused;
        if (outcome.ended !== undefined) this.#endClient(outcome.ended.clientId);
      }
    } else if (hello.resume !== undefined) {
      reason = 'unknown';
    }
    if (sessions !== undefined) conn.session = sessions.open(conn.client.id);
    this.#sendWelcome(conn, hello, false, reason);
    this.#start(conn);
  }

  /** Puts the connection under the session's client id and replays what it missed. */
  #resume(conn: Conn, session: Session, hello: Hello, replay: string[]): boolean {
    const fresh = conn.client.id;
    const renamed = this.#ws.renameClient(fresh, session.clientId);
    if (renamed === undefined) {
      this.#sessions!.end(session);
      this.#endClient(session.clientId);
      return false;
    }
    this.#conns.delete(fresh);
    this.#o.clients.markDisconnected(fresh);
    this.#o.clients.forgetData(fresh);
    conn.client = renamed;
    conn.session = session;
    conn.started = true;
    this.#conns.set(renamed.id, conn);
    this.#sendWelcome(conn, hello, true, undefined);
    for (const text of replay) this.#ws.sendRaw(renamed.id, text);
    return true;
  }

  #sendWelcome(conn: Conn, hello: Hello, resumed: boolean, reason?: ResumeRefusal): void {
    const data: Record<string, unknown> = {
      v: 1,
      clientId: conn.client.id,
      heartbeat: hello.heartbeat ?? null,
    };
    if (conn.session !== undefined) {
      data['session'] = conn.session.token;
      data['recovery'] = { window: this.#o.recoveryWindow };
    }
    data['resumed'] = resumed;
    if (reason !== undefined) data['reason'] = reason;
    this.#ws.sendRaw(conn.client.id, JSON.stringify({ event: '$welcome', data }));
  }

  #armSweep(): void {
    if (this.#sweep !== undefined) return;
    this.#sweep = setInterval(() => {
      const now = Date.now();
      for (const conn of this.#beating) {
        if (now - conn.lastSeen <= conn.silence) continue;
        this.#beating.delete(conn);
        this.#o.logger.notice('WebSocket client missed its heartbeat; closing with 4408', {
          code: 'PKG_ERR_CORE_HEARTBEAT_MISSED',
          clientId: conn.client.id,
        });
        this.#ws.disconnect(conn.client.id, CLOSE_TIMEOUT, 'heartbeat timeout');
      }
      if (this.#beating.size === 0) {
        clearInterval(this.#sweep);
        this.#sweep = undefined;
      }
    }, HEARTBEAT_MIN / 2);
    this.#sweep.unref?.();
  }

  // ------------------------------------------------------------------ outbound

  /** Answers a client request with the handler's result (`null` for nothing). */
  readonly answer = (clientId: string, event: string, id: RequestId, result: unknown): void => {
    if (this.#wasExpired(clientId, id)) return;
    this.#answered(clientId);
    let text: string;
    try {
      text = prepareAnswer(event, id, result);
    } catch (err) {
      this.#o.logger.exception(err, { code: 'PKG_ERR_CORE_HANDLER_FAILED', clientId, event });
      this.#ws.sendError(
        clientId,
        CoreEventErrorCode.INTERNAL_ERROR,
        `The result of "${event}" cannot be sent as JSON.`,
        id,
      );
      return;
    }
    this.#ws.sendRaw(clientId, text);
  };

  /** Sends an `error` that answers a client request. */
  sendErrorAnswer(
    clientId: string,
    id: RequestId,
    code: string,
    message: string,
    extra: Record<string, unknown>,
  ): void {
    if (this.#wasExpired(clientId, id)) return;
    this.#answered(clientId);
    this.#ws.sendRaw(
      clientId,
      JSON.stringify({ event: 'error', id, data: { ...extra, code, message } }),
    );
  }

  /**
   * A refusal the client caused or must wait out (rate limit, unknown event, busy, handler
   * timeout), through the WebSocket handler so that it is throttled and counted against the
   * client's protocol-error budget; with `id` it answers that request, every time.
   */
  readonly refuse = (
    clientId: string,
    code: string,
    message: string,
    extra: Record<string, unknown>,
    protocolError: boolean,
    id?: RequestId,
  ): void => {
    if (id !== undefined) this.#answered(clientId);
    this.#ws.refuse(clientId, code, message, extra, protocolError, id);
  };

  /**
   * A request whose handler ran past `ws_handler_timeout`: answered `handler_timeout` now;
   * whatever its handler produces later is dropped.
   */
  readonly expire = (clientId: string, id: RequestId | undefined, message: string): void => {
    const conn = id === undefined ? undefined : this.#conns.get(clientId);
    if (conn !== undefined && id !== undefined) {
      conn.expired ??= new Set();
      conn.expired.add(id);
      if (conn.expired.size > this.#o.maxPendingRequests) {
        const oldest = conn.expired.values().next();
        if (oldest.done !== true) conn.expired.delete(oldest.value);
      }
    }
    this.refuse(clientId, CoreEventErrorCode.HANDLER_TIMEOUT, message, {}, false, id);
  };

  /** True (and forgotten) when the request was already answered `handler_timeout`. */
  #wasExpired(clientId: string, id: RequestId): boolean {
    const expired = this.#conns.get(clientId)?.expired;
    return expired !== undefined && expired.delete(id);
  }

  #answered(clientId: string): void {
    const conn = this.#conns.get(clientId);
    if (conn !== undefined && conn.pending > 0) conn.pending -= 1;
  }

  /**
   * Sends an event to one client: numbered and kept for replay when it has a session
   * (also while it is away, then true). False when the client is unknown.
   */
  send(clientId: string, event: string, data: EventData): boolean {
    const text = prepareMessage(event, data);
    const session = this.#sessions?.ofClient(clientId);
    if (session === undefined) return this.#ws.sendRaw(clientId, text);
    const seq = this.#sessions!.nextSeq();
    const numbered = withSeq(text, seq);
    this.#sessions!.keep(session, seq, numbered);
    return session.connected ? this.#ws.sendRaw(clientId, numbered) : true;
  }

  /**
   * Delivers one serialised broadcast: as it is to clients without a session; numbered
   * once (one `seq` for every receiver) and kept for those with one.
   */
  readonly deliver = (clientIds: Iterable<string>, text: string): number => {
    const sessions = this.#sessions;
    if (sessions === undefined || sessions.size === 0) return this.#ws.sendToMany(clientIds, text);
    const plain: string[] = [];
    const live: string[] = [];
    let numbered: string | undefined;
    let seq = 0;
    let kept = 0;
    for (const id of clientIds) {
      const session = sessions.ofClient(id);
      if (session === undefined) {
        plain.push(id);
        continue;
      }
      if (numbered === undefined) {
        seq = sessions.nextSeq();
        numbered = withSeq(text, seq);
      }
      sessions.keep(session, seq, numbered);
      if (session.connected) live.push(id);
      else kept += 1;
    }
    let n = kept;
    if (plain.length > 0) n += this.#ws.sendToMany(plain, text);
    if (live.length > 0) n += this.#ws.sendToMany(live, numbered!);
    return n;
  };

  /** Connected clients and clients whose session waits for a resume. */
  *localClientIds(): IterableIterator<string> {
    for (const client of this.#ws.getClients()) yield client.id;
    if (this.#sessions !== undefined) yield* this.#sessions.awayClientIds();
  }

  /** `emitWithAck`: a request to a version 1 client, answered by its `$ack` / `$nack`. */
  emitWithAck(
    clientId: string,
    event: string,
    data: EventData,
    options: EmitWithAckOptions = {},
  ): Promise<unknown> {
    let text: string;
    try {
      text = prepareMessage(event, data);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    const conn = this.#conns.get(clientId);
    if (conn === undefined) {
      return Promise.reject(
        createCoreError(
          Error,
          'PKG_ERR_CORE_CLIENT_GONE',
          `emitWithAck("${event}"): client ${clientId} is not connected.`,
        ),
      );
    }
    if (!conn.hello) {
      return Promise.reject(
        createCoreError(
          Error,
          'PKG_ERR_CORE_PROTOCOL_UNSUPPORTED',
          `emitWithAck("${event}"): client ${clientId} did not say $hello (protocol version 1), so it cannot answer; use send/emit.`,
        ),
      );
    }
    const body = text.slice(0, -1);
    return this.#requests.request(clientId, event, options.timeout, (rid) =>
      this.#ws.sendRaw(clientId, `${body},"rid":${JSON.stringify(rid)}}`),
    );
  }

  /** Pending server requests of a client. */
  pendingServerRequests(clientId: string): number {
    return this.#requests.pendingOf(clientId);
  }
}

function toRefusal(value: unknown): AuthRefusal | undefined {
  if (value === true || value === undefined) return undefined;
  if (value === false || value === null) return { status: 401, message: 'Unauthorized' };
  if (isRecord(value)) {
    const status = value['status'] === 403 ? 403 : 401;
    const message =
      typeof value['message'] === 'string' && value['message'] !== ''
        ? value['message']
        : status === 403
          ? 'Forbidden'
          : 'Unauthorized';
    return { status, message };
  }
  return { status: 401, message: 'Unauthorized' };
}
