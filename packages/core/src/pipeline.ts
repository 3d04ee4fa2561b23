import type { IncomingMessage } from 'node:http';
import {
  HttpHandler,
  MemoryRateLimitStore,
  RateLimiter,
  resolveClientAddress,
  type Request,
  type Response,
} from '@pkg/http';
import type { LoggerInterface } from '@pkg/logger';
import {
  WebSocketHandler,
  createClientIdGenerator,
  guardLogger,
  PROTOCOL_V1_SUBPROTOCOL,
  type RequestId,
} from '@pkg/ws-protocol';
import { AdapterBridge } from './cluster/adapter-bridge';
import { RoomHistory } from './history/room-history';
import type { Adapter } from './cluster/adapter';
import { ApiDocs } from './docs/api-docs';
import { PRESENCE_EVENT_DOCS } from './presence/presence-docs';
import { ClientRegistry } from './ws/client-registry';
import { PendingHandlers } from './ws/pending-handlers';
import { ConnectionGate } from './lifecycle/connection-gate';
import { compileHostCheck } from './lifecycle/host-check';
import { connectDeadline, withHttpTimeout } from './http/timeouts';
import { ControllerRegistry } from './routing/controller-registry';
import { withHealthCheck, type HealthDocument } from './lifecycle/health';
import { HttpDispatcher } from './http/http-dispatch';
import { Lifecycle } from './lifecycle/lifecycle';
import { CoreEventErrorCode } from './errors';
import { Middleware } from './routing/middleware';
import { ProtocolV1 } from './protocol/protocol-v1';
import { historyBudgetLimits } from './history/history-budget';
import { DEFAULT_NAMESPACE, NamespaceManager } from './ws/namespace-manager';
import { Router } from './routing/router';
import { PresenceTracker, type PresenceClientInfo } from './presence/presence';
import { PresenceRooms } from './presence/presence-rooms';
import type { ServerConfig } from './config/server-config';
import { rateLimitKey, ReplaceableStore } from './routing/rate-limit-key';
import { WsDispatcher, type SendEventError } from './ws/ws-dispatch';
import { Observability, eventOfText, socketBytes } from './observability/observability';
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
}

