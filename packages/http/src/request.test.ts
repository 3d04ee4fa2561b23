import { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { HttpError } from './errors';
import { adoptAttributes, Request, type RequestInit } from './request';
import { compileTrustProxy } from './trust-proxy';

function make(init: Partial<RequestInit> = {}): Request {
  return new Request({
    method: 'GET',
    url: '/',
    headers: { host: 'app.example:8080' },
    remoteAddress: '203.0.113.9',
    ...init,
  });
}

function json(body: unknown, url = '/'): Request {
  return make({
    method: 'POST',
    url,
    headers: { host: 'app.example', 'content-type': 'application/json' },
    body: Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)),
  });
}

describe('Request basics', () => {
  it('exposes method, path, protocol and target', () => {
    const request = make({ method: 'post', url: '/users/7?full=1', protocol: 'HTTP/1.0' });
    expect(request.getMethod()).toBe('POST');
    expect(request.getPath()).toBe('/users/7');
    expect(request.getRequestTarget()).toBe('/users/7?full=1');
    expect(request.getQueryString()).toBe('full=1');
    expect(request.getProtocol()).toBe('HTTP/1.0');
    expect(make().getProtocol()).toBe('HTTP/1.1');
  });

  it('compares methods case-insensitively', () => {
    const request = make({ method: 'PATCH' });
    expect(request.isMethod('patch')).toBe(true);
    expect(request.isMethod('PATCH')).toBe(true);
    expect(request.isMethod('PUT')).toBe(false);
  });

  it('keeps the path as sent, backslashes included', () => {
    expect(make({ url: '/a\\b/%2F/../c' }).getPath()).toBe('/a\\b/%2F/../c');
  });

  it('refuses a bad init with a TypeError', () => {
    const bad = [
      null,
      { method: 'G T', url: '/', headers: {} },
      { method: 'GET', url: 5, headers: {} },
      { method: 'GET', url: '/', headers: null },
      { method: 'GET', url: '/', headers: {}, body: 'text' },
    ];
    for (const init of bad) {
      expect(() => new Request(init as unknown as RequestInit)).toThrow(
        expect.objectContaining({ code: 'PKG_ERR_HTTP_INVALID_ARGUMENT' }),
      );
    }
  });

  it('refuses malformed escapes and Host headers with a 400 HttpError', () => {
    expect(() => make({ url: '/a%zz' })).toThrow(HttpError);
    expect(() => make({ url: '/a?b=%' })).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_HTTP_MALFORMED_URL', status: 400 }),
    );
    expect(() => make({ headers: { host: 'a b' } })).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_HTTP_INVALID_HOST', status: 400 }),
    );
  });
});

describe('Request headers', () => {
  it('looks headers up case-insensitively', () => {
    const request = make({ headers: { 'X-Custom': 'yes', host: 'a.example' } });
    expect(request.getHeader('x-custom')).toBe('yes');
    expect(request.getHeader('X-CUSTOM')).toBe('yes');
    expect(request.hasHeader('X-Custom')).toBe(true);
    expect(request.hasHeader('x-missing')).toBe(false);
    expect(request.getHeader('x-missing')).toBeUndefined();
    for (const inherited of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      expect(request.getHeader(inherited)).toBeUndefined();
      expect(request.hasHeader(inherited)).toBe(false);
    }
  });

  it('finds headers by any case, however many names a process has asked for', () => {
    // More distinct names than the process keeps lower-cased: a name asked for in upper case
    // is found whether it was kept or not, and an absent one stays absent.
    for (let i = 0; i < 700; i += 1) {
      const request = make({ headers: { [`x-name-${i}`]: String(i) } });
      expect(request.getHeader(`X-Name-${i}`)).toBe(String(i));
      expect(request.getHeader(`x-name-${i}`)).toBe(String(i));
      expect(request.hasHeader(`X-NAME-${i + 1}`)).toBe(false);
      expect(request.getHeader(`x-name-${i + 1}`)).toBeUndefined();
    }
  });

  it('joins repeated values and lists every header in lower case', () => {
    const request = make({ headers: { 'set-cookie': ['a=1', 'b=2'], Accept: 'text/html' } });
    expect(request.getHeader('Set-Cookie')).toBe('a=1, b=2');
    expect(request.getHeaders()).toEqual({ 'set-cookie': ['a=1', 'b=2'], accept: 'text/html' });
  });

  it('merges headers given in different cases', () => {
    const request = make({ headers: { 'X-A': '1', 'x-a': '2' } });
    expect(request.getHeader('x-a')).toBe('1, 2');
  });

  it('gives a copy of the headers, not its own', () => {
    const request = make({ headers: { accept: 'x' } });
    request.getHeaders().accept = 'changed';
    expect(request.getHeader('accept')).toBe('x');
  });

  it('tells JSON and AJAX requests apart', () => {
    expect(make({ headers: { 'content-type': 'application/json; charset=utf-8' } }).isJson()).toBe(
      true,
    );
    expect(make({ headers: { 'content-type': 'application/ld+json' } }).isJson()).toBe(true);
    expect(make({ headers: { 'content-type': 'text/plain' } }).isJson()).toBe(false);
    expect(make().isJson()).toBe(false);
    expect(make({ headers: { 'x-requested-with': 'XMLHttpRequest' } }).isAjax()).toBe(true);
    expect(make({ headers: { 'x-requested-with': 'xmlhttprequest' } }).isAjax()).toBe(true);
    expect(make().isAjax()).toBe(false);
    expect(make({ headers: { 'content-type': 'Text/Plain; x=1' } }).getContentType()).toBe(
      'text/plain',
    );
  });
});

