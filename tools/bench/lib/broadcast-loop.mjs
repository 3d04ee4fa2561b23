// A closed loop of broadcasts: at most `inflight` of them not yet delivered to every client;
// each one that completes sends the next until the time is up. The workload sends (`send`
// gets the sequence number to put in the broadcast) and reports each delivery.
import { performance } from 'node:perf_hooks';
import { within } from './proc.mjs';

export class BroadcastLoop {
  #pending = new Map(); // seq -> deliveries still expected
  #seq = 0;
  #onComplete = () => {};

  /**
   * `expected()`: how many deliveries a broadcast makes; `send(seq)` orders one;
   * `lost(n)`: the error message when `n` broadcasts never completed.
   */
  constructor({ inflight, expected, send, lost }) {
    this.inflight = inflight;
    this.expected = expected;
    this.sendOne = send;
    this.lost = lost;
  }

  /** One client received broadcast `seq`. */
  delivered(seq) {
    const left = (this.#pending.get(seq) ?? 0) - 1;
    if (left > 0) this.#pending.set(seq, left);
    else if (this.#pending.delete(seq)) this.#onComplete();
  }

  #send() {
    this.#seq += 1;
    this.#pending.set(this.#seq, this.expected());
    this.sendOne(this.#seq);
  }

  /** Runs the loop for `ms`, then waits until every broadcast sent has completed. */
  async run(ms) {
    const end = performance.now() + ms;
    const done = new Promise((resolve) => {
      this.#onComplete = () => {
        if (performance.now() < end) this.#send();
        else if (this.#pending.size === 0) resolve(true);
      };
    });
    for (let i = 0; i < this.inflight; i++) this.#send();
    if (!(await within(done, ms + 30_000, false))) throw new Error(this.lost(this.#pending.size));
  }
}
