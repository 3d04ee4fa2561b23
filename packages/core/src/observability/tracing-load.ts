/**
 * Loading `@opentelemetry/api` for the `tracing` option. It is an optional peer: an
 * application that leaves tracing off never loads it, and one that turns tracing on without
 * installing it gets PKG_ERR_CORE_TRACING_UNAVAILABLE from `run()`.
 */
import type { EnvelopeMeta } from '@pkg/wire';
import { createCoreError } from '../errors';
import { Tracing, type IsEventRoute, type OtelApi, type RouteOf } from './tracing';

/** Imports `@opentelemetry/api`; rejects with PKG_ERR_CORE_TRACING_UNAVAILABLE when it is missing. */
export async function loadOtelApi(
  importer: () => Promise<unknown> = () => import('@opentelemetry/api'),
): Promise<OtelApi> {
  let loaded: unknown;
  try {
    loaded = await importer();
  } catch (err) {
    throw createCoreError(
      Error,
      'PKG_ERR_CORE_TRACING_UNAVAILABLE',
      `ServerConfig "tracing" is true but @opentelemetry/api could not be loaded (${err instanceof Error ? err.message : String(err)}). Install it next to @pkg/core (npm install @opentelemetry/api) and register a tracer provider, or set tracing: false.`,
    );
  }
  // An ES module namespace, or CommonJS exports under `default` when bundled that way.
  const api = loaded as Partial<OtelApi> & { default?: Partial<OtelApi> };
  const candidate = typeof api.trace === 'object' ? api : api.default;
  if (candidate === undefined || typeof candidate.trace?.getTracer !== 'function') {
    throw createCoreError(
      Error,
      'PKG_ERR_CORE_TRACING_UNAVAILABLE',
      'ServerConfig "tracing" is true but the module loaded as @opentelemetry/api has no trace API; install @opentelemetry/api 1.x.',
    );
  }
  return candidate as OtelApi;
}

/**
 * Where the server's tracing lives: empty until `run()` loaded the API (and always empty
 * with `tracing: false`, where nothing consults it on a hot path).
 */
export class TracingSlot {
  current: Tracing | null = null;

  /**
   * Loads the API and builds the spans' maker; rejects when the API is missing. `routeOf`
   * names HTTP spans; `isEventRoute` tells which WebSocket events are the app's routes.
   */
  async load(
    routeOf: RouteOf,
    importer?: () => Promise<unknown>,
    isEventRoute?: IsEventRoute,
  ): Promise<void> {
    const api = await loadOtelApi(importer);
    this.current = new Tracing(api, routeOf, isEventRoute);
  }

  /** The trace id of the active span (undefined: no span, or before run()). */
  readonly traceId = (): string | undefined => this.current?.traceId();

  /** The trace context a broadcast made now carries (undefined: no active span). */
  readonly publish = (
    event: string,
    room: string | null,
    namespace: string | null,
  ): EnvelopeMeta | undefined => this.current?.publish(event, room, namespace);

  /** Runs a delivery asked for by another instance in its span (or plainly, before run()). */
  readonly deliver = <T>(meta: EnvelopeMeta, text: string | Uint8Array, run: () => T): T =>
    this.current === null ? run() : this.current.deliver(meta, text, run);
}
