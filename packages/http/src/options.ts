import type { LoggerInterface } from '@pkg/logger';
import type { PrototypeKeysPolicy } from './body';
import { CorsConfig, type CorsOptions } from './cors';
import { describe } from './describe';
import { createHttpError } from './errors';
import { createFallbackLogger } from './logger';
import type { Request } from './request';
import type { Response } from './response';
import { compileTrustProxy, type TrustPredicate, type TrustProxySetting } from './trust-proxy';

/** The function that turns a request into a response (a router, in @pkg/core). */
export type HttpDispatch = (request: Request) => Response | Promise<Response>;

export interface HttpHandlerOptions {
  /** CORS settings (default: every origin, no credentials; see CorsConfig). */
  cors?: CorsConfig | CorsOptions;
  /**
   * Which peers may report forwarded values (default false: none): `true`, `false`, a list
   * of IP addresses, CIDR ranges and names (`'loopback'`, `'linklocal'`, `'uniquelocal'`), or
   * a predicate `(address) => boolean`. Checked and compiled once, at construction.
   */
  trustProxy?: TrustProxySetting | TrustPredicate;
  /** The largest request body accepted, in bytes (default 1 MiB = 1048576). Over it: 413. */
  maxBodySize?: number;
  /** Where handler errors are logged (default: severe lines to console.error). */
  logger?: LoggerInterface;
  /** When true, 500 answers carry the error's message and stack (default false). */
  debug?: boolean;
  /** The function that answers requests (default: none, every request gets 404). */
  dispatch?: HttpDispatch;
  /**
   * What a JSON body with a `__proto__` or `constructor.prototype` key gets: `'error'` (the
   * default) answers 400 `PKG_ERR_HTTP_INVALID_JSON`; `'remove'` drops those keys.
   */
  prototypeKeys?: PrototypeKeysPolicy;
}

/** The defaults of {@link HttpHandlerOptions}. */
export const httpHandlerDefaults: Readonly<{
  maxBodySize: number;
  debug: boolean;
  trustProxy: false;
  prototypeKeys: PrototypeKeysPolicy;
}> = Object.freeze({
  maxBodySize: 1024 * 1024,
  debug: false,
  trustProxy: false,
  prototypeKeys: 'error',
});

export interface ResolvedHttpHandlerOptions {
  cors: CorsConfig;
  trust: TrustPredicate;
  maxBodySize: number;
  logger: LoggerInterface;
  debug: boolean;
  dispatch: HttpDispatch | undefined;
  prototypeKeys: PrototypeKeysPolicy;
}

const KEYS = ['cors', 'trustProxy', 'maxBodySize', 'logger', 'debug', 'dispatch', 'prototypeKeys'];
const LOGGER_METHODS = ['error', 'debug', 'exception'] as const;

function invalid(message: string): TypeError {
  return createHttpError(TypeError, 'PKG_ERR_HTTP_INVALID_OPTION', message);
}

/** Checks a dispatch function. */
export function checkDispatch(dispatch: unknown): HttpDispatch {
  if (typeof dispatch !== 'function') {
    throw invalid(
      'The dispatch option must be a function (request) => Response | Promise<Response>.',
    );
  }
  return dispatch as HttpDispatch;
}

/** Merges options over the defaults and checks them once; a `TypeError` names the bad key. */
export function resolveHttpHandlerOptions(
  options: HttpHandlerOptions = {},
): ResolvedHttpHandlerOptions {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw invalid('HttpHandler options must be an object, e.g. { maxBodySize: 65536 }.');
  }
  for (const key of Object.keys(options)) {
    if (!KEYS.includes(key)) {
      throw invalid(`Unknown HttpHandler option "${key}"; the options are ${KEYS.join(', ')}.`);
    }
  }
  const maxBodySize = options.maxBodySize ?? httpHandlerDefaults.maxBodySize;
  if (!Number.isSafeInteger(maxBodySize) || maxBodySize < 0) {
    throw invalid(
      `HttpHandler option "maxBodySize" must be a whole number of bytes, 0 or more; got ${String(maxBodySize)}.`,
    );
  }
  const debug = options.debug ?? httpHandlerDefaults.debug;
  if (typeof debug !== 'boolean')
    throw invalid('HttpHandler option "debug" must be true or false.');
  const logger = options.logger ?? createFallbackLogger();
  if (
    logger === null ||
    typeof logger !== 'object' ||
    LOGGER_METHODS.some(
      (m) => typeof (logger as unknown as Record<string, unknown>)[m] !== 'function',
    )
  ) {
    throw invalid(
      'HttpHandler option "logger" must implement LoggerInterface (error, debug, exception, ...).',
    );
  }
  const cors =
    options.cors instanceof CorsConfig ? options.cors : new CorsConfig(options.cors ?? {});
  const trust = compileTrustProxy(
    options.trustProxy ?? httpHandlerDefaults.trustProxy,
    'HttpHandler option "trustProxy"',
  );
  const dispatch = options.dispatch === undefined ? undefined : checkDispatch(options.dispatch);
  const prototypeKeys = options.prototypeKeys ?? httpHandlerDefaults.prototypeKeys;
  if (prototypeKeys !== 'error' && prototypeKeys !== 'remove') {
    throw invalid(
      `HttpHandler option "prototypeKeys" must be 'error' or 'remove'; got ${describe(prototypeKeys)}.`,
    );
  }
  return { cors, trust, maxBodySize, logger, debug, dispatch, prototypeKeys };
}
