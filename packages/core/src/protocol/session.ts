/**
 * Connection state recovery (protocol version 1): a session per client that said `$hello`,
 * numbering what the server sends it (`seq`, its own sequence from 1) and keeping the last
 * `bufferSize` of those messages, so that a client that comes back within `window` ms
 * resumes with its id and gets what it missed. A kept message is the text serialised once
 * for every receiver plus its `seq` in this session: one array slot and one number.
 *
 * Sessions without a connection ("away") are bounded: at most `maxAwayPerAddress` per
 * client address (IPv6 by network, see `groupOf`) and `maxAway` in all; past a bound the oldest away session is ended.
 */
import { randomBytes } from 'node:crypto';
import { appendSeq, type ResumeRefusalReason, type StreamPosition } from '@pkg/wire';
import { withSeqOf, type BinaryParts, type SerializedMessage } from '../ws/serialized-message';

/** Why a resume was not granted (`$welcome.reason`). */
export type ResumeRefusal = ResumeRefusalReason;

export interface Session {
  /** The token a resume presents; replaced on every resume. */
  token: string;
  /** The client id, kept across resumes. */
  readonly clientId: string;
  /** The identity its auth handlers gave when it was created. */
  readonly identity: string | undefined;
  /** The address group it was created from (for the per-address bound). */
  readonly address: string;
  /**
   * Messages without `seq`, oldest first, at most `bufferSize`: texts, and binary frames
   * (version 1) as their bytes.
   */
  readonly messages: SerializedMessage[];
  /** The `seq` of each kept message. */
  readonly seqs: number[];
  /** The last `seq` given in this session (0: none yet). */
  seq: number;
  /** Highest seq dropped from the buffer (0: none). */
  dropped: number;
  /** True while a connection serves the session. */
  connected: boolean;
  /** Ends the session when the window passes while it is away. */
  timer: NodeJS.Timeout | undefined;
  /**
   * Per room the client recovered and is still in, the position the replay reached: a live
   * copy at or before it is not delivered again (room-recovery.ts). Kept here rather than on
   * the connection's record so that it outlives the connection across resumes.
   */
  replayed: Map<string, StreamPosition> | undefined;
}

export interface SessionStoreOptions {
  /** Milliseconds a session survives without a connection. */
  readonly window: number;
  /** Messages kept per session. */
  readonly bufferSize: number;
  /** Away sessions in all; 0 = no bound. */
  readonly maxAway: number;
  /** Away sessions per client address; 0 = no bound. */
  readonly maxAwayPerAddress: number;
  /**
   * The group an address counts in for `maxAwayPerAddress`: the address itself, or for IPv6
   * its network (`addressGroup` of `@pkg/http`, as the connection caps count). Default: itself.
   */
  readonly groupOf?: (address: string) => string;
  /** Called when an away session ended on its own (window passed, or evicted by a bound). */
  readonly onEnded: (session: Session) => void;
}

/** Approximate bytes of one session without its texts (object, token, two arrays). */
const SESSION_OVERHEAD = 320;
/** Bytes of one kept message in a session: an array slot and a number. */
const SLOT_BYTES = 16;
/** Tokens of ended sessions remembered, so a late resume is told why. */
const MAX_GONE = 10_000;

/** Adds `,"seq":n` to a serialised `{...}` message, without parsing it again. */
export const withSeq = appendSeq;

export class SessionStore {
  readonly #o: SessionStoreOptions;
  readonly #byToken = new Map<string, Session>();
  /** Away sessions, oldest first. */
  readonly #away = new Set<Session>();
  readonly #awayByAddress = new Map<string, Set<Session>>();
  /** Tokens of sessions that ended, and why: a late resume is told so, not "unknown". */
  readonly #gone = new Map<string, 'expired' | 'ended'>();
  #slots = 0;

  constructor(options: SessionStoreOptions) {
    this.#o = options;
  }

  get size(): number {
    return this.#byToken.size;
  }

  get awayCount(): number {
    return this.#away.size;
  }

  /** Approximate memory of every session, without the message texts (shared with others). */
  get approximateBytes(): number {
    return this.#byToken.size * SESSION_OVERHEAD + this.#slots * SLOT_BYTES;
  }

