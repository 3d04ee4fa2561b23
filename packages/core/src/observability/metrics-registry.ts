/**
 * The prom-client side of metrics: loads the optional peer `prom-client` (only when metrics
 * are turned on), defines every metric of docs/observability.md on a registry of the
 * server's own, and reads the server's tables when it is scraped. Gauges of things the
 * server keeps (connections by state, rooms, sessions) are read from those tables at scrape
 * time rather than counted up and down, so they cannot drift from what is there. A gauge
 * with a known set of label values exports every one of them, at 0 when nothing is there.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type * as PromClient from 'prom-client';
import { createCoreError } from '../errors';
import {
  AUTH_CLOSES,
  BoundedLabel,
  CONNECTION_LABELS,
  SLOW_CONSUMER_CLOSE,
  closeCodeLabel,
  inboundEventLabel,
  methodLabel,
  OTHER,
  type MetricsRecorder,
} from './metrics';
import { FastCounter, FastHistogram } from './metrics-series';

/** The outcomes a recovery can have: a bounded label (see RecoveryFailureReason of @pkg/wire). */
const RECOVERY_OUTCOMES: ReadonlySet<string> = new Set([
  'recovered',
  'epoch_changed',
  'too_far_behind',
  'not_kept',
  'invalid_position',
  'already_joined',
  'messages_lost',
]);

type Prom = typeof PromClient;

/** What the server reports when it is scraped. */
export interface MetricsSources {
  /** WebSocket connections by `state` and protocol version (`'0'` / `'1'`), away sessions included. */
  connections(): Iterable<readonly [state: string, protocol: string, count: number]>;
  /** Open TCP connections (HTTP and WebSocket). */
  openSockets(): number;
  /** Rooms with members, over all namespaces. */
  rooms(): number;
  /** Recovery sessions, with or without a connection. */
  sessions(): number;
  /** WebSocket handlers that have not finished. */
  pendingHandlers(): number;
  /** Bytes received and sent so far by the WebSocket connections still open. */
  liveBytes(): { readonly received: number; readonly sent: number };
  /** The adapter's link state (`local` for the in-memory one). */
  adapterState(): string;
  /** Numbers a cluster adapter reports (`stats()` of the Redis adapter), if any. */
  adapterStats(): Readonly<Record<string, unknown>> | undefined;
  /** Whether an inbound event has a handler (event labels are bounded by this). */
  hasHandler(event: string): boolean;
  /**
   * Binary messages not sent because their client does not take binary frames (a version 0
   * connection): the WebSocket handler's `skippedBinary`. Optional for other sources.
   */
  binarySkipped?(): number;
}

/** What the Redis adapter's `stats()` reports, as counters and gauges. */
const ADAPTER_COUNTERS: ReadonlyArray<readonly [key: string, name: string, help: string]> = [
  ['published', 'adapter_published_total', 'Broadcasts published for the other instances.'],
  ['received', 'adapter_received_total', 'Broadcasts received from other instances.'],
  [
    'lost',
    'adapter_publish_errors_total',
    'Messages for other instances lost because the cluster backend could not be reached.',
  ],
  [
    'dropped',
    'adapter_dropped_total',
    'Messages from the cluster backend dropped as malformed, foreign or of an unknown version.',
  ],
  ['refusedJoins', 'adapter_refused_joins_total', 'Room joins refused by the subscribe budget.'],
];
const ADAPTER_STATES = ['local', 'connecting', 'connected', 'degraded', 'closed'] as const;

/** Handler durations, in seconds: from half a millisecond to ten seconds. */
const DURATION_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/**
 * Where prom-client is looked up: from this file when it is CommonJS, from the entry script
 * and the working directory otherwise (an ESM build has no __filename).
 */
function defaultBases(): Array<string | undefined> {
  return [
    typeof __filename === 'string' ? __filename : undefined,
    process.argv[1],
    join(process.cwd(), 'index.js'),
  ];
}

/** Loads prom-client as the application would; a clear error when it is missing. */
export function loadPromClient(bases: ReadonlyArray<string | undefined> = defaultBases()): Prom {
  for (const base of bases) {
    if (base === undefined || base === '') continue;
    try {
      return createRequire(base)('prom-client') as Prom;
    } catch {
      // Try the next place.
    }
  }
  throw createCoreError(
    Error,
    'PKG_ERR_CORE_METRICS_UNAVAILABLE',
    'Metrics are turned on (metrics_path or server.metrics()) but the package "prom-client" is not installed: run `npm install prom-client` (version 15), or set metrics_path to null.',
  );
}

/** Process metrics (CPU, memory, event-loop lag, GC) per prefix: one collector per process. */
const processRegistries = new Map<string, PromClient.Registry>();

function processRegistry(prom: Prom, prefix: string): PromClient.Registry {
  let registry = processRegistries.get(prefix);
  if (registry === undefined) {
    registry = new prom.Registry();
    prom.collectDefaultMetrics({ register: registry, prefix });
    processRegistries.set(prefix, registry);
  }
  return registry;
}

