/**
 * Error codes of @pkg/redis-adapter. Thrown errors and rejected promises carry one of these
 * as `err.code`.
 */
export interface RedisErrorInfo {
  /** A short generic description of the problem, for docs. */
  readonly message: string;
  /** The HTTP status that goes with the problem, when it has one. */
  readonly status?: number;
  /** The `error` event code a client gets when a handler lets this error through. */
  readonly eventCode?: string;
}

export const redisErrorCodes = {
  PKG_ERR_REDIS_INVALID_OPTION: {
    message: 'An option of RedisAdapter or RedisRateLimitStore is unknown or has the wrong type.',
  },
  PKG_ERR_REDIS_NOT_ATTACHED: {
    message: 'A RedisAdapter method was called before the adapter was given to a Server.',
  },
  PKG_ERR_REDIS_UNAVAILABLE: {
    message: 'Redis cannot be reached, so a cluster-wide request (count, ids) was not sent.',
    status: 503,
  },
  PKG_ERR_REDIS_REQUEST_TIMEOUT: {
    message: 'Not every instance answered a cluster-wide request within requestTimeout.',
    status: 504,
  },
  PKG_ERR_REDIS_CLOSED: {
    message: 'The adapter or store was closed while a request was waiting for its answer.',
  },
  PKG_ERR_REDIS_TOO_MANY_SUBSCRIBES: {
    message:
      'A client joined rooms that needed new Redis subscriptions faster than maxSubscribesPerSecond; the join was refused (error event rate_limited).',
    status: 429,
    eventCode: 'rate_limited',
  },
} as const satisfies Record<string, RedisErrorInfo>;

export type RedisErrorCode = keyof typeof redisErrorCodes;

/** An error with a machine-readable `code` from {@link redisErrorCodes}. */
export type RedisError<E extends Error = Error> = E & { readonly code: RedisErrorCode };

type ErrorCtor = new (message: string) => Error;

/** Builds an error of the given class whose `code` is one of {@link redisErrorCodes}. */
export function createRedisError<C extends ErrorCtor>(
  Ctor: C,
  code: RedisErrorCode,
  message: string,
): RedisError<InstanceType<C>> {
  const err = new Ctor(message) as InstanceType<C> & { code: RedisErrorCode };
  Object.defineProperty(err, 'code', { value: code, enumerable: true });
  const eventCode = (redisErrorCodes[code] as RedisErrorInfo).eventCode;
  if (eventCode !== undefined) {
    Object.defineProperty(err, 'eventCode', { value: eventCode, enumerable: true });
  }
  return err;
}
