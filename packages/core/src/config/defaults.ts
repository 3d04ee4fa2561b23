import { REFRESH_LIMITS } from '@pkg/wire';
import { httpHandlerDefaults } from '@pkg/http';
import { wsHandlerDefaults } from '@pkg/ws-protocol';
import type { ResolvedServerConfig } from './options';

/**
 * Defaults of every configuration key. The limits of the WebSocket and HTTP layers are
 * their packages' own defaults (`wsHandlerDefaults`, `httpHandlerDefaults`), never restated.
 */
export const SERVER_CONFIG_DEFAULTS: ResolvedServerConfig = Object.freeze({
  host: '0.0.0.0',
  port: 6001,
  debug: httpHandlerDefaults.debug,
  cors: {},
  trust_proxy: httpHandlerDefaults.trustProxy,
  health_check_path: null,
  ws_allowed_origins: null,
  allow_missing_origin: wsHandlerDefaults.allowMissingOrigin,
  max_body_size: httpHandlerDefaults.maxBodySize,
  max_message_size: wsHandlerDefaults.maxPayload,
  max_buffered_amount: wsHandlerDefaults.maxBufferedAmount,
  heartbeat_interval: wsHandlerDefaults.heartbeatInterval,
  heartbeat_timeout: wsHandlerDefaults.heartbeatTimeout,
  handshake_timeout: wsHandlerDefaults.handshakeTimeout,
  headers_timeout: 30_000,
  request_timeout: 60_000,
  keep_alive_timeout: 5_000,
  max_connections: 10_000,
  shutdown_delay: 0,
  shutdown_timeout: 10_000,
  unknown_event: 'error',
  per_message_deflate: wsHandlerDefaults.perMessageDeflate,
  ws_close_timeout: wsHandlerDefaults.closeTimeout,
  ws_binary_messages: wsHandlerDefaults.binaryMessages,
  ws_binary_frames: true,
  json_prototype_keys: httpHandlerDefaults.prototypeKeys,
  // Not wsHandlerDefaults.keepRequest: the server reads the request only during the
  // handshake, so by default it does not hold it for the life of every connection.
  ws_keep_request: false,
  tls: null,
  recovery_window: 120_000,
  recovery_buffer: 1000,
  max_away_sessions: 10_000,
  max_away_sessions_per_ip: null,
  auth_timeout: 10_000,
  auth_refresh_grace: REFRESH_LIMITS.grace,
  hello_wait: 1000,
  max_pending_requests: 128,
  max_pending_server_requests: 64,
  ack_timeout: 10_000,
  openapi_path: null,
  asyncapi_path: null,
  api_title: 'API',
  api_version: '1.0.0',
  ws_max_messages_per_second: wsHandlerDefaults.maxMessagesPerSecond,
  ws_max_bytes_per_second: wsHandlerDefaults.maxBytesPerSecond,
  ws_max_protocol_errors: wsHandlerDefaults.maxProtocolErrors,
  ws_error_reply_interval: wsHandlerDefaults.errorReplyInterval,
  ws_max_messages_per_turn: wsHandlerDefaults.maxMessagesPerTurn,
  ws_max_pending: 128,
  ws_handler_timeout: 30_000,
  connect_timeout: 10_000,
  http_handler_timeout: 30_000,
  max_connections_per_ip: 0,
  connection_reserve: 16,
  max_rooms_per_client: 128,
  max_room_name_length: 128,
  ipv6_subnet: 64,
  backend_connect_timeout: 10_000,
  allowed_hosts: null,
  ws_rate_limit_key: 'address',
  // history
  history: [],
  // Centrifugo's bound; a recovery of more is answered too_far_behind (reload instead).
  history_max_replay: 300,
  // A quarter of max_buffered_amount (4 MiB): a replay plus live traffic does not push a
  // client past its send buffer (close 1013) on a connection that reads at a normal pace.
  history_max_replay_bytes: 1024 * 1024,
  // The $history budget of one connection (history/history-budget.ts): a request of ~60 bytes can be
  // answered with history_max_replay_bytes, so answers are paid for in bytes. 8 requests and
  // 256 KiB of answers per second, sustained, after a burst of max_rooms_per_client requests
  // and max(2 s worth, history_max_replay_bytes) bytes: a client that reads the position of
  // every room it joins, or pages back through a room, stays well inside it.
  history_max_requests_per_second: 8,
  history_max_bytes_per_second: 256 * 1024,
  // observability
  metrics_path: null,
  metrics_prefix: 'pkg_',
  metrics_allow: ['loopback'],
  metrics_token: null,
  request_id_header: 'x-request-id',
  request_id_response_header: false,
  log_context: false,
  tracing: false,
  restart_spread: 5_000,
  // presence
  presence: [],
  presence_interval: 100,
  presence_max_list: 1000,
  presence_max_meta_bytes: 1024,
  presence_node_timeout: 15_000,
});

/** Seconds a 503 refusal (connection caps, handler timeouts) asks the client to wait (`Retry-After`). */
export const RETRY_AFTER_SECONDS = 5;