/** Builds the recorder of one server on a registry of its own. */
export function createPromMetrics(prefix: string, sources: MetricsSources): MetricsRecorder {
  const prom = loadPromClient();
  const register = new prom.Registry();
  const registers = [register];
  const n = (name: string): string => prefix + name;
  const counter = (name: string, help: string, labelNames: string[] = []): FastCounter => {
    const metric = new FastCounter(n(name), help, labelNames);
    register.registerMetric(metric as never);
    return metric;
  };
  const histogram = (name: string, help: string, labelNames: string[]): FastHistogram => {
    const metric = new FastHistogram(n(name), help, labelNames, DURATION_BUCKETS);
    register.registerMetric(metric as never);
    return metric;
  };

  const inEvents = inboundEventLabel(sources.hasHandler);
  const outEvents = new BoundedLabel();
  const refusalCodes = new BoundedLabel();
  const routes = new BoundedLabel();

  const messagesIn = counter('ws_messages_received_total', 'WebSocket messages received, by event.', ['event']); // prettier-ignore
  const messagesOut = counter('ws_messages_sent_total', 'WebSocket messages handed to clients (sends, answers, broadcast deliveries), by event.', ['event']); // prettier-ignore
  const wsDuration = histogram('ws_handler_duration_seconds', 'Time from a WebSocket message to the end of its handler chain, by event.', ['event']); // prettier-ignore
  const crossInstance = histogram('adapter_delivery_latency_seconds', 'Time from a broadcast published by another instance to its delivery here (the two clocks compared).', []); // prettier-ignore
  const httpDuration = histogram('http_request_duration_seconds', 'Time from an HTTP request to its answer, by method, route pattern and status code.', ['method', 'route', 'status_code']); // prettier-ignore
  const recoveries = counter('history_recoveries_total', 'Room recoveries (join_room since, $hello.positions), by outcome: recovered or the reason it failed.', ['outcome']); // prettier-ignore
  const refusals = counter('refusals_total', 'Messages, requests and connections refused, by error code.', ['code']); // prettier-ignore
  const connects = counter('ws_connects_total', 'WebSocket connections upgraded, by protocol version offered.', ['protocol']); // prettier-ignore
  const disconnects = counter('ws_disconnects_total', 'WebSocket connections ended, by close code.', ['code']); // prettier-ignore
  const slowConsumers = new prom.Counter({ name: n('ws_slow_consumer_drops_total'), help: 'WebSocket clients dropped because their send buffer exceeded max_buffered_amount (close 1013).', registers }); // prettier-ignore
  let closedIn = 0;
  let closedOut = 0;

  new prom.Gauge({
    name: n('ws_connections'),
    help: 'WebSocket connections by state and protocol version (away: sessions waiting for a resume).',
    labelNames: ['state', 'protocol'],
    registers,
    collect() {
      this.reset();
      for (const labels of CONNECTION_LABELS) this.set(labels, 0);
      for (const [state, protocol, count] of sources.connections()) {
        this.set({ state, protocol }, count);
      }
    },
  });
  const gauge = (name: string, help: string, read: () => number): void => {
    new prom.Gauge({ name: n(name), help, registers, collect() { this.set(read()); } }); // prettier-ignore
  };
  gauge('open_sockets', 'Open TCP connections, HTTP and WebSocket.', sources.openSockets);
  gauge('rooms', 'Rooms with at least one member on this instance.', sources.rooms);
  gauge('sessions', 'Recovery sessions (protocol version 1), connected or away.', sources.sessions);
  gauge('ws_pending_handlers', 'WebSocket handlers not finished yet.', sources.pendingHandlers);
  const bytes = (name: string, help: string, read: () => number): void => {
    new prom.Counter({ name: n(name), help, registers, collect() { this.reset(); this.inc(read()); } }); // prettier-ignore
  };
  bytes('ws_received_bytes_total', 'Bytes received on WebSocket connections (frames included).', () => closedIn + sources.liveBytes().received); // prettier-ignore
  bytes('ws_sent_bytes_total', 'Bytes sent on WebSocket connections (frames included).', () => closedOut + sources.liveBytes().sent); // prettier-ignore
  bytes('ws_binary_skipped_total', 'Binary messages not sent to a client that does not take binary frames (protocol version 0).', () => sources.binarySkipped?.() ?? 0); // prettier-ignore
  new prom.Gauge({
    name: n('adapter_state'),
    help: 'The link of the adapter to the other instances: 1 for the current state.',
    labelNames: ['state'],
    registers,
    collect() {
      const now = sources.adapterState();
      for (const state of ADAPTER_STATES) this.set({ state }, state === now ? 1 : 0);
    },
  });
  for (const [key, name, help] of ADAPTER_COUNTERS) {
    new prom.Counter({
      name: n(name),
      help,
      registers,
      collect() {
        const value = sources.adapterStats()?.[key];
        this.reset();
        if (typeof value === 'number') this.inc(value);
      },
    });
  }

  const seconds = (started: number): number => (performance.now() - started) / 1000;
  const defaults = processRegistry(prom, prefix);
  return {
    contentType: register.contentType,
    messageIn: (event) => messagesIn.inc([inEvents.of(event)]),
    messageOut: (event, count) => {
      if (count > 0) messagesOut.inc([outEvents.of(event)], count);
    },
    wsHandled: (event, started) => wsDuration.observe([inEvents.of(event)], seconds(started)),
    httpHandled: (method, route, status, started) =>
      httpDuration.observe(
        [methodLabel(method), routes.of(route), String(status)],
        seconds(started),
      ),
    refused: (code) => refusals.inc([refusalCodes.of(code)]),
    crossInstance: (ms) => crossInstance.observe([], ms / 1000),
    recovery: (outcome) => recoveries.inc([RECOVERY_OUTCOMES.has(outcome) ? outcome : OTHER]),
    connected: (protocol) => connects.inc([protocol]),
    disconnected: (code, bytesIn, bytesOut) => {
      disconnects.inc([closeCodeLabel(code)]);
      if (code === SLOW_CONSUMER_CLOSE) slowConsumers.inc();
      const auth = AUTH_CLOSES.get(code);
      if (auth !== undefined) refusals.inc([refusalCodes.of(auth)]);
      closedIn += bytesIn;
      closedOut += bytesOut;
    },
    text: async () => (await register.metrics()) + (await defaults.metrics()),
    close: () => register.clear(),
  };
}
