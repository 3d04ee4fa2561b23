import {
  compileTrustProxy,
  normalizeOriginEntry,
  type TrustPredicate,
  type TrustProxySetting,
} from '@pkg/http';
import { createCoreError } from '../errors';
import { CHECKS, KEYS, checkKey, compileTrust, copy, describe, isPlainObject } from './checks';
import { SERVER_CONFIG_DEFAULTS } from './defaults';
import type {
  PresencePattern,
  ResolvedServerConfig,
  ServerConfigOptions,
  ServerCorsOptions,
  ServerTlsOptions,
  UnknownEventPolicy,
  HistoryPattern,
} from './options';

export { SERVER_CONFIG_DEFAULTS } from './defaults';
export type {
  ResolvedServerConfig,
  ServerConfigOptions,
  ServerCorsOptions,
  ServerTlsOptions,
  UnknownEventPolicy,
  WsRateLimitKey,
  HistoryPattern,
  PresencePattern,
} from './options';

/**
 * The server's configuration, built from the spec's snake_case keys plus the limits of the
 * architecture. Every key is checked once, at construction or in a setter: an unknown key
 * or a value of the wrong type throws a `TypeError` (code `PKG_ERR_CORE_INVALID_CONFIG`)
 * that names the key and what was expected.
 *
 * A `Server` reads its configuration once, when it is constructed; from then on the
 * configuration is locked and setters throw.
 */
export class ServerConfig {
  readonly #values: { -readonly [K in keyof ResolvedServerConfig]: ResolvedServerConfig[K] };
  #lockedBy: string | null = null;
  /** `trust_proxy` compiled once, when it is set: the one predicate the server uses. */
  #trust: TrustPredicate;

  constructor(config: ServerConfigOptions = {}) {
    if (!isPlainObject(config)) {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_CONFIG',
        `ServerConfig: expected an object of settings such as { port: 6001 }, got ${describe(config)}.`,
      );
    }
    for (const key of Object.keys(config)) {
      if (!Object.hasOwn(CHECKS, key)) {
        throw createCoreError(
          TypeError,
          'PKG_ERR_CORE_INVALID_CONFIG',
          `ServerConfig: unknown key "${key}". Known keys: ${KEYS.join(', ')}.`,
        );
      }
    }
    this.#values = { ...SERVER_CONFIG_DEFAULTS };
    for (const key of KEYS) {
      const value = (config as Record<string, unknown>)[key];
      if (value === undefined) continue;
      checkKey(key, value);
      (this.#values as Record<string, unknown>)[key] = copy(value);
    }
    this.#trust = compileTrust(this.#values.trust_proxy);
    this.#checkCombination();
  }

