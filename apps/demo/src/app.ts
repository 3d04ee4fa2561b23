import { Logger, Server, ServerConfig, type LoggerInterface } from '@pkg/core';
import { RedisAdapter, RedisRateLimitStore } from '@pkg/redis-adapter';
import {
  DEMO_TOKENS,
  SessionTokens,
  USER_KEY,
  authenticateHandshake,
  createHelloAuth,
  type DemoUser,
} from './auth';
import { CredentialsController } from './controllers/credentials-controller';
import { DEFAULT_CONFIG, type DemoConfig } from './config';
import { createChatController } from './controllers/chat-controller';
import { DOC_HISTORY, createDocController } from './controllers/doc-controller';
import { DocPageController } from './controllers/doc-page-controller';
import { GreetingV1Controller } from './controllers/greeting-v1-controller';
import { GreetingV2Controller } from './controllers/greeting-v2-controller';
import { PageController } from './controllers/page-controller';
import { createRoomsController } from './controllers/rooms-controller';
import { ShowcaseController } from './controllers/showcase-controller';
import { scaleLimits } from './limits';
import { nameFromHandshake, nameOf } from './names';
import { createOriginCheck } from './origin-check';
import { PRESENCE_ROOMS, createPresenceHook } from './presence';
import { createPresenceController } from './controllers/presence-controller';
import { decideRoomJoin } from './room-policy';
import { startTracing, type DemoTracing } from './tracing';

export interface CreateAppOptions {
  /** Where the server logs; default a console Logger at `config.logLevel` (no log files). */
  logger?: LoggerInterface;
  /**
   * The chat page's bundled script, served at `/chat.js` (`dist/public/chat.js` after the
   * build; `bundlePageScript()` in tests). Without it the page says it is not built.
   */
  pageScript?: string;
  /**
   * The document page's bundled script, served at `/doc.js` (`dist/public/doc.js` after the
   * build; `bundleDocScript()` in tests). Without it the page says it is not built.
   */
  docScript?: string;
}

export interface DemoApp {
  readonly server: Server;
  readonly config: DemoConfig;
  readonly logger: LoggerInterface;
  /** Starts listening; resolves with the base URL, e.g. `http://127.0.0.1:6001`. */
  listen(): Promise<string>;
  /** Base URL once listening, otherwise undefined. */
  url(): string | undefined;
  /** Graceful shutdown: closes WebSocket clients and the listener. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * The chat rooms keep history: every room of namespace `/` (the page's rooms, RoomsController
 * rooms), its last 100 messages for 10 minutes. A page entering a room shows the last ones;
 * a page that comes back after a lost connection, on this instance or on another one (with
 * REDIS_URL), gets what it missed.
 */
export const CHAT_HISTORY = Object.freeze({ match: '*', namespace: '/', size: 100, ttl: 600_000 });

function baseUrl(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  return `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`;
}

/**
 * Builds the demo server: every controller registered, the handshake authentication, the
 * RoomsController with the demo's room policy. Nothing listens until `listen()`.
 */
export function createApp(
  config: Partial<DemoConfig> = {},
  options: CreateAppOptions = {},
): DemoApp {
  const settings: DemoConfig = { ...DEFAULT_CONFIG, ...config };
  const logger = options.logger ?? new Logger(settings.logLevel, true, false);
  const server = new Server(
    new ServerConfig({
      host: settings.host,
      port: settings.port,
      debug: settings.logLevel === 'debug',
      cors: { allowed_origins: [...settings.corsOrigins] },
      ws_allowed_origins: ['*'],
      trust_proxy: settings.trustProxy,
      max_connections_per_ip: settings.maxConnectionsPerIp,
      health_check_path: settings.healthCheckPath,
      openapi_path: '/openapi.json',
      asyncapi_path: '/asyncapi.json',
      api_title: 'pkg demo',
      allowed_hosts: settings.allowedHosts,
      // Every answer carries X-Request-Id, so a user's report can be matched to the logs.
      request_id_response_header: true,
      // METRICS=1: Prometheus metrics, readable from loopback only (metrics_allow default).
      metrics_path: settings.metrics ? '/metrics' : null,
      restart_spread: settings.restartSpread,
      tracing: settings.otlpEndpoint !== null,
      history: [{ ...CHAT_HISTORY }, { ...DOC_HISTORY }],
      presence: PRESENCE_ROOMS.map((pattern) => ({ ...pattern })),
    }),
    undefined,
    undefined,
    undefined,
    logger,
  );

  // REDIS_URL: broadcasts, rooms, counts and rate limits shared with every other instance.
  let store: RedisRateLimitStore | null = null;
  if (settings.redisUrl !== null) {
    server.setAdapter(new RedisAdapter({ url: settings.redisUrl }));
    store = new RedisRateLimitStore({ url: settings.redisUrl, logger });
    server.setRateLimitStore(store);
  }

  server.addHandshakeMiddleware(createOriginCheck(settings.corsOrigins));
  server.addHandshakeMiddleware(authenticateHandshake);
  server.addHandshakeMiddleware(nameFromHandshake);
  // Protocol version 1 clients (the page) sign in with $hello.auth, not in the URL.
  const sessions = new SessionTokens();
  server.addAuthHandler(
    createHelloAuth(
      (clientId, user) => server.setClientData(clientId, USER_KEY, user),
      DEMO_TOKENS,
      sessions,
    ),
  );
  server.registerController(
    new CredentialsController(sessions, (user, room) => server.revoke(user, room)),
  );
  server.registerController(new PageController(options.pageScript));
  const limits = scaleLimits(settings.rateLimitScale);
  server.registerController(createChatController(limits));
  // The shared document: a page at /doc, Yjs updates relayed as bytes in namespace /docs.
  server.registerController(new DocPageController(options.docScript));
  server.registerController(createDocController(limits));
  server.registerController(new GreetingV1Controller());
  server.registerController(new GreetingV2Controller());
  server.registerController(new ShowcaseController());
  // Presence: every room; a meta carries the name the chat shows (see presence.ts).
  server.onPresence(createPresenceHook((clientId) => nameOf(server, clientId)));
  server.registerController(createPresenceController(limits, (room) => server.presence(room)));
  server.registerController(
    createRoomsController(limits.roomJoin, {
      canJoin: (clientId, room, namespace) =>
        decideRoomJoin(
          server.getClientData(clientId, USER_KEY) as DemoUser | undefined,
          room,
          namespace,
        ).allowed,
    }),
  );

  let listening = false;
  let closing: Promise<void> | undefined;
  let tracing: DemoTracing | null = null;
  return {
    server,
    config: settings,
    logger,
    async listen() {
      // OTEL_EXPORTER_OTLP_ENDPOINT: the provider is registered before run() loads the API.
      if (settings.otlpEndpoint !== null) tracing = await startTracing(settings.otlpEndpoint);
      await server.run();
      listening = true;
      return baseUrl(settings.host, server.getPort());
    },
    url: () => (listening ? baseUrl(settings.host, server.getPort()) : undefined),
    close() {
      closing ??= server
        .close()
        .then(() => store?.close())
        .then(() => tracing?.shutdown());
      return closing;
    },
  };
}

/** Creates the demo and starts listening; resolves once the port is bound. */
export async function startDemo(
  config: Partial<DemoConfig> = {},
  options: CreateAppOptions = {},
): Promise<DemoApp> {
  const app = createApp(config, options);
  await app.listen();
  return app;
}
