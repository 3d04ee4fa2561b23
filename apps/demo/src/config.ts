import { LogLevel, ServerConfig, type LogLevelName } from '@pkg/core';

/** Everything the demo reads from its environment, already checked. */
export interface DemoConfig {
  /** Listen address. `HOST`, default `127.0.0.1` (the Docker image sets `0.0.0.0`). */
  host: string;
  /** Listen port; 0 picks a free one. `PORT`, default `6001`. */
  port: number;
  /** Minimum log level. `LOG_LEVEL`, default `info`; `debug` also turns on the server's debug mode. */
  logLevel: LogLevelName;
  /** Which peers may set X-Forwarded-* / Forwarded. `TRUST_PROXY`, default `false`. */
  trustProxy: boolean | string[];
  /**
   * Other sites' origins allowed by CORS and by the WebSocket origin check, on top of the
   * demo's own (same-origin) page. `CORS_ORIGINS` (comma-separated, or `*` for any), default
   * none: same-origin only.
   */
  corsOrigins: string[];
  /** Path of the health-check document. `HEALTH_CHECK_PATH`, default `/health`. */
  healthCheckPath: string;
  /**
   * Redis shared by several instances (`redis://host:port`): set, the demo uses the Redis
   * adapter and rate-limit store. `REDIS_URL`, default unset (one process, in memory).
   */
  redisUrl: string | null;
  /**
   * Host names the server answers to (a page on another name that resolves here, DNS
   * rebinding, gets 403). `ALLOWED_HOSTS` (comma-separated, `*` = any); otherwise the host
   * of `PUBLIC_URL`, `HOST` itself, and the loopback names when HOST is a loopback or
   * wildcard address. `null` (any) only for a wildcard HOST without PUBLIC_URL.
   */
  allowedHosts: string[] | null;
  /**
   * WebSocket clients one address may hold open (`max_connections_per_ip`; IPv6 grouped by
   * prefix); the next upgrade gets 503. `MAX_CONNECTIONS_PER_IP`, default 20, `0` = no limit
   * (load tests from one machine).
   */
  maxConnectionsPerIp: number;
  /**
   * A factor on every rate-limit budget of the demo's own routes and events (see
   * `limits.ts`), default 1; e.g. 100 for a load test. `GET /api/limited` keeps its fixed
   * 5 per 60 s. `RATE_LIMIT_SCALE`, a positive number.
   */
  rateLimitScale: number;
  /** Prometheus metrics at `/metrics`, readable from loopback only. `METRICS=1`, default off. */
  metrics: boolean;
  /**
   * ms over which a shutdown spreads the reconnect hints of its 1012 closes (the server's
   * `restart_spread`), so a rolling deploy does not bring every client back at once.
   * `RESTART_SPREAD`, default 5000, `0` = close with 1001 and no hint.
   */
  restartSpread: number;
  /**
   * OTLP/HTTP collector the server's spans go to (`<endpoint>/v1/traces`); set, the demo
   * turns `tracing` on. `OTEL_EXPORTER_OTLP_ENDPOINT` (the OpenTelemetry variable), e.g.
   * `http://127.0.0.1:4318`, default unset (no tracing).
   */
  otlpEndpoint: string | null;
}

const LOOPBACK_NAMES = Object.freeze(['localhost', '127.0.0.1', '[::1]']);

export const DEFAULT_CONFIG: Readonly<DemoConfig> = Object.freeze({
  host: '127.0.0.1',
  port: 6001,
  logLevel: 'info',
  trustProxy: false,
  corsOrigins: [],
  healthCheckPath: '/health',
  redisUrl: null,
  allowedHosts: [...LOOPBACK_NAMES],
  maxConnectionsPerIp: 20,
  rateLimitScale: 1,
  metrics: false,
  restartSpread: 5000,
  otlpEndpoint: null,
});

/** Largest RATE_LIMIT_SCALE accepted: budgets stay safe integers and windows stay meaningful. */
export const MAX_RATE_LIMIT_SCALE = 1_000_000;

/** `1`/`true`/`on` or `0`/`false`/`off`. */
function parseSwitch(name: string, value: string, problems: string[]): boolean {
  const lower = value.toLowerCase();
  if (['1', 'true', 'on'].includes(lower)) return true;
  if (['0', 'false', 'off'].includes(lower)) return false;
  problems.push(`${name} must be 1 or 0 (true/false, on/off) (got "${value}").`);
  return false;
}

export type Env = Readonly<Record<string, string | undefined>>;

