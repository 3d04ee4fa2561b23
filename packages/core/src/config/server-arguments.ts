import { Logger, type LoggerInterface } from '@pkg/logger';
import { createCoreError } from '../errors';
import { ServerConfig, type ServerCorsOptions } from './server-config';

function invalidArgument(message: string): TypeError {
  return createCoreError(TypeError, 'PKG_ERR_CORE_INVALID_ARGUMENT', message);
}

function isLogger(value: unknown): value is LoggerInterface {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return ['debug', 'info', 'warning', 'error', 'log', 'exception'].every(
    (m) => typeof v[m] === 'function',
  );
}

/**
 * The configuration and logger of `new Server(host, port, debug, corsConfig, logger)` or
 * `new Server(config, undefined, undefined, undefined, logger)`, checked. Without a logger, a
 * console `Logger` at `debug` (debug mode) or `info` level.
 */
export function resolveServerArguments(
  host: string | ServerConfig,
  port: number | undefined,
  debug: boolean | undefined,
  corsConfig: ServerCorsOptions | undefined,
  logger: LoggerInterface | undefined,
): { config: ServerConfig; logger: LoggerInterface } {
  let config: ServerConfig;
  if (host instanceof ServerConfig) {
    if (port !== undefined || debug !== undefined || corsConfig !== undefined) {
      throw invalidArgument(
        'new Server(config, ...): with a ServerConfig, put port, debug and cors in the configuration and pass undefined for them (the logger is the fifth argument).',
      );
    }
    config = host;
  } else {
    config = new ServerConfig({
      host,
      port: port ?? 6001,
      debug: debug ?? false,
      cors: corsConfig ?? {},
    });
  }
  if (logger !== undefined && !isLogger(logger)) {
    throw invalidArgument(
      'new Server(...): the fifth argument must be a LoggerInterface (debug, info, error, log, exception, ...).',
    );
  }
  return { config, logger: logger ?? new Logger(config.isDebug() ? 'debug' : 'info', true, false) };
}
