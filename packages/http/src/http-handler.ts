import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LoggerInterface } from '@pkg/logger';
import { answerPreflight, applyCorsHeaders, isPreflightRequest, type CorsConfig } from './cors';
import { HttpError } from './errors';
import { findAmbiguity, readBody } from './incoming';
import {
  checkDispatch,
  resolveHttpHandlerOptions,
  type HttpDispatch,
  type HttpHandlerOptions,
} from './options';
import { Request } from './request';
import { Response, statusText } from './response';
import type { TrustPredicate } from './trust-proxy';

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'object') return value.constructor?.name ?? 'object';
  return typeof value;
}

/**
 * Serves `node:http` requests end to end: refuses ambiguous framing, builds the `Request`,
 * answers CORS preflights, reads the body with a limit, calls the dispatch function, adds
 * CORS headers and writes the `Response` once. `handle` never rejects: a dispatch function
 * that throws gets a 500 answer and a log line, and the process stays up.
 */
export class HttpHandler {
  readonly #cors: CorsConfig;
  readonly #trust: TrustPredicate;
  readonly #maxBodySize: number;
  readonly #logger: LoggerInterface;
  readonly #debug: boolean;
  #dispatch: HttpDispatch | undefined;
  /** Connections answered with `Connection: close`: requests pipelined behind are dropped. */
  readonly #closing = new WeakSet<object>();

  constructor(options: HttpHandlerOptions = {}) {
    const resolved = resolveHttpHandlerOptions(options);
    this.#cors = resolved.cors;
    this.#trust = resolved.trust;
    this.#maxBodySize = resolved.maxBodySize;
    this.#logger = resolved.logger;
    this.#debug = resolved.debug;
    this.#dispatch = resolved.dispatch;
  }

  /** Sets the function that answers requests (replacing any earlier one). */
  setDispatcher(dispatch: HttpDispatch): void {
    this.#dispatch = checkDispatch(dispatch);
  }

  getCorsConfig(): CorsConfig {
    return this.#cors;
  }

  getTrustPredicate(): TrustPredicate {
    return this.#trust;
  }

  getMaxBodySize(): number {
    return this.#maxBodySize;
  }

  /** Builds a `Request` from Node's message with this handler's trust-proxy predicate. */
  parseHttpRequest(req: IncomingMessage, body?: Buffer): Request {
    return Request.fromIncomingMessage(req, body, this.#trust);
  }

  #build(
    req: IncomingMessage,
    body: Buffer | undefined,
    attributes: Readonly<Record<string, unknown>> | undefined,
  ): Request {
    const request = this.parseHttpRequest(req, body);
    if (attributes !== undefined) {
      for (const [name, value] of Object.entries(attributes)) request.setAttribute(name, value);
    }
    return request;
  }