  /** Sets one key with the same checks as the constructor. */
  set<K extends keyof ServerConfigOptions>(key: K, value: ServerConfigOptions[K]): this {
    if (!Object.hasOwn(CHECKS, key)) {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_CONFIG',
        `ServerConfig: unknown key "${String(key)}". Known keys: ${KEYS.join(', ')}.`,
      );
    }
    if (this.#lockedBy) {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_CONFIG',
        `ServerConfig: cannot set "${key}" because a ${this.#lockedBy} already uses this configuration; set it before passing the configuration to new Server().`,
      );
    }
    const next = value === undefined ? SERVER_CONFIG_DEFAULTS[key] : value;
    checkKey(key, next);
    if (key === 'trust_proxy') this.#trust = compileTrust(next as TrustProxySetting);
    const previous = this.#values[key];
    (this.#values as Record<string, unknown>)[key] = copy(next);
    try {
      this.#checkCombination();
    } catch (err) {
      (this.#values as Record<string, unknown>)[key] = previous;
      throw err;
    }
    return this;
  }

  /** The value of one key (defaults applied). */
  get<K extends keyof ServerConfigOptions>(key: K): ResolvedServerConfig[K] {
    return this.#values[key];
  }

  setHost(host: string): this {
    return this.set('host', host);
  }
  setPort(port: number): this {
    return this.set('port', port);
  }
  setDebug(debug: boolean): this {
    return this.set('debug', debug);
  }
  setCors(cors: ServerCorsOptions): this {
    return this.set('cors', cors);
  }
  setTrustProxy(trustProxy: TrustProxySetting | TrustPredicate): this {
    return this.set('trust_proxy', trustProxy);
  }
  setHealthCheckPath(path: string | null): this {
    return this.set('health_check_path', path);
  }
  setWebSocketAllowedOrigins(origins: string[] | null): this {
    return this.set('ws_allowed_origins', origins);
  }
  setTls(tls: ServerTlsOptions | null): this {
    return this.set('tls', tls);
  }

  getHost(): string {
    return this.#values.host;
  }
  getPort(): number {
    return this.#values.port;
  }
  isDebug(): boolean {
    return this.#values.debug;
  }
  getCors(): ServerCorsOptions {
    return copy(this.#values.cors);
  }
  /** The `trust_proxy` setting as given. */
  getTrustProxy(): TrustProxySetting | TrustPredicate {
    return copy(this.#values.trust_proxy);
  }
  /** The `trust_proxy` setting compiled to the predicate HTTP and WebSocket both use. */
  getTrustPredicate(): TrustPredicate {
    return this.#trust;
  }
  getHealthCheckPath(): string | null {
    return this.#values.health_check_path;
  }
  /**
   * The WebSocket origin list: `ws_allowed_origins` when set, else the CORS origins, else
   * `['*']`, each entry spelt as CORS compares it (lower case, no default port), so that one
   * list allows the same origins on both. An entry that is no origin is left as written,
   * for the WebSocket handler to refuse with its message.
   */
  getWebSocketAllowedOrigins(): string[] {
    const list = this.#values.ws_allowed_origins ?? this.#values.cors.allowed_origins ?? ['*'];
    return list.map((entry) =>
      typeof entry === 'string' ? (normalizeOriginEntry(entry) ?? entry) : entry,
    );
  }
  getAllowMissingOrigin(): boolean {
    return this.#values.allow_missing_origin;
  }
  getMaxBodySize(): number {
    return this.#values.max_body_size;
  }
  getMaxMessageSize(): number {
    return this.#values.max_message_size;
  }
  getMaxBufferedAmount(): number {
    return this.#values.max_buffered_amount;
  }
  getHeartbeatInterval(): number {
    return this.#values.heartbeat_interval;
  }
  getHeartbeatTimeout(): number {
    return this.#values.heartbeat_timeout;
  }
  getHandshakeTimeout(): number {
    return this.#values.handshake_timeout;
  }
  getHeadersTimeout(): number {
    return this.#values.headers_timeout;
  }
  getRequestTimeout(): number {
    return this.#values.request_timeout;
  }
  getKeepAliveTimeout(): number {
    return this.#values.keep_alive_timeout;
  }
  getMaxConnections(): number {
    return this.#values.max_connections;
  }
  getShutdownDelay(): number {
    return this.#values.shutdown_delay;
  }
  getShutdownTimeout(): number {
    return this.#values.shutdown_timeout;
  }
  getUnknownEventPolicy(): UnknownEventPolicy {
    return this.#values.unknown_event;
  }
  getPerMessageDeflate(): boolean | { threshold?: number } {
    return copy(this.#values.per_message_deflate);
  }
  getWebSocketCloseTimeout(): number {
    return this.#values.ws_close_timeout;
  }
  getWebSocketBinaryMessages(): 'error' | 'close' {
    return this.#values.ws_binary_messages;
  }
  /** Protocol version 1 connections take binary frames (`ws_binary_frames`). */
  getWebSocketBinaryFrames(): boolean {
    return this.#values.ws_binary_frames;
  }
  getJsonPrototypeKeys(): 'error' | 'remove' {
    return this.#values.json_prototype_keys;
  }
  getWebSocketKeepRequest(): boolean {
    return this.#values.ws_keep_request;
  }
  getTls(): ServerTlsOptions | null {
    return this.#values.tls;
  }
  getOpenApiPath(): string | null {
    return this.#values.openapi_path;
  }
  getAsyncApiPath(): string | null {
    return this.#values.asyncapi_path;
  }
  /** `info` of the generated API documents. */
  getApiInfo(): { title: string; version: string } {
    return { title: this.#values.api_title, version: this.#values.api_version };
  }
  /** The `allowed_hosts` list (a copy), or null when Host is not checked. */
  getAllowedHosts(): string[] | null {
    return this.#values.allowed_hosts === null ? null : [...this.#values.allowed_hosts];
  }
  // observability
  /** Whether spans are made through `@opentelemetry/api` (`tracing`). */
  isTracing(): boolean {
    return this.#values.tracing;
  }
  /** The window (ms) over which close() spreads the 1012 reconnect hints; 0 = plain 1001. */
  getRestartSpread(): number {
    return this.#values.restart_spread;
  }

  // history
  /** The `history` patterns (a copy). */
  getHistory(): HistoryPattern[] {
    return copy(this.#values.history);
  }

  // presence
  /** The `presence` room patterns (a copy); empty when presence is off. */
  getPresencePatterns(): PresencePattern[] {
    return copy(this.#values.presence);
  }

  /** Every key with its value, defaults applied (TLS key material left out). */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = copy({ ...this.#values, tls: null });
    out['tls'] = this.#values.tls ? '[configured]' : null;
    out['metrics_token'] = this.#values.metrics_token === null ? null : '[configured]';
    return out;
  }

  /** Called by `Server`: from now on the configuration cannot change. */
  lock(owner: string): void {
    this.#lockedBy ??= owner;
  }

  /** Whether a Server has taken this configuration. */
  isLocked(): boolean {
    return this.#lockedBy !== null;
  }

  #checkCombination(): void {
    const { headers_timeout, request_timeout } = this.#values;
    if (request_timeout > 0 && headers_timeout > request_timeout) {
      throw createCoreError(
        TypeError,
        'PKG_ERR_CORE_INVALID_CONFIG',
        `ServerConfig: "headers_timeout" (${headers_timeout} ms) must not be longer than "request_timeout" (${request_timeout} ms); raise request_timeout or set it to 0.`,
      );
    }
  }

  // observability
  /** `metrics_allow` as a predicate, matched like trust_proxy (addresses, CIDR ranges, names). */
  getMetricsAllow(): TrustPredicate {
    return compileTrustProxy(this.#values.metrics_allow, 'metrics_allow');
  }
}
