import { Response, type Request } from '@pkg/http';
import type { AdapterState } from '../cluster/adapter';

/** The health-check document (spec: "Health-check document"). */
export interface HealthDocument {
  /** `healthy` while serving, `draining` while `close()` is shutting the server down. */
  status: HealthStatus;
  /** Unix time in whole seconds. */
  timestamp: number;
  server: {
    /** WebSocket clients of this process in state `open` (accepted; as `getClientCount()`). */
    clients: number;
    /** Whole seconds since `run()` started listening. */
    uptime: number;
    /** The uptime as text, e.g. `2h 5m 9s`. */
    uptime_human: string;
  };
  /**
   * The cluster adapter's link to the other instances (`connected`, `degraded`, ...); absent
   * with the in-memory adapter. `degraded` still answers 200: this instance serves its own
   * clients, so a Redis outage must not empty the load balancer.
   */
  adapter?: AdapterState;
}

export type HealthStatus = 'healthy' | 'draining';

/** Formats whole seconds as hours, minutes and seconds: `0h 0m 7s`, `49h 3m 2s`. */
export function formatUptime(totalSeconds: number): string {
  const s = Math.max(0, Math.floor(totalSeconds));
  const hours = Math.floor(s / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  return `${hours}h ${minutes}m ${s % 60}s`;
}

/** Builds the document; `startedAt` and `now` are epoch milliseconds. */
export function buildHealthDocument(
  status: HealthStatus,
  clients: number,
  startedAt: number,
  now: number = Date.now(),
  adapter?: AdapterState,
): HealthDocument {
  const uptime = Math.max(0, Math.floor((now - startedAt) / 1000));
  const doc: HealthDocument = {
    status,
    timestamp: Math.floor(now / 1000),
    server: { clients, uptime, uptime_human: formatUptime(uptime) },
  };
  if (adapter !== undefined && adapter !== 'local') doc.adapter = adapter;
  return doc;
}

function trimTrailingSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/** The authority of an absolute-form request-target (`http://host`), which the path follows. */
const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i;

/** The path of a request-target as sent (origin or absolute form), without query or fragment. */
function targetPath(target: string): string {
  let rest = target;
  if (!rest.startsWith('/')) {
    const authority = ABSOLUTE_FORM.exec(rest);
    if (authority === null) return rest;
    rest = rest.slice(authority[0].length);
  }
  const end = rest.search(/[?#]/);
  const path = end === -1 ? rest : rest.slice(0, end);
  return path === '' ? '/' : path;
}

/** Whether a request (its method and request-target as sent) is a health check. */
export type HealthCheckMatch = (method: string, target: string) => boolean;

/**
 * The one rule of what a health check is, shared by admission (which lets it through while
 * draining and into the connection reserve) and the health check step (which answers it), so
 * the two never disagree: a GET or HEAD whose path is `path`, one trailing slash ignored on
 * either side, with any query. The path is compared as sent (percent-escapes not decoded),
 * as routes are. Null when there is no health check.
 */
export function healthCheckMatch(path: string | null): HealthCheckMatch | null {
  if (path === null) return null;
  const healthPath = trimTrailingSlash(path);
  return (method, target) => {
    if (trimTrailingSlash(targetPath(target)) !== healthPath) return false;
    const upper = method.toUpperCase();
    return upper === 'GET' || upper === 'HEAD';
  };
}

/**
 * The health check as a step before routing: a request {@link healthCheckMatch} accepts is
 * answered with the document (200 while healthy, 503 while draining, `Cache-Control:
 * no-store`); every other request goes to `next`. With `path` null the step is left out and
 * `next` itself is returned.
 */
export function withHealthCheck(
  path: string | null,
  document: () => HealthDocument,
  next: (request: Request) => Response | Promise<Response>,
): (request: Request) => Response | Promise<Response> {
  const isHealthCheck = healthCheckMatch(path);
  if (isHealthCheck === null) return next;
  return (request) => {
    if (isHealthCheck(request.getMethod(), request.getRequestTarget())) {
      const doc = document();
      return Response.json(doc, doc.status === 'healthy' ? 200 : 503, {
        'Cache-Control': 'no-store',
      });
    }
    return next(request);
  };
}
