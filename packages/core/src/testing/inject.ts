import { Buffer } from 'node:buffer';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { HttpHandler } from '@pkg/http';
import { createClientIdGenerator } from '@pkg/ws-protocol';
import { inject as lightInject } from 'light-my-request';
import { createCoreError } from '../errors';
import { CLIENT_ID_ATTRIBUTE } from '../lifecycle/lifecycle';

// `server.inject()`: a request answered as the listening server answers it (admission:
// shutting down, allowed_hosts, max_connections; then the same HttpHandler: CORS, body
// limits, health check, routing, middleware, rate limits, error answers), without a port. light-my-request (the library Fastify's inject is built on) builds the
// Node request and response objects; the answer is collected in memory.

/** A request for `server.inject()`. */
export interface InjectRequest {
  /** Default `'GET'`. */
  method?: string;
  /** Path and query, for example `/users/1?verbose=yes`. */
  url: string;
  headers?: Record<string, string | string[]>;
  /**
   * The body: a string or bytes as they are; any other value is sent as JSON (with
   * `Content-Type: application/json` unless a content type is given).
   */
  body?: unknown;
  /** The peer address the server sees. Default `'127.0.0.1'`. */
  remoteAddress?: string;
  /**
   * Skip the admission the listener applies (draining, `allowed_hosts` and a trusted
   * proxy's forwarded host, `max_connections`) and hand the request to the HTTP handler
   * directly, as in a unit test of a route. Default `false`.
   */
  skipAdmission?: boolean;
}

/** What `server.inject()` resolves to. */
export interface InjectResponse {
  readonly statusCode: number;
  /** Header names in lower case. */
  readonly headers: OutgoingHttpHeaders;
  /** The body as text. */
  readonly body: string;
  /** The body as bytes. */
  readonly rawBody: Buffer;
  /** The body parsed as JSON (throws when it is not JSON). */
  json<T = unknown>(): T;
}

const nextId = createClientIdGenerator();

/** Answers a Node request/response pair: the server's admitted path. */
export type InjectDispatch = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Answers one request in memory: through `admitted` (the server's admission, then
 * `handler`), or with `skipAdmission` through `handler` alone.
 */
export async function injectRequest(
  handler: HttpHandler,
  request: InjectRequest,
  admitted?: InjectDispatch,
): Promise<InjectResponse> {
  if (typeof request !== 'object' || request === null || typeof request.url !== 'string') {
    throw createCoreError(
      TypeError,
      'PKG_ERR_CORE_INVALID_ARGUMENT',
      'inject({ method, url, headers, body }): url must be a string such as "/users/1".',
    );
  }
  const {
    method = 'GET',
    url,
    headers = {},
    body,
    remoteAddress = '127.0.0.1',
    skipAdmission = false,
  } = request;
  const payload =
    body === undefined || typeof body === 'string' || Buffer.isBuffer(body)
      ? body
      : JSON.stringify(body);
  const hasType = Object.keys(headers).some((name) => name.toLowerCase() === 'content-type');
  const sent =
    payload !== undefined && payload !== body && !hasType
      ? { ...headers, 'content-type': 'application/json' }
      : headers;
  const response = await lightInject(
    (req, res) => {
      if (admitted !== undefined && !skipAdmission) admitted(req, res);
      else void handler.handle(req, res, { [CLIENT_ID_ATTRIBUTE]: nextId() });
    },
    {
      method: method.toUpperCase() as 'GET',
      url,
      headers: sent,
      remoteAddress,
      ...(payload !== undefined ? { payload: payload as string | Buffer } : {}),
    },
  );
  return {
    statusCode: response.statusCode,
    headers: response.headers,
    body: response.body,
    rawBody: response.rawPayload,
    json: <T>() => JSON.parse(response.body) as T,
  };
}
