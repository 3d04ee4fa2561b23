/**
 * Liveness of every connection of a handler with ONE timer: each member is pinged once
 * `interval` ms have passed since its last pong (or its connect); a member that has not
 * answered `timeout` ms after its ping is reported dead. The timer sweeps the members every
 * quarter of the smaller of the two durations, so a ping or a termination comes at most
 * that much later than its exact time (5 s with the defaults of 25 s and 20 s). The timer is
 * unref'd, runs only while there are members, and costs no timer object per connection.
 */
export interface HeartbeatMember {
  /** When the next step is due (ms since the epoch): the ping, or the pong deadline. */
  heartbeatDue: number;
  /** True between a ping and its pong. */
  awaitingPong: boolean;
}

export interface HeartbeatOptions<M extends HeartbeatMember> {
  /** Milliseconds between a pong (or the start) and the next ping; 0 = off. */
  interval: number;
  /** Milliseconds to wait for the pong. */
  timeout: number;
  /** Sends a ping; returns false when the member is gone (it then leaves the sweep). */
  ping: (member: M) => boolean;
  /** Called once when a pong did not arrive in time (the member has left the sweep). */
  onTimeout: (member: M) => void;
  /** The clock (default Date.now). */
  now?: () => number;
}

export class HeartbeatSweep<M extends HeartbeatMember> {
  readonly #members = new Set<M>();
  readonly #options: HeartbeatOptions<M>;
  readonly #now: () => number;
  readonly #period: number;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: HeartbeatOptions<M>) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#period = Math.max(1, Math.floor(Math.min(options.interval, options.timeout) / 4));
  }

  /** How often the members are checked, in ms. */
  get period(): number {
    return this.#period;
  }

  /** Number of members being watched. */
  get size(): number {
    return this.#members.size;
  }

  /** Starts watching a member: its first ping is due after the interval (no-op when 0). */
  add(member: M): void {
    if (this.#options.interval <= 0) return;
    member.awaitingPong = false;
    member.heartbeatDue = this.#now() + this.#options.interval;
    this.#members.add(member);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.sweep(), this.#period);
      this.#timer.unref();
    }
  }

  /** A pong arrived: the member is alive; its next ping follows after the interval. */
  pong(member: M): void {
    if (!member.awaitingPong) return;
    member.awaitingPong = false;
    member.heartbeatDue = this.#now() + this.#options.interval;
  }

  /** Stops watching a member (its connection closed). */
  remove(member: M): void {
    if (!this.#members.delete(member) || this.#members.size > 0) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** One pass over the members: pings those due, reports those whose pong is overdue. */
  sweep(): void {
    const now = this.#now();
    const { interval, timeout } = this.#options;
    for (const member of this.#members) {
      if (now < member.heartbeatDue) continue;
      if (member.awaitingPong) {
        this.remove(member);
        this.#options.onTimeout(member);
      } else if (this.#options.ping(member)) {
        member.awaitingPong = true;
        member.heartbeatDue = now + (timeout > 0 ? timeout : interval);
      } else {
        this.remove(member);
      }
    }
  }
}
