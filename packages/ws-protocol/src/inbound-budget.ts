/**
 * The inbound budget of one connection: token buckets for messages and bytes per second, a
 * bucket of protocol errors (invalid JSON, bad envelope, unknown event, messages over the
 * budget) that closes the connection with 1008 once it is empty, and a per-code interval
 * for `error` replies so that a flood of bad messages does not earn a flood of answers.
 *
 * Kept small on purpose (one per connected client): numbers only, a Map of reply times
 * created on the first refused message.
 */

/** The limits of every connection's budget (resolved handler options). */
export interface InboundBudgetLimits {
  /** Messages per second, sustained; a burst of twice as many is allowed. 0 = no limit. */
  readonly maxMessagesPerSecond: number;
  /** Bytes per second, sustained; a burst of max(2 s worth, maxPayload). 0 = no limit. */
  readonly maxBytesPerSecond: number;
  /** Protocol errors a connection may make in a burst (one more per second refills). 0 = no limit. */
  readonly maxProtocolErrors: number;
  /** Milliseconds between two `error` replies with the same code. 0 = every refusal answered. */
  readonly errorReplyInterval: number;
  /** Largest message (the byte bucket always holds at least this much). */
  readonly maxPayload: number;
}

/** Seconds of sustained rate a full message or byte bucket holds. */
const BURST_SECONDS = 2;

export class InboundBudget {
  readonly #limits: InboundBudgetLimits;
  #messages: number;
  #bytes: number;
  #errors: number;
  #last: number;
  #replies: Map<string, number> | undefined;

  constructor(limits: InboundBudgetLimits, now: number) {
    this.#limits = limits;
    this.#messages = limits.maxMessagesPerSecond * BURST_SECONDS;
    this.#bytes = InboundBudget.#byteCapacity(limits);
    this.#errors = limits.maxProtocolErrors;
    this.#last = now;
  }

  static #byteCapacity(limits: InboundBudgetLimits): number {
    return Math.max(limits.maxBytesPerSecond * BURST_SECONDS, limits.maxPayload);
  }

  #refill(now: number): void {
    const elapsed = (now - this.#last) / 1000;
    if (elapsed <= 0) return;
    this.#last = now;
    const l = this.#limits;
    this.#messages = Math.min(
      l.maxMessagesPerSecond * BURST_SECONDS,
      this.#messages + elapsed * l.maxMessagesPerSecond,
    );
    this.#bytes = Math.min(
      InboundBudget.#byteCapacity(l),
      this.#bytes + elapsed * l.maxBytesPerSecond,
    );
    this.#errors = Math.min(l.maxProtocolErrors, this.#errors + elapsed);
  }

  /** Takes one message of `bytes` from the budget; false when the connection is over it. */
  take(bytes: number, now: number): boolean {
    const l = this.#limits;
    if (l.maxMessagesPerSecond === 0 && l.maxBytesPerSecond === 0) return true;
    this.#refill(now);
    if (l.maxMessagesPerSecond > 0 && this.#messages < 1) return false;
    if (l.maxBytesPerSecond > 0 && this.#bytes < bytes) return false;
    this.#messages -= 1;
    this.#bytes -= bytes;
    return true;
  }

  /** Counts one protocol error; true when the connection has now made too many. */
  protocolError(now: number): boolean {
    if (this.#limits.maxProtocolErrors === 0) return false;
    this.#refill(now);
    this.#errors -= 1;
    return this.#errors < 0;
  }

  /** True when an `error` reply with this code may be sent now (and records it). */
  mayReply(code: string, now: number): boolean {
    const interval = this.#limits.errorReplyInterval;
    if (interval === 0) return true;
    this.#replies ??= new Map();
    const last = this.#replies.get(code);
    if (last !== undefined && now - last < interval) return false;
    this.#replies.set(code, now);
    return true;
  }
}

/**
 * Refuses without parsing what cannot be an envelope: undefined when the text starts with
 * `{` and ends with `}` (it must be parsed), else the wire code of the refusal:
 * `invalid_envelope` when it looks like another JSON value (`[`, a string, a number,
 * `true`, `false`, `null`), `invalid_json` otherwise.
 */
export function refuseCheaply(
  buf: Buffer | string,
): 'invalid_json' | 'invalid_envelope' | undefined {
  const text = typeof buf === 'string';
  const at = (i: number): number => (text ? buf.charCodeAt(i) : (buf[i] as number));
  const len = buf.length;
  let start = 0;
  let end = len - 1;
  while (start < len && isBlank(at(start))) start += 1;
  while (end > start && isBlank(at(end))) end -= 1;
  if (start >= len) return 'invalid_json';
  const first = at(start);
  if (first === 0x7b) return end > start && at(end) === 0x7d ? undefined : 'invalid_json';
  if (first === 0x5b) return at(end) === 0x5d ? 'invalid_envelope' : 'invalid_json';
  if (first === 0x22) return end > start && at(end) === 0x22 ? 'invalid_envelope' : 'invalid_json';
  if (first === 0x2d || (first >= 0x30 && first <= 0x39)) return 'invalid_envelope';
  if (end - start < 5) {
    const word = (text ? buf : buf.toString('latin1')).slice(start, end + 1);
    if (word === 'null' || word === 'true' || word === 'false') return 'invalid_envelope';
  }
  return 'invalid_json';
}

function isBlank(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}
