import { describe, expect, it } from '@jest/globals';
import {
  answerPreflight,
  appendVary,
  applyCorsHeaders,
  CorsConfig,
  isPreflightRequest,
} from './cors';
import { Request } from './request';
import { Response } from './response';

function request(method: string, headers: Record<string, string>): Request {
  return new Request({ method, url: '/api', headers: { host: 'api.example', ...headers } });
}

function preflight(origin: string, method: string, requestHeaders?: string): Request {
  const headers: Record<string, string> = { origin, 'access-control-request-method': method };
  if (requestHeaders !== undefined) headers['access-control-request-headers'] = requestHeaders;
  return request('OPTIONS', headers);
}

describe('CorsConfig', () => {
  it('has the spec defaults', () => {
    const config = new CorsConfig();
    expect(config.getAllowedOrigins()).toEqual(['*']);
    expect(config.getAllowedMethods()).toEqual([
      'GET',
      'POST',
      'PUT',
      'DELETE',
      'OPTIONS',
      'PATCH',
      'HEAD',
    ]);
    expect(config.getAllowedHeaders()).toEqual([
      'Content-Type',
      'X-Requested-With',
      'Authorization',
    ]);
    expect(config.getExposedHeaders()).toEqual([]);
    expect(config.getAllowCredentials()).toBe(false);
    expect(config.getMaxAge()).toBe(86400);
    expect(config.allowsAllOrigins()).toBe(true);
  });

  it('takes every option', () => {
    const config = new CorsConfig({
      allowed_origins: ['https://App.example'],
      allowed_methods: ['get', 'POST'],
      allowed_headers: ['X-Api-Key'],
      exposed_headers: ['X-RateLimit-Remaining'],
      allow_credentials: true,
      max_age: 600,
    });
    expect(config.getAllowedOrigins()).toEqual(['https://app.example']);
    expect(config.getAllowedMethods()).toEqual(['GET', 'POST']);
    expect(config.getAllowedHeaders()).toEqual(['X-Api-Key']);
    expect(config.getExposedHeaders()).toEqual(['X-RateLimit-Remaining']);
    expect(config.getAllowCredentials()).toBe(true);
    expect(config.getMaxAge()).toBe(600);
    expect(config.allowsAllOrigins()).toBe(false);
  });

  it('returns copies of its lists', () => {
    const config = new CorsConfig();
    config.getAllowedMethods().push('TRACE');
    expect(config.getAllowedMethods()).not.toContain('TRACE');
  });

  it('refuses * together with credentials, saying how to fix it', () => {
    expect(() => new CorsConfig({ allow_credentials: true })).toThrow(
      expect.objectContaining({
        name: 'TypeError',
        code: 'PKG_ERR_HTTP_CORS_CREDENTIALS_WILDCARD',
        message: expect.stringContaining('List the allowed origins explicitly'),
      }),
    );
    expect(
      () =>
        new CorsConfig({ allowed_origins: ['https://a.example', '*'], allow_credentials: true }),
    ).toThrow(TypeError);
  });

  it.each([
    [{ allowed_origin: ['*'] }, 'Unknown CORS option "allowed_origin"'],
    [{ allowed_origins: 'https://a.example' }, '"allowed_origins" must be an array of strings'],
    [{ allowed_origins: ['https://a.example/path'] }, 'invalid entry "https://a.example/path"'],
    [{ allowed_methods: ['GE T'] }, 'invalid entry "GE T"'],
    [{ allowed_headers: [1] }, 'must be an array of strings'],
    [{ exposed_headers: ['X Bad'] }, 'invalid entry "X Bad"'],
    [{ allow_credentials: 'yes' }, '"allow_credentials" must be true or false'],
    [{ max_age: -1 }, '"max_age" must be a whole number'],
    [{ max_age: 1.5 }, '"max_age" must be a whole number'],
  ])('refuses %j', (options, message) => {
    expect(() => new CorsConfig(options as never)).toThrow(
      expect.objectContaining({
        code: 'PKG_ERR_HTTP_INVALID_OPTION',
        message: expect.stringContaining(message),
      }),
    );
  });

  it('refuses options that are not an object', () => {
    expect(() => new CorsConfig([] as never)).toThrow(TypeError);
    expect(() => new CorsConfig(null as never)).toThrow(TypeError);
  });

  it('checks origins: *, exact (case-insensitive), subdomain patterns, null', () => {
    expect(new CorsConfig().isOriginAllowed('https://anything.example')).toBe(true);
    const config = new CorsConfig({
      allowed_origins: [
        'https://app.example',
        'https://*.example.org',
        'http://localhost:3000',
        'null',
        'http://[::1]:8080',
      ],
    });
    expect(config.isOriginAllowed('https://app.example')).toBe(true);
    expect(config.isOriginAllowed('HTTPS://APP.EXAMPLE')).toBe(true);
    expect(config.isOriginAllowed('http://app.example')).toBe(false);
    expect(config.isOriginAllowed('https://app.example:8443')).toBe(false);
    expect(config.isOriginAllowed('https://app.example.evil')).toBe(false);
    expect(config.isOriginAllowed('https://a.example.org')).toBe(true);
    expect(config.isOriginAllowed('https://a.b.example.org')).toBe(true);
    expect(config.isOriginAllowed('https://example.org')).toBe(false);
    expect(config.isOriginAllowed('https://evilexample.org')).toBe(false);
    expect(config.isOriginAllowed('https://x/.example.org')).toBe(false);
    expect(config.isOriginAllowed('http://a.example.org')).toBe(false);
    expect(config.isOriginAllowed('http://localhost:3000')).toBe(true);
    expect(config.isOriginAllowed('http://[::1]:8080')).toBe(true);
    expect(config.isOriginAllowed('null')).toBe(true);
    expect(config.isOriginAllowed('')).toBe(false);
  });

  it('checks methods and header lists for preflights', () => {
    const config = new CorsConfig({ allowed_methods: ['GET'], allowed_headers: ['X-Api-Key'] });
    expect(config.isMethodAllowed('get')).toBe(true);
    expect(config.isMethodAllowed('DELETE')).toBe(false);
    expect(config.areHeadersAllowed(['x-api-key'])).toBe(true);
    expect(config.areHeadersAllowed([])).toBe(true);
    expect(config.areHeadersAllowed(['x-api-key', 'x-other'])).toBe(false);
    const open = new CorsConfig({ allowed_methods: ['*'], allowed_headers: ['*'] });
    expect(open.isMethodAllowed('PROPFIND')).toBe(true);
    expect(open.areHeadersAllowed(['x-anything'])).toBe(true);
  });
});

