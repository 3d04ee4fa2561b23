import { describe, expect, it, jest } from '@jest/globals';
import type { LoggerInterface } from '@pkg/logger';
import type { WsClient } from '@pkg/ws-protocol';
import {
  MAX_IDENTITY_LENGTH,
  authContext,
  runAuthHandlers,
  type AuthHandler,
  type AuthOutcome,
} from './auth';

const logger = (): LoggerInterface & { exception: jest.Mock; warning: jest.Mock } =>
  ({ exception: jest.fn(), warning: jest.fn() }) as unknown as LoggerInterface & {
    exception: jest.Mock;
    warning: jest.Mock;
  };

const context = authContext(
  { id: 'c', ip: '1.2.3.4', data: { a: 1 } } as unknown as WsClient,
  'token',
  undefined,
);

/** Runs the handlers and returns every outcome reported (there must be exactly one). */
async function run(handlers: AuthHandler[], log = logger()): Promise<AuthOutcome[]> {
  const outcomes: AuthOutcome[] = [];
  runAuthHandlers(handlers, context, log, (o) => outcomes.push(o));
  for (let i = 0; i < 5; i += 1) await Promise.resolve();
  return outcomes;
}

const refused = (status: 401 | 403, message: string): AuthOutcome => ({
  accepted: false,
  refusal: { status, message },
});

describe('runAuthHandlers', () => {
  it('no handler, true or nothing accept without identity', async () => {
    expect(await run([])).toEqual([{ accepted: true, identity: undefined }]);
    expect(await run([() => true, () => undefined])).toEqual([
      { accepted: true, identity: undefined },
    ]);
  });

  it('the identity is the first one given; later handlers still run', async () => {
    const last = jest.fn(() => true);
    expect(await run([() => ({ identity: 'ann' }), () => ({ identity: 'bob' }), last])).toEqual([
      { accepted: true, identity: 'ann' },
    ]);
    expect(last).toHaveBeenCalledTimes(1);
  });

  it('false, null, a number or an array refuse with 401 Unauthorized', async () => {
    for (const value of [false, null, 3, [], 'yes']) {
      expect(await run([() => value as never])).toEqual([refused(401, 'Unauthorized')]);
    }
  });

  it('an empty or too long identity refuses with 401', async () => {
    expect(await run([() => ({ identity: '' })])).toEqual([refused(401, 'Unauthorized')]);
    const long = 'x'.repeat(MAX_IDENTITY_LENGTH + 1);
    expect(await run([() => ({ identity: long })])).toEqual([refused(401, 'Unauthorized')]);
    const max = 'x'.repeat(MAX_IDENTITY_LENGTH);
    expect(await run([() => ({ identity: max })])).toEqual([{ accepted: true, identity: max }]);
  });

  it('a status refuses: 403 kept, anything else 401, with its message or the default', async () => {
    expect(await run([() => ({ status: 403, message: 'no' })])).toEqual([refused(403, 'no')]);
    expect(await run([() => ({ status: 403, message: '' })])).toEqual([refused(403, 'Forbidden')]);
    expect(await run([() => ({ status: 500 }) as never])).toEqual([refused(401, 'Unauthorized')]);
    expect(await run([() => ({ status: 401, message: 7 }) as never])).toEqual([
      refused(401, 'Unauthorized'),
    ]);
    expect(await run([() => ({ status: 401, identity: 'ann' }) as never])).toEqual([
      refused(401, 'Unauthorized'),
    ]);
    expect(await run([() => ({ identity: 7 }) as never])).toEqual([refused(401, 'Unauthorized')]);
  });

  it('the first refusal stops the run', async () => {
    const after = jest.fn(() => true);
    expect(await run([() => false, after])).toEqual([refused(401, 'Unauthorized')]);
    expect(after).not.toHaveBeenCalled();
  });

  it('a handler that throws or rejects refuses with 401 and is logged', async () => {
    const log = logger();
    expect(
      await run(
        [
          () => {
            throw new Error('x');
          },
        ],
        log,
      ),
    ).toEqual([refused(401, 'Authentication failed')]);
    expect(await run([() => Promise.reject(new Error('y'))], log)).toEqual([
      refused(401, 'Authentication failed'),
    ]);
    expect(log.exception).toHaveBeenCalledTimes(2);
    expect(log.exception.mock.calls[0]?.[1]).toEqual({
      code: 'PKG_ERR_CORE_HANDLER_FAILED',
      phase: 'auth',
    });
  });

  it('synchronous handlers decide synchronously; asynchronous ones in order', async () => {
    const outcomes: AuthOutcome[] = [];
    runAuthHandlers([() => ({ identity: 'a' })], context, logger(), (o) => outcomes.push(o));
    expect(outcomes).toEqual([{ accepted: true, identity: 'a' }]);
    const order: number[] = [];
    expect(
      await run([
        async () => {
          order.push(1);
          return { identity: 'x' };
        },
        () => {
          order.push(2);
          return Promise.resolve({ status: 403 as const, message: 'm' });
        },
      ]),
    ).toEqual([refused(403, 'm')]);
    expect(order).toEqual([1, 2]);
  });
});

