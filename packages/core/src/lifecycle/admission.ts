import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { resolveForwarded, type TrustPredicate } from '@pkg/http';
import type { LoggerInterface } from '@pkg/logger';
import { RETRY_AFTER_SECONDS, type ConnectionGate } from './connection-gate';
import { healthCheckMatch, type HealthCheckMatch } from './health';
import type { HostCheckResult } from './host-check';
import { refuseRequest, refuseUpgrade } from './refusals';

/** Why a request or upgrade is refused before any handler runs. */
export interface Refusal {
  readonly status: number;
  readonly code: string;
  /** Worth retrying later: the answer carries `Retry-After`. */
  readonly retry: boolean;
  /** What was wrong, when there is more to say than the status (a Host refusal). */
  readonly message?: string;
}

/** What admission needs, handed over once. */
export interface AdmissionOptions {
  readonly logger: LoggerInterface;
  /** The path the health check answers on (null: none). */
  readonly healthCheckPath: string | null;
  /** Connection caps (max_connections, its reserve, max_connections_per_ip). */
  readonly gate?: ConnectionGate;
  /** The Host check of allowed_hosts, when set. */
  readonly hostCheck?: ((host: string | undefined) => HostCheckResult) | null;
  /** Which peers may forward a host (trust_proxy); their forwarded host is checked too. */
  readonly trust?: TrustPredicate;
  /** The client address of an upgrade request (trust_proxy applied). */
  readonly clientAddress?: (req: IncomingMessage) => string;
  /** Told the code of every refusal (`PKG_ERR_CORE_TOO_MANY_CONNECTIONS`...), for metrics. */
  readonly onRefusal?: (code: string) => void;
}

const DRAINING: Refusal = Object.freeze({
  status: 503,
  code: 'PKG_ERR_CORE_DRAINING',
  retry: true,
});

/**
 * The checks every request and upgrade passes before a handler runs, the same for the
 * listening socket and the in-process paths (`inject`, `connect`): shutting down, the Host
 * (and a trusted proxy's forwarded host) against `allowed_hosts`, the connection reserve,
 * and for upgrades the per-address slot.
 */
export class Admission {
  readonly #o: AdmissionOptions;
  readonly #isHealthCheck: HealthCheckMatch | null;
  /** Set once close() stops accepting: new requests get 503. */
  refusing = false;

  constructor(options: AdmissionOptions) {
    this.#o = options;
    this.#isHealthCheck = healthCheckMatch(options.healthCheckPath);
  }

  /**
   * The refusal a request or upgrade gets before any handler runs, or undefined. A health
   * check (the rule the health check itself answers by) is let through while draining and
   * into the connection reserve; an upgrade never is one.
   */
  check(req: IncomingMessage, upgrade = false): Refusal | undefined {
    // The health check answers on: its 503 "draining" is what load balancers look for.
    const health =
      !upgrade && this.#isHealthCheck !== null && this.#isHealthCheck(req.method ?? '', req.url ?? '/'); // prettier-ignore
    if (this.refusing && !health) return DRAINING;
    const host = this.#checkHost(req);
    if (host !== undefined && !host.ok) {
      return {
        status: host.status,
        code: 'PKG_ERR_CORE_HOST_NOT_ALLOWED',
        retry: false,
        message: host.message,
      };
    }
    if (!health && this.#o.gate?.inReserve(req.socket)) {
      return { status: 503, code: 'PKG_ERR_CORE_TOO_MANY_CONNECTIONS', retry: true };
    }
    return undefined;
  }

  /**
   * `Host`, then the host a trusted proxy forwarded (`X-Forwarded-Host`, `Forwarded:
   * host=`): the one `Request.getHost()` reports must be in the list as well, or a page
   * behind the proxy would see a name nobody allowed.
   */
  #checkHost(req: IncomingMessage): HostCheckResult | undefined {
    const hostCheck = this.#o.hostCheck;
    if (!hostCheck) return undefined;
    const direct = hostCheck(req.headers.host);
    if (!direct.ok || this.#o.trust === undefined) return direct;
    const forwarded = resolveForwarded(req.socket?.remoteAddress, req.headers, this.#o.trust).host;
    if (forwarded === undefined) return direct;
    const text =
      forwarded.port === undefined ? forwarded.hostname : `${forwarded.hostname}:${forwarded.port}`;
    return hostCheck(text);
  }

  /** Answers `res` with the refusal and returns true, or returns false when it is admitted. */
  refuseRequest(req: IncomingMessage, res: ServerResponse): boolean {
    const refusal = this.check(req);
    if (refusal === undefined) return false;
    this.#o.onRefusal?.(refusal.code);
    this.#o.logger.debug('HTTP request refused', {
      code: refusal.code,
      status: refusal.status,
      host: req.headers.host,
    });
    refuseRequest(
      res,
      refusal.status,
      refusal.code,
      refusal.retry ? RETRY_AFTER_SECONDS : undefined,
      refusal.message,
    );
    return true;
  }

  /**
   * Admits an upgrade, or answers it and returns false: `draining` refuses with 503, then
   * {@link check}, then the per-address slot, which is given back when `socket` closes.
   */
  admitUpgrade(req: IncomingMessage, socket: Duplex, clientId: string, draining: boolean): boolean {
    const refusal = draining ? DRAINING : this.check(req, true);
    if (refusal !== undefined) {
      this.#o.onRefusal?.(refusal.code);
      this.#o.logger.debug('WebSocket upgrade refused', {
        code: refusal.code,
        status: refusal.status,
        clientId,
      });
      refuseUpgrade(
        socket,
        refusal.status,
        refusal.code,
        refusal.retry ? RETRY_AFTER_SECONDS : undefined,
        refusal.message,
      );
      return false;
    }
    const { gate, clientAddress } = this.#o;
    if (gate === undefined || clientAddress === undefined) return true;
    const ip = clientAddress(req);
    if (gate.takeAddress(ip, socket)) return true;
    this.#o.onRefusal?.('PKG_ERR_CORE_TOO_MANY_CONNECTIONS_PER_IP');
    this.#o.logger.notice('WebSocket upgrade refused: too many connections from the address', {
      code: 'PKG_ERR_CORE_TOO_MANY_CONNECTIONS_PER_IP',
      ip,
      group: gate.keyOf(ip),
      clientId,
    });
    refuseUpgrade(socket, 503, 'PKG_ERR_CORE_TOO_MANY_CONNECTIONS_PER_IP', RETRY_AFTER_SECONDS);
    return false;
  }
}