describe('Request query', () => {
  const request = make({ url: '/s?q=node+js&tag=a&tag=b&empty=&enc=caf%C3%A9' });

  it('returns all parameters, repeated keys as arrays', () => {
    expect({ ...request.getQuery() }).toEqual({
      q: 'node js',
      tag: ['a', 'b'],
      empty: '',
      enc: 'café',
    });
  });

  it('returns one parameter or the default', () => {
    expect(request.getQuery('q')).toBe('node js');
    expect(request.getQuery('missing')).toBeUndefined();
    expect(request.getQuery('missing', 'dflt')).toBe('dflt');
    expect(request.getQueryParam('tag')).toEqual(['a', 'b']);
    expect(request.getQueryParam('missing', 7)).toBe(7);
    expect(request.getQueryParam('empty', 'dflt')).toBe('');
  });

  it('says whether a parameter is present', () => {
    expect(request.hasQueryParam('empty')).toBe(true);
    expect(request.hasQueryParam('missing')).toBe(false);
    expect(request.hasQueryParam('toString')).toBe(false);
  });

  it('cannot be changed through what it returns', () => {
    (request.getQuery() as Record<string, unknown>).q = 'x';
    (request.getQueryParam('tag') as string[]).push('c');
    expect(request.getQuery('q')).toBe('node js');
    expect(request.getQueryParam('tag')).toEqual(['a', 'b']);
  });
});

