import { describe, expect, it } from '@jest/globals';
import { resolveWsHandlerOptions, wsHandlerDefaults } from './options';

describe('resolveWsHandlerOptions', () => {
  it('fills every default', () => {
    const o = resolveWsHandlerOptions();
    expect(o).toMatchObject({
      allowedOrigins: ['*'],
      allowMissingOrigin: true,
      maxPayload: 1048576,
      heartbeatInterval: 25000,
      heartbeatTimeout: 20000,
      maxBufferedAmount: 4194304,
      perMessageDeflate: false,
      binaryMessages: 'error',
      closeTimeout: 5000,
      handshakeTimeout: 10000,
      clientIp: undefined,
      generateId: undefined,
    });
    expect(typeof o.logger.info).toBe('function');
    expect(wsHandlerDefaults.maxPayload).toBe(1024 * 1024);
  });

  it('treats undefined values as "use the default"', () => {
    expect(resolveWsHandlerOptions({ maxPayload: undefined }).maxPayload).toBe(1048576);
  });

  it('takes given values', () => {
    const generateId = (): string => 'x';
    const o = resolveWsHandlerOptions({
      allowedOrigins: ['https://a.example'],
      allowMissingOrigin: false,
      maxPayload: 10,
      heartbeatInterval: 0,
      heartbeatTimeout: 5,
      maxBufferedAmount: Infinity,
      perMessageDeflate: { threshold: 0 },
      binaryMessages: 'close',
      closeTimeout: 1,
      handshakeTimeout: 0,
      generateId,
    });
    expect(o).toMatchObject({
      allowedOrigins: ['https://a.example'],
      allowMissingOrigin: false,
      maxPayload: 10,
      heartbeatInterval: 0,
      heartbeatTimeout: 5,
      maxBufferedAmount: Infinity,
      perMessageDeflate: { threshold: 0 },
      binaryMessages: 'close',
      closeTimeout: 1,
      handshakeTimeout: 0,
    });
    expect(o.generateId).toBe(generateId);
  });

  it('turns perMessageDeflate: true into the 1024-byte threshold', () => {
    expect(resolveWsHandlerOptions({ perMessageDeflate: true }).perMessageDeflate).toEqual({
      threshold: 1024,
    });
  });

  it('throws a TypeError naming an unknown key', () => {
    expect(() => resolveWsHandlerOptions({ maxPayLoad: 5 } as never)).toThrow(
      expect.objectContaining({ name: 'TypeError', code: 'PKG_ERR_WS_INVALID_OPTION' }),
    );
    expect(() => resolveWsHandlerOptions({ maxPayLoad: 5 } as never)).toThrow(
      /Unknown WebSocketHandler option "maxPayLoad"/,
    );
  });

  it('throws a TypeError for a value of the wrong type, naming the key', () => {
    const cases: [string, unknown][] = [
      ['allowedOrigins', '*'],
      ['allowMissingOrigin', 'yes'],
      ['maxPayload', '1mb'],
      ['perMessageDeflate', 'on'],
      ['perMessageDeflate', { level: 9 }],
      ['binaryMessages', 'ignore'],
      ['logger', console.log],
      ['clientIp', '127.0.0.1'],
      ['generateId', 7],
    ];
    for (const [key, value] of cases) {
      expect(() => resolveWsHandlerOptions({ [key]: value })).toThrow(
        expect.objectContaining({ name: 'TypeError', code: 'PKG_ERR_WS_INVALID_OPTION' }),
      );
      expect(() => resolveWsHandlerOptions({ [key]: value })).toThrow(`"${key}"`);
    }
  });

  it('throws a RangeError for a number out of range', () => {
    const cases: [string, number][] = [
      ['maxPayload', 0],
      ['maxPayload', 1.5],
      ['heartbeatInterval', -1],
      ['heartbeatTimeout', 0],
      ['heartbeatInterval', 2 ** 31],
      ['maxBufferedAmount', 0],
      ['closeTimeout', 0],
    ];
    for (const [key, value] of cases) {
      expect(() => resolveWsHandlerOptions({ [key]: value })).toThrow(
        expect.objectContaining({ name: 'RangeError', code: 'PKG_ERR_WS_INVALID_OPTION' }),
      );
    }
  });

  it('refuses options that are not an object', () => {
    expect(() => resolveWsHandlerOptions(null as never)).toThrow(TypeError);
    expect(() => resolveWsHandlerOptions([] as never)).toThrow(/must be an object/);
  });

  it("takes prototypeKeys 'error' (the default) or 'remove', nothing else", () => {
    expect(resolveWsHandlerOptions().prototypeKeys).toBe('error');
    expect(wsHandlerDefaults.prototypeKeys).toBe('error');
    expect(resolveWsHandlerOptions({ prototypeKeys: 'remove' }).prototypeKeys).toBe('remove');
    expect(() =>
      resolveWsHandlerOptions({ prototypeKeys: 'ignore' as unknown as 'remove' }),
    ).toThrow(/"prototypeKeys" must be 'error' or 'remove'/);
  });

  it('takes keepRequest as a boolean (default true)', () => {
    expect(resolveWsHandlerOptions().keepRequest).toBe(true);
    expect(resolveWsHandlerOptions({ keepRequest: false }).keepRequest).toBe(false);
    expect(() => resolveWsHandlerOptions({ keepRequest: 'no' as unknown as boolean })).toThrow(
      /"keepRequest" must be a boolean/,
    );
  });
});
