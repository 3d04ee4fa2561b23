import { Buffer } from 'node:buffer';
import { STATUS_CODES, validateHeaderName, validateHeaderValue } from 'node:http';
import { httpErrorBody, type HttpErrorFields } from './error-body';
import { createHttpError } from './errors';
import { LowerCaseNames } from './lower-case-names';

/**
 * What a response body may be: a string (sent as is), bytes (sent as is), or any other
 * value, which is sent as JSON (objects, arrays, numbers, booleans). `null` and `undefined`
 * mean no body.
 */
export type ResponseBody = string | number | boolean | null | undefined | object;

/** One header of a response: its name as first written, and its values. */
export interface HeaderEntry {
  /** The name in lower case (the entry's key). */
  readonly key: string;
  /** The name as first written. */
  readonly name: string;
  readonly values: string[];
}

/**
 * The headers of a response, keyed by lower-case name, read without copying (for
 * `HttpHandler`, which writes them in one `writeHead`). Not part of the public API.
 */
// Assigned once, in the static block of Response.
export let responseHeaderEntries: (response: Response) => ReadonlyMap<string, HeaderEntry>;

const NO_HEADERS: Record<string, string> = Object.freeze({}) as Record<string, string>;

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * Names and values that every rule allows, recognised without a call into Node (which
 * builds an error object for each refusal and sits behind a wrapper): a name of letters,
 * digits and `-`, a value of visible ASCII and spaces. Anything else goes to Node's check.
 */
const PLAIN_NAME = /^[A-Za-z0-9-]+$/;

/**
 * True when every character of a value is visible ASCII or a space. A loop, not a regular
 * expression: values are often built by concatenation (ids, lengths), and a regular
 * expression runs on such a string only through a slower call into the engine.
 */
function isPlainValue(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code > 0x7e) return false;
  }
  return true;
}

/**
 * Names that passed the check, with their lower-case key, so that a name set on every
 * response (`X-Request-Id`, the CORS and rate-limit headers) is checked and lower-cased once
 * per process, not once per response: a map lookup costs a third of a regular-expression
 * call. Bounded; once full, further names are checked every time.
 */
const checkedNames = new LowerCaseNames(512);

/**
 * The lower-case key of a name that Node's `validateHeaderName` accepts (a token), or
 * undefined for any other name.
 */
function tokenKey(name: string): string | undefined {
  const known = checkedNames.get(name);
  if (known !== undefined) return known;
  if (!PLAIN_NAME.test(name)) {
    try {
      validateHeaderName(name);
    } catch {
      return undefined;
    }
  }
  return checkedNames.remember(name);
}

/**
 * The lower-case key of a valid header name; a `TypeError` for any other. Names and values
 * are checked with Node's own `validateHeaderName` / `validateHeaderValue` (HTAB, visible
 * ASCII, space and obs-text in values; CR, LF, NUL and anything above U+00FF refused, which
 * is what stops header injection). @pkg/ws-protocol checks the headers of a refused
 * handshake with the same two functions.
 */
function headerKey(name: unknown): string {
  const key = typeof name === 'string' ? tokenKey(name) : undefined;
  if (key === undefined) {
    throw createHttpError(
      TypeError,
      'PKG_ERR_HTTP_INVALID_HEADER',
      `Invalid header name ${JSON.stringify(name)}: use letters, digits and !#$%&'*+-.^_\`|~ only.`,
    );
  }
  return key;
}

/** The text of a valid header value (numbers as strings); a `TypeError` for any other. */
function headerValue(name: string, value: unknown): string {
  if (typeof value !== 'string' && typeof value !== 'number') {
    throw createHttpError(
      TypeError,
      'PKG_ERR_HTTP_INVALID_HEADER',
      `The value of header "${name}" must be a string or a number; got ${typeof value}.`,
    );
  }
  const text = String(value);
  if (isPlainValue(text)) return text;
  try {
    validateHeaderValue(name, text);
  } catch {
    throw createHttpError(
      TypeError,
      'PKG_ERR_HTTP_INVALID_HEADER',
      `The value of header "${name}" contains CR, LF, NUL or another character that a ` +
        `header may not carry; remove it or percent-encode the value.`,
    );
  }
  return text;
}

/** The standard reason phrase of a status code (`404` gives `Not Found`), or ''. */
export function statusText(code: number): string {
  return STATUS_CODES[code] ?? '';
}

function errorBody(data: ResponseBody): ResponseBody {
  return typeof data === 'string' ? { error: data } : data;
}

