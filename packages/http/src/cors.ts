import { createHttpError } from './errors';
import { normalizeOriginEntry, serializeOrigin } from './origin';
import type { Request } from './request';
import { Response } from './response';

/** CORS settings, with the spec's snake_case keys. */
export interface CorsOptions {
  /** Origins allowed to read responses: exact origins, `https://*.example.com`, or `*`. Default `['*']`. */
  allowed_origins?: string[];
  /** Methods a preflight may ask for. Default GET, POST, PUT, DELETE, OPTIONS, PATCH, HEAD. */
  allowed_methods?: string[];
  /** Request headers a preflight may ask for (`*` allows any). Default Content-Type, X-Requested-With, Authorization. */
  allowed_headers?: string[];
  /** Response headers a browser script may read (`Access-Control-Expose-Headers`). Default none. */
  exposed_headers?: string[];
  /** Whether credentialed requests are allowed. Default false; cannot be combined with origin `*`. */
  allow_credentials?: boolean;
  /** How long, in seconds, a browser may cache a preflight answer. Default 86400. */
  max_age?: number;
}

const DEFAULTS = {
  allowed_origins: ['*'],
  allowed_methods: ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'HEAD'],
  allowed_headers: ['Content-Type', 'X-Requested-With', 'Authorization'],
  exposed_headers: [] as string[],
  allow_credentials: false,
  max_age: 86400,
} as const;

const KEYS = Object.keys(DEFAULTS);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function invalid(message: string): TypeError {
  return createHttpError(TypeError, 'PKG_ERR_HTTP_INVALID_OPTION', message);
}

function stringList(key: string, value: unknown, check: (item: string) => boolean): string[] {
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string')) {
    throw invalid(`CORS option "${key}" must be an array of strings.`);
  }
  for (const item of value as string[]) {
    if (!check(item))
      throw invalid(`CORS option "${key}" has an invalid entry ${JSON.stringify(item)}.`);
  }
  return [...(value as string[])];
}

function isOriginPattern(origin: string): boolean {
  if (origin === '*' || origin === 'null') return true;
  return (
    /^[a-z][a-z0-9+.-]*:\/\/(\*\.)?[a-z0-9.-]+(:[0-9]{1,5})?$/i.test(origin) ||
    /^[a-z][a-z0-9+.-]*:\/\/\[[0-9a-f:.]+\](:[0-9]{1,5})?$/i.test(origin)
  );
}

/**
 * CORS settings and the origin check. Built once from {@link CorsOptions}; an unknown key, a
 * value of the wrong type, or `*` together with credentials is a `TypeError` at construction.
 */
export class CorsConfig {
  readonly #origins: readonly string[];
  readonly #methods: readonly string[];
  readonly #headers: readonly string[];
  readonly #exposed: readonly string[];
  readonly #credentials: boolean;
  readonly #maxAge: number;
  readonly #allowAll: boolean;

