import type { IncomingMessage } from 'node:http';
import {
  HttpHandler,
  MemoryRateLimitStore,
  RateLimiter,
  resolveClientAddress,
  type Request,
  type Response,
} from '@pkg/http';
import { SUBPROTOCOL } from '@pkg/wire';
import type { LoggerInterface } from '@pkg/logger';
import { WebSocketHandler, createClientIdGenerator, guardLogger } from '@pkg/ws-protocol';
import { AdapterBridge } from './cluster/adapter-bridge';
import { AdapterSlot } from './cluster/adapter-slot';
import { ClusterQueries } from './cluster/cluster-query';
import { RoomHistory } from './history/room-history';
import { HISTORY_DOCS } from './history/asyncapi-history';
import { ApiDocs } from './docs/api-docs';
import { PRESENCE_EVENT_DOCS } from './presence/presence-docs';
import { ClientRegistry } from './ws/client-registry';
import type { PendingHandlers } from './protocol/pending-handlers';
import { ConnectionGate } from './lifecycle/connection-gate';
import { compileHostCheck } from './lifecycle/host-check';
import { withHttpTimeout } from './http/timeouts';
import { composeHttp, type HttpDispatch, type HttpStage } from './http/http-stages';
import { ControllerRegistry } from './routing/controller-registry';
import { withHealthCheck, type HealthDocument } from './lifecycle/health';
import { HttpDispatcher } from './routing/http-dispatch';
import { Lifecycle } from './lifecycle/lifecycle';
import { Middleware } from './routing/middleware';
import { ProtocolV1 } from './protocol/protocol-v1';
import { ConnectionTable } from './protocol/connections';
import { historyBudgetLimits } from './history/history-budget';
import { NamespaceManager } from './ws/namespace-manager';
import { Router } from './routing/router';
import { PresenceTracker } from './presence/presence';
import { PresenceRooms } from './presence/presence-rooms';
import type { ServerConfig } from './config/server-config';
import { rateLimitKey, ReplaceableStore } from './routing/rate-limit-key';
import { WsDispatcher } from './routing/ws-dispatch';
import { Observability, socketBytes } from './observability/observability';
import { RefusalCounts } from './observability/refusal-counts';
import { TracingSlot } from './observability/tracing-load';

/** What the pipeline is built from. */
export interface PipelineOptions {
  readonly config: ServerConfig;
  readonly logger: LoggerInterface;
  readonly health: () => HealthDocument;
}

/** The parts of a server, wired to one another. */
export interface Pipeline {
  readonly middleware: Middleware;
  readonly namespaces: NamespaceManager;
  readonly rateLimitStore: ReplaceableStore;
  readonly rateLimiter: RateLimiter;
  readonly clients: ClientRegistry;
  readonly httpHandler: HttpHandler;
  readonly wsHandler: WebSocketHandler;
  readonly router: Router;
  readonly lifecycle: Lifecycle;
  readonly adapter: AdapterBridge;
  readonly protocol: ProtocolV1;
  readonly docs: ApiDocs;
  readonly pendingHandlers: PendingHandlers;
  readonly gate: ConnectionGate;
  readonly history: RoomHistory;
  readonly observability: Observability;
  /** With `tracing` on: the spans' maker, filled by run(); null with tracing off. */
  readonly tracing: TracingSlot | null;
  readonly presence: PresenceTracker;
  /** The HTTP stages in order, the first one outermost (their names, for docs and tests). */
  readonly httpStages: readonly string[];
  /** The one table of WebSocket connections (read by `server.listConnections`). */
  readonly connections: ConnectionTable;
  /** Refusals by code since the start (`server.getRefusals`). */
  readonly refusals: RefusalCounts;
  /** The cluster queries this instance answers (`server.answerClusterQuery`). */
  readonly queries: ClusterQueries;
}

/**
 * The composition root: builds the server's parts once, from the configuration, each from
 * parts built before it (docs/core-layout.md shows the path a message takes through them).
 * Nothing here runs per message: the per-connection logic lives in protocol/.
 *
 * - HTTP: `node:http` `request` -> Lifecycle (front door) -> HttpHandler.handle (@pkg/http)
 *   -> the HTTP stages below, in order -> HttpDispatcher (routes) -> handler.
 * - WebSocket: WebSocketHandler (@pkg/ws-protocol) -> ProtocolV1.onMessage (the connection's
 *   state) -> Messages (busy check, OnConnect order) -> WsDispatcher (routes; returns an
 *   outcome) -> handler; the outcome leaves through the connection's door (Outbound).
 */
