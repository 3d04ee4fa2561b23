/**
 * The client side of the message heartbeat (docs/protocol.md, "Heartbeat"): a `$ping`
 * every interval; when nothing at all arrives within `timeout` after a ping, the
 * connection is declared dead. Detection time: at most `interval + timeout`.
 */
export class Heartbeat {
  #interval: ReturnType<typeof setInterval> | undefined;
  #deadline: ReturnType<typeof setTimeout> | undefined;

  start(granted: { interval: number; timeout: number }, ping: () => void, dead: () => void): void {
    this.stop();
    this.#interval = setInterval(() => {
      ping();
      this.#deadline ??= setTimeout(() => {
        this.#deadline = undefined;
        dead();
      }, granted.timeout);
    }, granted.interval);
  }

  /** Something arrived: the connection is alive. */
  alive(): void {
    clearTimeout(this.#deadline);
    this.#deadline = undefined;
  }

  stop(): void {
    clearInterval(this.#interval);
    clearTimeout(this.#deadline);
    this.#interval = this.#deadline = undefined;
  }
}
