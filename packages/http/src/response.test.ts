import { STATUS_CODES } from 'node:http';
import { describe, expect, it } from '@jest/globals';
import { Response, statusText } from './response';

describe('Response construction', () => {
  it('defaults to 200, no body and no headers', () => {
    const response = new Response();
    expect(response.getStatusCode()).toBe(200);
    expect(response.getBody()).toBeNull();
    expect(response.getHeaders()).toEqual({});
    expect(response.getBodyString()).toBe('');
    expect(response.getContentType()).toBe('');
  });

  it('takes body, status and headers', () => {
    const response = new Response('created', 201, { 'X-Id': '7' });
    expect(response.getStatusCode()).toBe(201);
    expect(response.getBody()).toBe('created');
    expect(response.getHeader('x-id')).toBe('7');
  });

  it('refuses status codes outside 100-999 with a RangeError', () => {
    for (const code of [99, 1000, 200.5, Number.NaN]) {
      expect(() => new Response(null, code)).toThrow(RangeError);
      expect(() => new Response().setStatusCode(code)).toThrow(
        expect.objectContaining({ code: 'PKG_ERR_HTTP_INVALID_STATUS' }),
      );
    }
  });
});

describe('Response static constructors', () => {
  it('json encodes the data, strings included', () => {
    const response = Response.json({ ok: true, list: [1, 2] });
    expect(response.getStatusCode()).toBe(200);
    expect(response.getHeader('Content-Type')).toBe('application/json; charset=utf-8');
    expect(response.getBodyString()).toBe('{"ok":true,"list":[1,2]}');
    expect(Response.json('hi').getBodyString()).toBe('"hi"');
    expect(Response.json(null).getBodyString()).toBe('null');
    expect(Response.json({ a: 1 }, 201, { 'X-A': 'b' }).getHeaders()).toEqual({
      'Content-Type': 'application/json; charset=utf-8',
      'X-A': 'b',
    });
  });

  it('html, text and redirect set their content type, status and Location', () => {
    const html = Response.html('<p>x</p>', 202);
    expect(html.getStatusCode()).toBe(202);
    expect(html.getContentType()).toBe('text/html; charset=utf-8');
    expect(html.getBodyString()).toBe('<p>x</p>');
    expect(Response.text('plain').getContentType()).toBe('text/plain; charset=utf-8');
    const redirect = Response.redirect('/login');
    expect(redirect.getStatusCode()).toBe(302);
    expect(redirect.getHeader('location')).toBe('/login');
    expect(Response.redirect('/moved', 301).getStatusCode()).toBe(301);
    expect(() => Response.redirect('')).toThrow(TypeError);
  });

  it('error helpers have the spec statuses and JSON bodies', () => {
    const cases: [Response, number, string][] = [
      [Response.notFound(), 404, '{"error":"Not Found"}'],
      [Response.serverError(), 500, '{"error":"Internal Server Error"}'],
      [Response.unauthorized(), 401, '{"error":"Unauthorized"}'],
      [Response.forbidden(), 403, '{"error":"Forbidden"}'],
      [Response.badRequest(), 400, '{"error":"Bad Request"}'],
    ];
    for (const [response, status, body] of cases) {
      expect(response.getStatusCode()).toBe(status);
      expect(response.getBodyString()).toBe(body);
      expect(response.getContentType()).toBe('application/json; charset=utf-8');
    }
    expect(Response.badRequest('name is required').getBodyString()).toBe(
      '{"error":"name is required"}',
    );
    expect(Response.notFound({ error: 'x', id: 1 }, { 'X-A': '1' }).getBodyString()).toBe(
      '{"error":"x","id":1}',
    );
    expect(Response.noContent().getStatusCode()).toBe(204);
  });
});

