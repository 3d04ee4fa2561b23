import { randomBytes } from 'node:crypto';
import type { LoggerInterface } from '@pkg/core';
import { createRedisError } from './errors';

/** Settings of {@link RedisAdapter}; every one is optional. */
export interface RedisAdapterOptions {
  /** Redis URL (`redis://[user:password@]host:port[/db]`, `rediss://` for TLS). Default `redis://127.0.0.1:6379`. */
  url?: string;
  /** Prefix of every channel name, so that several applications can share one Redis. Default `pkg`. */
  keyPrefix?: string;
  /** This instance's id on the wire. Default: 12 random hex digits. */
  nodeId?: string;
  /** How long a cluster-wide request (counts, ids, remote operations) waits for every instance, ms. Default `5000`. */
  requestTimeout?: number;
  /** The longest pause between two reconnection attempts, ms. Default `2000`. */
  maxReconnectDelay?: number;
  /**
   * How long a namespace or room channel stays subscribed after its last local member left,
   * ms, so that leave-and-rejoin and room hopping cost no SUBSCRIBE/UNSUBSCRIBE pair each;
   * 0 = unsubscribe at once. Default `1000`.
   */
  unsubscribeGrace?: number;
  /**
   * New channels one client may make this instance subscribe to per second (joins of rooms
   * no local client holds), bursts of twice as many; a join over it is refused before
   * anything changes (`PKG_ERR_REDIS_TOO_MANY_SUBSCRIBES`, error event `rate_limited`
   * with `retryAfter`). 0 = no limit. Default `10`.
   */
  maxSubscribesPerSecond?: number;
  /** Where the adapter logs. Default: the server's logger. */
  logger?: LoggerInterface;
  /**
   * Keep room history in Redis Streams (the adapter's `history`), so a client recovers the
   * rooms the server's `history` config keeps on any instance. false: each instance keeps
   * history in its own memory, and a client recovers only on the instance it left.
   * Default `true`.
   */
  history?: boolean;
  /**
   * Use a Redis Cluster instead of one Redis (`url` is then not used): its seed nodes,
   * `redis://host:port` each (a few suffice; the others are discovered). Rooms go over
   * sharded pub/sub, each room's channel and history on the shard of its room.
   */
  cluster?: RedisClusterOptions;
  /**
   * Use the master that Redis Sentinel names instead of a fixed `url` (`url` and `cluster`
   * are then not given): the master set's name and a few of its sentinels. A failover is
   * followed: commands and subscriptions move to the new master.
   */
  sentinel?: RedisSentinelOptions;
}

/** The `sentinel` option of {@link RedisAdapterOptions}. */
export interface RedisSentinelOptions {
  /** The name the sentinels monitor the master under (`sentinel monitor <name> ...`). */
  name: string;
  /** Some of the sentinels, `{ host, port }` each; at least one (the others are discovered). */
  sentinelRootNodes: ReadonlyArray<{ readonly host: string; readonly port: number }>;
  /**
   * How often the sentinels are asked for the master again, besides the failovers they
   * announce, ms. Default `5000`.
   */
  scanInterval?: number;
  /** The ACL user and password of the data nodes (master and replicas, `requirepass`). */
  username?: string;
  password?: string;
  /** The ACL user and password of the sentinels (their own `requirepass`). */
  sentinelUsername?: string;
  sentinelPassword?: string;
}

/** The `cluster` option of {@link RedisAdapterOptions}. */
export interface RedisClusterOptions {
  /** Seed nodes, `redis://[user:password@]host:port` each; at least one. */
  rootNodes: readonly string[];
  /** How often the subscriptions are checked against the cluster's topology, ms. Default `1000`. */
  checkInterval?: number;
}

export interface ResolvedRedisAdapterOptions {
  readonly url: string;
  readonly keyPrefix: string;
  readonly nodeId: string;
  readonly requestTimeout: number;
  readonly maxReconnectDelay: number;
  readonly unsubscribeGrace: number;
  readonly maxSubscribesPerSecond: number;
  readonly logger: LoggerInterface | null;
  readonly history: boolean;
  readonly cluster: {
    readonly rootNodes: readonly string[];
    readonly checkInterval: number;
  } | null;
  readonly sentinel: {
    readonly name: string;
    readonly sentinelRootNodes: ReadonlyArray<{ readonly host: string; readonly port: number }>;
    readonly scanInterval: number;
    readonly username?: string;
    readonly password?: string;
    readonly sentinelUsername?: string;
    readonly sentinelPassword?: string;
  } | null;
}

