import { describe, expect, it } from '@jest/globals';
import { IncomingMessage as NodeIncomingMessage, ServerResponse } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import {
  headerValue,
  holdEarlyBytes,
  isWritableHeader,
  refusalStatus,
  splitRequestTarget,
  validateUpgradeRequest,
  handshakeErrorBody,
  writeHandshakeError,
} from './handshake';

function request(
  method: string,
  headers: Record<string, string>,
  httpVersion = '1.1',
): IncomingMessage {
  const [major, minor] = httpVersion.split('.').map(Number);
  return {
    method,
    headers,
    url: '/',
    httpVersion,
    httpVersionMajor: major,
    httpVersionMinor: minor,
  } as unknown as IncomingMessage;
}

const good = {
  upgrade: 'websocket',
  connection: 'Upgrade',
  'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
  'sec-websocket-version': '13',
};

describe('validateUpgradeRequest', () => {
  it('accepts a valid opening handshake (Upgrade compared case-insensitively)', () => {
    expect(validateUpgradeRequest(request('GET', good))).toBeUndefined();
    expect(
      validateUpgradeRequest(request('GET', { ...good, upgrade: 'WebSocket' })),
    ).toBeUndefined();
  });

  it('refuses a method other than GET with 400', () => {
    expect(validateUpgradeRequest(request('POST', good))).toMatchObject({
      status: 400,
      code: 'PKG_ERR_WS_BAD_HANDSHAKE',
    });
  });

  it('refuses an HTTP/1.0 request with 400 and accepts HTTP/1.1 and later', () => {
    expect(validateUpgradeRequest(request('GET', good, '1.0'))).toMatchObject({
      status: 400,
      code: 'PKG_ERR_WS_BAD_HANDSHAKE',
      message: expect.stringMatching(/HTTP\/1\.1/),
    });
    expect(validateUpgradeRequest(request('GET', good, '1.1'))).toBeUndefined();
    expect(validateUpgradeRequest(request('GET', good, '2.0'))).toBeUndefined();
  });

  it('refuses a missing or foreign Upgrade header with 400', () => {
    const { upgrade: _upgrade, ...noUpgrade } = good;
    expect(validateUpgradeRequest(request('GET', noUpgrade))?.status).toBe(400);
    expect(validateUpgradeRequest(request('GET', { ...good, upgrade: 'h2c' }))?.message).toMatch(
      /Upgrade header/,
    );
  });

  it('refuses a missing or malformed key with 400', () => {
    const { 'sec-websocket-key': _key, ...noKey } = good;
    expect(validateUpgradeRequest(request('GET', noKey))?.status).toBe(400);
    expect(
      validateUpgradeRequest(request('GET', { ...good, 'sec-websocket-key': 'short' }))?.message,
    ).toMatch(/Sec-WebSocket-Key/);
  });

  it('answers a version other than 13 (or none) with 426 and Sec-WebSocket-Version: 13', () => {
    const { 'sec-websocket-version': _v, ...noVersion } = good;
    for (const headers of [{ ...good, 'sec-websocket-version': '8' }, noVersion]) {
      expect(validateUpgradeRequest(request('GET', headers))).toEqual({
        status: 426,
        code: 'PKG_ERR_WS_UNSUPPORTED_VERSION',
        message: expect.stringMatching(/version 13/),
        headers: { 'Sec-WebSocket-Version': '13' },
      });
    }
  });
});

describe('refusalStatus', () => {
  it('keeps 4xx and 5xx and turns anything else into 500', () => {
    expect(refusalStatus(401)).toBe(401);
    expect(refusalStatus(599)).toBe(599);
    expect(refusalStatus(200)).toBe(500);
    expect(refusalStatus(101)).toBe(500);
    expect(refusalStatus('401')).toBe(500);
    expect(refusalStatus(401.5)).toBe(500);
  });
});

