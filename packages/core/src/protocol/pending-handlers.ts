import type { LoggerInterface } from '@pkg/logger';
import type { RequestId } from '@pkg/ws-protocol';
import type { Connection } from './connection';

/** What PendingHandlers needs, handed over once. */
export interface PendingHandlersOptions {
  /** Handlers one client may have unfinished at once; 0 = no limit. */
  readonly maxPending: number;
  /** Milliseconds after which an unfinished handler is forgotten; 0 = never. */
  readonly timeout: number;
  readonly logger: LoggerInterface;
  /** Called once for each handler forgotten after `timeout`, with its request id if any. */
  readonly onTimeout: (conn: Connection, id: RequestId | undefined) => void;
}

interface Entry {
  readonly conn: Connection;
  readonly started: number;
  /** The request id of the message (protocol version 1), answered on timeout. */
  readonly id: RequestId | undefined;
}

/**
 * The unfinished message handlers of WebSocket clients, each kept on its connection: at
 * most `maxPending` per client (`admit`), answered `handler_timeout` after `timeout`, and
 * all forgotten when the client disconnects (`release`), so that a handler that never
 * settles holds nothing past its client. close() waits for what is left (`settled`), and
 * for the work of no message (`OnConnect`, `OnDisconnect`) kept with {@link background}.
 *
 * A handler that timed out still runs, so it keeps its client's slot until it settles: a
 * client cannot get more than `maxPending` handlers running at once by making them slow.
 * close() no longer waits for it (its answer was already sent).
 */
export class PendingHandlers {
  readonly #options: PendingHandlersOptions;
  /** Work not yet answered, in the order it started (the sweep relies on it). */
  readonly #entries = new Map<Promise<void>, Entry>();
  /** Work answered `handler_timeout` that has not settled: it keeps its client's slot. */
  readonly #expired = new Map<Promise<void>, Entry>();
  /** Work tied to no message. */
  readonly #background = new Set<Promise<void>>();
  #clients = 0;
  #sweep: NodeJS.Timeout | undefined;

  constructor(options: PendingHandlersOptions) {
    this.#options = options;
  }

  /** Unfinished handlers of every client, timed-out ones included (a table size, for tests and metrics). */
  get size(): number {
    return this.#entries.size + this.#expired.size;
  }

  /** Clients with unfinished handlers. */
  get clients(): number {
    return this.#clients;
  }

  /** False when the client already has `maxPending` unfinished handlers. */
  admit(conn: Connection): boolean {
    const max = this.#options.maxPending;
    return max === 0 || conn.working < max;
  }

  /** Keeps `work` of `conn` until it settles, times out or the client disconnects. */
  track(conn: Connection, work: Promise<void>, id?: RequestId): void {
    const tracked: Promise<void> = work.then(
      () => this.#forget(tracked),
      (err: unknown) => {
        this.#forget(tracked);
        this.#options.logger.exception(err, { phase: 'dispatch', clientId: conn.id });
      },
    );
    this.#entries.set(tracked, { conn, started: Date.now(), id });
    if (conn.working === 0) this.#clients += 1;
    conn.startWork(tracked);
    if (this.#options.timeout > 0 && this.#sweep === undefined) {
      // One timer for every handler: a quarter of the timeout, so one fires at most 25% late.
      this.#sweep = setInterval(this.#expire, Math.max(10, Math.floor(this.#options.timeout / 4)));
      this.#sweep.unref();
    }
  }

  /** Keeps work tied to no message (`OnConnect`, `OnDisconnect`) until it settles. */
  background(work: Promise<void>): void {
    const tracked: Promise<void> = work.then(
      () => void this.#background.delete(tracked),
      (err: unknown) => {
        this.#background.delete(tracked);
        this.#options.logger.exception(err, { phase: 'dispatch' });
      },
    );
    this.#background.add(tracked);
  }

  /** Forgets every unfinished handler of a client that disconnected. */
  release(conn: Connection): void {
    let any = false;
    for (const work of conn.takeWork()) {
      any = true;
      this.#entries.delete(work);
      this.#expired.delete(work);
    }
    if (any) this.#clients -= 1;
    this.#stopSweepIfIdle();
  }

  /** Resolves when every handler tracked now has settled (or been forgotten). */
  settled(): Promise<void> {
    return Promise.allSettled([...this.#entries.keys(), ...this.#background]).then(() => undefined);
  }

  #forget(work: Promise<void>): void {
    const entry = this.#entries.get(work) ?? this.#expired.get(work);
    if (entry === undefined) return;
    this.#entries.delete(work);
    this.#expired.delete(work);
    if (entry.conn.finishWork(work) && entry.conn.working === 0) this.#clients -= 1;
    this.#stopSweepIfIdle();
  }

  #stopSweepIfIdle(): void {
    if (this.#entries.size === 0 && this.#sweep !== undefined) {
      clearInterval(this.#sweep);
      this.#sweep = undefined;
    }
  }

  readonly #expire = (): void => {
    const limit = Date.now() - this.#options.timeout;
    for (const [work, entry] of this.#entries) {
      // Entries are in insertion order: the first one not due ends the scan.
      if (entry.started > limit) break;
      // Answered now, but the handler still runs: its slot is freed when it settles.
      this.#entries.delete(work);
      this.#expired.set(work, entry);
      this.#options.logger.warning(
        'WebSocket handler did not finish in time; answered handler_timeout',
        {
          code: 'PKG_ERR_CORE_HANDLER_TIMEOUT',
          clientId: entry.conn.id,
          timeout: this.#options.timeout,
        },
      );
      this.#options.onTimeout(entry.conn, entry.id);
    }
    this.#stopSweepIfIdle();
  };
}