describe('Request path parameters and attributes', () => {
  it('stores the parameters the router sets', () => {
    const request = make();
    expect(request.getParams()).toEqual({});
    request.setParams({ id: '7', slug: 'hello' });
    expect(request.getParams()).toEqual({ id: '7', slug: 'hello' });
    expect(request.getParam('id')).toBe('7');
    expect(request.getParam('missing')).toBeUndefined();
    expect(request.getParam('missing', 'x')).toBe('x');
    expect(request.hasParam('slug')).toBe(true);
    expect(request.hasParam('constructor')).toBe(false);
    expect(() => request.setParams(null as unknown as Record<string, string>)).toThrow(TypeError);
  });

  it('finds nothing but the parameters set, whatever a name, and keeps __proto__ as a name', () => {
    const request = make();
    const params = Object.create(null) as Record<string, string>;
    params['__proto__'] = 'p';
    params['id'] = '7';
    request.setParams(params);
    for (const name of ['constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
      expect(request.getParam(name)).toBeUndefined();
      expect(request.getParam(name, 'd')).toBe('d');
      expect(request.hasParam(name)).toBe(false);
    }
    expect(request.getParam('__proto__')).toBe('p');
    const copy = request.getParams();
    expect(Object.keys(copy).sort()).toEqual(['__proto__', 'id']);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
  });

  it('stores attributes for middleware and handlers', () => {
    const request = make();
    expect(request.getAttribute('user')).toBeUndefined();
    expect(request.getAttribute('user', 'guest')).toBe('guest');
    request.setAttribute('user', { id: 1 });
    request.setAttribute('nothing', undefined);
    expect(request.getAttribute<{ id: number }>('user')?.id).toBe(1);
    expect(request.hasAttribute('user')).toBe(true);
    expect(request.getAttribute('nothing', 'dflt')).toBeUndefined();
    expect(request.getAttributes()).toEqual({ user: { id: 1 }, nothing: undefined });
  });

  it('reads handed-over attributes in place and copies them on the first write', () => {
    const given = Object.freeze({ clientId: 'c-1' });
    const request = make();
    adoptAttributes(request, given);
    expect(request.getAttribute('clientId')).toBe('c-1');
    expect(request.hasAttribute('clientId')).toBe(true);
    expect(request.hasAttribute('user')).toBe(false);
    expect(request.getAttributes()).toEqual({ clientId: 'c-1' });
    request.setAttribute('user', 'ann');
    request.setAttribute('clientId', 'c-2');
    expect(request.getAttributes()).toEqual({ clientId: 'c-2', user: 'ann' });
    expect(given).toEqual({ clientId: 'c-1' });
    const later = make();
    later.setAttribute('user', 'bob');
    adoptAttributes(later, given);
    expect(later.getAttributes()).toEqual({ user: 'bob', clientId: 'c-1' });
  });

  it('makes an attribute of its source once, on first read, and lets setAttribute win', () => {
    const made: string[] = [];
    const source = {
      names: ['requestId'],
      get: (req: Request, name: string) => {
        made.push(name);
        return `id-of-${req.getPath()}`;
      },
    };
    const quiet = make({ url: '/quiet' });
    quiet.setAttributeSource(source);
    expect(quiet.getAttribute('user', 'guest')).toBe('guest');
    expect(made).toEqual([]);
    const read = make({ url: '/read' });
    read.setAttributeSource(source);
    expect(read.hasAttribute('requestId')).toBe(true);
    expect(read.getAttribute('requestId')).toBe('id-of-/read');
    expect(read.getAttributes()).toEqual({ requestId: 'id-of-/read' });
    expect(made).toEqual(['requestId']);
    const listed = make({ url: '/all' });
    listed.setAttributeSource(source);
    expect(listed.getAttributes()).toEqual({ requestId: 'id-of-/all' });
    const set = make();
    set.setAttributeSource(source);
    set.setAttribute('requestId', 'mine');
    expect(set.getAttribute('requestId')).toBe('mine');
    expect(made).toEqual(['requestId', 'requestId']);
  });
});

describe('Request body', () => {
  it('parses a JSON body once, on first use', () => {
    const request = json({ name: 'Ada', tags: ['x'] });
    const first = request.getBody();
    expect(first).toEqual({ name: 'Ada', tags: ['x'] });
    expect(request.getBody()).toBe(first);
  });

  it('refuses prototype-polluting keys in JSON bodies with a 400 HttpError by default', () => {
    const request = json('{"__proto__":{"admin":true},"n":1}');
    expect(() => request.getBody()).toThrow(HttpError);
    expect(() => request.all()).toThrow(/__proto__/);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it("drops prototype-polluting keys from JSON bodies with prototypeKeys 'remove'", () => {
    const request = make({
      method: 'POST',
      url: '/',
      headers: { host: 'app.example', 'content-type': 'application/json' },
      body: Buffer.from(
        '{"__proto__":{"admin":true},"constructor":{"prototype":{"admin":true}},"n":1}',
      ),
      prototypeKeys: 'remove',
    });
    const all = request.all();
    expect(all.n).toBe(1);
    expect(Object.hasOwn(request.getBody() as object, '__proto__')).toBe(false);
    expect(all.admin).toBeUndefined();
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('throws the same 400 HttpError on every call for malformed JSON', () => {
    const request = json('{"broken":');
    let first: unknown;
    try {
      request.getBody();
    } catch (err) {
      first = err;
    }
    expect(first).toBeInstanceOf(HttpError);
    expect((first as HttpError).status).toBe(400);
    expect(() => request.getBody()).toThrow(first as Error);
  });

  it('gives the raw bytes and null for no body', () => {
    expect(make().getBody()).toBeNull();
    expect(make().getRawBody().length).toBe(0);
    const raw = Buffer.from([0, 1, 2]);
    const request = make({ method: 'PUT', headers: { 'content-type': 'image/png' }, body: raw });
    expect(request.getBody()).toBe(raw);
    expect(request.getRawBody()).toBe(raw);
  });

  it('parses forms and text', () => {
    const form = make({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: Buffer.from('a=1&a=2&b=x+y'),
    });
    expect({ ...(form.getBody() as object) }).toEqual({ a: ['1', '2'], b: 'x y' });
    const text = make({
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: Buffer.from('hello'),
    });
    expect(text.getBody()).toBe('hello');
  });

  it('reads data from the body first, then the query', () => {
    const request = json({ name: 'body', only: 'b' }, '/?name=query&page=2');
    expect(request.getData('name')).toBe('body');
    expect(request.getData('page')).toBe('2');
    expect(request.getData('only')).toBe('b');
    expect(request.getData('missing')).toBeUndefined();
    expect(request.getData('missing', 0)).toBe(0);
    expect({ ...request.getData() }).toEqual({ name: 'body', page: '2', only: 'b' });
    expect({ ...request.all() }).toEqual({ name: 'body', page: '2', only: 'b' });
  });

  it('uses only the query when the body is not an object', () => {
    const request = json([1, 2], '/?a=1');
    expect({ ...request.all() }).toEqual({ a: '1' });
    expect(request.getData('0')).toBeUndefined();
    expect(make({ url: '/?toString=x' }).getData('toString')).toBe('x');
    expect(make().getData('toString')).toBeUndefined();
  });
});

describe('Request client address, scheme, host, port and URL', () => {
  it('uses the connection when no proxy is trusted, whatever the headers say', () => {
    const request = make({
      url: '/p?q=1',
      headers: {
        host: 'app.example:8080',
        'x-forwarded-for': '1.2.3.4',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'evil.example',
        forwarded: 'for=5.6.7.8',
      },
    });
    expect(request.getIpAddress()).toBe('203.0.113.9');
    expect(request.getRemoteAddress()).toBe('203.0.113.9');
    expect(request.getScheme()).toBe('http');
    expect(request.isSecure()).toBe(false);
    expect(request.getHost()).toBe('app.example');
    expect(request.getPort()).toBe(8080);
    expect(request.getUrl()).toBe('http://app.example:8080/p');
    expect(request.getUrl(true)).toBe('http://app.example:8080/p?q=1');
  });

  it('uses https for encrypted connections and the default ports', () => {
    const request = make({ encrypted: true, headers: { host: 'secure.example' } });
    expect(request.getScheme()).toBe('https');
    expect(request.getPort()).toBe(443);
    expect(request.getUrl()).toBe('https://secure.example/');
    expect(make({ headers: { host: 'plain.example' } }).getPort()).toBe(80);
  });

  it('falls back to localhost and the local port without a Host header', () => {
    const request = make({ headers: {}, localPort: 6001 });
    expect(request.getHost()).toBe('localhost');
    expect(request.getPort()).toBe(6001);
    expect(request.getUrl()).toBe('http://localhost:6001/');
    expect(make({ headers: {} }).getPort()).toBe(80);
  });

  it('reads forwarded values from a trusted proxy', () => {
    const request = make({
      url: '/cart?x=1',
      remoteAddress: '::ffff:10.0.0.2',
      trustProxy: compileTrustProxy(['10.0.0.0/8']),
      headers: {
        host: 'backend:3000',
        'x-forwarded-for': '198.51.100.20, 10.0.0.3',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'shop.example',
      },
    });
    expect(request.getIpAddress()).toBe('198.51.100.20');
    expect(request.getRemoteAddress()).toBe('10.0.0.2');
    expect(request.getScheme()).toBe('https');
    expect(request.getHost()).toBe('shop.example');
    expect(request.getPort()).toBe(443);
    expect(request.getUrl(true)).toBe('https://shop.example/cart?x=1');
  });

  it('takes X-Forwarded-Port over the forwarded host port, and the Host port without a forwarded host', () => {
    const trustProxy = compileTrustProxy(true);
    expect(
      make({
        trustProxy,
        headers: {
          host: 'a.example',
          'x-forwarded-host': 'b.example:8443',
          'x-forwarded-port': '9000',
        },
      }).getPort(),
    ).toBe(9000);
    expect(
      make({
        trustProxy,
        headers: { host: 'a.example', 'x-forwarded-host': 'b.example:8443' },
      }).getPort(),
    ).toBe(8443);
    const protoOnly = make({
      trustProxy,
      headers: { host: 'a.example:8080', 'x-forwarded-proto': 'https' },
    });
    expect(protoOnly.getPort()).toBe(8080);
    expect(protoOnly.getUrl()).toBe('https://a.example:8080/');
    expect(
      make({ trustProxy, headers: { 'x-forwarded-proto': 'https' }, localPort: 3000 }).getPort(),
    ).toBe(443);
  });

  it('reads RFC 7239 Forwarded from a trusted proxy', () => {
    const request = make({
      remoteAddress: '10.0.0.2',
      trustProxy: compileTrustProxy(['10.0.0.0/8']),
      headers: {
        host: 'backend',
        forwarded: 'for="[2001:db8::7]:5555";proto=https;host="[2001:db8::1]:8443"',
      },
    });
    expect(request.getIpAddress()).toBe('2001:db8::7');
    expect(request.getHost()).toBe('[2001:db8::1]');
    expect(request.getUrl()).toBe('https://[2001:db8::1]:8443/');
  });

  it('gives an empty address when the socket has none', () => {
    expect(make({ remoteAddress: undefined }).getIpAddress()).toBe('');
  });

  it('omits the path of an asterisk-form target from the URL', () => {
    expect(make({ method: 'OPTIONS', url: '*' }).getUrl()).toBe('http://app.example:8080');
  });
});

describe('Request.fromIncomingMessage', () => {
  it('copies what Node parsed', () => {
    const req = {
      method: 'PUT',
      url: '/x?y=1',
      httpVersion: '1.1',
      headers: { host: 'node.example', 'content-type': 'text/plain' },
      socket: { remoteAddress: '::ffff:192.0.2.1', encrypted: true, localPort: 443 },
    } as unknown as IncomingMessage;
    const request = Request.fromIncomingMessage(req, Buffer.from('hi'));
    expect(request.getMethod()).toBe('PUT');
    expect(request.getPath()).toBe('/x');
    expect(request.getProtocol()).toBe('HTTP/1.1');
    expect(request.getIpAddress()).toBe('192.0.2.1');
    expect(request.getScheme()).toBe('https');
    expect(request.getBody()).toBe('hi');
  });

  it('passes the trust predicate on', () => {
    const req = {
      method: 'GET',
      url: '/',
      httpVersion: '1.1',
      headers: { host: 'h', 'x-forwarded-for': '198.51.100.1' },
      socket: { remoteAddress: '127.0.0.1' },
    } as unknown as IncomingMessage;
    expect(Request.fromIncomingMessage(req).getIpAddress()).toBe('127.0.0.1');
    expect(
      Request.fromIncomingMessage(req, undefined, compileTrustProxy(['loopback'])).getIpAddress(),
    ).toBe('198.51.100.1');
  });

  it('takes the trust-proxy setting itself, and refuses anything else with a TypeError', () => {
    const req = {
      method: 'GET',
      url: '/',
      httpVersion: '1.1',
      headers: { host: 'h', 'x-forwarded-for': '198.51.100.1' },
      socket: { remoteAddress: '127.0.0.1' },
    } as unknown as IncomingMessage;
    expect(Request.fromIncomingMessage(req, undefined, true).getIpAddress()).toBe('198.51.100.1');
    expect(Request.fromIncomingMessage(req, undefined, ['loopback']).getIpAddress()).toBe(
      '198.51.100.1',
    );
    expect(Request.fromIncomingMessage(req, undefined, false).getIpAddress()).toBe('127.0.0.1');
    // What a JavaScript caller gets for passing an options object instead of the setting.
    const options = { trustProxy: true } as unknown as boolean;
    expect(() => Request.fromIncomingMessage(req, undefined, options)).toThrow(TypeError);
    expect(() => Request.fromIncomingMessage(req, undefined, options)).toThrow(
      expect.objectContaining({
        code: 'PKG_ERR_HTTP_INVALID_TRUST_PROXY',
        message: expect.stringContaining('trustProxy setting must be true, false, an array'),
      }),
    );
  });

  it('reads headers of a hand-made message case-insensitively', () => {
    const req = {
      method: 'GET',
      url: '/',
      httpVersion: '1.0',
      headers: { Host: 'h.example', 'X-Custom': 'v' },
      socket: null,
    } as unknown as IncomingMessage;
    const request = Request.fromIncomingMessage(req);
    expect(request.getHost()).toBe('h.example');
    expect(request.getHeader('x-custom')).toBe('v');
    expect(request.hasHeader('constructor')).toBe(false);
    expect(request.getProtocol()).toBe('HTTP/1.0');
  });

  it("reads a socket's addresses even when the socket takes no properties (frozen)", () => {
    const socket = Object.freeze({ remoteAddress: '192.0.2.7', encrypted: true, localPort: 8443 });
    for (const url of ['/first', '/second']) {
      const req = new IncomingMessage(socket as unknown as Socket);
      Object.assign(req, { method: 'GET', url, httpVersion: '1.0', headers: {} });
      const request = Request.fromIncomingMessage(req);
      expect(request.getPath()).toBe(url);
      expect(request.getIpAddress()).toBe('192.0.2.7');
      expect(request.getScheme()).toBe('https');
      // No Host header: the port is the one the connection arrived on.
      expect(request.getPort()).toBe(8443);
    }
  });

  it('refuses a body that is not a Buffer', () => {
    const req = {
      method: 'POST',
      url: '/',
      httpVersion: '1.1',
      headers: {},
      socket: null,
    } as unknown as IncomingMessage;
    expect(() => Request.fromIncomingMessage(req, 'text' as unknown as Buffer)).toThrow(
      expect.objectContaining({ name: 'TypeError', code: 'PKG_ERR_HTTP_INVALID_ARGUMENT' }),
    );
  });
});
