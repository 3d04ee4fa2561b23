/**
 * The shape of a server's configuration: the snake_case keys `ServerConfig` accepts (as in
 * the spec, plus the limits of the architecture) and the value types they use. Defaults are
 * in defaults.ts, checks in checks.ts, the class in server-config.ts.
 */
import type { CorsOptions, TrustPredicate, TrustProxySetting } from '@pkg/http';

/** CORS settings as the spec writes them (snake_case): `CorsOptions` of @pkg/http. */
export type ServerCorsOptions = CorsOptions;

/** Key and certificate (PEM) for HTTPS/WSS; more `node:tls` options may be added. */
export interface ServerTlsOptions {
  key: string | Buffer;
  cert: string | Buffer;
  ca?: string | Buffer | Array<string | Buffer>;
  passphrase?: string;
}

/** What to do with a WebSocket event that no SocketOn handler declares. */
export type UnknownEventPolicy = 'error' | 'ignore';

/**
 * The keys `ServerConfig` accepts, snake_case as in the spec. Every key is optional; the
 * defaults are in {@link SERVER_CONFIG_DEFAULTS}. Sizes are bytes, durations milliseconds.
 */
export interface ServerConfigOptions {
  /** Listen address. Default `'0.0.0.0'`. */
  host?: string;
  /** Listen port, 0 picks a free one. Default `6001`. */
  port?: number;
  /** Debug mode: `log()` writes, 500 answers and `error` events carry details. Default `false`. */
  debug?: boolean;
  /** CORS for HTTP answers; its `allowed_origins` is also the WebSocket origin list. */
  cors?: ServerCorsOptions;
  /**
   * Which peers may set X-Forwarded-* / Forwarded: `true`, a list of IPs, CIDR ranges and
   * the names `loopback` / `linklocal` / `uniquelocal`, or a predicate `(address) => boolean`.
   * Default `false`.
   */
  trust_proxy?: TrustProxySetting | TrustPredicate;
  /**
   * Path answered with the health document (GET and HEAD, one trailing slash ignored, any
   * query); `null` turns it off. Default `null`.
   */
  health_check_path?: string | null;
  /** WebSocket origin allow-list; `null` uses `cors.allowed_origins`. Default `null`. */
  ws_allowed_origins?: string[] | null;
  /** Accept WebSocket handshakes without an Origin header (non-browser clients). Default `true`. */
  allow_missing_origin?: boolean;
  /** Largest HTTP request body; larger ones get 413. Default 1 MiB. */
  max_body_size?: number;
  /** Largest WebSocket message; larger ones close the connection with 1009. Default 1 MiB. */
  max_message_size?: number;
  /** Unsent bytes allowed per WebSocket client before it is dropped (1013). Default 4 MiB. */
  max_buffered_amount?: number;
  /** Interval between WebSocket pings; 0 turns the heartbeat off. Default 25000. */
  heartbeat_interval?: number;
  /** Time a client has to answer a ping before it is terminated. Default 20000. */
  heartbeat_timeout?: number;
  /** Time handshake middleware may take before the upgrade is refused with 503; 0 = none. Default 10000. */
  handshake_timeout?: number;
  /** Time to receive the request headers (`server.headersTimeout`). Default 30000. */
  headers_timeout?: number;
  /** Time to receive a whole request (`server.requestTimeout`); 0 = none. Default 60000. */
  request_timeout?: number;
  /** Idle time of a keep-alive connection (`server.keepAliveTimeout`). Default 5000. */
  keep_alive_timeout?: number;
  /** Most TCP connections at once (HTTP and WebSocket); 0 = no limit. Default 10000. */
  max_connections?: number;
  /** Time close() keeps listening after draining starts (health 503) before it stops accepting. Default 0. */
  shutdown_delay?: number;
  /** How long close() lets in-flight requests and close handshakes finish. Default 10000. */
  shutdown_timeout?: number;
  /** Unknown WebSocket events: `'error'` answers an `error` event, `'ignore'` only logs. */
  unknown_event?: UnknownEventPolicy;
  /** permessage-deflate on WebSocket connections: `true` (threshold 1024 bytes) or `{ threshold }`. Default `false`. */
  per_message_deflate?: boolean | { threshold?: number };
  /** Time a started WebSocket close handshake may take before the socket is destroyed. Default 5000. */
  ws_close_timeout?: number;
  /** What a binary WebSocket message gets on a connection that does not take binary frames (version 0; docs/protocol.md, "Binary frames"): an `error` event (`'error'`) or close 1003 (`'close'`). Default `'error'`. */
  ws_binary_messages?: 'error' | 'close';
  /** Protocol version 1 connections take binary frames (docs/protocol.md, "Binary frames"): a handler gets the bytes. `false`: every connection gets `ws_binary_messages`' answer for a binary frame. Default `true`. */
  ws_binary_frames?: boolean;
  /**
   * JSON from the network (HTTP bodies, WebSocket messages) holding a `__proto__` or
   * `constructor.prototype` key: `'error'` refuses it (HTTP 400, WebSocket `invalid_json`),
   * `'remove'` drops those keys and goes on. Default `'error'`.
   */
  json_prototype_keys?: 'error' | 'remove';
  /**
   * Keep each WebSocket client's upgrade request on `WsClient.request` for its whole life
   * (about 1.3 KiB per connection). Handshake middleware sees the request either way.
   * Default `false`.
   */
  ws_keep_request?: boolean;
  /** Serve HTTPS and WSS with this key and certificate. Default `null` (plain HTTP). */
  tls?: ServerTlsOptions | null;
  /** Protocol version 1: how long a dropped client's session can be resumed; 0 turns recovery off. Default 120000. */
  recovery_window?: number;
  /** Protocol version 1: messages kept per session for replay after a resume. Default 1000. */
  recovery_buffer?: number;
  /** Protocol version 1: sessions kept without a connection (away), in all; past it the oldest is ended. 0 = no bound. Default 10000. */
  max_away_sessions?: number;
  /** Protocol version 1: away sessions per client address; past it the address's oldest is ended. `null` = as many as `max_connections_per_ip` (0 = no bound). Default `null`. */
  max_away_sessions_per_ip?: number | null;
  /** Protocol version 1: time the whole authentication of a client may take, from its start (the auth handlers included); then close 4401. Default 10000. */
  auth_timeout?: number;
  /** Protocol version 1: time a connection whose credentials expired (an auth handler gave `expiresAt` or `ttl`) may still send `$refresh`; then `token_expired` and close 4419. Default 10000. */
  auth_refresh_grace?: number;
  /** Time a connection that negotiated the subprotocol `pkg.v1` waits for `$hello` before it counts as version 0 and `OnConnect` runs (other connections never wait); 0 = no wait. Default 1000. */
  hello_wait?: number;
  /** Client requests (`id`) per connection whose answer is not sent yet; one more is `too_many_pending`. Default 128. */
  max_pending_requests?: number;
  /** Server requests (`emitWithAck`) per client whose answer has not come; one more is a RangeError. Default 64. */
  max_pending_server_requests?: number;
  /** Default timeout of `emitWithAck`. Default 10000. */
  ack_timeout?: number;
  /** Path answered with the OpenAPI 3.1 document of the HTTP routes; `null` turns it off. Default `null`. */
  openapi_path?: string | null;
  /** Path answered with the AsyncAPI 3.0 document of the WebSocket events; `null` turns it off. Default `null`. */
  asyncapi_path?: string | null;
  /** `info.title` of the OpenAPI and AsyncAPI documents. Default `'API'`. */
  api_title?: string;
  /** `info.version` of the OpenAPI and AsyncAPI documents. Default `'1.0.0'`. */
  api_version?: string;
  /** Inbound WebSocket messages per second per connection (bursts of twice as many); 0 = no limit. Default 100. */
  ws_max_messages_per_second?: number;
  /** Inbound WebSocket bytes per second per connection (bursts of twice as many, at least max_message_size); 0 = no limit. Default 1 MiB. */
  ws_max_bytes_per_second?: number;
  /** Protocol errors (invalid messages, unknown events, over budget) before a connection is closed with 1008, one more allowed per second; 0 = no limit. Default 10. */
  ws_max_protocol_errors?: number;
  /** Milliseconds between two `error` replies with the same code to one connection; 0 = every refusal is answered. Default 1000. */
  ws_error_reply_interval?: number;
  /** Messages one WebSocket connection may have handled per event-loop turn; 0 = no bound. Default 32. */
  ws_max_messages_per_turn?: number;
  /** WebSocket handlers of one connection that may be unfinished at once; more are refused with `busy`. 0 = no limit. Default 128. */
  ws_max_pending?: number;
  /** Time a SocketOn handler may take before it is forgotten and answered `handler_timeout`; 0 = no limit. Default 30000. */
  ws_handler_timeout?: number;
  /** Time a client's OnConnect handlers may take before it is closed with 1011; 0 = no limit. Default 10000. */
  connect_timeout?: number;
  /** Time an HTTP middleware chain and handler may take before the request is answered 503; 0 = no limit. Default 30000. */
  http_handler_timeout?: number;
  /** WebSocket clients per client address (after trust_proxy); more are refused with 503. 0 = no limit. Default 0. */
  max_connections_per_ip?: number;
  /** Connections over max_connections kept for the health check (others get 503). Default 16. */
  connection_reserve?: number;
  /** Rooms one WebSocket client may be in at once, over all namespaces; one more join is refused (`too_many_rooms`). 0 = no limit. Default 128. */
  max_rooms_per_client?: number;
  /** Longest room or namespace name, in UTF-16 code units; a longer one is refused (`invalid_payload`). Default 128. */
  max_room_name_length?: number;
  /**
   * Prefix length (bits, 1-128) by which IPv6 client addresses are grouped for the
   * per-address limits (max_connections_per_ip, the `address` rate-limit key, HTTP route
   * rate limits): every address of one /64 counts as one client by default. IPv4 addresses
   * are counted one by one. Default 64.
   */
  ipv6_subnet?: number;
  /**
   * How long run() waits for the adapter's and the rate-limit store's `connect()` before it
   * listens anyway (and logs that it did); 0 = do not wait. Default 10000.
   */
  backend_connect_timeout?: number;
  /** Host header allow-list for HTTP and upgrades: names, `.example.com` (and subdomains) or `*`; `null` = no check. Default `null`. */
  allowed_hosts?: string[] | null;
  /**
   * Whom a `RateLimit` on a `SocketOn` event counts: `'address'` (the client address after
   * trust_proxy, so more connections do not multiply the budget), `'client'` (each
   * connection), or a function `(clientId, address) => key` (e.g. a user id from the
   * client's data). Default `'address'`.
   */
  ws_rate_limit_key?: WsRateLimitKey;
  // history
  /**
   * Rooms that keep history (protocol version 1 recovery, `$history`, `server.history`):
   * every broadcast to a room whose name matches a pattern's `match` (`*` stands for any
   * characters) in its `namespace` (every namespace when left out) carries a position, and
   * the last `size` messages are kept for `ttl` ms. The first matching pattern wins.
   * Default `[]` (no room keeps history).
   */
  history?: HistoryPattern[];
  /** Most messages replayed by one recovery, and the most `$history` answers. Default 300. */
  history_max_replay?: number;
  /** Most bytes replayed by one recovery (or answered by `$history`). Default 1 MiB. */
  history_max_replay_bytes?: number;
  /**
   * `$history` requests one connection may make per second, sustained, after a burst of
   * `max_rooms_per_client`; over it a request is answered `rate_limited` with `retryAfter`.
   * `0` = no limit. Default 8.
   */
  history_max_requests_per_second?: number;
  /**
   * Bytes of `$history` answers one connection may be sent per second, sustained, after a
   * burst of max(2 s worth, `history_max_replay_bytes`); a request that finds the budget
   * spent is answered `rate_limited` with `retryAfter`. `0` = no limit. Default 256 KiB.
   */
  history_max_bytes_per_second?: number;
  // observability
  /** Path that serves the Prometheus metrics (needs the optional package prom-client); `null` = not served. Default `null`. */
  metrics_path?: string | null;
  /** Prefix of every metric name (`pkg_ws_connections`...), `''` for none. Default `'pkg_'`. */
  metrics_prefix?: string;
  /** Who may read `metrics_path`: IP addresses, CIDR ranges and `loopback` / `linklocal` / `uniquelocal`. Default `['loopback']`. */
  metrics_allow?: string[];
  /** A bearer token (at least 16 characters) that also grants `metrics_path` from any address; `null` = none. Default `null`. */
  metrics_token?: string | null;
  /**
   * Header of request ids: an id is taken from it when a trusted proxy (trust_proxy) sends
   * one, else generated, and only when something reads it (a handler's
   * `getAttribute('requestId')`, a log line with `log_context`, `request_id_response_header`);
   * `null` = no request ids. Default `'x-request-id'`.
   */
  request_id_header?: string | null;
  /**
   * Whether every HTTP answer carries its request id in `request_id_header` (`X-Request-Id`),
   * error answers included. Off by default: making and writing an id for each request that
   * nothing reads costs about a tenth of the CPU of a small GET. Default `false`.
   */
  request_id_response_header?: boolean;
  /**
   * Whether every log line written while an HTTP request or a WebSocket message is handled
   * carries its `requestId` and `clientId` (AsyncLocalStorage). Off by default: on Node 20 it
   * costs about a tenth of the CPU of a small WebSocket message. Default `false`.
   */
  log_context?: boolean;
  /**
   * OpenTelemetry spans for HTTP requests, WebSocket messages and cross-instance
   * deliveries, through `@opentelemetry/api` (an optional peer: install it and register a
   * tracer provider). `run()` fails with PKG_ERR_CORE_TRACING_UNAVAILABLE when it is not
   * installed. Default false (no hook runs at all).
   */
  tracing?: boolean;
  /**
   * On `close()`, WebSocket clients get close 1012 (service restart) with a suggested
   * reconnect delay spread evenly over this many ms, so a restarted instance's clients do
   * not all reconnect at once. 0 = close with 1001 (going away) and no hint. Default 5000.
   */
  restart_spread?: number;
  // presence
  /** Rooms that track presence: `{match, namespace?}` globs on the room name (`*` = any run of characters; every namespace without `namespace`). Default `[]` (off). */
  presence?: PresencePattern[];
  /** Milliseconds between two presence flushes of a room: joins and leaves within it go out as one `$presence_diff`. Default 100. */
  presence_interval?: number;
  /** Keys a room's presence lists at most; a room with more sends `$presence` with stats `{connections, keys}` and no diffs. Default 1000. */
  presence_max_list?: number;
  /** Bytes of JSON the application members of one presence meta may take. Default 1024. */
  presence_max_meta_bytes?: number;
  /** Milliseconds after which an instance that stopped heartbeating is gone, with its presence entries (cluster adapters). Default 15000. */
  presence_node_timeout?: number;
}

/** One entry of `history`: which rooms keep history, how many messages and for how long. */
export interface HistoryPattern {
  /** A room name, `*` matching any characters (`"chat:*"`, `"*"`). */
  match: string;
  /** The namespace (starting with `/`); every namespace when left out. */
  namespace?: string;
  /** Messages kept per room (a positive whole number). */
  size: number;
  /** Milliseconds a message is kept (a positive whole number). */
  ttl: number;
}

/** One entry of the `presence` setting. */
export interface PresencePattern {
  /** A glob on the room name: `*` matches any run of characters (`chat:*`, `*`). */
  match: string;
  /** The namespace the pattern applies to; every namespace when left out. */
  namespace?: string;
}

/** See `ws_rate_limit_key`. */
export type WsRateLimitKey = 'address' | 'client' | ((clientId: string, address: string) => string);

/** The resolved configuration: every key present. */
export type ResolvedServerConfig = {
  readonly [K in keyof ServerConfigOptions]-?: Exclude<ServerConfigOptions[K], undefined>;
};
