import { describe, expect, it } from '@jest/globals';
import type { IncomingMessage } from 'node:http';
import type { LogContext, LoggerInterface } from '@pkg/logger';
import type { HandshakeContext, HandshakeHook } from './handshake';
import { runHandshakeHooks } from './hooks';
import { fallbackLogger } from './fallback-logger';

const context: HandshakeContext = {
  request: {} as IncomingMessage,
  headers: {},
  query: new URLSearchParams('key=k'),
  path: '/',
  ip: '127.0.0.1',
  origin: undefined,
  clientId: 'c1',
  data: {},
};

describe('runHandshakeHooks', () => {
  it('accepts when every hook returns nothing, running them in order', async () => {
    const order: number[] = [];
    const hooks: HandshakeHook[] = [
      () => {
        order.push(1);
      },
      async () => {
        order.push(2);
      },
    ];
    expect(await runHandshakeHooks(hooks, context, 1000, fallbackLogger)).toBeUndefined();
    expect(order).toEqual([1, 2]);
  });

  it('stops at the first refusal and keeps its status, message and headers', async () => {
    let ran = false;
    const failure = await runHandshakeHooks(
      [
        () => ({ status: 401, message: 'Invalid key', headers: { 'WWW-Authenticate': 'Key' } }),
        () => {
          ran = true;
        },
      ],
      context,
      0,
      fallbackLogger,
    );
    expect(failure).toEqual({
      status: 401,
      code: 'PKG_ERR_WS_HANDSHAKE_REFUSED',
      message: 'Invalid key',
      headers: { 'WWW-Authenticate': 'Key' },
    });
    expect(ran).toBe(false);
  });

  it('treats false as 403 and a malformed refusal as 500 "Refused"', async () => {
    const falsy = (() => false) as unknown as HandshakeHook;
    expect(await runHandshakeHooks([falsy], context, 0, fallbackLogger)).toMatchObject({
      status: 403,
    });
    const odd = (() => ({ status: 'nope' })) as unknown as HandshakeHook;
    expect(await runHandshakeHooks([odd], context, 0, fallbackLogger)).toMatchObject({
      status: 500,
      message: 'Refused',
    });
  });

  it('turns a throwing hook into 500 and logs the exception', async () => {
    const seen: { error: unknown; context?: LogContext }[] = [];
    const log: LoggerInterface = {
      ...fallbackLogger,
      exception: (error, ctx) => seen.push({ error, context: ctx }),
    };
    const failure = await runHandshakeHooks(
      [
        async () => {
          throw new Error('db down');
        },
      ],
      context,
      1000,
      log,
    );
    expect(failure).toMatchObject({ status: 500, code: 'PKG_ERR_WS_HANDSHAKE_HOOK_FAILED' });
    expect((seen[0]?.error as Error).message).toBe('db down');
    expect(seen[0]?.context).toMatchObject({ clientId: 'c1' });
  });

  it('answers 503 when the hooks take longer than the timeout', async () => {
    let release!: () => void;
    const slow = new Promise<void>((resolve) => {
      release = resolve;
    });
    const failure = await runHandshakeHooks([() => slow], context, 5, fallbackLogger);
    expect(failure).toEqual({
      status: 503,
      code: 'PKG_ERR_WS_HANDSHAKE_TIMEOUT',
      message: 'Handshake timed out.',
    });
    release();
  });
});
