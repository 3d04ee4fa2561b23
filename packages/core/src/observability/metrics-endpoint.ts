/**
 * `metrics_path`: the metrics text over HTTP, for a Prometheus scraper. Readable by the
 * addresses of `metrics_allow` (default loopback only; matched by the same code as
 * `trust_proxy`) and by a request with `Authorization: Bearer <metrics_token>` when a token
 * is set. A request that a proxy on an allowed address forwarded (it carries
 * `X-Forwarded-For` / `Forwarded` and the proxy is not trusted) needs the token: otherwise
 * every client of a reverse proxy on the same machine would read the metrics.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { Response, type Request, type TrustPredicate } from '@pkg/http';

/** What the endpoint needs. */
export interface MetricsEndpointOptions {
  /** The path it answers (exact match, GET and HEAD). */
  readonly path: string;
  /** Addresses that may read the metrics (compiled `metrics_allow`). */
  readonly allow: TrustPredicate;
  /** The bearer token that also grants access, or null. */
  readonly token: string | null;
  /** `trust_proxy`: a forwarded request from a trusted proxy is judged by its client address. */
  readonly trust: TrustPredicate;
  /** The exposition text and its content type. */
  readonly read: () => Promise<{ text: string; contentType: string }>;
}

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** Compares a presented token with the configured one in constant time. */
export function tokenMatches(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

/** True when the request may read the metrics; see the module comment. */
export function metricsAllowed(request: Request, options: MetricsEndpointOptions): boolean {
  const auth = request.getHeader('authorization');
  if (options.token !== null && auth !== undefined && /^bearer /i.test(auth)) {
    return tokenMatches(auth.slice(7).trim(), options.token);
  }
  const peer = request.getRemoteAddress();
  const forwarded = request.hasHeader('x-forwarded-for') || request.hasHeader('forwarded');
  if (forwarded && !options.trust(peer)) return false;
  return options.allow(request.getIpAddress());
}

/** Wraps a dispatch function: `GET path` answers the metrics (or 403), the rest goes on. */
export function withMetricsEndpoint(
  options: MetricsEndpointOptions,
  next: (request: Request) => Response | Promise<Response>,
): (request: Request) => Response | Promise<Response> {
  return (request) => {
    if (request.getPath() !== options.path) return next(request);
    const method = request.getMethod().toUpperCase();
    if (method !== 'GET' && method !== 'HEAD') {
      return Response.error(
        405,
        { code: 'PKG_ERR_CORE_METHOD_NOT_ALLOWED' },
        { Allow: 'GET, HEAD' },
      );
    }
    if (!metricsAllowed(request, options)) {
      return Response.error(403, {
        code: 'PKG_ERR_CORE_METRICS_FORBIDDEN',
        message:
          'The metrics are readable from the addresses of metrics_allow, or with Authorization: Bearer <metrics_token>.',
      });
    }
    return options
      .read()
      .then(
        ({ text, contentType }) =>
          new Response(text, 200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' }),
      );
  };
}
