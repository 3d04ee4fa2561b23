import type { OutgoingHttpHeaders } from 'node:http';
import type { HttpHandler } from '@pkg/http';
import { createClientIdGenerator } from '@pkg/ws-protocol';
import { inject as lightInject } from 'light-my-request';
import { createCoreError } from '../errors';
import { CLIENT_ID_ATTRIBUTE } from '../lifecycle/lifecycle';

// `server.inject()`: a request answered by the same HttpHandler as the listening server
// (CORS, body limits, health check, routing, middleware, rate limits, error answers),
// without a port. light-my-request (the library Fastify's inject is built on) builds the
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

/** Answers one request with `handler`, in memory. */
export async function injectRequest(
  handler: HttpHandler,
  request: InjectRequest,
): Promise<InjectResponse> {
  if (typeof request !== 'object' || request === null || typeof request.url !== 'string') {
    throw createCoreError(
      TypeError,
      'PKG_ERR_CORE_INVALID_ARGUMENT',
      'inject({ method, url, headers, body }): url must be a string such as "/users/1".',
    );
  }
  const { method = 'GET', url, headers = {}, body, remoteAddress = '127.0.0.1' } = request;
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
      void handler.handle(req, res, { [CLIENT_ID_ATTRIBUTE]: nextId() });
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