describe('credentials that expire', () => {
  it('accepts until expiresAt or ttl; the earliest expiry of all handlers wins', async () => {
    const now = Date.now();
    const [a] = await run([() => ({ identity: 'ann', expiresAt: now + 60_000 })]);
    expect(a).toEqual({ accepted: true, identity: 'ann', expiresAt: now + 60_000 });
    const [b] = await run([
      () => ({ ttl: 5000 }),
      () => ({ identity: 'bo', expiresAt: now + 60_000 }),
    ]);
    expect(b).toMatchObject({ accepted: true, identity: 'bo' });
    expect((b as { expiresAt: number }).expiresAt).toBeGreaterThanOrEqual(now + 5000);
    expect((b as { expiresAt: number }).expiresAt).toBeLessThan(now + 60_000);
    const [c] = await run([() => ({ identity: 'cy' })]);
    expect(c).toEqual({ accepted: true, identity: 'cy', expiresAt: undefined });
  });

  it('refuses an expiry that is not a time to come, and says why in the log', async () => {
    for (const bad of [
      { expiresAt: Date.now() - 1 },
      { expiresAt: Number.NaN },
      { expiresAt: '2030' },
      { ttl: 0 },
      { ttl: -5 },
      { ttl: 2 ** 31 },
      { identity: 'x', ttl: Number.POSITIVE_INFINITY },
    ]) {
      const log = logger();
      const outcomes: AuthOutcome[] = [];
      runAuthHandlers([() => bad as never], context, log, (o) => outcomes.push(o));
      expect(outcomes).toEqual([refused(401, 'Authentication failed')]);
      expect(log.warning).toHaveBeenCalledTimes(1);
    }
  });
});

describe('authContext', () => {
  it('is frozen and carries the client, credentials and the named session', () => {
    expect(context).toEqual({
      clientId: 'c',
      auth: 'token',
      data: { a: 1 },
      ip: '1.2.3.4',
      resume: undefined,
      refresh: false,
      identity: undefined,
    });
    expect(Object.isFrozen(context)).toBe(true);
    const refreshing = authContext(
      { id: 'c', ip: '', data: {} } as unknown as WsClient,
      't2',
      undefined,
      {
        identity: 'ann',
      },
    );
    expect(refreshing).toMatchObject({ auth: 't2', refresh: true, identity: 'ann' });
    const withResume = authContext(
      { id: 'c', ip: '', data: {} } as unknown as WsClient,
      undefined,
      { clientId: 'old', identity: 'ann', extra: 1 } as never,
    );
    expect(withResume.resume).toEqual({ clientId: 'old', identity: 'ann' });
    expect(Object.isFrozen(withResume.resume)).toBe(true);
  });
});
