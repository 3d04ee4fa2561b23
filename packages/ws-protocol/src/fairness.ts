/**
 * Fairness between connections: a connection handles at most `maxPerTurn` messages per
 * turn of the event loop. Past that, its socket is paused (`ws` stops reading it) and the
 * rest of what was already read waits in its queue; a `setImmediate` lets other
 * connections, timers, HTTP requests and signals run, then continues every queued
 * connection by one more batch and resumes those whose queue is empty.
 *
 * Turns are told apart without a callback per turn: the counts belong to an epoch, which
 * that `setImmediate` ends, and a connection's count restarts when it sees a newer epoch.
 * The `setImmediate` is scheduled only once some connection reaches half its batch in the
 * epoch (or goes over it), so a connection that sends now and then costs no extra turn of
 * the loop. A count that carried over from earlier turns only makes the bound stricter:
 * within one turn a connection never handles more than `maxPerTurn`, and, once paused, it
 * had handled at least half of that in the turn.
 */
import type { RawData } from 'ws';

/** What the scheduler keeps on each connection (three fields, no closures). */
export interface FairMember {
  /** Messages handled in the epoch `turnEpoch`. */
  turnCount: number;
  /** The epoch `turnCount` counts in. */
  turnEpoch: number;
  /** Messages read but not handled yet (raw, isBinary pairs), while over the batch. */
  backlog: Array<RawData | boolean> | undefined;
  readonly gone: boolean;
  readonly client: { readonly socket: { pause(): void; resume(): void } };
}

export type FairRun<C> = (conn: C, raw: RawData, isBinary: boolean) => void;

export class FairScheduler<C extends FairMember> {
  readonly #maxPerTurn: number;
  /** The count at which the end of the epoch is scheduled. */
  readonly #mark: number;
  readonly #run: FairRun<C>;
  /** Connections paused with a backlog, continued by the next `#turn`. */
  #queued: C[] = [];
  #epoch = 1;
  #scheduled = false;

  /** `maxPerTurn` 0 turns the scheduler off (every message is handled as it arrives). */
  constructor(maxPerTurn: number, run: FairRun<C>) {
    this.#maxPerTurn = maxPerTurn;
    this.#mark = Math.max(1, Math.ceil(maxPerTurn / 2));
    this.#run = run;
  }

  /** Connections with messages waiting (for tests and metrics). */
  get waiting(): number {
    let n = 0;
    for (const conn of this.#queued) if (conn.backlog !== undefined) n += 1;
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
    if (conn.turnEpoch !== this.#epoch) {
      conn.turnEpoch = this.#epoch;
      conn.turnCount = 0;
    }
    conn.turnCount += 1;
    if (conn.turnCount === this.#mark) this.#schedule();
    if (conn.turnCount > this.#maxPerTurn) {
      conn.backlog = [raw, isBinary];
      conn.client.socket.pause();
      this.#queued.push(conn);
      this.#schedule();
      return;
    }
    this.#run(conn, raw, isBinary);
  }

  /** Forgets a closed connection's backlog. */
  drop(conn: C): void {
    conn.backlog = undefined;
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(this.#turn);
  }

  readonly #turn = (): void => {
    this.#scheduled = false;
    this.#epoch += 1;
    const list = this.#queued;
    if (list.length === 0) return;
    this.#queued = [];
    const epoch = this.#epoch;
    for (const conn of list) {
      const backlog = conn.backlog;
      if (backlog === undefined) continue;
      if (conn.gone) {
        conn.backlog = undefined;
        continue;
      }
      conn.turnEpoch = epoch;
      conn.turnCount = 0;
      let i = 0;
      while (i < backlog.length && conn.turnCount < this.#maxPerTurn && !conn.gone) {
        conn.turnCount += 1;
        this.#run(conn, backlog[i] as RawData, backlog[i + 1] as boolean);
        i += 2;
      }
      if (i >= backlog.length) {
        conn.backlog = undefined;
        if (!conn.gone) conn.client.socket.resume();
        // What it handled here counts in this epoch: end it after the next turn too.
        if (conn.turnCount >= this.#mark) this.#schedule();
      } else {
        conn.backlog = backlog.slice(i);
        this.#queued.push(conn);
        this.#schedule();
      }
    }
  };
}
