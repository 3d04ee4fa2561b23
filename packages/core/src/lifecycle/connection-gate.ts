import type { Duplex } from 'node:stream';
import { addressGroup } from '@pkg/http';
import { RETRY_AFTER_SECONDS } from '../config/defaults';
import { refusalMessage } from './refusals';

export { RETRY_AFTER_SECONDS };

/** What ConnectionGate needs, handed over once. */
export interface ConnectionGateOptions {
  /** Most connections served normally; 0 = no limit. */
  readonly maxConnections: number;
  /** Connections over maxConnections kept for the health check. */
  readonly reserve: number;
  /** WebSocket clients per client address; 0 = no limit. */
  readonly maxPerIp: number;
  /** Prefix length by which IPv6 addresses share their per-address slots (default 64). */
  readonly ipv6Subnet?: number;
}

/** Where a new connection stands: served, kept for the health check only, or refused. */
export type GateVerdict = 'served' | 'reserve' | 'over';

/** The raw answer written to a connection refused before it sent anything. */
const REFUSED = refusalMessage(503, 'PKG_ERR_CORE_TOO_MANY_CONNECTIONS', RETRY_AFTER_SECONDS);

/**
 * Connection limits that answer instead of resetting. Up to `maxConnections` TCP
 * connections are served; the next `reserve` ones are kept open only for the health check
 * (any other request or upgrade on them gets 503 with `Retry-After`), and past those a new
 * connection gets a 503 written at once and is closed. WebSocket clients are also counted
 * per client address (as trust_proxy resolves it; IPv6 by its `ipv6Subnet` network), up to
 * `maxPerIp`: a slot is taken by the upgrade and given back when that connection closes,
 * so a connection that never took one can never give one back.
 */
export class ConnectionGate {
  readonly #o: ConnectionGateOptions;
  #open = 0;
  readonly #reserved = new WeakSet<object>();
  readonly #perIp = new Map<string, number>();
  /**
   * Where a socket holding a slot keeps the address key it counts under: a property under
   * this gate's own symbol (cheaper to set and collect than a WeakMap entry per connection);
   * null on a socket counted by {@link accept} that holds none.
   */
  readonly #slotKey = Symbol('address slot');
  /**
   * The listener of a socket that took a slot without being counted by {@link accept} (one
   * for every such socket, called with the socket as `this`).
   */
  readonly #slotSocketClosed: (this: Duplex) => void;

  constructor(options: ConnectionGateOptions) {
    this.#o = options;
    const slotKey = this.#slotKey;
    const release = (key: string): void => this.#release(key);
    this.#slotSocketClosed = function (this: Duplex): void {
      const holder = this as unknown as Record<symbol, string | null | undefined>;
      const key = holder[slotKey];
      if (key === undefined || key === null) return;
      holder[slotKey] = undefined;
      release(key);
    };
  }

  /** Open TCP connections. */
  get open(): number {
    return this.#open;
  }

  /** Addresses with WebSocket clients (a table size, for tests and metrics). */
  get addresses(): number {
    return this.#perIp.size;
  }

  /** Where the connection just counted stands; a reserved one is remembered. */
  #verdict(connection: object): GateVerdict {
    const max = this.#o.maxConnections;
    if (max === 0 || this.#open <= max) return 'served';
    if (this.#open <= max + this.#o.reserve) {
      this.#reserved.add(connection);
      return 'reserve';
    }
    return 'over';
  }

  /**
   * Counts an in-process request (`server.inject()`) as a connection and says where it
   * stands; `release` gives the count back, once.
   */
  admit(connection: object): { verdict: GateVerdict; release: () => void } {
    this.#open += 1;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.#open -= 1;
    };
    return { verdict: this.#verdict(connection), release };
  }

  /**
   * Counts a new socket until {@link closed} is called for it (the server's one 'close'
   * listener per connection does: lifecycle.ts); over the cap and its reserve, answers 503
   * and closes it.
   */
  readonly accept = (socket: Duplex): void => {
    this.#open += 1;
    // Accepted here: a slot it takes is given back by `closed`, without a listener of its own.
    (socket as unknown as Record<symbol, string | null>)[this.#slotKey] = null;
    if (this.#verdict(socket) === 'over') socket.end(REFUSED);
  };

  /** A socket counted by {@link accept} closed: uncounted, and its address slot given back. */
  closed(socket: Duplex): void {
    const holder = socket as unknown as Record<symbol, string | null | undefined>;
    const key = holder[this.#slotKey];
    if (key === undefined) return; // not counted here
    this.#open -= 1;
    holder[this.#slotKey] = undefined;
    if (key !== null) this.#release(key);
  }

  /** True when the connection is over max_connections (only the health check is served). */
  inReserve(socket: object): boolean {
    return this.#reserved.has(socket);
  }

  /** The key an address is counted under: itself, or its IPv6 network. */
  keyOf(ip: string): string {
    return addressGroup(ip, this.#o.ipv6Subnet);
  }

  /**
   * Takes a WebSocket slot of the address for `socket`, given back when the socket closes;
   * false (nothing taken) when the address has maxPerIp already.
   */
  takeAddress(ip: string, socket: Duplex): boolean {
    const key = this.keyOf(ip);
    const n = this.#perIp.get(key) ?? 0;
    if (this.#o.maxPerIp > 0 && n >= this.#o.maxPerIp) return false;
    this.#perIp.set(key, n + 1);
    const holder = socket as unknown as Record<symbol, string | null | undefined>;
    if (socket.destroyed) {
      this.#release(key);
    } else if (holder[this.#slotKey] === null) {
      holder[this.#slotKey] = key; // counted by accept: `closed` gives it back
    } else {
      holder[this.#slotKey] = key;
      socket.on('close', this.#slotSocketClosed);
    }
    return true;
  }

  #release(key: string): void {
    const n = this.#perIp.get(key);
    if (n === undefined) return;
    if (n <= 1) this.#perIp.delete(key);
    else this.#perIp.set(key, n - 1);
  }
}
