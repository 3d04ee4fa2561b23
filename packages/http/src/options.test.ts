import { describe, expect, it } from '@jest/globals';
import type { LoggerInterface } from '@pkg/logger';
import { CorsConfig } from './cors';
import { httpHandlerDefaults, resolveHttpHandlerOptions } from './options';
import { Response } from './response';

const silent: LoggerInterface = {
  emergency() {},
  alert() {},
  critical() {},
  error() {},
  warning() {},
  notice() {},
  info() {},
  debug() {},
  log() {},
  exception() {},
};

describe('resolveHttpHandlerOptions', () => {
  it('fills in the defaults', () => {
    const resolved = resolveHttpHandlerOptions();
    expect(httpHandlerDefaults).toEqual({
      maxBodySize: 1048576,
      debug: false,
      trustProxy: false,
      prototypeKeys: 'error',
    });
    expect(resolved.maxBodySize).toBe(1048576);
    expect(resolved.debug).toBe(false);
    expect(resolved.dispatch).toBeUndefined();
    expect(resolved.cors.getAllowedOrigins()).toEqual(['*']);
    expect(resolved.trust('127.0.0.1')).toBe(false);
    expect(typeof resolved.logger.exception).toBe('function');
  });

  it('takes every option', () => {
    const cors = new CorsConfig({ allowed_origins: ['https://a.example'] });
    const dispatch = (): Response => new Response();
    const resolved = resolveHttpHandlerOptions({
      cors,
      trustProxy: ['10.0.0.0/8'],
      maxBodySize: 0,
      logger: silent,
      debug: true,
      dispatch,
    });
    expect(resolved.cors).toBe(cors);
    expect(resolved.trust('10.1.1.1')).toBe(true);
    expect(resolved.maxBodySize).toBe(0);
    expect(resolved.logger).toBe(silent);
    expect(resolved.debug).toBe(true);
    expect(resolved.dispatch).toBe(dispatch);
  });

  it('builds a CorsConfig from plain options and accepts a trust predicate', () => {
    const predicate = (address: string): boolean => address === '192.0.2.1';
    const resolved = resolveHttpHandlerOptions({
      cors: { allowed_origins: ['https://b.example'] },
      trustProxy: predicate,
    });
    expect(resolved.cors.getAllowedOrigins()).toEqual(['https://b.example']);
    expect(resolved.trust).toBe(predicate);
  });

  it.each([
    [[], 'must be an object'],
    [{ maxBodySize: -1 }, '"maxBodySize" must be a whole number'],
    [{ maxBodySize: 1.5 }, '"maxBodySize"'],
    [{ maxBodySize: '1mb' }, '"maxBodySize"'],
    [{ debug: 1 }, '"debug" must be true or false'],
    [{ logger: {} }, '"logger" must implement LoggerInterface'],
    [{ logger: 5 }, '"logger"'],
    [{ dispatch: 'router' }, 'dispatch option must be a function'],
    [{ maxBody: 10 }, 'Unknown HttpHandler option "maxBody"'],
  ])('refuses %j, naming the problem', (options, message) => {
    expect(() => resolveHttpHandlerOptions(options as never)).toThrow(
      expect.objectContaining({
        name: 'TypeError',
        code: 'PKG_ERR_HTTP_INVALID_OPTION',
        message: expect.stringContaining(message),
      }),
    );
  });

  it('passes on the errors of CORS and trust-proxy settings', () => {
    expect(() => resolveHttpHandlerOptions({ cors: { allow_credentials: true } })).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_HTTP_CORS_CREDENTIALS_WILDCARD' }),
    );
    expect(() => resolveHttpHandlerOptions({ trustProxy: ['127.1'] })).toThrow(
      expect.objectContaining({ code: 'PKG_ERR_HTTP_INVALID_TRUST_PROXY' }),
    );
  });

  it("takes prototypeKeys 'error' or 'remove' and names the option otherwise", () => {
    expect(resolveHttpHandlerOptions({ prototypeKeys: 'remove' }).prototypeKeys).toBe('remove');
    expect(resolveHttpHandlerOptions().prototypeKeys).toBe('error');
    expect(() =>
      resolveHttpHandlerOptions({ prototypeKeys: 'drop' as unknown as 'remove' }),
    ).toThrow(
      expect.objectContaining({
        code: 'PKG_ERR_HTTP_INVALID_OPTION',
        message: expect.stringContaining('"prototypeKeys"'),
      }),
    );
  });

  it('names the trustProxy option when its setting is not a setting', () => {
    expect(() =>
      resolveHttpHandlerOptions({ trustProxy: { trustProxy: true } as unknown as boolean }),
    ).toThrow(
      expect.objectContaining({
        name: 'TypeError',
        code: 'PKG_ERR_HTTP_INVALID_TRUST_PROXY',
        message: expect.stringContaining('HttpHandler option "trustProxy"'),
      }),
    );
  });
});