describe('appendVary', () => {
  it('adds a value once and respects *', () => {
    const response = new Response();
    appendVary(response, 'Origin');
    appendVary(response, 'origin');
    appendVary(response, 'Accept');
    expect(response.getHeader('Vary')).toBe('Origin, Accept');
    const star = new Response().setHeader('Vary', '*');
    appendVary(star, 'Origin');
    expect(star.getHeader('Vary')).toBe('*');
  });
});

describe('isPreflightRequest', () => {
  it('needs OPTIONS, Origin and Access-Control-Request-Method', () => {
    expect(isPreflightRequest(preflight('https://a.example', 'PUT'))).toBe(true);
    expect(isPreflightRequest(request('OPTIONS', { origin: 'https://a.example' }))).toBe(false);
    expect(isPreflightRequest(request('OPTIONS', { 'access-control-request-method': 'PUT' }))).toBe(
      false,
    );
    expect(
      isPreflightRequest(request('GET', { origin: 'x', 'access-control-request-method': 'PUT' })),
    ).toBe(false);
  });
});

describe('applyCorsHeaders (actual responses)', () => {
  it('answers * when every origin is allowed and credentials are off', () => {
    const response = applyCorsHeaders(
      new CorsConfig(),
      new Response(),
      request('GET', { origin: 'https://a.example' }),
    );
    expect(response.getHeader('Access-Control-Allow-Origin')).toBe('*');
    expect(response.hasHeader('Access-Control-Allow-Credentials')).toBe(false);
    expect(response.hasHeader('Vary')).toBe(false);
  });

  it('echoes an allowed origin, with Vary: Origin and credentials when enabled', () => {
    const config = new CorsConfig({
      allowed_origins: ['https://a.example'],
      allow_credentials: true,
      exposed_headers: ['X-RateLimit-Remaining', 'X-Id'],
    });
    const response = applyCorsHeaders(
      config,
      new Response().setHeader('Vary', 'Accept-Encoding'),
      request('GET', { origin: 'https://a.example' }),
    );
    expect(response.getHeader('Access-Control-Allow-Origin')).toBe('https://a.example');
    expect(response.getHeader('Vary')).toBe('Accept-Encoding, Origin');
    expect(response.getHeader('Access-Control-Allow-Credentials')).toBe('true');
    expect(response.getHeader('Access-Control-Expose-Headers')).toBe('X-RateLimit-Remaining, X-Id');
  });

  it('gives a disallowed origin no grant, but still Vary: Origin', () => {
    const config = new CorsConfig({ allowed_origins: ['https://a.example'] });
    const response = applyCorsHeaders(
      config,
      new Response(),
      request('GET', { origin: 'https://evil.example' }),
    );
    expect(response.hasHeader('Access-Control-Allow-Origin')).toBe(false);
    expect(response.hasHeader('Access-Control-Allow-Credentials')).toBe(false);
    expect(response.getHeader('Vary')).toBe('Origin');
  });

  it('adds nothing but Vary to same-origin requests without Origin', () => {
    const config = new CorsConfig({ allowed_origins: ['https://a.example'] });
    const response = applyCorsHeaders(config, new Response(), request('GET', {}));
    expect(response.getHeaders()).toEqual({ Vary: 'Origin' });
    expect(
      applyCorsHeaders(new CorsConfig(), new Response(), request('GET', {})).getHeaders(),
    ).toEqual({});
  });
});

