import { Buffer } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { isJsonMediaType, mediaType, parseBody, type PrototypeKeysPolicy } from './body';
import {
  checkInit,
  initFromNode,
  invalidArgument,
  invalidHost,
  isPlainRecord,
  type RequestInit,
} from './request-init';
import { resolveForwarded, type ForwardedInfo } from './forwarded';
import { defaultPort, parseHostCached, type ParsedHost } from './host';
import { LowerCaseNames } from './lower-case-names';
import { parseQueryString, parseRequestTarget } from './target';
import type { Response } from './response';
import { normalizeIp, type TrustPredicate, type TrustProxySetting } from './trust-proxy';

export type { RequestInit } from './request-init';

/**
 * Whether `onResponse` hooks were added: read by HttpHandler before it calls
 * `applyResponseHooks`, a call that costs more than the check when there are none.
 */
export let hasResponseHooks: (request: Request) => boolean;

/**
 * Hands a request the attributes its server knows before dispatch (the client id), read in
 * place: they are copied into the request's own map only when an attribute is written, so a
 * request whose attributes nobody writes allocates nothing for them. `attributes` is never
 * modified.
 */
export let adoptAttributes: (
  request: Request,
  attributes: Readonly<Record<string, unknown>>,
) => void;

/**
 * Attributes made on first read rather than for every request (a request id that most
 * requests never need): `names` lists what it supplies, `get` makes one of them. The value
 * is made at most once per request and then kept as an ordinary attribute.
 */
export interface AttributeSource {
  readonly names: readonly string[];
  get(request: Request, name: string): unknown;
}

type QueryValue = string | string[];
const kUnparsed = Symbol('unparsed');

const EMPTY_BODY = Buffer.alloc(0);

/** Names asked for (`origin`, `x-request-id`): absent ones are looked up without a lower-casing. */
const askedNames = new LowerCaseNames(512);

function lowerCaseName(name: string): string {
  const known = askedNames.get(name);
  if (known !== undefined) return known;
  // JavaScript callers may pass anything; only strings are kept.
  return typeof name === 'string' ? askedNames.remember(name) : String(name).toLowerCase();
}

/**
 * The prototype of a request's path parameters: no keys and no prototype of its own, so a
 * lookup finds nothing but a parameter (`getParam('constructor')` is undefined). Objects
 * with it stay in V8's fast mode, unlike `Object.create(null)` ones.
 */
const PARAMS_PROTOTYPE: object = Object.freeze(Object.create(null) as object);

/**
 * An HTTP request: method, path, headers, query, path parameters, body and the client's
 * address, scheme and host after trust-proxy resolution. The query and the forwarded headers
 * are parsed on first use, the body too, and each only once. A malformed request-target,
 * percent-escape or `Host` header is an `HttpError` (status 400) at construction.
 */
export class Request {
  readonly #method: string;
  readonly #url: string;
  readonly #path: string;
  readonly #queryString: string;
  readonly #protocol: string;
  /** Lower-case names; Node's own object when built from an IncomingMessage (never written). */
  readonly #headers: Record<string, string | string[] | undefined>;
  readonly #rawBody: Buffer;
  readonly #remoteAddress: string;
  readonly #encrypted: boolean;
  readonly #localPort: number | undefined;
  readonly #trust: TrustPredicate;
  readonly #prototypeKeys: PrototypeKeysPolicy;
  /** The Host header, parsed (and so checked) at construction. */
  #hostHeader: ParsedHost | undefined;
  #attributes: Map<string, unknown> | undefined;
  /** Attributes handed over by the server (adoptAttributes), while #attributes is unset. */
  #given: Readonly<Record<string, unknown>> | undefined;
  #attributeSource: AttributeSource | undefined;
  #responseHooks: Array<(response: Response) => Response | void> | undefined;
  #params: Record<string, string> | undefined;
  #query: Record<string, QueryValue> | undefined;
  #body: unknown = kUnparsed;
  #bodyError: unknown;
  #forwarded: ForwardedInfo | undefined;

  static {
    hasResponseHooks = (request) => request.#responseHooks !== undefined;
    adoptAttributes = (request, attributes) => {
      if (request.#attributes === undefined && request.#given === undefined) {
        request.#given = attributes;
      } else {
        for (const name of Object.keys(attributes)) request.setAttribute(name, attributes[name]);
      }
    };
  }