export function buildPipeline(options: PipelineOptions): Pipeline {
  const { config } = options;
  // Every call the server makes into the logger is guarded: a logger that throws loses a
  // line, never a connection or the process.
  const logger = guardLogger(options.logger);
  const nextId = createClientIdGenerator();
  // trust_proxy was compiled once by ServerConfig; both protocols use that predicate.
  const trust = config.getTrustPredicate();
  // The client address of an upgrade is asked for by admission and by the handshake: it is
  // resolved (trust proxy, IP parsing) once per request, and kept on the request under this
  // server's own symbol (no WeakMap entry per upgrade).
  const addressKey = Symbol('client address');
  const clientAddress = (req: IncomingMessage): string => {
    const holder = req as unknown as Record<symbol, string | undefined>;
    let address = holder[addressKey];
    if (address === undefined) {
      address = resolveClientAddress(req.socket.remoteAddress ?? '', req.headers, trust);
      holder[addressKey] = address;
    }
    return address;
  };

  // ---------------------------------------------------------------- observation
  // Metrics call sites read `observability.holder.metrics` (null while metrics are off).
  const observability = new Observability(config);
  const metered = observability.holder;
  const refusals = new RefusalCounts();
  // tracing off: null, and nothing below wraps or consults it.
  const tracing = config.isTracing() ? new TracingSlot() : null;

  // ---------------------------------------------------------------- clients and rooms
  const connections = new ConnectionTable();
  const clients = new ClientRegistry(connections);
  const namespaces = new NamespaceManager({
    maxRoomsPerClient: config.get('max_rooms_per_client'),
    maxNameLength: config.get('max_room_name_length'),
  });
  const middleware = new Middleware();
  const rateLimitStore = new ReplaceableStore(new MemoryRateLimitStore());
  const rateLimiter = new RateLimiter(rateLimitStore);

  // ---------------------------------------------------------------- the two protocols
  const wsHandler = new WebSocketHandler({
    allowedOrigins: config.getWebSocketAllowedOrigins(),
    allowMissingOrigin: config.getAllowMissingOrigin(),
    maxPayload: config.getMaxMessageSize(),
    heartbeatInterval: config.getHeartbeatInterval(),
    heartbeatTimeout: config.getHeartbeatTimeout(),
    maxBufferedAmount: config.getMaxBufferedAmount(),
    perMessageDeflate: config.getPerMessageDeflate(),
    handshakeTimeout: config.getHandshakeTimeout(),
    closeTimeout: config.getWebSocketCloseTimeout(),
    binaryMessages: config.getWebSocketBinaryMessages(),
    // Protocol version 1 carries binary frames (docs/protocol.md, "Binary frames"): only a
    // connection that said `$hello` (a `pkg.v1` one served as version 0 takes none).
    binaryFrames:
      config.getWebSocketBinaryFrames() &&
      ((client) =>
        client.socket.protocol === SUBPROTOCOL && connections.get(client.id)?.hello === true),
    prototypeKeys: config.getJsonPrototypeKeys(),
    keepRequest: config.getWebSocketKeepRequest(),
    logger,
    clientIp: clientAddress,
    generateId: nextId,
    controlEvents: true,
    maxMessagesPerSecond: config.get('ws_max_messages_per_second'),
    maxBytesPerSecond: config.get('ws_max_bytes_per_second'),
    maxProtocolErrors: config.get('ws_max_protocol_errors'),
    errorReplyInterval: config.get('ws_error_reply_interval'),
    maxMessagesPerTurn: config.get('ws_max_messages_per_turn'),
    onRefusal: (code) => {
      refusals.count(code);
      metered.metrics?.refused(code);
    },
  });
  const gate = new ConnectionGate({
    maxConnections: config.getMaxConnections(),
    reserve: config.get('connection_reserve'),
    maxPerIp: config.get('max_connections_per_ip'),
    ipv6Subnet: config.get('ipv6_subnet'),
  });
  const allowedHosts = config.getAllowedHosts();
  const httpHandler = new HttpHandler({
    cors: config.getCors(),
    trustProxy: trust,
    maxBodySize: config.getMaxBodySize(),
    prototypeKeys: config.getJsonPrototypeKeys(),
    logger,
    debug: config.isDebug(),
  });

  // ---------------------------------------------------------------- routes
  const registry = new ControllerRegistry();
  const routes = new WsDispatcher(registry, {
    middleware,
    rateLimiter,
    logger,
    debug: config.isDebug(),
    unknownEvent: config.getUnknownEventPolicy(),
    rateLimitKey: rateLimitKey(
      config.get('ws_rate_limit_key'),
      (id) => wsHandler.getClient(id)?.ip,
      config.get('ipv6_subnet'),
    ),
    ...(tracing === null ? {} : { handlerFailed: (err: unknown) => tracing.current?.failed(err) }),
  });
  const http = new HttpDispatcher(registry, {
    middleware,
    rateLimiter,
    logger,
    ipv6Subnet: config.get('ipv6_subnet'),
  });

  // ---------------------------------------------------------------- history, connections, presence
  // The current adapter, read by room history (its store) and the adapter bridge below.
  const slot = new AdapterSlot();
  const history = new RoomHistory({
    patterns: config.getHistory(),
    maxReplay: config.get('history_max_replay'),
    maxReplayBytes: config.get('history_max_replay_bytes'),
    logger,
    adapter: () => slot.adapter,
  });
  const protocol = new ProtocolV1({
    wsHandler,
    connections,
    clients,
    logger,
    messages: {
      routes,
      ws: wsHandler,
      logger,
      observability,
      tracing,
      maxPending: config.get('ws_max_pending'),
      handlerTimeout: config.get('ws_handler_timeout'),
      // Covers OnConnect itself (protocol version 1 runs it after $hello, not during hello_wait).
      connectTimeout: config.get('connect_timeout'),
    },
    recoveryWindow: config.get('recovery_window'),
    recoveryBuffer: config.get('recovery_buffer'),
    maxAwaySessions: config.get('max_away_sessions'),
    // By default as many away sessions per address as live connections it may have.
    maxAwaySessionsPerAddress:
      config.get('max_away_sessions_per_ip') ?? config.get('max_connections_per_ip'),
    ipv6Subnet: config.get('ipv6_subnet'),
    authTimeout: config.get('auth_timeout'),
    refreshGrace: config.get('auth_refresh_grace'),
    helloWait: config.get('hello_wait'),
    maxPendingRequests: config.get('max_pending_requests'),
    maxPendingServerRequests: config.get('max_pending_server_requests'),
    ackTimeout: config.get('ack_timeout'),
    history,
    historyBudget: historyBudgetLimits({
      requestsPerSecond: config.get('history_max_requests_per_second'),
      bytesPerSecond: config.get('history_max_bytes_per_second'),
      maxRooms: config.get('max_rooms_per_client'),
      maxReplayBytes: config.get('history_max_replay_bytes'),
    }),
    recoveryOutcome: (outcome) => metered.metrics?.recovery(outcome),
    maxNameLength: config.get('max_room_name_length'),
    isMember: (clientId, room, namespace) => namespaces.isInRoom(clientId, room, namespace),
  });
  // The spec's Router: registration and lookups; its dispatch() answers through the protocol.
  const router = new Router(registry, { ws: routes, http, fail: protocol.outbound.fail });
  // Presence reads the protocol layer (identity, version) and delivers through its door.
  const presence = new PresenceTracker({
    rooms: new PresenceRooms(config.getPresencePatterns()),
    interval: config.get('presence_interval'),
    maxList: config.get('presence_max_list'),
    maxMetaBytes: config.get('presence_max_meta_bytes'),
    nodeTimeout: config.get('presence_node_timeout'),
    logger,
    clientInfo: (clientId) => protocol.clientInfo(clientId),
    memberships: (clientId) => namespaces.getMemberships(clientId),
    deliver: (clientIds, text) => protocol.outbound.deliver(clientIds, text),
  });
  protocol.onAway(presence.awayChanged);

  // ---------------------------------------------------------------- the adapter
  const queries = new ClusterQueries();
  const adapter = new AdapterBridge({
    queries,
    slot,
    namespaces,
    clients,
    wsHandler,
    logger,
    history,
    ...(tracing === null ? {} : { traceContext: tracing.publish, runTraced: tracing.deliver }),
    attached: (attachedAdapter) => presence.replicate(attachedAdapter.presence),
    crossInstanceLatency: (ms) => metered.metrics?.crossInstance(ms),
  });
  // Deliveries and counts see only `open` connections (and away sessions).
  adapter.serve(protocol.local);
  protocol.serveRooms(adapter);
  // Room changes, whichever path made them: presence, and the positions recoveries reached
  // (forgotten when the client leaves the room).
  namespaces.setRoomListener((joined, clientId, room, namespace) => {
    if (!joined) protocol.roomLeft(clientId, room, namespace);
    if (presence.enabled) presence.roomChanged(joined, clientId, room, namespace);
  });

  // ---------------------------------------------------------------- documents
  const docs = new ApiDocs(registry, config.getApiInfo(), () =>
    history.enabled ? HISTORY_DOCS : null,
  );
  if (presence.enabled) {
    for (const [event, doc] of PRESENCE_EVENT_DOCS) docs.declareControlEvent(event, doc);
  }

  // ---------------------------------------------------------------- the front door
  const lifecycle = new Lifecycle({
    // PKG_ERR_CORE_TOO_MANY_CONNECTIONS -> too_many_connections, like the wire's codes.
    onRefusal: (code) => {
      const name = code.replace(/^PKG_ERR_CORE_/, '').toLowerCase();
      refusals.count(name);
      metered.metrics?.refused(name);
    },
    config,
    logger,
    clients,
    httpHandler,
    wsHandler,
    nextId,
    closeAdapter: () =>
      protocol
        .close()
        .then(() => {
          presence.close();
          return adapter.close();
        })
        .finally(() => history.close()),
    adapterState: () => adapter.state(),
    openClients: () => protocol.load().openClients,
    gate,
    hostCheck: allowedHosts === null ? null : compileHostCheck(allowedHosts),
    clientWork: protocol.pending,
    clientAddress,
    trust,
    backends: () => [
      { name: 'adapter', target: adapter.adapter },
      { name: 'rate-limit store', target: rateLimitStore.store },
    ],
    ...(tracing === null
      ? {}
      : {
          prepare: () =>
            tracing.load(
              (method, path) => registry.matchHttpRoute(method, path)?.route.path ?? null,
              undefined,
              (event) => routes.has(event),
            ),
        }),
  });

  observability.attach(
    () => ({
      connections: () => protocol.connectionStates(),
      openSockets: () => gate.open,
      rooms: () => {
        let n = 0;
        for (const byRoom of namespaces.rooms.values()) n += byRoom.size;
        return n;
      },
      sessions: () => protocol.load().sessions,
      pendingHandlers: () => protocol.pending.size,
      liveBytes: () => {
        let received = 0;
        let sent = 0;
        for (const client of wsHandler.getClients()) {
          const bytes = socketBytes(client);
          received += bytes.received;
          sent += bytes.sent;
        }
        return { received, sent };
      },
      binarySkipped: () => wsHandler.skippedBinary,
      adapterState: () => adapter.state() ?? 'local',
      adapterStats: () => {
        const stats = (adapter.adapter as { stats?: () => unknown }).stats;
        const value: unknown =
          typeof stats === 'function' ? stats.call(adapter.adapter) : undefined;
        return typeof value === 'object' && value !== null
          ? (value as Record<string, unknown>)
          : undefined;
      },
      hasHandler: (event) => routes.has(event),
    }),
    (request) => {
      const match = registry.matchHttpRoute(request.getMethod().toUpperCase(), request.getPath());
      if (match !== null) return match.route.path;
      const path = request.getPath();
      const fixed = [
        config.getHealthCheckPath(),
        config.get('metrics_path'),
        config.getOpenApiPath(),
        config.getAsyncApiPath(),
      ];
      return fixed.includes(path) ? path : 'unmatched';
    },
    tracing?.traceId,
  );

  // ---------------------------------------------------------------- the HTTP stages, in order
  const httpStages: HttpStage[] = [
    // Request ids, log scope, timing; the metrics endpoint.
    { name: 'observe', wrap: (next) => observability.wrapHttp(next) },
    ...(tracing === null ? [] : [{ name: 'trace', wrap: (next: HttpDispatch) => traceHttp(tracing, next) }]), // prettier-ignore
    // `Connection: close` on answers while the server drains.
    { name: 'drain', wrap: (next) => lifecycle.closeWhileDraining(next) },
    { name: 'health', wrap: (next) => withHealthCheck(config.getHealthCheckPath(), options.health, next) }, // prettier-ignore
    {
      name: 'docs',
      wrap: (next) =>
        docs.serve({ openapi: config.getOpenApiPath(), asyncapi: config.getAsyncApiPath() }, next),
    },
    { name: 'timeout', wrap: (next) => withHttpTimeout(config.get('http_handler_timeout'), logger, next) }, // prettier-ignore
  ];
  httpHandler.setDispatcher(composeHttp(httpStages, http.dispatch));

  // ---------------------------------------------------------------- the WebSocket listeners
  // Protocol version 1 (protocol/) stands between the handler and the routes: it decides
  // when OnConnect runs and when a client is gone for good (session recovery).
  wsHandler.onConnect(protocol.connected);
  wsHandler.onMessage(protocol.onMessage, { binary: true });
  wsHandler.onDisconnect(protocol.disconnected);

  return {
    middleware,
    namespaces,
    rateLimitStore,
    rateLimiter,
    clients,
    httpHandler,
    wsHandler,
    router,
    lifecycle,
    adapter,
    protocol,
    docs,
    pendingHandlers: protocol.pending,
    gate,
    history,
    observability,
    tracing,
    presence,
    httpStages: httpStages.map((stage) => stage.name),
    connections,
    refusals,
    queries,
  };
}

/** The HTTP dispatch in a span per request, once run() has loaded the API (before: plain). */
function traceHttp(slot: TracingSlot, next: HttpDispatch): HttpDispatch {
  let traced: ((request: Request) => Response | Promise<Response>) | null = null;
  return (request) => {
    if (traced === null) {
      if (slot.current === null) return next(request);
      traced = slot.current.http(next);
    }
    return traced(request);
  };
}