export const REDIS_ADAPTER_DEFAULTS = Object.freeze({
  url: 'redis://127.0.0.1:6379',
  keyPrefix: 'pkg',
  requestTimeout: 5000,
  maxReconnectDelay: 2000,
  unsubscribeGrace: 1000,
  maxSubscribesPerSecond: 10,
  history: true,
});

function invalid(owner: string, message: string): Error {
  return createRedisError(TypeError, 'PKG_ERR_REDIS_INVALID_OPTION', `${owner}: ${message}`);
}

/** Checks that `options` is an object with only the known keys; returns it as a record. */
export function checkKeys(
  owner: string,
  options: unknown,
  known: readonly string[],
): Record<string, unknown> {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalid(owner, 'the options must be an object.');
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw invalid(owner, `unknown option "${key}"; the options are ${known.join(', ')}.`);
    }
  }
  return options as Record<string, unknown>;
}

export function checkString(owner: string, name: string, value: unknown, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || value === '') {
    throw invalid(owner, `option "${name}" must be a non-empty string.`);
  }
  return value;
}

export function checkUrl(owner: string, value: unknown, fallback: string): string {
  const url = checkString(owner, 'url', value, fallback);
  if (!/^rediss?:\/\//.test(url)) {
    throw invalid(owner, `option "url" must start with redis:// or rediss://; got "${url}".`);
  }
  return url;
}

export function checkPositiveInt(
  owner: string,
  name: string,
  value: unknown,
  fallback: number,
): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || (value as number) < 1) {
    throw invalid(owner, `option "${name}" must be a positive whole number of milliseconds.`);
  }
  return value as number;
}

export function checkNonNegativeInt(
  owner: string,
  name: string,
  value: unknown,
  fallback: number,
  unit: string,
): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || (value as number) < 0) {
    throw invalid(owner, `option "${name}" must be a whole number of ${unit} (0 = off).`);
  }
  return value as number;
}

export function checkLogger(owner: string, value: unknown): LoggerInterface | null {
  if (value === undefined) return null;
  const v = value as Record<string, unknown> | null;
  if (
    typeof v !== 'object' ||
    v === null ||
    !['debug', 'info', 'warning', 'error'].every((m) => typeof v[m] === 'function')
  ) {
    throw invalid(
      owner,
      'option "logger" must be a LoggerInterface (debug, info, warning, error, ...).',
    );
  }
  return value as LoggerInterface;
}

export function resolveAdapterOptions(options: unknown): ResolvedRedisAdapterOptions {
  const owner = 'RedisAdapter';
  const o = checkKeys(owner, options, [
    'url',
    'keyPrefix',
    'nodeId',
    'requestTimeout',
    'maxReconnectDelay',
    'unsubscribeGrace',
    'maxSubscribesPerSecond',
    'logger',
    'history',
    'cluster',
    'sentinel',
  ]);
  if (o['history'] !== undefined && typeof o['history'] !== 'boolean') {
    throw invalid(owner, 'option "history" must be true or false.');
  }
  return {
    url: checkUrl(owner, o['url'], REDIS_ADAPTER_DEFAULTS.url),
    keyPrefix: checkString(owner, 'keyPrefix', o['keyPrefix'], REDIS_ADAPTER_DEFAULTS.keyPrefix),
    nodeId: checkString(owner, 'nodeId', o['nodeId'], randomBytes(6).toString('hex')),
    requestTimeout: checkPositiveInt(
      owner,
      'requestTimeout',
      o['requestTimeout'],
      REDIS_ADAPTER_DEFAULTS.requestTimeout,
    ),
    maxReconnectDelay: checkPositiveInt(
      owner,
      'maxReconnectDelay',
      o['maxReconnectDelay'],
      REDIS_ADAPTER_DEFAULTS.maxReconnectDelay,
    ),
    unsubscribeGrace: checkNonNegativeInt(
      owner,
      'unsubscribeGrace',
      o['unsubscribeGrace'],
      REDIS_ADAPTER_DEFAULTS.unsubscribeGrace,
      'milliseconds',
    ),
    maxSubscribesPerSecond: checkNonNegativeInt(
      owner,
      'maxSubscribesPerSecond',
      o['maxSubscribesPerSecond'],
      REDIS_ADAPTER_DEFAULTS.maxSubscribesPerSecond,
      'subscriptions per second',
    ),
    logger: checkLogger(owner, o['logger']),
    history: (o['history'] as boolean | undefined) ?? REDIS_ADAPTER_DEFAULTS.history,
    cluster: resolveCluster(owner, o['cluster'], o['url']),
    sentinel: resolveSentinel(owner, o['sentinel'], o['url'], o['cluster']),
  };
}

