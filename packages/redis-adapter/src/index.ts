// The public API of @pkg/redis-adapter.
export { RedisAdapter } from './redis-adapter';
export type { RedisAdapterStats } from './redis-adapter';
export { RedisHistoryStore } from './history-store';
export type { RedisHistoryStats } from './history-store';
export { REDIS_ADAPTER_DEFAULTS } from './options';
export type { RedisAdapterOptions } from './options';
export { REDIS_RATE_LIMIT_DEFAULTS, RedisRateLimitStore } from './rate-limit-store';
export type { RedisRateLimitStoreOptions } from './rate-limit-store';
export { WIRE_VERSION } from './wire';
// presence
export { RedisPresence } from './presence';
export type { RedisPresenceStats } from './presence';
export { createRedisError, redisErrorCodes } from './errors';
export type { RedisError, RedisErrorCode, RedisErrorInfo } from './errors';
