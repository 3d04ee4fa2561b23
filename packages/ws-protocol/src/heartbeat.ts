/**
 * Liveness of one connection: ping every `interval` ms; when no pong arrives within
 * `timeout` ms, report the client as dead. One timer per client at a time (the next ping or
 * the pong deadline), unref'd so that it never keeps the process alive on its own.
 */
export interface HeartbeatOptions {
  /** Milliseconds between a pong (or the start) and the next ping; 0 = off. */
  interval: number;
  /** Milliseconds to wait for the pong. */
  timeout: number;
  /** Sends a ping; returns false when the client is gone (the heartbeat then stops). */
  ping: () => boolean;
  /** Called once when a pong did not arrive in time. */
  onTimeout: () => void;
}

export class Heartbeat {
  #timer: NodeJS.Timeout | undefined;
  #awaitingPong = false;
  #stopped = false;
  readonly #options: HeartbeatOptions;

  constructor(options: HeartbeatOptions) {
    this.#options = options;
  }

  /** Schedules the first ping (no-op when the interval is 0). */
  start(): void {
    if (this.#options.interval > 0 && !this.#stopped) this.#schedulePing();
  }

  /** A pong arrived: the client is alive; the next ping follows after the interval. */
  pong(): void {
    if (!this.#awaitingPong || this.#stopped) return;
    this.#awaitingPong = false;
    this.#clear();
    this.#schedulePing();
  }

  /** Stops for good (the connection closed). */
  stop(): void {
    this.#stopped = true;
    this.#clear();
  }

  #clear(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #schedulePing(): void {
    this.#timer = setTimeout(() => this.#sendPing(), this.#options.interval);
    this.#timer.unref();
  }

  #sendPing(): void {
    this.#timer = undefined;
    if (this.#stopped) return;
    if (!this.#options.ping()) {
      this.stop();
      return;
    }
    this.#awaitingPong = true;
    this.#timer = setTimeout(() => this.#expire(), this.#options.timeout);
    this.#timer.unref();
  }

  #expire(): void {
    this.#timer = undefined;
    if (this.#stopped || !this.#awaitingPong) return;
    this.stop();
    this.#options.onTimeout();
  }
}