/** Thrown by {@link loadConfig}; `problems` lists every bad variable, one sentence each. */
export class ConfigError extends Error {
  readonly code = 'DEMO_ERR_CONFIG';
  readonly problems: readonly string[];

  constructor(problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function parseHost(value: string, problems: string[]): string {
  if (/\s/.test(value)) {
    problems.push(`HOST must be a host name or IP address without spaces (got "${value}").`);
  }
  return value;
}

function parsePort(value: string, problems: string[]): number {
  const port = /^\d{1,5}$/.test(value) ? Number(value) : Number.NaN;
  if (!(port >= 0 && port <= 65535)) {
    problems.push(`PORT must be a whole number from 0 to 65535 (got "${value}").`);
    return DEFAULT_CONFIG.port;
  }
  return port;
}

function parseLogLevel(value: string, problems: string[]): LogLevelName {
  const level = value.toLowerCase();
  if (!LogLevel.isValidLevel(level)) {
    problems.push(`LOG_LEVEL must be one of ${LogLevel.getLevels().join(', ')} (got "${value}").`);
    return DEFAULT_CONFIG.logLevel;
  }
  return level;
}

function parseTrustProxy(value: string, problems: string[]): boolean | string[] {
  const lower = value.toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    try {
      new ServerConfig({ trust_proxy: [entry] });
    } catch {
      problems.push(
        `TRUST_PROXY must be "true", "false" or a comma-separated list of IP addresses and CIDR ranges; "${entry}" is neither.`,
      );
    }
  }
  return entries;
}

function parseOrigins(value: string, problems: string[]): string[] {
  const origins = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const origin of origins) {
    if (origin === '*') continue;
    let valid = false;
    try {
      const url = new URL(origin);
      valid = (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === origin;
    } catch {
      valid = false;
    }
    if (!valid) {
      problems.push(
        `CORS_ORIGINS must be "*" or a comma-separated list of origins such as https://example.com (scheme, host and optional port, no path or trailing slash); "${origin}" is not one.`,
      );
    }
  }
  return origins;
}

function parseMaxConnections(value: string, problems: string[]): number {
  const count = /^\d{1,9}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(count)) {
    problems.push(
      `MAX_CONNECTIONS_PER_IP must be a whole number of WebSocket connections per client address, 0 for no limit (got "${value}").`,
    );
    return DEFAULT_CONFIG.maxConnectionsPerIp;
  }
  return count;
}

function parseRateLimitScale(value: string, problems: string[]): number {
  const scale = /^\d+(\.\d+)?$/.test(value) ? Number(value) : Number.NaN;
  if (!(scale > 0 && scale <= MAX_RATE_LIMIT_SCALE)) {
    problems.push(
      `RATE_LIMIT_SCALE must be a number above 0 and at most ${MAX_RATE_LIMIT_SCALE}, a factor on every rate-limit budget such as 0.5 or 100 (got "${value}").`,
    );
    return DEFAULT_CONFIG.rateLimitScale;
  }
  return scale;
}

function parseRestartSpread(value: string, problems: string[]): number {
  const ms = /^\d{1,6}$/.test(value) ? Number(value) : Number.NaN;
  if (!(ms >= 0 && ms <= 600_000)) {
    problems.push(
      `RESTART_SPREAD must be a whole number of milliseconds from 0 to 600000 (got "${value}").`,
    );
    return DEFAULT_CONFIG.restartSpread;
  }
  return ms;
}

function parseOtlp(value: string, problems: string[]): string | null {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return value;
  } catch {
    // reported below
  }
  problems.push(
    `OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL of an OTLP collector such as http://127.0.0.1:4318 (got "${value}").`,
  );
  return null;
}

function parseHealthPath(value: string, problems: string[]): string {
  if (!/^\/[^\s?#]*$/.test(value)) {
    problems.push(
      `HEALTH_CHECK_PATH must be a path that starts with "/" and has no spaces, "?" or "#" (got "${value}").`,
    );
  }
  return value;
}

function parseRedisUrl(value: string, problems: string[]): string | null {
  let valid = false;
  try {
    const url = new URL(value);
    valid = (url.protocol === 'redis:' || url.protocol === 'rediss:') && url.hostname !== '';
  } catch {
    valid = false;
  }
  if (!valid) {
    problems.push(
      `REDIS_URL must be a Redis URL such as redis://127.0.0.1:6379 (or rediss:// for TLS); got "${value}".`,
    );
    return null;
  }
  return value;
}

function parseAllowedHosts(value: string, problems: string[]): string[] {
  const hosts = value
    .split(',')
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== '');
  for (const host of hosts) {
    if (!/^(\*|\.?[a-z0-9.-]+|\[[0-9a-f:.]+\])$/.test(host)) {
      problems.push(
        `ALLOWED_HOSTS must be a comma-separated list of host names such as example.com, .example.com (with subdomains) or *; "${host}" is not one.`,
      );
    }
  }
  return hosts;
}

