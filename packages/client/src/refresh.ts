/**
 * Credentials that expire (docs/protocol.md, "Credentials that expire"): when `$welcome`
 * says `expiresAt`, the client asks its `auth` function for new credentials before then
 * (`refreshDelay` of @pkg/wire: a lead with as much jitter) and sends `$refresh`; the answer
 * gives the next expiry. A failed attempt (the function throws, the server refuses) is tried
 * again after a growing delay, never past the expiry. One attempt at a time, tied to the
 * connection it started on: a reconnect stops it, and the new connection starts afresh from
 * its own `$welcome`, so a refresh is never doubled.
 *
 *     off ──welcome with expiresAt──▶ scheduled ──timer──▶ refreshing ──answer──▶ scheduled
 *      ▲                                                     │ failed
 *      └──────── close, disconnect(), expiresAt null ◀── retrying ◀┘
 */
import { ControlEvent, REFRESH_LIMITS, readRefreshAnswer, refreshDelay } from '@pkg/wire';

/** Where the refresh of a connection's credentials stands. */
export type RefreshState = 'off' | 'scheduled' | 'refreshing' | 'retrying';

/** What the refresh needs of the client. */
export interface RefreshHost {
  /** New credentials (the `auth` option's function); undefined when `auth` is not one. */
  readonly token: (() => string | Promise<string>) | undefined;
  /** Sends `$refresh {auth}` as a request on the current connection; resolves with its answer. */
  request(event: string, data: { auth: string }): Promise<unknown>;
  readonly random: () => number;
  refreshed(expiresAt: number | null): void;
  failed(error: unknown, retryIn: number | null): void;
}

export class CredentialRefresh {
  readonly #host: RefreshHost;
  #state: RefreshState = 'off';
  #expiresAt: number | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Bumped whenever the connection changes: an attempt of an older one is dropped. */
  #generation = 0;
  #failures = 0;

  constructor(host: RefreshHost) {
    this.#host = host;
  }

  get state(): RefreshState {
    return this.#state;
  }

  /** When the credentials of the current connection expire (ms since the epoch). */
  get expiresAt(): number | undefined {
    return this.#expiresAt;
  }

  /** A connection was established: refresh before `expiresAt`, if it has one. */
  start(expiresAt: number | undefined): void {
    this.stop();
    this.#expiresAt = expiresAt;
    if (expiresAt === undefined || this.#host.token === undefined) return;
    this.#schedule(refreshDelay(expiresAt, Date.now(), this.#host.random()));
  }

  /** The connection closed (or disconnect()): nothing of it goes on. */
  stop(): void {
    this.#generation += 1;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#state = 'off';
    this.#failures = 0;
    this.#expiresAt = undefined;
  }

  #schedule(delay: number, state: RefreshState = 'scheduled'): void {
    this.#state = state;
    const generation = this.#generation;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (generation === this.#generation) void this.#attempt(generation);
    }, delay);
  }

  async #attempt(generation: number): Promise<void> {
    this.#state = 'refreshing';
    let answer: unknown;
    try {
      const auth = await this.#host.token!();
      if (generation !== this.#generation) return;
      if (typeof auth !== 'string' || auth === '') {
        throw new TypeError(
          'auth() must return a non-empty token string to refresh the credentials.',
        );
      }
      answer = await this.#host.request(ControlEvent.REFRESH, { auth });
    } catch (err) {
      if (generation !== this.#generation) return;
      this.#retry(err);
      return;
    }
    if (generation !== this.#generation) return;
    this.#failures = 0;
    const { expiresAt } = readRefreshAnswer(answer);
    this.#expiresAt = expiresAt ?? undefined;
    this.#host.refreshed(expiresAt);
    if (expiresAt === null) {
      this.#state = 'off';
      return;
    }
    this.#schedule(refreshDelay(expiresAt, Date.now(), this.#host.random()));
  }

  /**
   * A failed attempt: again after 1 s, 2 s, 4 s ... (with jitter), while the credentials
   * (and the server's grace, unknown here) may still be renewed; past the expiry the server
   * closes with 4419 and the client reconnects with new credentials.
   */
  #retry(error: unknown): void {
    this.#failures += 1;
    // The server still takes a refresh for its grace past the expiry (the default, unless
    // it says otherwise); past that it closes with 4419 and the client reconnects.
    const left = (this.#expiresAt ?? 0) + REFRESH_LIMITS.grace - Date.now();
    const step = REFRESH_LIMITS.retryMin * 2 ** Math.min(this.#failures - 1, 10);
    const delay = Math.floor(step / 2 + (step / 2) * this.#host.random());
    if (left <= 0 || delay >= left) {
      this.#state = 'off';
      this.#host.failed(error, null);
      return;
    }
    this.#host.failed(error, delay);
    this.#schedule(delay, 'retrying');
  }
}
