/**
 * Fairness between connections: a connection handles at most `maxPerTurn` messages per
 * turn of the event loop. Past that, its socket is paused (`ws` stops reading it) and the
 * rest of what was already read waits in its queue; one `setImmediate` per turn lets
 * other connections, timers, HTTP requests and signals run, then continues every queued
 * connection by one more batch and resumes those whose queue is empty.
 */
import type { RawData } from 'ws';

/** What the scheduler keeps on each connection (two fields, no closures). */
export interface FairMember {
  /** Messages handled in the current turn. */
  turnCount: number;
  /** Messages read but not handled yet (raw, isBinary pairs), while over the batch. */
  backlog: Array<RawData | boolean> | undefined;
  readonly gone: boolean;
  readonly client: { readonly socket: { pause(): void; resume(): void } };
}

export type FairRun<C> = (conn: C, raw: RawData, isBinary: boolean) => void;

export class FairScheduler<C extends FairMember> {
  readonly #maxPerTurn: number;
  readonly #run: FairRun<C>;
  #touched: C[] = [];
  #scheduled = false;

  /** `maxPerTurn` 0 turns the scheduler off (every message is handled as it arrives). */
  constructor(maxPerTurn: number, run: FairRun<C>) {
    this.#maxPerTurn = maxPerTurn;
    this.#run = run;
  }

  /** Connections with messages waiting (for tests and metrics). */
  get waiting(): number {
    let n = 0;
    for (const conn of this.#touched) if (conn.backlog !== undefined) n += 1;
    return n;
  }

  /** Handles the message now, or queues it when the connection used its batch. */
  offer(conn: C, raw: RawData, isBinary: boolean): void {
    if (this.#maxPerTurn === 0) {
      this.#run(conn, raw, isBinary);
      return;
    }
    if (conn.backlog !== undefined) {
      conn.backlog.push(raw, isBinary);
      return;
    }
    if (conn.turnCount === 0) this.#touch(conn);
    conn.turnCount += 1;
    if (conn.turnCount > this.#maxPerTurn) {
      conn.backlog = [raw, isBinary];
      conn.client.socket.pause();
      return;
    }
    this.#run(conn, raw, isBinary);
  }

  /** Forgets a closed connection's backlog. */
  drop(conn: C): void {
    conn.backlog = undefined;
  }

  #touch(conn: C): void {
    this.#touched.push(conn);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#turn);
    }
  }

  readonly #turn = (): void => {
    this.#scheduled = false;
    const list = this.#touched;
    this.#touched = [];
    for (const conn of list) conn.turnCount = 0;
    for (const conn of list) {
      const backlog = conn.backlog;
      if (backlog === undefined) continue;
      if (conn.gone) {
        conn.backlog = undefined;
        continue;
      }
      this.#touch(conn);
      let i = 0;
      while (i < backlog.length && conn.turnCount < this.#maxPerTurn && !conn.gone) {
        conn.turnCount += 1;
        this.#run(conn, backlog[i] as RawData, backlog[i + 1] as boolean);
        i += 2;
      }
      if (i >= backlog.length) {
        conn.backlog = undefined;
        if (!conn.gone) conn.client.socket.resume();
      } else {
        conn.backlog = backlog.slice(i);
      }
    }
  };
}