describe('Response headers', () => {
  it('replaces case-insensitively, keeping the first spelling of the name', () => {
    const response = new Response().setHeader('X-Token', 'a').setHeader('x-token', 'b');
    expect(response.getHeader('X-TOKEN')).toBe('b');
    expect(response.getHeaders()).toEqual({ 'x-token': 'b' });
    expect(response.hasHeader('x-Token')).toBe(true);
    response.removeHeader('X-TOKEN');
    expect(response.hasHeader('x-token')).toBe(false);
    expect(response.getHeader('x-token')).toBeUndefined();
  });

  it('appends repeatable headers', () => {
    const response = new Response()
      .appendHeader('Set-Cookie', 'a=1')
      .appendHeader('set-cookie', 'b=2');
    expect(response.getHeaderValues('set-cookie')).toEqual(['a=1', 'b=2']);
    expect(response.getHeader('Set-Cookie')).toBe('a=1, b=2');
    expect(response.getHeaderNames()).toEqual(['Set-Cookie']);
    expect(response.getHeaderValues('missing')).toEqual([]);
  });

  it('accepts numbers as values', () => {
    expect(new Response().setHeader('X-Count', 3).getHeader('x-count')).toBe('3');
  });

  it.each([
    'a\r\nSet-Cookie: evil=1',
    'a\nb',
    'a\rb',
    'a\u0000b',
    'a\u007fb',
    'snow\u2603',
    'a\u010d\u010aSet-Cookie: evil=1',
  ])('refuses header injection through the value %j', (value) => {
    expect(() => new Response().setHeader('X-A', value)).toThrow(
      expect.objectContaining({ name: 'TypeError', code: 'PKG_ERR_HTTP_INVALID_HEADER' }),
    );
    expect(() => new Response().appendHeader('X-A', value)).toThrow(TypeError);
    expect(() => Response.redirect(`/x${value}`)).toThrow(TypeError);
  });

  it.each(['X-A\r\nX-B', 'X A', '', 'X:A', 'Ünïcode'])('refuses the header name %j', (name) => {
    expect(() => new Response().setHeader(name, 'v')).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_HTTP_INVALID_HEADER' }),
    );
  });

  it('checks and keys every name the same way, however many names a process has used', () => {
    // More distinct names than the process keeps checked: each is still checked, and a
    // name is matched case-insensitively whether it was kept or not.
    for (let i = 0; i < 700; i += 1) {
      const response = new Response().setHeader(`X-Name-${i}`, 'a');
      expect(response.setHeader(`x-name-${i}`, 'b').getHeaderValues(`X-NAME-${i}`)).toEqual(['b']);
      expect(() => new Response().setHeader(`X-Name-${i}\r\nX-Evil`, 'v')).toThrow(
        expect.objectContaining({ code: 'PKG_ERR_HTTP_INVALID_HEADER' }),
      );
    }
    // A refused name is refused every time, never kept as checked.
    for (let i = 0; i < 3; i += 1) {
      expect(() => new Response().appendHeader('X A', 'v')).toThrow(TypeError);
    }
    expect(
      new Response().appendHeader('X-Kept', '1').appendHeader('x-kept', '2').getHeader('X-KEPT'),
    ).toBe('1, 2');
  });

  it('checks values built by concatenation like any other', () => {
    // Joined strings are kept by the engine as pieces until read: each character is checked.
    const id = ['3f9c1a7b2e40', 'x'.repeat(20)].join('') + String(Date.now());
    const built = `${id}-${(12345).toString(36)}`;
    expect(new Response().setHeader('X-Request-Id', built).getHeader('x-request-id')).toBe(built);
    for (const bad of ['\r\nSet-Cookie: a=1', '\n', '\u0000', '\u0100']) {
      expect(() => new Response().setHeader('X-Request-Id', `${id}${bad}`)).toThrow(
        expect.objectContaining({ code: 'PKG_ERR_HTTP_INVALID_HEADER' }),
      );
    }
    // HTAB and obs-text (U+0080-U+00FF) are allowed, as Node allows them.
    expect(new Response().setHeader('X-A', `${id}\tcaf\u00e9`).getHeader('X-A')).toBe(
      `${id}\tcaf\u00e9`,
    );
  });

  it('refuses header values that are not strings or numbers and header maps that are not objects', () => {
    expect(() => new Response().setHeader('X-A', {} as unknown as string)).toThrow(TypeError);
    expect(() => new Response(null, 200, null as unknown as Record<string, string>)).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_HTTP_INVALID_ARGUMENT' }),
    );
  });

  it('allows tabs and Latin-1 in values, as Node does', () => {
    expect(new Response().setHeader('X-A', 'a\tb\u00e9').getHeader('x-a')).toBe('a\tb\u00e9');
  });
});

