import { describe, expect, it } from '@jest/globals';
import { httpHandlerDefaults } from '@pkg/http';
import { NullLogger } from '@pkg/logger';
import { wsHandlerDefaults } from '@pkg/ws-protocol';
import { Server } from '../server';
import { SERVER_CONFIG_DEFAULTS, ServerConfig, type ServerConfigOptions } from './server-config';

describe('ServerConfig', () => {
  it('applies the documented defaults', () => {
    const config = new ServerConfig();
    expect(config.getHost()).toBe('0.0.0.0');
    expect(config.getPort()).toBe(6001);
    expect(config.isDebug()).toBe(false);
    expect(config.getTrustProxy()).toBe(false);
    expect(config.getHealthCheckPath()).toBeNull();
    expect(config.getWebSocketAllowedOrigins()).toEqual(['*']);
    expect(config.getMaxBodySize()).toBe(1024 * 1024);
    expect(config.getMaxMessageSize()).toBe(1024 * 1024);
    expect(config.getMaxBufferedAmount()).toBe(4 * 1024 * 1024);
    expect(config.getHeartbeatInterval()).toBe(25_000);
    expect(config.getHeartbeatTimeout()).toBe(20_000);
    expect(config.getHandshakeTimeout()).toBe(10_000);
    expect(config.getHeadersTimeout()).toBe(30_000);
    expect(config.getRequestTimeout()).toBe(60_000);
    expect(config.getKeepAliveTimeout()).toBe(5_000);
    expect(config.getMaxConnections()).toBe(10_000);
    expect(config.getShutdownDelay()).toBe(0);
    expect(config.getShutdownTimeout()).toBe(10_000);
    expect(config.getUnknownEventPolicy()).toBe('error');
    expect(config.getPerMessageDeflate()).toBe(false);
    expect(config.getTls()).toBeNull();
    expect(config.toJSON()).toEqual({ ...SERVER_CONFIG_DEFAULTS });
  });

  it('has the protocol version 1 keys with their documented defaults, checked', () => {
    const config = new ServerConfig();
    expect(config.get('recovery_window')).toBe(120_000);
    expect(config.get('recovery_buffer')).toBe(1000);
    expect(config.get('auth_timeout')).toBe(10_000);
    expect(config.get('hello_wait')).toBe(1000);
    expect(config.get('max_pending_requests')).toBe(128);
    expect(config.get('max_pending_server_requests')).toBe(64);
    expect(config.get('ack_timeout')).toBe(10_000);
    expect(new ServerConfig({ recovery_window: 0, hello_wait: 0 }).get('recovery_window')).toBe(0);
    for (const [key, value] of [
      ['recovery_window', -1],
      ['recovery_window', 2 ** 31],
      ['recovery_buffer', 0],
      ['auth_timeout', 0],
      ['hello_wait', 1.5],
      ['max_pending_requests', 0],
      ['max_pending_server_requests', '64'],
      ['ack_timeout', 0],
    ] as const) {
      expect(() => new ServerConfig({ [key]: value } as ServerConfigOptions)).toThrow(
        expect.objectContaining({
          code: 'PKG_ERR_CORE_INVALID_CONFIG',
          message: expect.stringContaining(`"${key}"`),
        }),
      );
    }
  });

  it('has the history keys with their documented defaults, each pattern checked by its index', () => {
    const config = new ServerConfig();
    expect(config.get('history')).toEqual([]);
    expect(config.get('history_max_replay')).toBe(300);
    expect(config.get('history_max_replay_bytes')).toBe(1024 * 1024);
    const pattern = { match: 'chat:*', namespace: '/', size: 100, ttl: 300_000 };
    expect(new ServerConfig({ history: [pattern] }).getHistory()).toEqual([pattern]);
    const cases: Array<[unknown, RegExp]> = [
      [{ match: 'x' }, /an array of/],
      [[{ match: '', size: 1, ttl: 1 }], /history\[0\]\.match/],
      [[pattern, { match: 'a', size: 0, ttl: 1 }], /history\[1\]\.size/],
      [[{ match: 'a', size: 1, ttl: 2 ** 31 }], /history\[0\]\.ttl/],
      [[{ match: 'a', size: 1, ttl: 1, namespace: 'chat' }], /history\[0\]\.namespace/],
      [[{ match: 'a', size: 1, ttl: 1, max: 3 }], /unknown key "max"/],
      [['chat:*'], /history\[0\] is not an object/],
    ];
    for (const [history, message] of cases) {
      expect(() => new ServerConfig({ history } as ServerConfigOptions)).toThrow(
        expect.objectContaining({
          code: 'PKG_ERR_CORE_INVALID_CONFIG',
          message: expect.stringMatching(message),
        }),
      );
    }
    for (const key of ['history_max_replay', 'history_max_replay_bytes'] as const) {
      expect(() => new ServerConfig({ [key]: 0 })).toThrow(`"${key}" must be a positive`);
    }
  });

  it('takes the spec keys', () => {
    const config = new ServerConfig({
      host: '127.0.0.1',
      port: 0,
      debug: true,
      cors: { allowed_origins: ['https://app.example'], allowed_methods: ['GET'] },
      trust_proxy: ['10.0.0.0/8'],
      health_check_path: '/health',
    });
    expect(config.getHost()).toBe('127.0.0.1');
    expect(config.getPort()).toBe(0);
    expect(config.isDebug()).toBe(true);
    expect(config.getCors()).toEqual({
      allowed_origins: ['https://app.example'],
      allowed_methods: ['GET'],
    });
    expect(config.getTrustProxy()).toEqual(['10.0.0.0/8']);
    expect(config.getHealthCheckPath()).toBe('/health');
  });

  it('uses the CORS origins for WebSocket handshakes unless set on their own', () => {
    const cors = { allowed_origins: ['https://a.example'] };
    expect(new ServerConfig({ cors }).getWebSocketAllowedOrigins()).toEqual(['https://a.example']);
    expect(
      new ServerConfig({
        cors,
        ws_allowed_origins: ['https://b.example'],
      }).getWebSocketAllowedOrigins(),
    ).toEqual(['https://b.example']);
  });

  it('names an unknown key and lists the known ones', () => {
    expect(() => new ServerConfig({ prot: 1 } as unknown as ServerConfigOptions)).toThrow(
      /unknown key "prot"\. Known keys: host, port/,
    );
    expect(
      () => new ServerConfig({ cors: { origins: [] } } as unknown as ServerConfigOptions),
    ).toThrow(/"cors" is not valid: Unknown CORS option "origins"/);
  });

  it.each([
    ['host', 42, /"host" must be a non-empty string, got number 42/],
    ['port', '6001', /"port" must be an integer from 0 to 65535, got the string "6001"/],
    ['port', 70000, /"port" must be an integer from 0 to 65535/],
    ['debug', 'yes', /"debug" must be true or false/],
    ['cors', [], /"cors" must be an object/],
    ['trust_proxy', '10.0.0.1', /"trust_proxy" must be true, false, or an array/],
    ['health_check_path', 'health', /"health_check_path" must be a path starting with "\/"/],
    ['max_body_size', 0, /"max_body_size" must be a positive number of bytes/],
    ['heartbeat_interval', -1, /"heartbeat_interval" must be a number of milliseconds/],
    ['unknown_event', 'drop', /"unknown_event" must be "error" or "ignore"/],
    ['tls', 'cert.pem', /"tls" must be an object with key and cert/],
  ])('refuses %s = %p with a TypeError naming the key', (key, value, message) => {
    const build = () => new ServerConfig({ [key]: value } as unknown as ServerConfigOptions);
    expect(build).toThrow(TypeError);
    expect(build).toThrow(message);
    try {
      build();
    } catch (err) {
      expect((err as { code?: string }).code).toBe('PKG_ERR_CORE_INVALID_CONFIG');
    }
  });

  it('checks CORS, trust-proxy and TLS values in depth, naming the key', () => {
    expect(() => new ServerConfig({ cors: { max_age: -5 } })).toThrow(
      /"cors" is not valid: .*max_age/,
    );
    expect(
      () =>
        new ServerConfig({
          cors: { allowed_origins: [1] } as unknown as ServerConfigOptions['cors'],
        }),
    ).toThrow(/"cors" is not valid: .*allowed_origins/);
    expect(() => new ServerConfig({ trust_proxy: ['10.0.0.0/8', 'not-an-ip'] })).toThrow(
      /"trust_proxy" is not valid: .*not-an-ip/,
    );
    expect(
      () => new ServerConfig({ tls: { key: 'k' } as unknown as ServerConfigOptions['tls'] }),
    ).toThrow(/"tls\.cert" must be a PEM string or Buffer/);
    try {
      new ServerConfig({ trust_proxy: ['nope'] });
    } catch (err) {
      expect(err).toBeInstanceOf(TypeError);
      expect((err as { code?: string }).code).toBe('PKG_ERR_CORE_INVALID_CONFIG');
    }
  });

  it('refuses a headers timeout longer than the request timeout', () => {
    expect(() => new ServerConfig({ headers_timeout: 10_000, request_timeout: 5_000 })).toThrow(
      /"headers_timeout" \(10000 ms\) must not be longer than "request_timeout"/,
    );
    expect(
      new ServerConfig({ headers_timeout: 10_000, request_timeout: 0 }).getRequestTimeout(),
    ).toBe(0);
  });

  it('has setters with the same checks, and keeps the old value on failure', () => {
    const config = new ServerConfig();
    config.setTrustProxy(true).setHealthCheckPath('/healthz').setPort(8080);
    expect(config.getTrustProxy()).toBe(true);
    expect(config.getHealthCheckPath()).toBe('/healthz');
    expect(config.getPort()).toBe(8080);
    expect(() => config.setTrustProxy('yes' as unknown as boolean)).toThrow(/"trust_proxy"/);
    expect(config.getTrustProxy()).toBe(true);
    expect(() => config.set('headers_timeout', 120_000)).toThrow(/request_timeout/);
    expect(config.getHeadersTimeout()).toBe(30_000);
    config.setHealthCheckPath(null);
    expect(config.getHealthCheckPath()).toBeNull();
  });

  it('copies what it is given', () => {
    const origins = ['https://a.example'];
    const config = new ServerConfig({ cors: { allowed_origins: origins } });
    origins.push('https://evil.example');
    expect(config.getCors().allowed_origins).toEqual(['https://a.example']);
    config.getCors().allowed_origins!.push('x');
    expect(config.getWebSocketAllowedOrigins()).toEqual(['https://a.example']);
  });

  it('refuses changes once a server has taken it', () => {
    const config = new ServerConfig();
    config.lock('Server');
    expect(config.isLocked()).toBe(true);
    expect(() => config.setPort(1)).toThrow(/a Server already uses this configuration/);
  });

  it('keeps TLS key material out of toJSON', () => {
    const config = new ServerConfig({ tls: { key: 'KEY', cert: 'CERT' } });
    expect(config.getTls()).toEqual({ key: 'KEY', cert: 'CERT' });
    expect(config.toJSON()['tls']).toBe('[configured]');
  });

  it('takes the limits of the WebSocket and HTTP layers from their own defaults', () => {
    expect(SERVER_CONFIG_DEFAULTS.max_body_size).toBe(httpHandlerDefaults.maxBodySize);
    expect(SERVER_CONFIG_DEFAULTS.trust_proxy).toBe(httpHandlerDefaults.trustProxy);
    expect(SERVER_CONFIG_DEFAULTS.max_message_size).toBe(wsHandlerDefaults.maxPayload);
    expect(SERVER_CONFIG_DEFAULTS.max_buffered_amount).toBe(wsHandlerDefaults.maxBufferedAmount);
    expect(SERVER_CONFIG_DEFAULTS.heartbeat_interval).toBe(wsHandlerDefaults.heartbeatInterval);
    expect(SERVER_CONFIG_DEFAULTS.heartbeat_timeout).toBe(wsHandlerDefaults.heartbeatTimeout);
    expect(SERVER_CONFIG_DEFAULTS.handshake_timeout).toBe(wsHandlerDefaults.handshakeTimeout);
    expect(SERVER_CONFIG_DEFAULTS.ws_close_timeout).toBe(wsHandlerDefaults.closeTimeout);
    expect(SERVER_CONFIG_DEFAULTS.ws_binary_messages).toBe(wsHandlerDefaults.binaryMessages);
    expect(SERVER_CONFIG_DEFAULTS.allow_missing_origin).toBe(wsHandlerDefaults.allowMissingOrigin);
    expect(SERVER_CONFIG_DEFAULTS.per_message_deflate).toBe(wsHandlerDefaults.perMessageDeflate);
  });

  it('sets the WebSocket close timeout, binary-message policy and deflate threshold', () => {
    const config = new ServerConfig({
      ws_close_timeout: 2_000,
      ws_binary_messages: 'close',
      per_message_deflate: { threshold: 512 },
    });
    expect(config.getWebSocketCloseTimeout()).toBe(2_000);
    expect(config.getWebSocketBinaryMessages()).toBe('close');
    expect(config.getPerMessageDeflate()).toEqual({ threshold: 512 });
    expect(() => new ServerConfig({ ws_close_timeout: 0 })).toThrow(/"ws_close_timeout" must be/);
    expect(() => new ServerConfig({ ws_binary_messages: 'drop' as unknown as 'close' })).toThrow(
      /"ws_binary_messages" must be "error" or "close"/,
    );
    expect(
      () => new ServerConfig({ per_message_deflate: { level: 9 } as unknown as { threshold: 1 } }),
    ).toThrow(/"per_message_deflate" must be/);
    // The server hands them to the WebSocket layer, which accepts them.
    expect(
      () => new Server(config, undefined, undefined, undefined, new NullLogger()),
    ).not.toThrow();
  });

  it('compiles trust_proxy once; the server hands that one predicate to HTTP', () => {
    const config = new ServerConfig({ trust_proxy: ['10.0.0.0/8', 'loopback'] });
    const trust = config.getTrustPredicate();
    expect(config.getTrustPredicate()).toBe(trust);
    expect([trust('10.1.2.3'), trust('127.0.0.1'), trust('192.0.2.1')]).toEqual([
      true,
      true,
      false,
    ]);
    const server = new Server(config, undefined, undefined, undefined, new NullLogger());
    expect(server.getHttpHandler().getTrustPredicate()).toBe(trust);

    const custom = (address: string): boolean => address === '192.0.2.7';
    expect(new ServerConfig({ trust_proxy: custom }).getTrustPredicate()).toBe(custom);
    expect(new ServerConfig().getTrustPredicate()('127.0.0.1')).toBe(false);
  });
});