describe('answerPreflight', () => {
  it('grants an allowed preflight with 204, methods, headers and max age', () => {
    const response = answerPreflight(
      new CorsConfig(),
      preflight('https://a.example', 'PUT', 'Content-Type, authorization'),
    );
    expect(response.getStatusCode()).toBe(204);
    expect(response.getBody()).toBeNull();
    expect(response.getHeaders()).toEqual({
      Vary: 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers',
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Allow-Methods': 'GET, POST, PUT, DELETE, OPTIONS, PATCH, HEAD',
      'Access-Control-Allow-Headers': 'Content-Type, X-Requested-With, Authorization',
      'Access-Control-Max-Age': '86400',
    });
  });

  it('echoes the origin and adds credentials when they are enabled', () => {
    const config = new CorsConfig({
      allowed_origins: ['https://a.example'],
      allow_credentials: true,
      max_age: 60,
    });
    const response = answerPreflight(config, preflight('https://a.example', 'POST'));
    expect(response.getHeader('Access-Control-Allow-Origin')).toBe('https://a.example');
    expect(response.getHeader('Access-Control-Allow-Credentials')).toBe('true');
    expect(response.getHeader('Access-Control-Max-Age')).toBe('60');
  });

  it('echoes the requested method and headers when * is configured', () => {
    const config = new CorsConfig({ allowed_methods: ['*'], allowed_headers: ['*'] });
    const response = answerPreflight(
      config,
      preflight('https://a.example', 'PROPFIND', 'X-One, X-Two'),
    );
    expect(response.getHeader('Access-Control-Allow-Methods')).toBe('PROPFIND');
    expect(response.getHeader('Access-Control-Allow-Headers')).toBe('X-One, X-Two');
  });

  it.each([
    ['an origin', preflight('https://evil.example', 'GET')],
    ['a method', preflight('https://a.example', 'DELETE')],
    ['a header', preflight('https://a.example', 'GET', 'X-Api-Key, X-Secret')],
    ['a malformed method', preflight('https://a.example', 'G T')],
    ['a malformed header', preflight('https://a.example', 'GET', 'X Bad')],
  ])('answers 204 without a grant for %s that is not allowed', (_what, req) => {
    const config = new CorsConfig({
      allowed_origins: ['https://a.example'],
      allowed_methods: ['GET'],
      allowed_headers: ['X-Api-Key'],
    });
    const response = answerPreflight(config, req);
    expect(response.getStatusCode()).toBe(204);
    expect(response.hasHeader('Access-Control-Allow-Origin')).toBe(false);
    expect(response.hasHeader('Access-Control-Allow-Methods')).toBe(false);
    expect(response.hasHeader('Access-Control-Allow-Headers')).toBe(false);
    expect(response.hasHeader('Access-Control-Max-Age')).toBe(false);
  });
});

describe('CorsConfig origins in one spelling', () => {
  it('allows what browsers send for an entry with a default port or upper case', () => {
    const config = new CorsConfig({
      allowed_origins: [
        'https://app.example.com:443',
        'HTTP://Local.Example:80',
        'https://*.example.org:443',
      ],
    });
    expect(config.getAllowedOrigins()).toEqual([
      'https://app.example.com',
      'http://local.example',
      'https://*.example.org',
    ]);
    for (const origin of [
      'https://app.example.com',
      'https://app.example.com:443',
      'http://local.example',
      'https://a.example.org',
    ]) {
      expect([origin, config.isOriginAllowed(origin)]).toEqual([origin, true]);
    }
    for (const origin of [
      'https://app.example.com:8443',
      'http://app.example.com',
      'https://example.org',
      'null',
    ]) {
      expect([origin, config.isOriginAllowed(origin)]).toEqual([origin, false]);
    }
  });
});
