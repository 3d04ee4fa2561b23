/**
 * The observability of one server, built once by the pipeline: the metrics holder the call
 * sites read (null while metrics are off), request ids and log scope around requests and
 * messages, and the `metrics_path` endpoint. Metrics turn on when `metrics_path` is set (at
 * construction, so a missing prom-client fails early) or at the first `server.metrics()`.
 */
import type { Request, Response } from '@pkg/http';
import type { WsClient } from '@pkg/ws-protocol';
import type { ServerConfig } from '../config/server-config';
import { withMetricsEndpoint } from './metrics-endpoint';
import type { MetricsRecorder } from './metrics';
import { createPromMetrics, type MetricsSources } from './metrics-registry';
import { Observers, type MetricsHolder } from './request-context';

export { REQUEST_ID_ATTRIBUTE } from './request-context';

type Dispatch = (request: Request) => Response | Promise<Response>;

/** The wire byte counts of a `ws` connection (its TCP socket's; 0 for an in-memory one). */
export function socketBytes(client: WsClient): { received: number; sent: number } {
  const raw = (client.socket as unknown as { _socket?: { bytesRead?: number; bytesWritten?: number } })._socket; // prettier-ignore
  return {
    received: typeof raw?.bytesRead === 'number' ? raw.bytesRead : 0,
    sent: typeof raw?.bytesWritten === 'number' ? raw.bytesWritten : 0,
  };
}

/** The event of a serialised envelope (`{"event":"name",...`); event names need no escapes. */
export function eventOfText(text: string): string {
  if (!text.startsWith('{"event":"')) return 'other';
  const end = text.indexOf('"', 10);
  return end === -1 ? 'other' : text.slice(10, end);
}

/** What the server exposes to build the metrics sources; read only when scraped. */
export type SourcesFactory = () => MetricsSources;

export class Observability {
  /** Read by every call site: `holder.metrics?.x(...)`. */
  readonly holder: MetricsHolder = { metrics: null };
  readonly #config: ServerConfig;
  #sources: SourcesFactory | null = null;
  #observers: Observers | null = null;

  constructor(config: ServerConfig) {
    this.#config = config;
  }

  /** Called once the server's parts exist; turns metrics on when metrics_path is set. */
  attach(
    sources: SourcesFactory,
    routeOf: (request: Request) => string,
    traceId?: () => string | undefined,
  ): void {
    this.#sources = sources;
    this.#observers = new Observers({
      holder: this.holder,
      header: this.#config.get('request_id_header'),
      responseHeader: this.#config.get('request_id_response_header'),
      scope: this.#config.get('log_context'),
      ...(traceId === undefined ? {} : { traceId }),
      trust: this.#config.getTrustPredicate(),
      routeOf,
    });
    if (this.#config.get('metrics_path') !== null) this.enable();
  }

  get observers(): Observers {
    return this.#observers!;
  }

  /** Turns metrics on (loads prom-client; throws PKG_ERR_CORE_METRICS_UNAVAILABLE without it). */
  enable(): MetricsRecorder {
    this.holder.metrics ??= createPromMetrics(this.#config.get('metrics_prefix'), this.#sources!());
    return this.holder.metrics;
  }

  /** The metrics text; turns metrics on at the first call. */
  text(): Promise<string> {
    try {
      return this.enable().text();
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** The HTTP dispatch with the metrics endpoint (when metrics_path is set) and request ids. */
  wrapHttp(dispatch: Dispatch): Dispatch {
    const path = this.#config.get('metrics_path');
    const inner =
      path === null
        ? dispatch
        : withMetricsEndpoint(
            {
              path,
              allow: this.#config.getMetricsAllow(),
              token: this.#config.get('metrics_token'),
              trust: this.#config.getTrustPredicate(),
              read: async () => {
                const metrics = this.enable();
                return { text: await metrics.text(), contentType: metrics.contentType };
              },
            },
            dispatch,
          );
    return this.observers.http(inner);
  }

  close(): void {
    this.holder.metrics?.close();
  }
}
