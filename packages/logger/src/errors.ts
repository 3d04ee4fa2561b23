/**
 * Error codes of @pkg/logger. Thrown errors carry one of these as `err.code`. Problems that
 * happen while a line is being written (a file that became unwritable, a failing console
 * stream) are never thrown; they reach the logger's `onError` handler with the code
 * `PKG_ERR_LOG_WRITE_FAILED`.
 */
export interface LogErrorInfo {
  /** A short generic description of the problem, for docs. */
  readonly message: string;
  /** The HTTP status that goes with the problem, when it has one (none here). */
  readonly status?: number;
  /** The WebSocket close code that goes with the problem, when it has one (none here). */
  readonly closeCode?: number;
}

export const logErrorCodes = {
  PKG_ERR_LOG_INVALID_LEVEL: {
    message:
      'A log level name is not one of emergency, alert, critical, error, warning, notice, info, debug.',
  },
  PKG_ERR_LOG_INVALID_SEVERITY: {
    message: 'A numeric severity is not an integer from 0 (emergency) to 7 (debug).',
  },
  PKG_ERR_LOG_INVALID_OPTION: {
    message: 'A Logger option is unknown or its value has the wrong type.',
  },
  PKG_ERR_LOG_DIRECTORY_UNWRITABLE: {
    message: 'The log directory cannot be created, is not a directory, or is not writable.',
  },
  PKG_ERR_LOG_WRITE_FAILED: {
    message:
      'A log line could not be written to its file or console stream (reported, not thrown).',
  },
} as const satisfies Record<string, LogErrorInfo>;

export type LogErrorCode = keyof typeof logErrorCodes;

/** An error with a machine-readable `code` from {@link logErrorCodes}. */
export type LogError<E extends Error = Error> = E & { readonly code: LogErrorCode };

// Not `ErrorOptions`: that type is missing from a consumer's `lib` before ES2022.
type ErrorCtor = new (message: string, options?: { cause?: unknown }) => Error;

/** Builds an error of the given class whose `code` is one of {@link logErrorCodes}. */
export function createLogError<C extends ErrorCtor>(
  Ctor: C,
  code: LogErrorCode,
  message: string,
  cause?: unknown,
): LogError<InstanceType<C>> {
  const err = (
    cause === undefined ? new Ctor(message) : new Ctor(message, { cause })
  ) as InstanceType<C> & { code: LogErrorCode };
  Object.defineProperty(err, 'code', { value: code, enumerable: true });
  return err;
}
