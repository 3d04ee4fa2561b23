/**
 * Error codes of @pkg/http. Thrown errors carry one of these as `err.code`. Answers that
 * `HttpHandler` produces on its own (400, 404, 413, 429, 500) use the status listed here and
 * the body of `httpErrorBody` (error-body.ts), with the code in its `code` member (except 404
 * and 500, whose bodies are exactly `{"error":"Not Found"}` and
 * `{"error":"Internal Server Error"}`).
 */
export interface HttpErrorInfo {
  /** A short generic description of the problem, for docs. */
  readonly message: string;
  /** The HTTP status of the answer, when the problem is answered with one. */
  readonly status?: number;
  /** The WebSocket close code that goes with the problem (none here). */
  readonly closeCode?: number;
}

export const httpErrorCodes = {
  PKG_ERR_HTTP_INVALID_OPTION: {
    message: 'An option is unknown or its value has the wrong type or range.',
  },
  PKG_ERR_HTTP_INVALID_ARGUMENT: {
    message: 'A method was called with an argument of the wrong type or shape.',
  },
  PKG_ERR_HTTP_INVALID_TRUST_PROXY: {
    message: 'A trust-proxy entry is not true/false or a canonical IP address or CIDR range.',
  },
  PKG_ERR_HTTP_CORS_CREDENTIALS_WILDCARD: {
    message: 'CORS allows every origin ("*") together with credentials, which browsers refuse.',
  },
  PKG_ERR_HTTP_INVALID_HEADER: {
    message: 'A response header name is not a token, or its value contains CR, LF or NUL.',
  },
  PKG_ERR_HTTP_INVALID_STATUS: {
    message: 'A response status code is not an integer from 100 to 999.',
  },
  PKG_ERR_HTTP_INVALID_RATE_LIMIT: {
    message: 'A rate-limit rule does not have a positive integer maxCount and timeWindow.',
  },
  PKG_ERR_HTTP_MALFORMED_URL: {
    message: 'The request target is not an origin-form path or has a malformed percent-escape.',
    status: 400,
  },
  PKG_ERR_HTTP_INVALID_HOST: {
    message: 'The Host header is not a valid host name, IP literal and optional port.',
    status: 400,
  },
  PKG_ERR_HTTP_AMBIGUOUS_REQUEST: {
    message:
      'The request has several Host or Content-Length headers, a Transfer-Encoding other than chunked, or both Content-Length and Transfer-Encoding.',
    status: 400,
  },
  PKG_ERR_HTTP_INVALID_JSON: {
    message: 'A request body with a JSON content type is not valid JSON.',
    status: 400,
  },
  PKG_ERR_HTTP_INVALID_FORM: {
    message: 'A form-urlencoded request body has a malformed percent-escape.',
    status: 400,
  },
  PKG_ERR_HTTP_BODY_TOO_LARGE: {
    message: 'The request body is larger than maxBodySize.',
    status: 413,
  },
  PKG_ERR_HTTP_BODY_READ_FAILED: {
    message: 'The client aborted or broke the connection while the request body was being read.',
  },
  PKG_ERR_HTTP_NOT_FOUND: {
    message: 'No dispatch function is set, or it answered that nothing matches the request.',
    status: 404,
  },
  PKG_ERR_HTTP_RATE_LIMITED: {
    message: 'The client made more requests to a rate-limited route than its rule allows.',
    status: 429,
  },
  PKG_ERR_HTTP_HANDLER_FAILED: {
    message: 'The dispatch function threw or rejected; the client got a 500 answer.',
    status: 500,
  },
  PKG_ERR_HTTP_INVALID_RESPONSE: {
    message: 'The dispatch function returned something that is not a Response.',
    status: 500,
  },
} as const satisfies Record<string, HttpErrorInfo>;

export type HttpErrorCode = keyof typeof httpErrorCodes;

/**
 * An error about the request that the client sent (malformed target, bad JSON, body too
 * large). `status` is the HTTP status to answer with; `HttpHandler` turns it into that answer.
 */
export class HttpError extends Error {
  readonly code: HttpErrorCode;
  readonly status: number;

  // `{ cause?: unknown }` rather than `ErrorOptions`: the declarations must also compile for
  // a consumer whose `lib` predates ES2022, where `ErrorOptions` does not exist.
  constructor(code: HttpErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'HttpError';
    this.code = code;
    const info: HttpErrorInfo = httpErrorCodes[code];
    this.status = info.status ?? 500;
  }
}

/** An error of the given class whose `code` is one of {@link httpErrorCodes}. */
export type CodedHttpError<E extends Error = Error> = E & { readonly code: HttpErrorCode };

type ErrorCtor = new (message: string, options?: { cause?: unknown }) => Error;

/**
 * Builds a `TypeError`, `RangeError` (or other error class) whose `code` is one of
 * {@link httpErrorCodes}: used for bad options and arguments, where the caller is at fault.
 */
export function createHttpError<C extends ErrorCtor>(
  Ctor: C,
  code: HttpErrorCode,
  message: string,
  cause?: unknown,
): CodedHttpError<InstanceType<C>> {
  const err = (
    cause === undefined ? new Ctor(message) : new Ctor(message, { cause })
  ) as InstanceType<C> & { code: HttpErrorCode };
  Object.defineProperty(err, 'code', { value: code, enumerable: true });
  return err;
}
