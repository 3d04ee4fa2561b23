import type { Duplex } from 'node:stream';

/** Seconds a refused client is told to wait (`Retry-After`). */
export const RETRY_AFTER_SECONDS = 5;

/** What ConnectionGate needs, handed over once. */
export interface ConnectionGateOptions {
  /** Most connections served normally; 0 = no limit. */
  readonly maxConnections: number;
  /** Connections over maxConnections kept for the health check. */
  readonly reserve: number;
  /** WebSocket clients per client address; 0 = no limit. */
  readonly maxPerIp: number;
}

/** The raw answer written to a connection refused before it sent anything. */
const REFUSED_BODY = '{"error":"Service Unavailable","code":"PKG_ERR_CORE_TOO_MANY_CONNECTIONS"}';
const REFUSED =
  'HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: application/json\r\n' +
  `Retry-After: ${RETRY_AFTER_SECONDS}\r\nContent-Length: ${REFUSED_BODY.length}\r\n\r\n${REFUSED_BODY}`;

/**
 * Connection limits that answer instead of resetting. Up to `maxConnections` TCP
 * connections are served; the next `reserve` ones are kept open only for the health check
 * (any other request or upgrade on them gets 503 with `Retry-After`), and past those a new
 * connection gets a 503 written at once and is closed. WebSocket clients are also counted
 * per client address (as trust_proxy resolves it), up to `maxPerIp`.
 */
export class ConnectionGate {
  readonly #o: ConnectionGateOptions;
  #open = 0;
  readonly #reserved = new WeakSet<object>();
  readonly #perIp = new Map<string, number>();

  constructor(options: ConnectionGateOptions) {
    this.#o = options;
  }

  /** Open TCP connections. */
  get open(): number {
    return this.#open;
  }

  /** Addresses with WebSocket clients (a table size, for tests and metrics). */
  get addresses(): number {
    return this.#perIp.size;
  }

  /** Counts a new connection; over the cap and its reserve, answers 503 and closes it. */
  readonly accept = (socket: Duplex): void => {
    this.#open += 1;
    socket.once('close', this.#closed);
    const max = this.#o.maxConnections;
    if (max === 0 || this.#open <= max) return;
    if (this.#open <= max + this.#o.reserve) {
      this.#reserved.add(socket);
      return;
    }
    socket.end(REFUSED);
  };

  readonly #closed = (): void => {
    this.#open -= 1;
  };

  /** True when the connection is over max_connections (only the health check is served). */
  inReserve(socket: object): boolean {
    return this.#reserved.has(socket);
  }

  /** Takes a WebSocket slot of the address; false when it has maxPerIp already. */
  takeAddress(ip: string): boolean {
    const n = this.#perIp.get(ip) ?? 0;
    if (this.#o.maxPerIp > 0 && n >= this.#o.maxPerIp) return false;
    this.#perIp.set(ip, n + 1);
    return true;
  }

  /** Gives a WebSocket slot of the address back. */
  releaseAddress(ip: string): void {
    const n = this.#perIp.get(ip);
    if (n === undefined) return;
    if (n <= 1) this.#perIp.delete(ip);
    else this.#perIp.set(ip, n - 1);
  }
}