/** The `cluster` option checked: null when absent. */
function resolveCluster(
  owner: string,
  value: unknown,
  url: unknown,
): ResolvedRedisAdapterOptions['cluster'] {
  if (value === undefined) return null;
  if (url !== undefined) {
    throw invalid(owner, 'pass either "url" (one Redis) or "cluster" (a Redis Cluster), not both.');
  }
  const o = checkKeys(`${owner} option "cluster"`, value, ['rootNodes', 'checkInterval']);
  const nodes = o['rootNodes'];
  if (!Array.isArray(nodes) || nodes.length === 0) {
    throw invalid(
      owner,
      'option "cluster.rootNodes" must be a non-empty list of node URLs, e.g. ["redis://10.0.0.1:7000"].',
    );
  }
  const rootNodes = nodes.map((node: unknown, i) => {
    if (typeof node !== 'string' || !/^rediss?:\/\/[^/]+/.test(node)) {
      throw invalid(
        owner,
        `option "cluster.rootNodes[${i}]" must be a URL like "redis://host:port"; got ${JSON.stringify(node)}.`,
      );
    }
    return node;
  });
  return {
    rootNodes,
    checkInterval: checkPositiveInt(owner, 'cluster.checkInterval', o['checkInterval'], 1000),
  };
}

/** The `sentinel` option checked: null when absent. */
function resolveSentinel(
  owner: string,
  value: unknown,
  url: unknown,
  cluster: unknown,
): ResolvedRedisAdapterOptions['sentinel'] {
  if (value === undefined) return null;
  if (url !== undefined || cluster !== undefined) {
    throw invalid(
      owner,
      `pass only one of "url" (one Redis), "cluster" (a Redis Cluster) and "sentinel" (a master named by Redis Sentinel); got "sentinel" with "${url !== undefined ? 'url' : 'cluster'}".`,
    );
  }
  const o = checkKeys(`${owner} option "sentinel"`, value, [
    'name',
    'sentinelRootNodes',
    'scanInterval',
    'username',
    'password',
    'sentinelUsername',
    'sentinelPassword',
  ]);
  const name = checkString(owner, 'sentinel.name', o['name'], '');
  if (name === '') {
    throw invalid(
      owner,
      'option "sentinel.name" must be the name the sentinels monitor the master under, e.g. "mymaster".',
    );
  }
  const nodes = o['sentinelRootNodes'];
  if (!Array.isArray(nodes) || nodes.length === 0) {
    throw invalid(
      owner,
      'option "sentinel.sentinelRootNodes" must be a non-empty list of sentinels, e.g. [{ host: "10.0.0.1", port: 26379 }].',
    );
  }
  const sentinelRootNodes = nodes.map((node: unknown, i) => {
    const n = node as { host?: unknown; port?: unknown } | null;
    if (
      typeof n !== 'object' ||
      n === null ||
      typeof n.host !== 'string' ||
      n.host === '' ||
      !Number.isInteger(n.port) ||
      (n.port as number) < 1 ||
      (n.port as number) > 65535
    ) {
      throw invalid(
        owner,
        `option "sentinel.sentinelRootNodes[${i}]" must be { host: string, port: 1-65535 }; got ${JSON.stringify(node)}.`,
      );
    }
    return { host: n.host, port: n.port as number };
  });
  const credentials: Record<string, string> = {};
  for (const key of ['username', 'password', 'sentinelUsername', 'sentinelPassword']) {
    if (o[key] !== undefined) credentials[key] = checkString(owner, `sentinel.${key}`, o[key], '');
  }
  return {
    name,
    sentinelRootNodes,
    scanInterval: checkPositiveInt(owner, 'sentinel.scanInterval', o['scanInterval'], 5000),
    ...credentials,
  };
}

/** Exponential backoff from 50 ms up to `max`, with up to 20% jitter so instances spread out. */
export function reconnectDelay(retries: number, max: number): number {
  const base = Math.min(50 * 2 ** Math.min(retries, 16), max);
  return Math.round(base * (0.8 + Math.random() * 0.2));
}
