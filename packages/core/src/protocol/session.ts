/**
 * Connection state recovery (protocol version 1): a session per client that said `$hello`,
 * numbering what the server sends it (`seq`) and keeping the last `bufferSize` of those
 * messages, so that a client that comes back within `window` ms resumes with its id and gets
 * what it missed. The text of a message is shared by every session that keeps it (a
 * broadcast is numbered and serialised once), so a buffered message costs a session one
 * array slot and one number.
 */
import { randomBytes } from 'node:crypto';

/** Why a resume was not granted. */
export type ResumeRefusal = 'expired' | 'unknown' | 'overflow';

export interface Session {
  readonly token: string;
  /** The client id, kept across resumes. */
  readonly clientId: string;
  /** Message texts with their `seq`, oldest first, at most `bufferSize`. */
  readonly texts: string[];
  readonly seqs: number[];
  /** Highest seq dropped from the buffer (0: none). */
  dropped: number;
  /** True while a connection serves the session. */
  connected: boolean;
  /** Ends the session when the window passes while it is away. */
  timer: NodeJS.Timeout | undefined;
}

export interface SessionStoreOptions {
  /** Milliseconds a session survives without a connection. */
  readonly window: number;
  /** Messages kept per session. */
  readonly bufferSize: number;
  /** Called when a session's window passed while it was away. */
  readonly onExpired: (session: Session) => void;
}

/** Adds `,"seq":n` to a serialised `{...}` message, without parsing it again. */
export function withSeq(text: string, seq: number): string {
  return `${text.slice(0, -1)},"seq":${seq}}`;
}

export class SessionStore {
  readonly #o: SessionStoreOptions;
  readonly #byToken = new Map<string, Session>();
  readonly #byClient = new Map<string, Session>();
  /** Tokens of sessions that expired, so a late resume is told "expired", not "unknown". */
  readonly #expired = new Set<string>();
  #seq = 0;

  constructor(options: SessionStoreOptions) {
    this.#o = options;
  }

  get size(): number {
    return this.#byToken.size;
  }

  /** The next number of the server's message stream (one per message, shared by receivers). */
  nextSeq(): number {
    this.#seq += 1;
    return this.#seq;
  }

  open(clientId: string): Session {
    const session: Session = {
      token: randomBytes(24).toString('base64url'),
      clientId,
      texts: [],
      seqs: [],
      dropped: 0,
      connected: true,
      timer: undefined,
    };
    this.#byToken.set(session.token, session);
    this.#byClient.set(clientId, session);
    return session;
  }

  ofClient(clientId: string): Session | undefined {
    return this.#byClient.get(clientId);
  }

  /** Keeps a numbered message for a session. */
  keep(session: Session, seq: number, text: string): void {
    session.texts.push(text);
    session.seqs.push(seq);
    if (session.texts.length > this.#o.bufferSize) {
      session.texts.shift();
      session.dropped = session.seqs.shift()!;
    }
  }

  /** The connection dropped: the session waits `window` ms for a resume. */
  away(session: Session): void {
    session.connected = false;
    session.timer = setTimeout(() => {
      this.end(session);
      this.#expired.add(session.token);
      // Bounded: only the latest tokens are remembered.
      if (this.#expired.size > 10_000) this.#expired.delete(this.#expired.values().next().value!);
      this.#o.onExpired(session);
    }, this.#o.window);
    session.timer.unref?.();
  }

  /**
   * A resume of `token` after `seq`: the session and the messages to replay, or why not.
   * A refused session that still exists is ended (the caller runs its disconnect path).
   */
  resume(
    token: string,
    seq: number,
  ): { session: Session; replay: string[] } | { refused: ResumeRefusal; ended?: Session } {
    const session = this.#byToken.get(token);
    if (session === undefined || session.connected) {
      return { refused: this.#expired.has(token) ? 'expired' : 'unknown' };
    }
    if (session.dropped > seq) {
      this.end(session);
      return { refused: 'overflow', ended: session };
    }
    clearTimeout(session.timer);
    session.timer = undefined;
    session.connected = true;
    const replay: string[] = [];
    for (let i = 0; i < session.seqs.length; i += 1) {
      if (session.seqs[i]! > seq) replay.push(session.texts[i]!);
    }
    return { session, replay };
  }

  /** Forgets a session (closed for good). */
  end(session: Session): void {
    clearTimeout(session.timer);
    session.timer = undefined;
    this.#byToken.delete(session.token);
    if (this.#byClient.get(session.clientId) === session) this.#byClient.delete(session.clientId);
  }

  /** Sessions without a connection (their clients still count as members of their rooms). */
  *awayClientIds(): IterableIterator<string> {
    for (const s of this.#byClient.values()) if (!s.connected) yield s.clientId;
  }

  /** Ends every session (server close); returns those that were away. */
  endAll(): Session[] {
    const away: Session[] = [];
    for (const s of [...this.#byToken.values()]) {
      if (!s.connected) away.push(s);
      this.end(s);
    }
    return away;
  }
}