  constructor(config: CorsOptions = {}) {
    if (config === null || typeof config !== 'object' || Array.isArray(config)) {
      throw invalid(
        'CORS options must be an object such as { allowed_origins: ["https://a.example"] }.',
      );
    }
    for (const key of Object.keys(config)) {
      if (!KEYS.includes(key)) {
        throw invalid(`Unknown CORS option "${key}"; the options are ${KEYS.join(', ')}.`);
      }
    }
    const origins = config.allowed_origins ?? [...DEFAULTS.allowed_origins];
    // One spelling for every entry (lower case, no default port), the one browsers send.
    this.#origins = stringList('allowed_origins', origins, isOriginPattern).map(
      (o) => normalizeOriginEntry(o) ?? o.toLowerCase(),
    );
    this.#methods = stringList(
      'allowed_methods',
      config.allowed_methods ?? [...DEFAULTS.allowed_methods],
      (m) => m === '*' || TOKEN.test(m),
    ).map((m) => m.toUpperCase());
    this.#headers = stringList(
      'allowed_headers',
      config.allowed_headers ?? [...DEFAULTS.allowed_headers],
      (h) => h === '*' || TOKEN.test(h),
    );
    this.#exposed = stringList(
      'exposed_headers',
      config.exposed_headers ?? [...DEFAULTS.exposed_headers],
      (h) => TOKEN.test(h),
    );
    const credentials = config.allow_credentials ?? DEFAULTS.allow_credentials;
    if (typeof credentials !== 'boolean') {
      throw invalid('CORS option "allow_credentials" must be true or false.');
    }
    const maxAge = config.max_age ?? DEFAULTS.max_age;
    if (!Number.isInteger(maxAge) || maxAge < 0) {
      throw invalid('CORS option "max_age" must be a whole number of seconds, 0 or more.');
    }
    this.#credentials = credentials;
    this.#maxAge = maxAge;
    this.#allowAll = this.#origins.includes('*');
    if (this.#allowAll && credentials) {
      throw createHttpError(
        TypeError,
        'PKG_ERR_HTTP_CORS_CREDENTIALS_WILDCARD',
        'CORS cannot allow every origin ("*") together with allow_credentials: browsers refuse ' +
          'credentialed answers for "*". List the allowed origins explicitly, or turn ' +
          'allow_credentials off.',
      );
    }
  }

  getAllowedOrigins(): string[] {
    return [...this.#origins];
  }

  getAllowedMethods(): string[] {
    return [...this.#methods];
  }

  getAllowedHeaders(): string[] {
    return [...this.#headers];
  }

  getExposedHeaders(): string[] {
    return [...this.#exposed];
  }

  getAllowCredentials(): boolean {
    return this.#credentials;
  }

  getMaxAge(): number {
    return this.#maxAge;
  }

  /** True when every origin is allowed (`*`). */
  allowsAllOrigins(): boolean {
    return this.#allowAll;
  }

  /**
   * True when `origin` may read responses: `*` allows all, otherwise an exact match or a
   * `scheme://*.domain` pattern, which matches subdomains of `domain` (not `domain` itself)
   * on the same scheme and port. Entries and `origin` are compared in one spelling (lower
   * case, no default port), so `https://app.example.com:443` in the list allows the
   * `https://app.example.com` a browser sends. The answer still echoes `origin` as sent.
   */
  isOriginAllowed(origin: string): boolean {
    if (typeof origin !== 'string' || origin === '') return false;
    if (this.#allowAll) return true;
    const wanted = origin.toLowerCase();
    if (this.#matches(wanted)) return true;
    const serialized = serializeOrigin(origin);
    return serialized !== undefined && serialized !== wanted && this.#matches(serialized);
  }

  #matches(wanted: string): boolean {
    for (const allowed of this.#origins) {
      if (allowed === wanted) return true;
      const star = allowed.indexOf('://*.');
      if (star === -1) continue;
      const scheme = allowed.slice(0, star + 3);
      const suffix = allowed.slice(star + 4); // ".example.com[:port]"
      if (!wanted.startsWith(scheme) || !wanted.endsWith(suffix)) continue;
      const label = wanted.slice(scheme.length, wanted.length - suffix.length);
      if (/^[a-z0-9-]+(\.[a-z0-9-]+)*$/.test(label)) return true;
    }
    return false;
  }

  /** True when a preflight may ask for `method` (methods are case-sensitive tokens). */
  isMethodAllowed(method: string): boolean {
    return this.#methods.includes('*') || this.#methods.includes(method.toUpperCase());
  }

  /** True when a preflight may ask for every header in the list (case-insensitive). */
  areHeadersAllowed(names: readonly string[]): boolean {
    if (this.#headers.includes('*')) return true;
    const allowed = new Set(this.#headers.map((h) => h.toLowerCase()));
    return names.every((name) => allowed.has(name.toLowerCase()));
  }
}

/** Adds `value` to a comma-separated header such as Vary, unless it is already listed. */
export function appendVary(response: Response, value: string): void {
  const current = response.getHeader('Vary');
  if (current === undefined || current.trim() === '') {
    response.setHeader('Vary', value);
    return;
  }
  const listed = current.split(',').map((v) => v.trim().toLowerCase());
  if (listed.includes('*') || listed.includes(value.toLowerCase())) return;
  response.setHeader('Vary', `${current}, ${value}`);
}

/** True for a CORS preflight: OPTIONS with `Origin` and `Access-Control-Request-Method`. */
export function isPreflightRequest(request: Request): boolean {
  return (
    request.getMethod() === 'OPTIONS' &&
    request.hasHeader('origin') &&
    request.hasHeader('access-control-request-method')
  );
}

/**
 * Adds the CORS headers of an actual (non-preflight) response: `Access-Control-Allow-Origin`
 * with the request's origin when it is allowed (`*` when every origin is allowed and
 * credentials are off), `Vary: Origin` whenever the answer depends on the origin, the
 * credentials and expose headers when configured. A disallowed origin gets no grant.
 */
export function applyCorsHeaders(
  config: CorsConfig,
  response: Response,
  request: Request,
): Response {
  const origin = request.getHeader('origin');
  const wildcard = config.allowsAllOrigins() && !config.getAllowCredentials();
  if (!wildcard) appendVary(response, 'Origin');
  if (origin === undefined || !config.isOriginAllowed(origin)) return response;
  response.setHeader('Access-Control-Allow-Origin', wildcard ? '*' : origin);
  if (config.getAllowCredentials()) response.setHeader('Access-Control-Allow-Credentials', 'true');
  const exposed = config.getExposedHeaders();
  if (exposed.length > 0) response.setHeader('Access-Control-Expose-Headers', exposed.join(', '));
  return response;
}

/**
 * Answers a preflight: 204, and when the origin, the requested method and every requested
 * header are allowed, the grant (`Access-Control-Allow-Origin`, `-Methods`, `-Headers`,
 * `-Max-Age`, `-Credentials`). Anything not allowed gets a 204 without a grant, which the
 * browser treats as a refusal.
 */
export function answerPreflight(config: CorsConfig, request: Request): Response {
  const response = new Response(null, 204);
  appendVary(response, 'Origin');
  appendVary(response, 'Access-Control-Request-Method');
  appendVary(response, 'Access-Control-Request-Headers');
  const origin = request.getHeader('origin');
  const method = request.getHeader('access-control-request-method')?.trim() ?? '';
  const requested = (request.getHeader('access-control-request-headers') ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '');
  if (
    origin === undefined ||
    !config.isOriginAllowed(origin) ||
    !TOKEN.test(method) ||
    !config.isMethodAllowed(method) ||
    !requested.every((h) => TOKEN.test(h)) ||
    !config.areHeadersAllowed(requested)
  ) {
    return response;
  }
  const wildcard = config.allowsAllOrigins() && !config.getAllowCredentials();
  response.setHeader('Access-Control-Allow-Origin', wildcard ? '*' : origin);
  const methods = config.getAllowedMethods();
  response.setHeader(
    'Access-Control-Allow-Methods',
    methods.includes('*') ? method : methods.join(', '),
  );
  const headers = config.getAllowedHeaders();
  const allowHeaders = headers.includes('*') ? requested.join(', ') : headers.join(', ');
  if (allowHeaders !== '') response.setHeader('Access-Control-Allow-Headers', allowHeaders);
  response.setHeader('Access-Control-Max-Age', String(config.getMaxAge()));
  if (config.getAllowCredentials()) response.setHeader('Access-Control-Allow-Credentials', 'true');
  return response;
}