/**
 * Builds and wires the server's parts once, from the configuration: the WebSocket and HTTP
 * handlers of @pkg/ws-protocol and @pkg/http, the controller registry and its two
 * dispatchers, the lifecycle and the adapter bridge.
 *
 * - HTTP: `node:http` `request` -> Lifecycle -> HttpHandler.handle (@pkg/http) -> the
 *   dispatch built here (draining mark, health check, HttpDispatcher.dispatch) -> handler.
 * - WebSocket: a decoded envelope -> WsDispatcher.onMessage -> compiled chain -> handler.
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
  // resolved (trust proxy, IP parsing) once per request.
  // It is kept on the request under this server's own symbol (no WeakMap entry per upgrade).
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
  // Metrics call sites read `holder.metrics` (null while metrics are off).
  const observability = new Observability(config);
  const metered = observability.holder;
  const clients = new ClientRegistry();
  // Presence reads the protocol layer (identity, version) and delivers through its outbound.
  const presence: PresenceTracker = new PresenceTracker({
    rooms: new PresenceRooms(config.getPresencePatterns()),
    interval: config.get('presence_interval'),
    maxList: config.get('presence_max_list'),
    maxMetaBytes: config.get('presence_max_meta_bytes'),
    nodeTimeout: config.get('presence_node_timeout'),
    logger,
    clientInfo: (clientId): PresenceClientInfo | undefined => protocol.clientInfo(clientId),
    memberships: (clientId) => namespaces.getMemberships(clientId),
    deliver: (clientIds, text) => protocol.outbound.deliver(clientIds, text),
  });
  const middleware = new Middleware();
  // tracing off: null, and nothing below wraps or consults it.
  const tracing = config.isTracing() ? new TracingSlot() : null;
  const namespaces = new NamespaceManager({
    maxRoomsPerClient: config.get('max_rooms_per_client'),
    maxNameLength: config.get('max_room_name_length'),
  });
  const rateLimitStore = new ReplaceableStore(new MemoryRateLimitStore());
  const rateLimiter = new RateLimiter(rateLimitStore);
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
    onRefusal: (code) => metered.metrics?.refused(code),
  });
  const pendingHandlers = new PendingHandlers({
    maxPending: config.get('ws_max_pending'),
    timeout: config.get('ws_handler_timeout'),
    logger,
    // With a request id the refusal answers that request (its requester stops waiting).
    // A request that timed out gets this answer only: a late result of its handler is dropped.
    onTimeout: (clientId, requestId) =>
      protocol.outbound.expire(
        clientId,
        requestId,
        'A handler did not finish in time; no answer will come for that message.',
      ),
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
  // The protocol and the WebSocket dispatcher need each other: the protocol hands the
  // dispatcher open connections and messages, the dispatcher answers through the protocol's
  // outbound. The protocol is built first and reaches the dispatcher through this getter,
  // which is called only once connections arrive (after run()), when the dispatcher exists.
  const dispatcher = (): WsDispatcher => ws;
  // Rooms that keep history; its store is the adapter's (read when used), built below.
  const history: RoomHistory = new RoomHistory({
    patterns: config.getHistory(),
    maxReplay: config.get('history_max_replay'),
    maxReplayBytes: config.get('history_max_replay_bytes'),
    logger,
    adapter: (): Adapter => adapter.adapter,
  });
  const protocol = new ProtocolV1({
    wsHandler,
    clients,
    logger,
    recoveryWindow: config.get('recovery_window'),
    recoveryBuffer: config.get('recovery_buffer'),
    maxAwaySessions: config.get('max_away_sessions'),
    // By default as many away sessions per address as live connections it may have.
    maxAwaySessionsPerAddress:
      config.get('max_away_sessions_per_ip') ?? config.get('max_connections_per_ip'),
    ipv6Subnet: config.get('ipv6_subnet'),
    authTimeout: config.get('auth_timeout'),
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
    awayChanged: presence.awayChanged,
    start: (clientId) => {
      adapter.connected(clientId, DEFAULT_NAMESPACE);
      dispatcher().connected(clientId);
    },
    dispatch: (client, envelope) => {
      if (pendingHandlers.admit(client.id)) {
        const traced = tracing?.current;
        const observers = observability.observers;
        // Nothing to observe (no metrics, no log scope, no tracing): no closure per message.
        if (traced == null && observers.messagesPassThrough()) {
          dispatcher().onMessage(client, envelope);
          return;
        }
        observers.message(
          client.id,
          envelope.event,
          traced
            ? () => {
                let work: Promise<unknown> | undefined;
                traced.message(client, envelope, () => {
                  work = dispatcher().onMessage(client, envelope);
                  return work as Promise<void> | undefined;
                });
                return work;
              }
            : () => dispatcher().onMessage(client, envelope),
        );
        return;
      }
      logger.debug('WebSocket message refused: too many unfinished handlers', {
        code: 'PKG_ERR_CORE_BUSY',
        clientId: client.id,
      });
      protocol.outbound.fail(
        client.id,
        CoreEventErrorCode.BUSY,
        'Too many messages waiting for an answer: wait for answers before sending more.',
        { event: envelope.event },
        envelope.id,
      );
    },
    // Every step runs even when one throws: a failing adapter must not skip OnDisconnect
    // or keep the client's data (done forgets it).
    end: (clientId, done) => {
      let finished = false;
      const finish = (): void => {
        if (finished) return;
        finished = true;
        done();
      };
      try {
        adapter.disconnected(clientId);
      } catch (err) {
        logger.exception(err, { phase: 'disconnect: leave rooms and namespaces', clientId });
      }
      try {
        dispatcher().disconnected(clientId, finish);
      } catch (err) {
        logger.exception(err, { phase: 'disconnect: OnDisconnect', clientId });
        finish();
      }
    },
  });
  // Room changes, whichever path made them: presence, and the positions recoveries reached
  // (forgotten when the client leaves the room).
  namespaces.setRoomListener((joined, clientId, room, namespace) => {
    if (!joined) protocol.roomLeft(clientId, room, namespace);
    if (presence.enabled) presence.roomChanged(joined, clientId, room, namespace);
  });
  const adapter = new AdapterBridge({
    namespaces,
    clients,
    wsHandler,
    logger,
    // Deliveries and counts see only `open` connections (and away sessions).
    deliver: (clientIds, text) => {
      const n = protocol.outbound.deliver(clientIds, text);
      metered.metrics?.messageOut(eventOfText(text), n);
      return n;
    },
    localClientIds: () => protocol.localClientIds(),
    sendLocal: (clientId, event, data) => {
      const sent = protocol.outbound.send(clientId, event, data);
      if (sent) metered.metrics?.messageOut(event, 1);
      return sent;
    },
    history,
    joined: (clientId, room, namespace, since, already) =>
      protocol.recoverRoom(clientId, room, namespace, since, already),
    ...(tracing === null ? {} : { traceContext: tracing.publish, runTraced: tracing.deliver }),
    attached: (attachedAdapter) => presence.replicate(attachedAdapter.presence),
    crossInstanceLatency: (ms) => metered.metrics?.crossInstance(ms),
  });
  const lifecycle = new Lifecycle({
    // PKG_ERR_CORE_TOO_MANY_CONNECTIONS -> too_many_connections, like the wire's codes.
    onRefusal: (code) => metered.metrics?.refused(code.replace(/^PKG_ERR_CORE_/, '').toLowerCase()),
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
    clientWork: pendingHandlers,
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
              (event) => registry.wsRoutes.has(event),
            ),
        }),
  });

  const dependencies = {
    middleware,
    rateLimiter,
    logger,
    debug: config.isDebug(),
    unknownEvent: config.getUnknownEventPolicy(),
    // Every error of a handler, middleware or refusal leaves through the connection's door
    // (counted by the handler's onRefusal, spaced and counted as @pkg/wire's table says).
    sendEventError: protocol.outbound.fail satisfies SendEventError,
    answer: (clientId: string, event: string, id: RequestId, result: unknown) => {
      protocol.outbound.answer(clientId, event, id, result);
      metered.metrics?.messageOut(event, 1);
    },
    track: (work: Promise<void>, clientId?: string, id?: RequestId) =>
      clientId === undefined ? lifecycle.track(work) : pendingHandlers.track(clientId, work, id),
    rateLimitKey: rateLimitKey(
      config.get('ws_rate_limit_key'),
      (id) => wsHandler.getClient(id)?.ip,
      config.get('ipv6_subnet'),
    ),
    ipv6Subnet: config.get('ipv6_subnet'),
    ...(tracing === null ? {} : { handlerFailed: (err: unknown) => tracing.current?.failed(err) }),
    // Covers OnConnect itself (protocol version 1 runs it after $hello, not during hello_wait).
    connectDeadline: connectDeadline(config.get('connect_timeout'), (id) => {
      logger.warning('OnConnect handlers did not finish in time; closing the client', {
        code: 'PKG_ERR_CORE_CONNECT_TIMEOUT',
        clientId: id,
        closeCode: 1011,
        timeout: config.get('connect_timeout'),
      });
      // Its session ends with the connection: a resume would skip the OnConnect that failed.
      protocol.endSession(id);
      wsHandler.disconnect(id, 1011, 'OnConnect timeout');
    }),
  };
  const registry = new ControllerRegistry();
  const ws = new WsDispatcher(registry, dependencies);
  const http = new HttpDispatcher(registry, dependencies);
  const router = new Router(registry, { ws, http });
  const docs = new ApiDocs(registry, config.getApiInfo(), () => history.enabled);
  if (presence.enabled) {
    for (const [event, doc] of PRESENCE_EVENT_DOCS) docs.declareControlEvent(event, doc);
  }

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
      pendingHandlers: () => pendingHandlers.size,
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
      adapterState: () => adapter.state() ?? 'local',
      adapterStats: () => {
        const stats = (adapter.adapter as { stats?: () => unknown }).stats;
        const value: unknown =
          typeof stats === 'function' ? stats.call(adapter.adapter) : undefined;
        return typeof value === 'object' && value !== null
          ? (value as Record<string, unknown>)
          : undefined;
      },
      hasHandler: (event) => registry.wsRoutes.has(event),
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
  const httpDispatch = lifecycle.closeWhileDraining(
    withHealthCheck(
      config.getHealthCheckPath(),
      options.health,
      docs.serve(
        { openapi: config.getOpenApiPath(), asyncapi: config.getAsyncApiPath() },
        withHttpTimeout(config.get('http_handler_timeout'), logger, http.dispatch),
      ),
    ),
  );
  httpHandler.setDispatcher(
    observability.wrapHttp(tracing === null ? httpDispatch : traceHttp(tracing, httpDispatch)),
  );
  // Protocol version 1 (protocol-v1.ts) stands between the handler and the dispatcher:
  // it decides when OnConnect runs and when a client is gone for good (session recovery).
  if (tracing !== null) {
    // The trace context of each upgrade request, parent of its messages' spans.
    wsHandler.onConnect((client, request) => tracing.current?.upgraded(client, request));
    wsHandler.onDisconnect((client) => tracing.current?.closed(client));
  }
  wsHandler.onConnect((client) => {
    metered.metrics?.connected(client.socket.protocol === PROTOCOL_V1_SUBPROTOCOL ? '1' : '0');
    protocol.connected(client);
  });
  wsHandler.onMessage((client, envelope) => {
    metered.metrics?.messageIn(envelope.event);
    protocol.onMessage(client, envelope);
  });
  wsHandler.onDisconnect((client, code) => {
    if (metered.metrics !== null) {
      const bytes = socketBytes(client);
      metered.metrics.disconnected(code, bytes.received, bytes.sent);
    }
    pendingHandlers.release(client.id);
    protocol.disconnected(client, code);
  });
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
    pendingHandlers,
    gate,
    history,
    observability,
    tracing,
    presence,
  };
}

/** The HTTP dispatch in a span per request, once run() has loaded the API (before: plain). */
function traceHttp(
  slot: TracingSlot,
  next: (request: Request) => Response | Promise<Response>,
): (request: Request) => Response | Promise<Response> {
  let traced: ((request: Request) => Response | Promise<Response>) | null = null;
  return (request) => {
    if (traced === null) {
      if (slot.current === null) return next(request);
      traced = slot.current.http(next);
    }
    return traced(request);
  };
}
