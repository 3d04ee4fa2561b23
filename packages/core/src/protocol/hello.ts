/**
 * `$hello` and `$welcome` (docs/protocol.md, "Hello and welcome"): reading the client's
 * `$hello`, building the server's `$welcome`, and the resume it may grant: identity check,
 * takeover of a session whose old connection is still thought alive (close 4409), token
 * rotation, replay. State changes go through the host (`open`, `close`), never here.
 */
import type { LoggerInterface } from '@pkg/logger';
import {
  encodeEnvelope,
  CloseCode,
  ControlEvent,
  MAX_AUTH_LENGTH,
  WireErrorCode,
  readHello,
  type HeartbeatTiming,
  type HelloData,
  type WelcomeData,
} from '@pkg/wire';
import type { WebSocketHandler } from '@pkg/ws-protocol';
import type { AuthOutcome, AuthRefusal } from './auth';
import type { Connection } from './connection';
import type { ResumeRefusal, Session, SessionStore } from './session';
import type { ConnectionTable } from './connections';
import { sendTo } from '../ws/serialized-message';

/** What a `$welcome` says. */
export interface WelcomeFields {
  readonly clientId: string;
  readonly heartbeat: HeartbeatTiming | undefined;
  /** The session token (after a resume: the new, rotated one); undefined without recovery. */
  readonly session: string | undefined;
  readonly recoveryWindow: number;
  readonly resumed: boolean;
  readonly reason: ResumeRefusal | undefined;
  /** `$hello.auth` was sent but no auth handler checked it. */
  readonly authUnused: boolean;
  /** When the credentials expire (ms since the epoch); undefined when they do not. */
  readonly expiresAt?: number | undefined;
}

/** The `$welcome` envelope as JSON text (members in the order docs/protocol.md shows). */
export function welcomeText(w: WelcomeFields): string {
  const data: WelcomeData = {
    v: 1,
    clientId: w.clientId,
    heartbeat: w.heartbeat ?? null,
    ...(w.session === undefined
      ? {}
      : { session: w.session, recovery: { window: w.recoveryWindow } }),
    resumed: w.resumed,
    ...(w.reason === undefined ? {} : { reason: w.reason }),
    ...(w.authUnused ? { auth: 'unused' as const } : {}),
    ...(w.expiresAt === undefined ? {} : { expiresAt: w.expiresAt }),
  };
  return encodeEnvelope(ControlEvent.WELCOME, data);
}

/** What the welcome step needs of the protocol layer. */
export interface WelcomeHost {
  readonly ws: WebSocketHandler;
  readonly sessions: SessionStore | undefined;
  readonly conns: ConnectionTable;
  readonly logger: LoggerInterface;
  readonly recoveryWindow: number;
  /** Moves the connection to `open` (running `OnConnect` when `start`), then dispatches what it held. */
  open(conn: Connection, start: boolean): void;
  /** Starts the close of a connection from the server side. */
  close(conn: Connection, code: number, reason: string): void;
  /** The client is gone for good (`OnDisconnect`, with `clientId` when it was renamed since). */
  endClient(conn: Connection, clientId?: string): void;
  /** True when auth handlers are registered. */
  authenticates(): boolean;
  /** Runs the auth handlers (state `authenticating`); `then` gets a current outcome only. */
  authenticate(
    conn: Connection,
    auth: string | undefined,
    resume: Session | undefined,
    then: (outcome: AuthOutcome) => void,
  ): void;
  /** Refuses the connection (error, held requests answered, close 4401 / 4403). */
  refuse(conn: Connection, refusal: AuthRefusal): void;
  /** Longest room or namespace name in `$hello.positions`. */
  readonly maxNameLength: number;
}

export class Welcomer {
  readonly #h: WelcomeHost;
  #takeovers = 0;

  constructor(host: WelcomeHost) {
    this.#h = host;
  }

  /** `$hello` before the connection is open: authenticate (with handlers), then welcome. */
  hello(conn: Connection, data: unknown): void {
    const h = this.#h;
    const hello = this.#read(conn, data);
    if (hello === undefined) return;
    if (hello.auth !== undefined && hello.auth.length > MAX_AUTH_LENGTH) {
      h.refuse(conn, {
        status: 401,
        message: `Credentials longer than ${MAX_AUTH_LENGTH} characters`,
      });
      return;
    }
    if (!h.authenticates()) {
      this.welcome(conn, hello, hello.auth !== undefined);
      return;
    }
    const named = hello.resume === undefined ? undefined : h.sessions?.lookup(hello.resume.session);
    h.authenticate(conn, hello.auth, named, (outcome) => {
      if (!outcome.accepted) return h.refuse(conn, outcome.refusal);
      conn.identify(outcome.identity, outcome.expiresAt);
      this.welcome(conn, hello, false);
    });
  }