  /**
   * Serves one request end to end; resolves when the answer has been handed to Node, and
   * never rejects. Use it as the `request` listener of a `node:http` server. `attributes`,
   * when given, are set on the built `Request` before dispatch (what a server knows of the
   * connection, such as its client id).
   */
  async handle(
    req: IncomingMessage,
    res: ServerResponse,
    attributes?: Readonly<Record<string, unknown>>,
  ): Promise<void> {
    let request: Request | undefined;
    try {
      if (req.socket !== null && this.#closing.has(req.socket)) {
        // A request pipelined behind one that was refused for its framing: never dispatched;
        // the connection ends once the refusal has been flushed.
        req.socket.end();
        return;
      }
      const ambiguity = findAmbiguity(req);
      if (ambiguity !== undefined) {
        const err = new HttpError(
          'PKG_ERR_HTTP_AMBIGUOUS_REQUEST',
          `Ambiguous request: ${ambiguity}.`,
        );
        this.#log('debug', 'Refused an ambiguous HTTP request', this.#context(req, err));
        this.#write(req, res, this.#clientError(err), true);
        return;
      }
      // A preflight is recognised from the raw headers, so an ordinary request builds its
      // Request once, with its body.
      if (
        req.method === 'OPTIONS' &&
        req.headers.origin !== undefined &&
        req.headers['access-control-request-method'] !== undefined
      ) {
        request = this.#build(req, undefined, attributes);
        this.#write(req, res, this.handlePreflightRequest(request), false);
        return;
      }
      let body: Buffer;
      try {
        body = await readBody(req, this.#maxBodySize);
      } catch (err) {
        if (err instanceof HttpError && err.code === 'PKG_ERR_HTTP_BODY_READ_FAILED') {
          this.#log(
            'debug',
            'The client went away while sending the body',
            this.#context(req, err),
          );
          res.destroy();
          return;
        }
        throw err;
      }
      request = this.#build(req, body, attributes);
      const response = await this.processRequest(request);
      this.#write(req, res, response, false);
    } catch (err) {
      if (err instanceof HttpError) {
        // Problems with the request itself: malformed target or Host, body too large.
        const close = err.code === 'PKG_ERR_HTTP_BODY_TOO_LARGE';
        this.#log('debug', 'Refused an HTTP request', this.#context(req, err));
        const response = this.#clientError(err);
        // The body was refused before the Request was built: build it now (without the
        // body) so the error answer carries CORS headers too. A malformed target cannot be.
        if (request === undefined && err.code !== 'PKG_ERR_HTTP_MALFORMED_URL') {
          try {
            request = this.#build(req, undefined, attributes);
          } catch {
            request = undefined;
          }
        }
        this.#write(
          req,
          res,
          request === undefined ? response : this.addCorsHeaders(response, request),
          close,
        );
        return;
      }
      this.#logException(err, this.#context(req, err, 'PKG_ERR_HTTP_HANDLER_FAILED'));
      this.#write(req, res, this.#serverError(err), false);
    }
  }

  /**
   * Answers a built request: a CORS preflight directly, anything else through the dispatch
   * function (404 without one). A dispatch function that throws gives a 500 (an `HttpError`
   * its own status), logged; the request's `onResponse` hooks, then CORS headers, are
   * applied to whichever response it is. Never rejects.
   */
  async processRequest(request: Request): Promise<Response> {
    if (isPreflightRequest(request)) return this.handlePreflightRequest(request);
    let response: Response;
    try {
      const dispatch = this.#dispatch;
      if (dispatch === undefined) {
        response = Response.notFound();
      } else {
        const result: unknown = await dispatch(request);
        if (result instanceof Response) {
          response = result;
        } else {
          const err = new TypeError(
            `The dispatch function returned ${describe(result)} instead of a Response; ` +
              `return Response.json(...), Response.text(...) or new Response(...).`,
          );
          this.#log('error', err.message, {
            code: 'PKG_ERR_HTTP_INVALID_RESPONSE',
            method: request.getMethod(),
            path: request.getPath(),
          });
          response = this.#serverError(err);
        }
      }
    } catch (err) {
      if (err instanceof HttpError) {
        response = this.#clientError(err);
      } else {
        this.#logException(err, {
          code: 'PKG_ERR_HTTP_HANDLER_FAILED',
          method: request.getMethod(),
          path: request.getPath(),
          ip: request.getIpAddress(),
        });
        response = this.#serverError(err);
      }
    }
    try {
      response = request.applyResponseHooks(response);
    } catch (err) {
      this.#logException(err, {
        code: 'PKG_ERR_HTTP_HANDLER_FAILED',
        method: request.getMethod(),
        path: request.getPath(),
      });
      response = this.#serverError(err);
    }
    return this.addCorsHeaders(response, request);
  }

  /** Adds the CORS headers of an actual response (see `applyCorsHeaders`). */
  addCorsHeaders(response: Response, request: Request): Response {
    return applyCorsHeaders(this.#cors, response, request);
  }

  /** Answers a CORS preflight: 204 with the grant, or without one when not allowed. */
  handlePreflightRequest(request: Request): Response {
    return answerPreflight(this.#cors, request);
  }

  /** Logs without ever throwing: a failing logger must not take the answer down with it. */
  #log(level: 'debug' | 'error', message: string, context: Record<string, unknown>): void {
    try {
      this.#logger[level](message, context);
    } catch {
      // The logger is broken; the answer still goes out.
    }
  }

  #logException(err: unknown, context: Record<string, unknown>): void {
    try {
      this.#logger.exception(err, context);
    } catch {
      // As above.
    }
  }

  #context(req: IncomingMessage, err: unknown, code?: string): Record<string, unknown> {
    return {
      code: code ?? (err as { code?: unknown }).code,
      method: req.method,
      url: req.url,
      remoteAddress: req.socket?.remoteAddress,
      message: err instanceof Error ? err.message : String(err),
    };
  }

  #clientError(err: HttpError): Response {
    if (err.status === 404) return Response.notFound();
    if (err.status >= 500) return this.#serverError(err);
    return Response.json(
      { error: statusText(err.status), code: err.code, message: err.message },
      err.status,
    );
  }

  #serverError(err: unknown): Response {
    if (!this.#debug) return Response.serverError();
    const error = err instanceof Error ? err : new Error(String(err));
    return Response.json(
      { error: 'Internal Server Error', message: error.message, stack: error.stack },
      500,
    );
  }

  /**
   * Writes the response once. `close` asks Node to close the connection after it (for
   * ambiguous framing and bodies over the limit, whose unread bytes must not be taken as
   * the next request).
   */
  #write(req: IncomingMessage, res: ServerResponse, response: Response, close: boolean): void {
    if (res.headersSent || res.writableEnded || res.destroyed) return;
    // A string body lets Node send headers and body in one write instead of a writev.
    const encode = (r: Response): string | Buffer =>
      r.getBody() instanceof Uint8Array ? r.getBodyBuffer() : r.getBodyString();
    let payload: string | Buffer;
    try {
      payload = encode(response);
    } catch (err) {
      this.#logException(err, this.#context(req, err, 'PKG_ERR_HTTP_INVALID_RESPONSE'));
      response = this.#serverError(err);
      payload = encode(response);
    }
    const status = response.getStatusCode();
    const bodiless = status === 204 || status === 304 || status < 200;
    for (const name of response.getHeaderNames()) {
      const lower = name.toLowerCase();
      if (lower === 'content-length' || lower === 'transfer-encoding') continue;
      if (close && lower === 'connection') continue;
      const values = response.getHeaderValues(name);
      res.setHeader(name, values.length === 1 ? (values[0] as string) : values);
    }
    const contentType = response.getContentType();
    if (!bodiless && contentType !== '' && !response.hasHeader('content-type')) {
      res.setHeader('Content-Type', contentType);
    }
    if (!bodiless) {
      res.setHeader(
        'Content-Length',
        typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length,
      );
    }
    if (close) {
      if (req.socket !== null) this.#closing.add(req.socket);
      res.setHeader('Connection', 'close');
      res.shouldKeepAlive = false;
    }
    res.statusCode = status;
    if (bodiless || req.method === 'HEAD') res.end();
    else res.end(payload);
  }
}