/** The allowed Host names from HOST and PUBLIC_URL (see DemoConfig.allowedHosts). */
function deriveAllowedHosts(
  host: string,
  publicUrl: string | undefined,
  problems: string[],
): string[] | null {
  const names = new Set<string>();
  if (publicUrl !== undefined) {
    try {
      names.add(new URL(publicUrl).hostname.toLowerCase());
    } catch {
      problems.push(
        `PUBLIC_URL must be an absolute URL such as https://chat.example.com (got "${publicUrl}").`,
      );
    }
  }
  const wildcard = host === '0.0.0.0' || host === '::';
  const loopback = host === 'localhost' || host === '::1' || /^127\./.test(host);
  if (wildcard && names.size === 0) return null;
  if (wildcard || loopback) LOOPBACK_NAMES.forEach((name) => names.add(name));
  if (!wildcard) names.add(host.includes(':') ? `[${host.toLowerCase()}]` : host.toLowerCase());
  return [...names];
}

/**
 * Reads the demo's settings from environment variables. Unset or empty variables take the
 * defaults of {@link DEFAULT_CONFIG}; every bad value is collected into one {@link ConfigError}.
 */
export function loadConfig(env: Env): DemoConfig {
  const problems: string[] = [];
  const host = read(env, 'HOST');
  const port = read(env, 'PORT');
  const logLevel = read(env, 'LOG_LEVEL');
  const trustProxy = read(env, 'TRUST_PROXY');
  const corsOrigins = read(env, 'CORS_ORIGINS');
  const healthCheckPath = read(env, 'HEALTH_CHECK_PATH');
  const redisUrl = read(env, 'REDIS_URL');
  const allowedHosts = read(env, 'ALLOWED_HOSTS');
  const publicUrl = read(env, 'PUBLIC_URL');
  const maxConnectionsPerIp = read(env, 'MAX_CONNECTIONS_PER_IP');
  const rateLimitScale = read(env, 'RATE_LIMIT_SCALE');
  const metrics = read(env, 'METRICS');
  const restartSpread = read(env, 'RESTART_SPREAD');
  const otlpEndpoint = read(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  const config: DemoConfig = {
    host: host === undefined ? DEFAULT_CONFIG.host : parseHost(host, problems),
    port: port === undefined ? DEFAULT_CONFIG.port : parsePort(port, problems),
    logLevel: logLevel === undefined ? DEFAULT_CONFIG.logLevel : parseLogLevel(logLevel, problems),
    trustProxy:
      trustProxy === undefined ? DEFAULT_CONFIG.trustProxy : parseTrustProxy(trustProxy, problems),
    corsOrigins:
      corsOrigins === undefined
        ? [...DEFAULT_CONFIG.corsOrigins]
        : parseOrigins(corsOrigins, problems),
    healthCheckPath:
      healthCheckPath === undefined
        ? DEFAULT_CONFIG.healthCheckPath
        : parseHealthPath(healthCheckPath, problems),
    redisUrl: redisUrl === undefined ? DEFAULT_CONFIG.redisUrl : parseRedisUrl(redisUrl, problems),
    allowedHosts: null,
    maxConnectionsPerIp:
      maxConnectionsPerIp === undefined
        ? DEFAULT_CONFIG.maxConnectionsPerIp
        : parseMaxConnections(maxConnectionsPerIp, problems),
    rateLimitScale:
      rateLimitScale === undefined
        ? DEFAULT_CONFIG.rateLimitScale
        : parseRateLimitScale(rateLimitScale, problems),
    metrics:
      metrics === undefined ? DEFAULT_CONFIG.metrics : parseSwitch('METRICS', metrics, problems),
    restartSpread:
      restartSpread === undefined
        ? DEFAULT_CONFIG.restartSpread
        : parseRestartSpread(restartSpread, problems),
    otlpEndpoint:
      otlpEndpoint === undefined ? DEFAULT_CONFIG.otlpEndpoint : parseOtlp(otlpEndpoint, problems),
  };
  config.allowedHosts =
    allowedHosts === undefined
      ? deriveAllowedHosts(config.host, publicUrl, problems)
      : parseAllowedHosts(allowedHosts, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
