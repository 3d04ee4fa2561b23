/**
 * Error codes of @pkg/decorators. Every error this package throws is a `TypeError` whose
 * `code` is one of these keys; match on `err.code`, not on the message. The messages here
 * are the short generic descriptions used in docs/errors.md; a thrown error's own message
 * names the class (where known), the method and what to change.
 */
export const decErrorCodes = {
  PKG_ERR_DEC_LEGACY_DECORATORS: {
    message:
      'A decorator was called with the legacy experimentalDecorators arguments; turn that compiler flag off',
  },
  PKG_ERR_DEC_METADATA_UNAVAILABLE: {
    message:
      'The decorator context has no metadata object; the compiler does not support decorator metadata',
  },
  PKG_ERR_DEC_INVALID_TARGET: {
    message: 'A decorator was applied to something other than a public, non-static method',
  },
  PKG_ERR_DEC_INVALID_EVENT: {
    message: 'A SocketOn event name is empty or uses characters outside A-Z a-z 0-9 . _ -',
  },
  PKG_ERR_DEC_INVALID_METHOD: {
    message: 'An HttpRoute method is not one of GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS',
  },
  PKG_ERR_DEC_INVALID_PATH: {
    message:
      'An HttpRoute path does not start with "/", has a malformed or repeated {param} segment, or an Express-style :param',
  },
  PKG_ERR_DEC_INVALID_OPTIONS: {
    message: 'Route options are not an object or contain an unknown key',
  },
  PKG_ERR_DEC_INVALID_MIDDLEWARE: {
    message: 'A middleware entry is neither a function nor a class with a handle method',
  },
  PKG_ERR_DEC_INVALID_RATE_LIMIT: {
    message: 'RateLimit needs a maxCount and a timeWindow (seconds) that are positive integers',
  },
  PKG_ERR_DEC_DUPLICATE_RATE_LIMIT: {
    message: 'RateLimit was applied more than once to the same method',
  },
  PKG_ERR_DEC_RATE_LIMIT_WITHOUT_ROUTE: {
    message: 'RateLimit is on a method that has neither HttpRoute nor SocketOn',
  },
  PKG_ERR_DEC_DUPLICATE_ROUTE: {
    message:
      'The same WebSocket event, HTTP method and path, or lifecycle hook is declared twice in one class',
  },
  PKG_ERR_DEC_INVALID_CONTROLLER: {
    message: 'getControllerMetadata was given something that is not a class',
  },
  PKG_ERR_DEC_INVALID_SCHEMA: {
    message:
      'A schema option (schema, body, query, params, headers) is not a Standard Schema (version 1)',
  },
} as const satisfies Record<string, { message: string; status?: number; closeCode?: number }>;

/** One of the codes in {@link decErrorCodes}. */
export type DecErrorCode = keyof typeof decErrorCodes;

/** The `TypeError` this package throws: the standard error plus its `code`. */
export type DecError = TypeError & { readonly code: DecErrorCode };

/** Builds the package's errors, so that every one carries a code from the table. */
export function decError(code: DecErrorCode, message: string): DecError {
  const error = new TypeError(message) as TypeError & { code: DecErrorCode };
  error.code = code;
  return error;
}