describe('Response body and content type', () => {
  it('infers the content type from the body', () => {
    expect(new Response('x').getContentType()).toBe('text/plain; charset=utf-8');
    expect(new Response({ a: 1 }).getContentType()).toBe('application/json; charset=utf-8');
    expect(new Response([1]).getContentType()).toBe('application/json; charset=utf-8');
    expect(new Response(Buffer.from('x')).getContentType()).toBe('application/octet-stream');
    expect(new Response('x').setContentType('text/csv').getContentType()).toBe('text/csv');
  });

  it('encodes objects, arrays, numbers and booleans as JSON and strings as they are', () => {
    expect(new Response({ a: [1] }).getBodyString()).toBe('{"a":[1]}');
    expect(new Response([1, 'x']).getBodyString()).toBe('[1,"x"]');
    expect(new Response(42).getBodyString()).toBe('42');
    expect(new Response(false).getBodyString()).toBe('false');
    expect(new Response('<b>').getBodyString()).toBe('<b>');
    expect(new Response(new Uint8Array([104, 105])).getBodyString()).toBe('hi');
  });

  it('gives the bytes to send', () => {
    const view = new Uint8Array([0, 1, 2, 3]).subarray(1, 3);
    expect([...new Response(view).getBodyBuffer()]).toEqual([1, 2]);
    expect(new Response('é').getBodyBuffer().length).toBe(2);
  });

  it('setBody replaces the body and leaves JSON-encoding of strings behind', () => {
    const response = Response.json('a').setBody('plain');
    expect(response.getBody()).toBe('plain');
    expect(response.getBodyString()).toBe('plain');
    expect(response.setBody({ b: 1 }).getBodyString()).toBe('{"b":1}');
  });
});

describe('Response status text and toString', () => {
  it('knows the reason phrase of every standard code', () => {
    for (const [code, text] of Object.entries(STATUS_CODES)) {
      expect(new Response().getStatusText(Number(code))).toBe(text);
    }
    expect(new Response(null, 418).getStatusText()).toBe("I'm a Teapot");
    expect(statusText(429)).toBe('Too Many Requests');
    expect(statusText(599)).toBe('');
  });

  it('writes the whole HTTP/1.1 message', () => {
    const response = Response.json({ ok: true }, 201)
      .appendHeader('Set-Cookie', 'a=1')
      .appendHeader('Set-Cookie', 'b=2');
    expect(response.toString()).toBe(
      'HTTP/1.1 201 Created\r\n' +
        'Content-Type: application/json; charset=utf-8\r\n' +
        'Set-Cookie: a=1\r\n' +
        'Set-Cookie: b=2\r\n' +
        'Content-Length: 11\r\n' +
        '\r\n' +
        '{"ok":true}',
    );
  });

  it('adds the inferred content type and counts bytes, not characters', () => {
    expect(new Response('é', 599).setHeader('Content-Length', '99').toString()).toBe(
      'HTTP/1.1 599\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 2\r\n\r\né',
    );
    expect(new Response().toString()).toBe('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n');
  });
});

describe('Response.error', () => {
  it('answers the one error body: the reason phrase, then code, message and details', () => {
    const response = Response.error(
      429,
      { code: 'PKG_ERR_HTTP_RATE_LIMITED', message: 'Slow down.', details: { retryAfter: 3, error: 'x' } }, // prettier-ignore
      { 'Retry-After': '3' },
    );
    expect(response.getStatusCode()).toBe(429);
    expect(response.getHeader('Retry-After')).toBe('3');
    expect(response.getContentType()).toBe('application/json; charset=utf-8');
    expect(JSON.stringify(response.getBody())).toBe(
      '{"error":"Too Many Requests","code":"PKG_ERR_HTTP_RATE_LIMITED","message":"Slow down.","retryAfter":3}',
    );
    expect(Response.error(404).getBody()).toEqual({ error: 'Not Found' });
    expect(Response.error(599).getBody()).toEqual({ error: 'Error' });
  });
});
