import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LoggerInterface } from '@pkg/logger';
import { answerPreflight, applyCorsHeaders, isPreflightRequest, type CorsConfig } from './cors';
import { HttpError } from './errors';
import { findAmbiguity, readBodyInto } from './incoming';
import {
  checkDispatch,
  resolveHttpHandlerOptions,
  type HttpDispatch,
  type HttpHandlerOptions,
} from './options';
import type { PrototypeKeysPolicy } from './body';
import { describe } from './describe';
import { adoptAttributes, hasResponseHooks, requestFromNode, type Request } from './request';
import { Response } from './response';
import type { TrustPredicate } from './trust-proxy';
import { encode, writeHeadAndBody } from './write-response';

/** A connection as `HttpHandler` marks it (see `#closing`). */
type MarkedSocket = NonNullable<IncomingMessage['socket']> & { [mark: symbol]: true | undefined };

/** What `handle` returns when the answer was written synchronously. */
const DONE: Promise<void> = Promise.resolve();

/**
 * True when the request carries no body: no Transfer-Encoding and no (or a zero)
 * Content-Length. Such a request is answered without waiting for the stream to end.
 */
function isBodiless(req: IncomingMessage): boolean {
  const headers = req.headers;
  if (headers['transfer-encoding'] !== undefined) return false;
  const length = headers['content-length'];
  return length === undefined || length === '0';
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
  readonly #prototypeKeys: PrototypeKeysPolicy;
  #dispatch: HttpDispatch | undefined;
  /**
   * Marks connections answered with `Connection: close` (requests pipelined behind are
   * dropped): a property under this handler's own symbol, read on every request, cheaper
   * than a WeakSet lookup.
   */
  readonly #closing = Symbol('closing');

  constructor(options: HttpHandlerOptions = {}) {
    const resolved = resolveHttpHandlerOptions(options);
    this.#cors = resolved.cors;
    this.#trust = resolved.trust;
    this.#maxBodySize = resolved.maxBodySize;
    this.#logger = resolved.logger;
    this.#debug = resolved.debug;
    this.#dispatch = resolved.dispatch;
    this.#prototypeKeys = resolved.prototypeKeys;
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

  /**
   * Builds a `Request` from Node's message with this handler's trust-proxy predicate and
   * prototype-key policy.
   */
  parseHttpRequest(req: IncomingMessage, body?: Buffer): Request {
    return requestFromNode(req, body, this.#trust, this.#prototypeKeys);
  }

  #build(
    req: IncomingMessage,
    body: Buffer | undefined,
    attributes: Readonly<Record<string, unknown>> | undefined,
  ): Request {
    const request = requestFromNode(req, body, this.#trust, this.#prototypeKeys);
    // Read in place until an attribute is written: most requests never write one.
    if (attributes !== undefined) adoptAttributes(request, attributes);
    return request;
  }

  /**
   * Serves one request end to end; resolves when the answer has been handed to Node, and
   * never rejects. Use it as the `request` listener of a `node:http` server. `attributes`,
   * when given, are set on the built `Request` before dispatch (what a server knows of the
   * connection, such as its client id). A request without a body whose dispatch function
   * answers synchronously is written before `handle` returns.
   */
  handle(
    req: IncomingMessage,
    res: ServerResponse,
    attributes?: Readonly<Record<string, unknown>>,
  ): Promise<void> {
    let request: Request | undefined;
    try {
      const socket = req.socket as MarkedSocket | null;
      if (socket !== null && socket[this.#closing] === true) {
        // A request pipelined behind one that was refused for its framing: never dispatched;
        // the connection ends once the refusal has been flushed.
        socket.end();
        return DONE;
      }
      const ambiguity = findAmbiguity(req);
      if (ambiguity !== undefined) {
        const err = new HttpError(
          'PKG_ERR_HTTP_AMBIGUOUS_REQUEST',
          `Ambiguous request: ${ambiguity}.`,
        );
        this.#log('debug', 'Refused an ambiguous HTTP request', this.#context(req, err));
        this.#write(req, res, this.#clientError(err), true);
        return DONE;
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
        return DONE;
      }
      if (!isBodiless(req)) return this.#handleWithBody(req, res, attributes);
      request = this.#build(req, undefined, attributes);
      const response = this.#respond(request);
      if (response instanceof Response) {
        this.#write(req, res, response, false);
        return DONE;
      }
      const built = request;
      return response
        .then(
          (answer) => this.#write(req, res, answer, false),
          (err: unknown) => this.#refuse(req, res, err, built, attributes),
        )
        .catch((err: unknown) => this.#refuse(req, res, err, built, attributes));
    } catch (err) {
      this.#refuse(req, res, err, request, attributes);
      return DONE;
    }
  }

  #handleWithBody(
    req: IncomingMessage,
    res: ServerResponse,
    attributes: Readonly<Record<string, unknown>> | undefined,
  ): Promise<void> {
    return new Promise<void>((settle) => {
      readBodyInto(req, this.#maxBodySize, (failure, body) => {
        let request: Request | undefined;
        try {
          if (failure !== undefined) {
            if (failure.code === 'PKG_ERR_HTTP_BODY_READ_FAILED') {
              this.#log(
                'debug',
                'The client went away while sending the body',
                this.#context(req, failure),
              );
              res.destroy();
            } else {
              this.#refuse(req, res, failure, undefined, attributes);
            }
            settle();
            return;
          }
          request = this.#build(req, body, attributes);
          const response = this.#respond(request);
          if (response instanceof Response) {
            this.#write(req, res, response, false);
            settle();
            return;
          }
          const built = request;
          response
            .then(
              (answer) => this.#write(req, res, answer, false),
              (err: unknown) => this.#refuse(req, res, err, built, attributes),
            )
            .catch((err: unknown) => this.#refuse(req, res, err, built, attributes))
            .finally(settle);
        } catch (err) {
          this.#refuse(req, res, err, request, attributes);
          settle();
        }
      });
    });
  }

  /** Answers a request that failed before or outside dispatch; never throws. */
  #refuse(
    req: IncomingMessage,
    res: ServerResponse,
    err: unknown,
    built: Request | undefined,
    attributes: Readonly<Record<string, unknown>> | undefined,
  ): void {
    let request = built;
    try {
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
    } catch (failure) {
      this.#logException(failure, this.#context(req, failure, 'PKG_ERR_HTTP_HANDLER_FAILED'));
      if (!res.headersSent) res.destroy();
    }
  }

  /**
   * Answers a built request: a CORS preflight directly, anything else through the dispatch
   * function (404 without one). A dispatch function that throws gives a 500 (an `HttpError`
   * its own status), logged; the request's `onResponse` hooks, then CORS headers, are
   * applied to whichever response it is. Never rejects.
   */
  async processRequest(request: Request): Promise<Response> {
    return this.#respond(request);
  }

  /**
   * The synchronous core of {@link processRequest}: a `Response` when the dispatch function
   * answered synchronously, a promise (that never rejects) when it returned one.
   */
  #respond(request: Request): Response | Promise<Response> {
    if (isPreflightRequest(request)) return this.handlePreflightRequest(request);
    const dispatch = this.#dispatch;
    if (dispatch === undefined) return this.#finish(request, Response.error(404));
    let result: unknown;
    try {
      result = dispatch(request);
    } catch (err) {
      return this.#finish(request, this.#fromThrown(err, request));
    }
    if (result instanceof Response) return this.#finish(request, result);
    // Else a promise of a Response; anything that is not one settles like a promise
    // resolved with it, and #checked answers it with a logged 500.
    return Promise.resolve(result).then(
      (value) => this.#finish(request, this.#checked(value, request)),
      (err: unknown) => this.#finish(request, this.#fromThrown(err, request)),
    );
  }

  /** The dispatch result when it is a Response; else a logged 500. */
  #checked(result: unknown, request: Request): Response {
    if (result instanceof Response) return result;
    const err = new TypeError(
      `The dispatch function returned ${describe(result)} instead of a Response; ` +
        `return Response.json(...), Response.text(...) or new Response(...).`,
    );
    this.#log('error', err.message, {
      code: 'PKG_ERR_HTTP_INVALID_RESPONSE',
      method: request.getMethod(),
      path: request.getPath(),
    });
    return this.#serverError(err);
  }

  /** The answer to a dispatch function that threw: an HttpError's own status, else 500. */
  #fromThrown(err: unknown, request: Request): Response {
    if (err instanceof HttpError) return this.#clientError(err);
    this.#logException(err, {
      code: 'PKG_ERR_HTTP_HANDLER_FAILED',
      method: request.getMethod(),
      path: request.getPath(),
      ip: request.getIpAddress(),
    });
    return this.#serverError(err);
  }

  /** Runs the request's `onResponse` hooks, then adds the CORS headers. */
  #finish(request: Request, response: Response): Response {
    let final = response;
    if (hasResponseHooks(request)) {
      try {
        final = request.applyResponseHooks(response);
      } catch (err) {
        this.#logException(err, {
          code: 'PKG_ERR_HTTP_HANDLER_FAILED',
          method: request.getMethod(),
          path: request.getPath(),
        });
        final = this.#serverError(err);
      }
    }
    return this.addCorsHeaders(final, request);
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
    if (err.status === 404) return Response.error(404);
    if (err.status >= 500) return this.#serverError(err);
    return Response.error(err.status, { code: err.code, message: err.message });
  }

  #serverError(err: unknown): Response {
    if (!this.#debug) return Response.error(500);
    const error = err instanceof Error ? err : new Error(String(err));
    return Response.error(500, { message: error.message, details: { stack: error.stack } });
  }

  /**
   * Writes the response once, with a single `writeHead` and `end`. `close` asks Node to
   * close the connection after it (for ambiguous framing and bodies over the limit, whose
   * unread bytes must not be taken as the next request).
   */
  #write(req: IncomingMessage, res: ServerResponse, response: Response, close: boolean): void {
    if (res.headersSent || res.writableEnded || res.destroyed) return;
    let payload: string | Buffer;
    try {
      payload = encode(response);
    } catch (err) {
      this.#logException(err, this.#context(req, err, 'PKG_ERR_HTTP_INVALID_RESPONSE'));
      response = this.#serverError(err);
      payload = encode(response);
    }
    if (close && req.socket !== null) (req.socket as MarkedSocket)[this.#closing] = true;
    writeHeadAndBody(req, res, response, payload, close);
  }
}