  open(clientId: string, identity: string | undefined, address: string): Session {
    const session: Session = {
      token: newToken(),
      clientId,
      identity,
      address: this.#o.groupOf?.(address) ?? address,
      messages: [],
      seqs: [],
      seq: 0,
      dropped: 0,
      connected: true,
      timer: undefined,
      replayed: undefined,
    };
    this.#byToken.set(session.token, session);
    return session;
  }

  /** The session of a token, whether or not a connection serves it. */
  lookup(token: string): Session | undefined {
    return this.#byToken.get(token);
  }

  /** Why a token names no session: it ended (`expired`, `ended`) or was never known here. */
  refusalFor(token: string): ResumeRefusal {
    return this.#gone.get(token) ?? 'unknown';
  }

  /** Keeps a message for a session; returns its `seq` in that session. */
  keep(session: Session, message: SerializedMessage): number {
    session.seq += 1;
    session.messages.push(message);
    session.seqs.push(session.seq);
    this.#slots += 1;
    if (session.messages.length > this.#o.bufferSize) {
      session.messages.shift();
      session.dropped = session.seqs.shift()!;
      this.#slots -= 1;
    }
    return session.seq;
  }

  /** The connection dropped: the session waits `window` ms, within the away bounds. */
  away(session: Session): void {
    session.connected = false;
    session.timer = setTimeout(() => this.#endAway(session, 'expired'), this.#o.window);
    session.timer.unref?.();
    this.#away.add(session);
    let mine = this.#awayByAddress.get(session.address);
    if (mine === undefined) {
      mine = new Set();
      this.#awayByAddress.set(session.address, mine);
    }
    mine.add(session);
    const { maxAwayPerAddress, maxAway } = this.#o;
    if (maxAwayPerAddress > 0 && mine.size > maxAwayPerAddress) {
      this.#endAway(mine.values().next().value!, 'ended');
    }
    if (maxAway > 0 && this.#away.size > maxAway) {
      this.#endAway(this.#away.values().next().value!, 'ended');
    }
  }

  /** A resume takes the session from a connection still thought alive: it is detached. */
  detach(session: Session): void {
    session.connected = false;
  }

  /**
   * Resumes a session after `seq`: the messages to replay, or `overflow` (then the session
   * has ended and the caller runs its disconnect path). The token is rotated.
   */
  resume(
    session: Session,
    seq: number,
  ): { replay: Array<string | BinaryParts> } | { refused: 'overflow' } {
    this.#leaveAway(session);
    if (session.dropped > seq) {
      this.end(session);
      return { refused: 'overflow' };
    }
    session.connected = true;
    this.#byToken.delete(session.token);
    session.token = newToken();
    this.#byToken.set(session.token, session);
    const replay: Array<string | BinaryParts> = [];
    for (let i = 0; i < session.seqs.length; i += 1) {
      if (session.seqs[i]! > seq) replay.push(withSeqOf(session.messages[i]!, session.seqs[i]!));
    }
    return { replay };
  }

  /** Forgets a session (closed for good); a later resume of its token is told `ended`. */
  end(session: Session, why: 'expired' | 'ended' = 'ended'): void {
    this.#leaveAway(session);
    if (this.#byToken.get(session.token) !== session) return;
    this.#byToken.delete(session.token);
    this.#slots -= session.messages.length;
    this.#gone.set(session.token, why);
    if (this.#gone.size > MAX_GONE) this.#gone.delete(this.#gone.keys().next().value!);
  }

  /** Sessions without a connection (their clients still count as members of their rooms). */
  *awayClientIds(): IterableIterator<string> {
    for (const s of this.#away) yield s.clientId;
  }

  /** Ends every session (server close); returns those that were away. */
  endAll(): Session[] {
    const away = [...this.#away];
    for (const s of [...this.#byToken.values()]) this.end(s);
    return away;
  }

  #endAway(session: Session, why: 'expired' | 'ended'): void {
    this.end(session, why);
    this.#o.onEnded(session);
  }

  #leaveAway(session: Session): void {
    clearTimeout(session.timer);
    session.timer = undefined;
    if (!this.#away.delete(session)) return;
    const mine = this.#awayByAddress.get(session.address);
    mine?.delete(session);
    if (mine !== undefined && mine.size === 0) this.#awayByAddress.delete(session.address);
  }
}

function newToken(): string {
  return randomBytes(24).toString('base64url');
}