  constructor(init: RequestInit) {
    const checked = checkInit(init);
    this.#method = checked.method;
    this.#headers = checked.headers;
    this.#trust = checked.trust;
    this.#prototypeKeys = checked.prototypeKeys;
    this.#url = init.url;
    const target = parseRequestTarget(init.url);
    this.#path = target.path;
    this.#queryString = target.query;
    this.#protocol = init.protocol ?? 'HTTP/1.1';
    this.#rawBody = init.body ?? EMPTY_BODY;
    this.#remoteAddress = init.remoteAddress ?? '';
    this.#encrypted = init.encrypted === true;
    this.#localPort = init.localPort;
    const host = this.#headers.host;
    if (host !== undefined) {
      this.#hostHeader = typeof host === 'string' ? parseHostCached(host) : undefined;
      if (this.#hostHeader === undefined) throw invalidHost(host);
    }
  }

  /**
   * Builds a request from Node's `IncomingMessage`, the body bytes read from it (if any)
   * and the trust-proxy setting (`true`, `false`, a list of addresses, CIDR ranges and
   * names such as `'loopback'`, or a predicate). An invalid setting is a `TypeError`
   * (`PKG_ERR_HTTP_INVALID_TRUST_PROXY`); when building many requests, compile the setting
   * once with `compileTrustProxy` and pass the predicate.
   */
  static fromIncomingMessage(
    req: IncomingMessage,
    body?: Buffer,
    trustProxy?: TrustProxySetting | TrustPredicate,
  ): Request {
    if (body !== undefined && !Buffer.isBuffer(body)) {
      throw invalidArgument('Request body must be a Buffer of the bytes received.');
    }
    return requestFromNode(req, body, trustProxy, 'error');
  }

  /** The method in upper case. */
  getMethod(): string {
    return this.#method;
  }

  /** True when the method is `method`, compared case-insensitively. */
  isMethod(method: string): boolean {
    return typeof method === 'string' && method.toUpperCase() === this.#method;
  }

  /** The path as sent, still percent-encoded (`/files/a%20b`), without the query. */
  getPath(): string {
    return this.#path;
  }

  /** The request-target as sent (path and query). */
  getRequestTarget(): string {
    return this.#url;
  }

  /** The protocol version, e.g. `HTTP/1.1`. */
  getProtocol(): string {
    return this.#protocol;
  }

  /** Every header, names in lower case. Repeated headers that Node keeps apart are arrays. */
  getHeaders(): Record<string, string | string[]> {
    const copy: Record<string, string | string[]> = {};
    for (const name of Object.keys(this.#headers)) {
      const value = this.#headers[name];
      if (typeof value === 'string') copy[name] = value;
      else if (Array.isArray(value)) copy[name] = [...value];
    }
    return copy;
  }

  /**
   * A header's value by case-insensitive name. Node's header object inherits from
   * Object.prototype, so only strings and arrays count (never `constructor` or `__proto__`).
   */
  #lookup(name: string): string | string[] | undefined {
    const headers = this.#headers;
    // Names are stored in lower case, and most callers ask in lower case: a hit needs no copy.
    let value = headers[name];
    if (typeof value === 'string') return value;
    if (value === undefined) {
      // A miss: look again under the lower-case name, unless the name is lower case already
      // (the common miss, `origin` on a same-origin request), which needs no second lookup.
      const lower = lowerCaseName(name);
      if (lower !== name) value = headers[lower];
    }
    return typeof value === 'string' || Array.isArray(value) ? value : undefined;
  }

  /** One header by case-insensitive name; repeated values are joined with `, `. */
  getHeader(name: string): string | undefined {
    const value = this.#lookup(name);
    return Array.isArray(value) ? value.join(', ') : value;
  }

  /** True when the header is present (case-insensitive). */
  hasHeader(name: string): boolean {
    return this.#lookup(name) !== undefined;
  }

  #queryParams(): Record<string, QueryValue> {
    this.#query ??= parseQueryString(this.#queryString);
    return this.#query;
  }