describe('writeHandshakeError', () => {
  function capture(socket: PassThrough): Promise<string> {
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    return new Promise((resolve) =>
      socket.on('end', () => resolve(Buffer.concat(chunks).toString())),
    );
  }

  it('writes a short JSON error body, then closes', async () => {
    const socket = new PassThrough();
    const text = capture(socket);
    writeHandshakeError(socket, {
      status: 403,
      code: 'PKG_ERR_WS_ORIGIN_NOT_ALLOWED',
      message: 'Origin not allowed.',
    });
    const body = '{"error":"Forbidden","code":"PKG_ERR_WS_ORIGIN_NOT_ALLOWED","message":"Origin not allowed."}'; // prettier-ignore
    expect(await text).toBe(
      'HTTP/1.1 403 Forbidden\r\nConnection: close\r\n' +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${body.length}\r\n\r\n${body}`,
    );
  });

  it('leaves out a message that repeats the reason phrase, and says nothing more on a 500', () => {
    expect(handshakeErrorBody(403, 'PKG_ERR_WS_HANDSHAKE_REFUSED', 'Forbidden')).toBe(
      '{"error":"Forbidden","code":"PKG_ERR_WS_HANDSHAKE_REFUSED"}',
    );
    expect(handshakeErrorBody(500, 'PKG_ERR_WS_HANDSHAKE_HOOK_FAILED', 'db down')).toBe(
      '{"error":"Internal Server Error"}',
    );
    expect(handshakeErrorBody(401)).toBe('{"error":"Unauthorized"}');
  });

  it('adds extra headers, dropping unsafe names and values Node would refuse', async () => {
    const socket = new PassThrough();
    const text = capture(socket);
    writeHandshakeError(socket, {
      status: 401,
      message: 'é',
      headers: {
        'WWW-Authenticate': 'Bearer\r\nX-Injected: 1',
        'Bad Name': 'x',
        'Content-Length': '999',
        'X-Reason': 'ok\u010d\u010aSet-Cookie: a=1',
        'X-Fine': 'caf\u00e9',
      },
    });
    const out = await text;
    expect(out).toContain(
      `Content-Length: ${Buffer.byteLength('{"error":"Unauthorized","message":"é"}')}\r\n`,
    );
    expect(out).not.toContain('WWW-Authenticate');
    expect(out).not.toContain('X-Injected');
    expect(out).not.toContain('X-Reason');
    expect(out).not.toContain('Set-Cookie');
    // Written as latin1 (one byte 0xE9), as Node writes header values.
    expect(out).toContain('X-Fine: caf\ufffd\r\n');
    expect(out).not.toContain('Bad Name');
    expect(out).not.toContain('999');
  });

  it('cuts a long message', async () => {
    const socket = new PassThrough();
    const text = capture(socket);
    writeHandshakeError(socket, { status: 400, message: 'x'.repeat(2000) });
    expect(
      (await text).endsWith(`\r\n\r\n{"error":"Bad Request","message":"${'x'.repeat(512)}"}`),
    ).toBe(true);
  });

  it('does nothing to a socket that is already destroyed', () => {
    const socket = new PassThrough();
    socket.destroy();
    expect(() => writeHandshakeError(socket, { status: 400, message: 'x' })).not.toThrow();
  });
});

describe('splitRequestTarget', () => {
  it('splits path and query of origin-form and absolute-form targets', () => {
    const a = splitRequestTarget('/chat/v1?key=abc&room=x');
    expect(a.path).toBe('/chat/v1');
    expect(a.query.get('key')).toBe('abc');
    expect(splitRequestTarget('/').query.toString()).toBe('');
    const b = splitRequestTarget('http://example.com/ws?key=1');
    expect(b.path).toBe('/ws');
    expect(b.query.get('key')).toBe('1');
    expect(splitRequestTarget('//evil.example/path').path).toBe('//evil.example/path');
  });
});

describe('headerValue', () => {
  it('takes the first of a list', () => {
    expect(headerValue(['a', 'b'])).toBe('a');
    expect(headerValue('x')).toBe('x');
    expect(headerValue(undefined)).toBeUndefined();
  });
});

describe('holdEarlyBytes', () => {
  it('keeps what arrives until release, then stops reading', () => {
    const socket = new PassThrough();
    const held = holdEarlyBytes(socket, 10);
    socket.write('abc');
    socket.write('de');
    expect(held.release().toString()).toBe('abcde');
    expect(socket.listenerCount('data')).toBe(0);
  });

  it('destroys the socket beyond the limit', () => {
    const socket = new PassThrough();
    const held = holdEarlyBytes(socket, 4);
    socket.write('abcdef');
    expect(socket.destroyed).toBe(true);
    expect(held.release().length).toBe(0);
  });
});

describe('isWritableHeader', () => {
  /** What Node's own ServerResponse.setHeader accepts. */
  function nodeAccepts(name: string, value: string): boolean {
    const res = new ServerResponse(new NodeIncomingMessage(new Socket()));
    try {
      res.setHeader(name, value);
      return true;
    } catch {
      return false;
    }
  }

  it('accepts and refuses exactly what ServerResponse.setHeader does', () => {
    const cases: Array<[string, string]> = [
      ['X-Ok', 'plain value'],
      ['X-Tab', 'a\tb'],
      ['X-Latin1', 'caf\u00e9'],
      ['X-Cr', 'a\rb'],
      ['X-Lf', 'a\nb'],
      ['X-Nul', 'a\0b'],
      ['X-Wide', 'ok\u010d\u010aSet-Cookie: a=1'],
      ['X-Emoji', '\u{1f600}'],
      ['X-Del', 'a\x7fb'],
      ['Bad Name', 'x'],
      ['X-Colon:', 'x'],
      ['', 'x'],
    ];
    for (const [name, value] of cases) {
      expect([name, isWritableHeader(name, value)]).toEqual([name, nodeAccepts(name, value)]);
    }
  });

  it('refuses values that are neither strings nor numbers', () => {
    expect(isWritableHeader('X-A', 42)).toBe(true);
    expect(isWritableHeader('X-A', undefined)).toBe(false);
    expect(isWritableHeader('X-A', { toString: () => 'x' })).toBe(false);
  });
});
