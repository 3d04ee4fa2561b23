import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { HttpError } from './errors';
import { declaredLength, findAmbiguity, readBody } from './incoming';

function withRawHeaders(...pairs: string[]): IncomingMessage {
  const headers: Record<string, string> = {};
  for (let i = 0; i < pairs.length; i += 2)
    headers[(pairs[i] as string).toLowerCase()] = pairs[i + 1] as string;
  return { rawHeaders: pairs, headers } as unknown as IncomingMessage;
}

function stream(headers: Record<string, string> = {}): PassThrough & IncomingMessage {
  const s = new PassThrough() as PassThrough & IncomingMessage;
  (s as unknown as { headers: Record<string, string> }).headers = headers;
  return s;
}

async function rejection(promise: Promise<unknown>): Promise<HttpError> {
  try {
    await promise;
  } catch (err) {
    return err as HttpError;
  }
  throw new Error('resolved');
}

describe('findAmbiguity', () => {
  it('accepts ordinary framing', () => {
    expect(findAmbiguity(withRawHeaders('Host', 'a', 'Content-Length', '3'))).toBeUndefined();
    expect(
      findAmbiguity(withRawHeaders('Host', 'a', 'Transfer-Encoding', 'chunked')),
    ).toBeUndefined();
    expect(
      findAmbiguity(withRawHeaders('Host', 'a', 'transfer-encoding', ' Chunked ')),
    ).toBeUndefined();
    expect(findAmbiguity(withRawHeaders())).toBeUndefined();
  });

  it.each([
    [['Host', 'a', 'host', 'b'], 'more than one Host'],
    [['HOST', 'a', 'Host', 'b'], 'more than one Host'],
    [['hOsT', 'a', 'host', 'b'], 'more than one Host'],
    [['Content-Length', '1', 'Content-Length', '1'], 'more than one Content-Length'],
    [
      ['Content-Length', '5', 'Transfer-Encoding', 'chunked'],
      'both Content-Length and Transfer-Encoding',
    ],
    [['Transfer-Encoding', 'gzip'], 'not exactly "chunked"'],
    [['Transfer-Encoding', 'gzip, chunked'], 'not exactly "chunked"'],
    [['Transfer-Encoding', 'chunked', 'Transfer-Encoding', 'chunked'], 'not exactly "chunked"'],
    [['Transfer-Encoding', 'chunked, identity'], 'not exactly "chunked"'],
    [['Transfer-Encoding', ''], 'not exactly "chunked"'],
  ])('refuses %j', (pairs, why) => {
    expect(findAmbiguity(withRawHeaders(...pairs))).toContain(why);
  });
});

describe('declaredLength', () => {
  it('reads plain decimal Content-Length values only', () => {
    expect(declaredLength(withRawHeaders('Content-Length', '42'))).toBe(42);
    expect(declaredLength(withRawHeaders())).toBeUndefined();
    expect(declaredLength(withRawHeaders('Content-Length', '4 2'))).toBeUndefined();
    expect(declaredLength(withRawHeaders('Content-Length', ''))).toBeUndefined();
    expect(declaredLength(withRawHeaders('Content-Length', '-1'))).toBeUndefined();
    expect(declaredLength(withRawHeaders('Content-Length', '+1'))).toBeUndefined();
    expect(declaredLength(withRawHeaders('Content-Length', '0x10'))).toBeUndefined();
    expect(declaredLength(withRawHeaders('Content-Length', '1e3'))).toBeUndefined();
    expect(declaredLength(withRawHeaders('Content-Length', '007'))).toBe(7);
    expect(
      declaredLength(withRawHeaders('Content-Length', '99999999999999999999')),
    ).toBeGreaterThan(Number.MAX_SAFE_INTEGER);
  });

  it('agrees with "digits only, then Number" on any value', () => {
    const value = fc.oneof(
      fc.string({ maxLength: 24 }),
      fc.stringMatching(/^[0-9]{0,24}$/),
      fc.bigInt({ min: 0n, max: 10n ** 30n }).map(String),
      fc.constantFrom('０', '٣', '1 ', ' 1', '1.0', '1_0', 'Infinity', 'NaN'),
    );
    fc.assert(
      fc.property(value, (v) => {
        const expected = /^[0-9]+$/.test(v) ? Number(v) : undefined;
        expect(declaredLength(withRawHeaders('Content-Length', v))).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('readBody', () => {
  it('collects the body', async () => {
    const req = stream();
    const body = readBody(req, 100);
    req.write('hello ');
    req.end('world');
    expect((await body).toString()).toBe('hello world');
  });

  it('allows a body of exactly the limit', async () => {
    const req = stream({ 'content-length': '5' });
    const body = readBody(req, 5);
    req.end('12345');
    expect((await body).length).toBe(5);
  });

  it('refuses a declared length over the limit without reading', async () => {
    const req = stream({ 'content-length': '101' });
    const err = await rejection(readBody(req, 100));
    expect(err.code).toBe('PKG_ERR_HTTP_BODY_TOO_LARGE');
    expect(err.status).toBe(413);
    expect(req.listenerCount('data')).toBe(0);
  });

  it('stops reading as soon as a streamed body passes the limit', async () => {
    const req = stream();
    const body = readBody(req, 10);
    req.write('123456');
    req.write('7890AB');
    const err = await rejection(body);
    expect(err.code).toBe('PKG_ERR_HTTP_BODY_TOO_LARGE');
    expect(err.message).toContain('10 bytes');
    expect(req.isPaused()).toBe(true);
    expect(req.listenerCount('data')).toBe(0);
    req.destroy();
  });

  it('rejects when the client goes away mid-body', async () => {
    const req = stream();
    const body = readBody(req, 100);
    req.write('part');
    req.destroy();
    expect((await rejection(body)).code).toBe('PKG_ERR_HTTP_BODY_READ_FAILED');
  });

  it('rejects on a stream error, keeping it as the cause', async () => {
    const req = stream();
    const body = readBody(req, 100);
    const boom = new Error('socket hang up');
    req.destroy(boom);
    const err = await rejection(body);
    expect(err.code).toBe('PKG_ERR_HTTP_BODY_READ_FAILED');
    expect(err.cause).toBe(boom);
  });

  it('gives an empty body for a stream that has already ended', async () => {
    const req = Object.assign(new EventEmitter(), {
      headers: {},
      readableEnded: true,
    }) as unknown as IncomingMessage;
    expect((await readBody(req, 10)).length).toBe(0);
  });
});