/**
 * An HTTP response: status, headers and body. Setters return `this`, so calls chain.
 * Header names are matched case-insensitively; a name or value that could inject a header
 * (CR, LF) is refused with a `TypeError` (`PKG_ERR_HTTP_INVALID_HEADER`).
 */
export class Response {
  #body: ResponseBody;
  #statusCode = 200;
  readonly #headers = new Map<string, HeaderEntry>();
  #jsonEncode = false;

  static {
    responseHeaderEntries = (response) => response.#headers;
  }

  constructor(
    body: ResponseBody = null,
    statusCode = 200,
    headers: Record<string, string> = NO_HEADERS,
  ) {
    this.#body = body;
    if (statusCode !== 200) this.setStatusCode(statusCode);
    if (headers !== NO_HEADERS) this.setHeaders(headers);
  }

  /** A JSON response: `data` is always JSON-encoded (a string becomes a JSON string). */
  static json(data: unknown, code = 200, headers: Record<string, string> = NO_HEADERS): Response {
    const response = new Response(data as ResponseBody, code);
    response.#headers.set('content-type', {
      key: 'content-type',
      name: 'Content-Type',
      values: [JSON_TYPE],
    });
    response.#jsonEncode = true;
    return headers === NO_HEADERS ? response : response.setHeaders(headers);
  }

  /**
   * An error answer in the one shape of error bodies: `{"error": <reason phrase>, "code",
   * "message", ...details}`, the last three when given (see `httpErrorBody`).
   */
  static error(
    status: number,
    fields: HttpErrorFields = {},
    headers: Record<string, string> = NO_HEADERS,
  ): Response {
    return Response.json(httpErrorBody(status, fields), status, headers);
  }

  /** An HTML response (`text/html; charset=utf-8`). */
  static html(html: string, code = 200, headers: Record<string, string> = {}): Response {
    return new Response(String(html), code, {
      'Content-Type': 'text/html; charset=utf-8',
    }).setHeaders(headers);
  }

  /** A plain-text response (`text/plain; charset=utf-8`). */
  static text(text: string, code = 200, headers: Record<string, string> = {}): Response {
    return new Response(String(text), code, {
      'Content-Type': 'text/plain; charset=utf-8',
    }).setHeaders(headers);
  }

  /** A redirect to `url` (302 by default) with an empty body. */
  static redirect(url: string, code = 302, headers: Record<string, string> = {}): Response {
    if (typeof url !== 'string' || url === '') {
      throw createHttpError(
        TypeError,
        'PKG_ERR_HTTP_INVALID_ARGUMENT',
        'Response.redirect(url) needs a non-empty URL string.',
      );
    }
    return new Response(null, code, headers).setHeader('Location', url);
  }

  /** 404; a string becomes `{"error": text}`, so the default body is `{"error":"Not Found"}`. */
  static notFound(
    data: ResponseBody = 'Not Found',
    headers: Record<string, string> = {},
  ): Response {
    return Response.json(errorBody(data), 404, headers);
  }

  /** 500; the default body is `{"error":"Internal Server Error"}`. */
  static serverError(
    data: ResponseBody = 'Internal Server Error',
    headers: Record<string, string> = {},
  ): Response {
    return Response.json(errorBody(data), 500, headers);
  }

  /** 401; the default body is `{"error":"Unauthorized"}`. */
  static unauthorized(
    data: ResponseBody = 'Unauthorized',
    headers: Record<string, string> = {},
  ): Response {
    return Response.json(errorBody(data), 401, headers);
  }

  /** 403; the default body is `{"error":"Forbidden"}`. */
  static forbidden(
    data: ResponseBody = 'Forbidden',
    headers: Record<string, string> = {},
  ): Response {
    return Response.json(errorBody(data), 403, headers);
  }

  /** 400; the default body is `{"error":"Bad Request"}`. */
  static badRequest(
    data: ResponseBody = 'Bad Request',
    headers: Record<string, string> = {},
  ): Response {
    return Response.json(errorBody(data), 400, headers);
  }

  /** 204 with no body. */
  static noContent(headers: Record<string, string> = {}): Response {
    return new Response(null, 204, headers);
  }

  /** Replaces the body; it is then encoded by its type (see {@link getBodyString}). */
  setBody(body: ResponseBody): this {
    this.#body = body;
    this.#jsonEncode = false;
    return this;
  }

  getBody(): ResponseBody {
    return this.#body;
  }

  /** Sets the status; a `RangeError` (`PKG_ERR_HTTP_INVALID_STATUS`) unless 100 to 999. */
  setStatusCode(code: number): this {
    if (!Number.isInteger(code) || code < 100 || code > 999) {
      throw createHttpError(
        RangeError,
        'PKG_ERR_HTTP_INVALID_STATUS',
        `Invalid status code ${String(code)}: use an integer from 100 to 999.`,
      );
    }
    this.#statusCode = code;
    return this;
  }

  getStatusCode(): number {
    return this.#statusCode;
  }

  /** Sets a header, replacing any value under the same name in any letter case. */
  setHeader(name: string, value: string | number): this {
    const key = headerKey(name);
    this.#headers.set(key, { key, name, values: [headerValue(name, value)] });
    return this;
  }

  /** Adds a value to a header (for `Set-Cookie` and other repeatable headers). */
  appendHeader(name: string, value: string | number): this {
    const key = headerKey(name);
    const text = headerValue(name, value);
    const entry = this.#headers.get(key);
    if (entry === undefined) this.#headers.set(key, { key, name, values: [text] });
    else entry.values.push(text);
    return this;
  }

  /** Sets several headers (each replacing). */
  setHeaders(headers: Record<string, string | number>): this {
    if (headers === null || typeof headers !== 'object') {
      throw createHttpError(
        TypeError,
        'PKG_ERR_HTTP_INVALID_ARGUMENT',
        'Response headers must be an object of header names to string values.',
      );
    }
    for (const [name, value] of Object.entries(headers)) this.setHeader(name, value);
    return this;
  }

  /** A header's value (several values joined with `, `), or undefined. */
  getHeader(name: string): string | undefined {
    return this.#headers.get(String(name).toLowerCase())?.values.join(', ');
  }

  /** Every value of a header, in the order set. */
  getHeaderValues(name: string): string[] {
    return [...(this.#headers.get(String(name).toLowerCase())?.values ?? [])];
  }

  hasHeader(name: string): boolean {
    return this.#headers.has(String(name).toLowerCase());
  }

  removeHeader(name: string): this {
    this.#headers.delete(String(name).toLowerCase());
    return this;
  }

  /** The headers that were set, under the names as first written; values joined with `, `. */
  getHeaders(): Record<string, string> {
    return Object.fromEntries(
      [...this.#headers.values()].map((entry) => [entry.name, entry.values.join(', ')]),
    );
  }

  /** The header names as first written. */
  getHeaderNames(): string[] {
    return [...this.#headers.values()].map((entry) => entry.name);
  }

  setContentType(contentType: string): this {
    return this.setHeader('Content-Type', contentType);
  }

  /**
   * The Content-Type header, or the one the body implies: JSON for `Response.json()`,
   * objects, arrays, numbers and booleans; `text/plain; charset=utf-8` for strings;
   * `application/octet-stream` for bytes; '' for no body.
   */
  getContentType(): string {
    const set = this.getHeader('content-type');
    if (set !== undefined) return set;
    const body = this.#body;
    if (this.#jsonEncode) return JSON_TYPE;
    if (body === null || body === undefined) return '';
    if (typeof body === 'string') return 'text/plain; charset=utf-8';
    if (body instanceof Uint8Array) return 'application/octet-stream';
    return JSON_TYPE;
  }

  /**
   * The body as text: strings as they are, bytes decoded as UTF-8, no body as '', and
   * everything else (and everything given to `Response.json()`) as JSON.
   */
  getBodyString(): string {
    const body = this.#body;
    if (this.#jsonEncode) return JSON.stringify(body) ?? '';
    if (body === null || body === undefined) return '';
    if (typeof body === 'string') return body;
    if (body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
    return JSON.stringify(body) ?? '';
  }

  /** The body as the bytes to send. */
  getBodyBuffer(): Buffer {
    const body = this.#body;
    if (!this.#jsonEncode && body instanceof Uint8Array) {
      return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    }
    return Buffer.from(this.getBodyString(), 'utf8');
  }

  /** The standard reason phrase of `code` (default: this response's status), or ''. */
  getStatusText(code: number = this.#statusCode): string {
    return statusText(code);
  }

  /** The whole HTTP/1.1 message: status line, headers, Content-Length, blank line, body. */
  toString(): string {
    const body = this.getBodyBuffer();
    const lines = [`HTTP/1.1 ${this.#statusCode} ${this.getStatusText()}`.trimEnd()];
    const contentType = this.getContentType();
    if (!this.hasHeader('content-type') && contentType !== '') {
      lines.push(`Content-Type: ${contentType}`);
    }
    for (const entry of this.#headers.values()) {
      if (entry.name.toLowerCase() === 'content-length') continue;
      for (const value of entry.values) lines.push(`${entry.name}: ${value}`);
    }
    lines.push(`Content-Length: ${body.length}`);
    return `${lines.join('\r\n')}\r\n\r\n${body.toString('utf8')}`;
  }
}
