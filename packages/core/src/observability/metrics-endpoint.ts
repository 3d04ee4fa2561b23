/**
 * `metrics_path`: the metrics text over HTTP, for a Prometheus scraper. Readable by the
 * addresses of `metrics_allow` (default loopback only; matched by the same code as
 * `trust_proxy`) and by a request with `Authorization: Bearer <metrics_token>` when a token
 * is set. A request that a proxy on an allowed address forwarded (it carries
 * `X-Forwarded-For` / `Forwarded` and the proxy is not trusted) needs the token: otherwise
 * every client of a reverse proxy on the same machine would read the metrics. The decision
 * is access-check.ts's, which `@pkg/admin` uses too.
 */
import { Response, type Request, type TrustPredicate } from '@pkg/http';
import { accessAllowed } from './access-check';

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

/** True when the request may read the metrics; see the module comment (and access-check.ts). */
export function metricsAllowed(request: Request, options: MetricsEndpointOptions): boolean {
  return accessAllowed(request, options);
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