  /** All query parameters (a repeated key gives an array). */
  getQuery(): Record<string, QueryValue>;
  /** One query parameter, or `defaultValue` (undefined) when absent. */
  getQuery(name: string): QueryValue | undefined;
  getQuery<D>(name: string, defaultValue: D): QueryValue | D;
  getQuery(name?: string, defaultValue?: unknown): unknown {
    if (name === undefined) return Object.assign(Object.create(null), this.#queryParams());
    return this.getQueryParam(name, defaultValue);
  }

  /** One query parameter, or `defaultValue` (undefined) when absent. */
  getQueryParam(name: string): QueryValue | undefined;
  getQueryParam<D>(name: string, defaultValue: D): QueryValue | D;
  getQueryParam(name: string, defaultValue?: unknown): unknown {
    const value = this.#queryParams()[name];
    return value === undefined ? defaultValue : Array.isArray(value) ? [...value] : value;
  }

  /** True when the query has the parameter (even with an empty value). */
  hasQueryParam(name: string): boolean {
    return this.#queryParams()[name] !== undefined;
  }

  /** The query string without `?` (empty when there is none). */
  getQueryString(): string {
    return this.#queryString;
  }

  /** Sets the path parameters; the router calls this after matching `{name}` segments. */
  setParams(params: Record<string, string>): void {
    if (params === null || typeof params !== 'object') {
      throw invalidArgument('setParams(params) needs an object of parameter names to strings.');
    }
    const copy = Object.create(PARAMS_PROTOTYPE) as Record<string, string>;
    for (const name of Object.keys(params)) copy[name] = String(params[name]);
    this.#params = copy;
  }

  /** All path parameters. */
  getParams(): Record<string, string> {
    return this.#params === undefined ? {} : { ...this.#params };
  }

  /** One path parameter, or `defaultValue` (undefined) when absent. */
  getParam(name: string): string | undefined;
  getParam<D>(name: string, defaultValue: D): string | D;
  getParam(name: string, defaultValue?: unknown): unknown {
    return this.#params?.[name] ?? defaultValue;
  }

  /** True when the path parameter is set. */
  hasParam(name: string): boolean {
    return this.#params?.[name] !== undefined;
  }

  /** The body bytes as received (empty when there was no body). */
  getRawBody(): Buffer {
    return this.#rawBody;
  }

  /**
   * The body, parsed once on first call by Content-Type: JSON value, form object, text, or
   * the bytes. Malformed JSON or form data throws an `HttpError` with status 400, on this
   * call and every later one (`HttpHandler` answers it with 400).
   */
  getBody(): unknown {
    if (this.#body === kUnparsed) {
      try {
        this.#body = parseBody(
          this.#rawBody,
          this.getHeader('content-type'),
          this.getHeader('content-encoding'),
          this.#prototypeKeys,
        );
      } catch (err) {
        this.#body = undefined;
        this.#bodyError = err;
      }
    }
    if (this.#bodyError !== undefined) throw this.#bodyError;
    return this.#body;
  }

  /**
   * Request data by key: the body's member when the body is an object that has it, else
   * the query parameter, else `defaultValue`. Without a key: {@link all}.
   */
  getData(): Record<string, unknown>;
  getData(key: string): unknown;
  getData(key: string, defaultValue: unknown): unknown;
  getData(key?: string, defaultValue?: unknown): unknown {
    if (key === undefined) return this.all();
    const body = this.getBody();
    if (isPlainRecord(body) && Object.hasOwn(body, key)) return body[key];
    const query = this.#queryParams()[key];
    return query === undefined ? defaultValue : query;
  }

  /** Query parameters merged with the body's members (the body wins), in a prototype-free object. */
  all(): Record<string, unknown> {
    const body = this.getBody();
    const merged = Object.assign(Object.create(null), this.#queryParams()) as Record<
      string,
      unknown
    >;
    return isPlainRecord(body) ? Object.assign(merged, body) : merged;
  }

  /** A value that middleware stored (or the attribute source made), or `defaultValue` when none. */
  getAttribute<T = unknown>(name: string, defaultValue?: T): T | undefined {
    const attributes = this.#attributes;
    if (attributes !== undefined) {
      if (attributes.has(name)) return attributes.get(name) as T;
    } else if (this.#given !== undefined && Object.hasOwn(this.#given, name)) {
      return this.#given[name] as T;
    }
    return this.#attributeSource === undefined || !this.#fromSource(name)
      ? defaultValue
      : (this.#attributes!.get(name) as T);
  }

  /** Stores a value for later middleware and the handler (e.g. the authenticated user). */
  setAttribute(name: string, value: unknown): void {
    (this.#attributes ??= this.#givenAsMap()).set(name, value);
  }

  /** The attributes handed over, as the map the first write needs. */
  #givenAsMap(): Map<string, unknown> {
    const map = new Map<string, unknown>();
    const given = this.#given;
    if (given !== undefined) {
      for (const name of Object.keys(given)) map.set(name, given[name]);
      this.#given = undefined;
    }
    return map;
  }

  /**
   * Supplies attributes made on first read (used by the server for `requestId`): a name the
   * source lists and no one set is made by it when `getAttribute`, `hasAttribute` or
   * `getAttributes` first asks, then kept. A later `setAttribute` of the name wins.
   */
  setAttributeSource(source: AttributeSource): void {
    this.#attributeSource = source;
  }

  /** Makes `name` from the attribute source when it lists it; true when it was stored. */
  #fromSource(name: string): boolean {
    const source = this.#attributeSource!;
    if (!source.names.includes(name)) return false;
    const value = source.get(this, name);
    if (value === undefined) return false;
    this.setAttribute(name, value);
    return true;
  }

  /** Makes every attribute the source lists that is not set yet. */
  #allFromSource(): void {
    const source = this.#attributeSource;
    if (source === undefined) return;
    for (const name of source.names) if (!this.#hasOwnAttribute(name)) this.#fromSource(name);
  }

  /**
   * Registers a function that sees the final response of this request, whatever produced it
   * (the handler, a middleware, or the 500 of a handler that threw), before CORS headers are
   * added. `HttpHandler.processRequest` runs them in registration order; a hook may set
   * headers on the response or return a replacement.
   */
  onResponse(hook: (response: Response) => Response | void): void {
    (this.#responseHooks ??= []).push(hook);
  }

  /** Runs the `onResponse` hooks on `response` and returns the result (used by HttpHandler). */
  applyResponseHooks(response: Response): Response {
    if (this.#responseHooks === undefined) return response;
    let current = response;
    for (const hook of this.#responseHooks) current = hook(current) ?? current;
    return current;
  }

  /** True when an attribute of that name was set. */
  hasAttribute(name: string): boolean {
    if (this.#hasOwnAttribute(name)) return true;
    return this.#attributeSource !== undefined && this.#fromSource(name);
  }

  /** Whether the attribute was set or handed over (not made by the source). */
  #hasOwnAttribute(name: string): boolean {
    const attributes = this.#attributes;
    if (attributes !== undefined) return attributes.has(name);
    return this.#given !== undefined && Object.hasOwn(this.#given, name);
  }

  /** Every attribute set so far, and those the attribute source supplies. */
  getAttributes(): Record<string, unknown> {
    this.#allFromSource();
    if (this.#attributes === undefined) return this.#given === undefined ? {} : { ...this.#given };
    return Object.fromEntries(this.#attributes);
  }

  /** The Content-Type's media type in lower case (`application/json`), or ''. */
  getContentType(): string {
    return mediaType(this.getHeader('content-type'));
  }

  /** True when the Content-Type is JSON (`application/json` or a `+json` type). */
  isJson(): boolean {
    return isJsonMediaType(this.getContentType());
  }

  /** True for `X-Requested-With: XMLHttpRequest`. */
  isAjax(): boolean {
    return this.getHeader('x-requested-with')?.toLowerCase() === 'xmlhttprequest';
  }

  #resolved(): ForwardedInfo {
    this.#forwarded ??= resolveForwarded(this.#remoteAddress, this.#headers, this.#trust);
    return this.#forwarded;
  }

  /** The socket peer's own address (normalised), whatever the forwarded headers say. */
  getRemoteAddress(): string {
    return normalizeIp(this.#remoteAddress);
  }

  /**
   * The client's IP address: the socket peer's, or, when that peer is a trusted proxy, the
   * one the forwarded headers report. IPv4-mapped IPv6 is given as the dotted quad.
   */
  getIpAddress(): string {
    return this.#resolved().ip;
  }

  /** `https` or `http`: forwarded by a trusted proxy, else the connection's own. */
  getScheme(): string {
    return this.#resolved().proto ?? (this.#encrypted ? 'https' : 'http');
  }

  /** True when the scheme is https. */
  isSecure(): boolean {
    return this.getScheme() === 'https';
  }

  /**
   * The host name (lower case, IPv6 in brackets) without the port: forwarded by a trusted
   * proxy, else from the `Host` header, else `localhost`.
   */
  getHost(): string {
    return this.#resolved().host?.hostname ?? this.#hostHeader?.hostname ?? 'localhost';
  }

  /**
   * The port the client connected to: `X-Forwarded-Port` or the forwarded host's port from
   * a trusted proxy, else the `Host` header's port, else the scheme's default port.
   */
  getPort(): number {
    const forwarded = this.#resolved();
    const scheme = this.getScheme();
    if (forwarded.port !== undefined) return forwarded.port;
    if (forwarded.host !== undefined) return forwarded.host.port ?? defaultPort(scheme);
    if (this.#hostHeader !== undefined) return this.#hostHeader.port ?? defaultPort(scheme);
    return forwarded.proto === undefined
      ? (this.#localPort ?? defaultPort(scheme))
      : defaultPort(scheme);
  }

  /**
   * The absolute URL: scheme, host, the port when it is not the scheme's default, and the
   * path; with `includeQuery`, the query too.
   */
  getUrl(includeQuery = false): string {
    const scheme = this.getScheme();
    const port = this.getPort();
    const authority = port === defaultPort(scheme) ? this.getHost() : `${this.getHost()}:${port}`;
    const path = this.#path === '*' ? '' : this.#path;
    const query = includeQuery && this.#queryString !== '' ? `?${this.#queryString}` : '';
    return `${scheme}://${authority}${path}${query}`;
  }
}

/**
 * Builds a request from Node's message without copying its headers. Used by
 * `Request.fromIncomingMessage` and `HttpHandler`.
 */
export function requestFromNode(
  req: IncomingMessage,
  body: Buffer | undefined,
  trustProxy: TrustProxySetting | TrustPredicate | undefined,
  prototypeKeys: PrototypeKeysPolicy,
): Request {
  return new Request(initFromNode(req, body, trustProxy, prototypeKeys));
}