  /** A second `$hello`: a protocol error of the client, counted and spaced like the others. */
  secondHello(conn: Connection): void {
    this.#h.ws.refuse(
      conn.client.id,
      WireErrorCode.INVALID_ENVELOPE,
      '$hello was already received on this connection; it is sent once, first.',
    );
  }

  /** Reads `$hello`; a malformed one closes with 1008. */
  #read(conn: Connection, data: unknown): HelloData | undefined {
    const hello = readHello(data, { maxNameLength: this.#h.maxNameLength });
    if (typeof hello !== 'string') {
      // Positions are kept until the client is put in those rooms (bounded by readHello).
      conn.saidHello(hello.positions);
      return hello;
    }
    const message = `Malformed $hello: ${hello}.`;
    this.#h.ws.sendError(conn.client.id, WireErrorCode.INVALID_PAYLOAD, message);
    this.#h.close(conn, CloseCode.POLICY_VIOLATION, 'malformed $hello');
    return undefined;
  }

  /** Accepted: resumes the session `$hello` names, or opens a fresh one; then `open`. */
  welcome(conn: Connection, hello: HelloData, authUnused: boolean): void {
    let reason: ResumeRefusal | undefined;
    if (hello.resume !== undefined) {
      reason = this.#h.sessions === undefined ? 'unknown' : this.#resume(conn, hello, authUnused);
      if (reason === undefined) return;
    }
    const { client } = conn;
    conn.attach(this.#h.sessions?.open(client.id, conn.identity, client.ip));
    this.#send(conn, hello, authUnused, false, reason);
    this.#h.open(conn, true);
  }

  /**
   * `$hello` of a connection already served as version 0: a fresh session; a resume in it
   * is refused with `unknown` (the connection already has its own client).
   */
  lateHello(conn: Connection, data: unknown): void {
    if (conn.hello) return this.secondHello(conn);
    const hello = this.#read(conn, data);
    if (hello === undefined) return;
    const { client } = conn;
    conn.attach(this.#h.sessions?.open(client.id, conn.identity, client.ip));
    this.#send(conn, hello, hello.auth !== undefined, false, hello.resume && 'unknown');
  }

  /** A resume: undefined when granted (the connection is open), else why not. */
  #resume(conn: Connection, hello: HelloData, authUnused: boolean): ResumeRefusal | undefined {
    const h = this.#h;
    const sessions = h.sessions!;
    const { session: token, seq } = hello.resume!;
    const session = sessions.lookup(token);
    if (session === undefined) return sessions.refusalFor(token);
    // The session stays its owner's: a resume under another identity changes nothing.
    if (session.identity !== conn.identity) return 'identity';
    // The connection that holds the client now: away, or serving the session (taken over).
    const holder = h.conns.get(session.clientId);
    if (session.connected) this.#takeOver(session);
    holder?.attach(undefined);
    const outcome = sessions.resume(session, seq);
    if ('refused' in outcome) {
      if (holder !== undefined) h.endClient(holder, session.clientId);
      return outcome.refused;
    }
    const fresh = conn.client.id;
    const renamed = h.ws.renameClient(fresh, session.clientId);
    if (renamed === undefined) {
      sessions.end(session);
      if (holder !== undefined) h.endClient(holder, session.clientId);
      return 'ended';
    }
    // The client keeps its id and its data; the fresh id is forgotten.
    conn.resume(renamed, session);
    conn.inherit(holder);
    h.conns.moved(conn, fresh);
    this.#send(conn, hello, authUnused, true, undefined);
    for (const message of outcome.replay) sendTo(h.ws, session.clientId, message);
    h.open(conn, false);
    return undefined;
  }

  /** Takes a session from the connection that serves it: that one is closed with 4409. */
  #takeOver(session: Session): void {
    const h = this.#h;
    h.sessions!.detach(session);
    const old = h.conns.get(session.clientId);
    if (old === undefined) return;
    this.#takeovers += 1;
    // The old connection gives the id up at once; its close then ends nothing.
    const renamed = h.ws.renameClient(session.clientId, `${session.clientId}~${this.#takeovers}`);
    old.takeOver(renamed);
    if (renamed !== undefined) h.conns.moved(old, session.clientId);
    h.logger.info('WebSocket session taken over by a resume; closing the old connection', {
      code: 'PKG_ERR_CORE_SESSION_TAKEN_OVER',
      clientId: session.clientId,
      closeCode: CloseCode.SESSION_TAKEN_OVER,
    });
    h.close(old, CloseCode.SESSION_TAKEN_OVER, 'session taken over');
  }

  #send(
    conn: Connection,
    hello: HelloData,
    authUnused: boolean,
    resumed: boolean,
    reason: ResumeRefusal | undefined,
  ): void {
    const text = welcomeText({
      clientId: conn.client.id,
      heartbeat: hello.heartbeat,
      session: conn.session?.token,
      recoveryWindow: this.#h.recoveryWindow,
      resumed,
      reason,
      authUnused,
      expiresAt: conn.expiresAt,
    });
    this.#h.ws.sendRaw(conn.client.id, text);
  }
}
