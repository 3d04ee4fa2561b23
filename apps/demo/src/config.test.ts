import { describe, expect, it } from '@jest/globals';
import { ConfigError, DEFAULT_CONFIG, loadConfig } from './config';

function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('uses the defaults when nothing is set', () => {
    expect(loadConfig({})).toEqual({
      host: '127.0.0.1',
      port: 6001,
      logLevel: 'info',
      trustProxy: false,
      corsOrigins: [],
      healthCheckPath: '/health',
      redisUrl: null,
      allowedHosts: ['localhost', '127.0.0.1', '[::1]'],
      maxConnectionsPerIp: 20,
      rateLimitScale: 1,
      metrics: false,
      restartSpread: 5000,
      otlpEndpoint: null,
    });
    expect(loadConfig({ PORT: '', HOST: '  ' })).toEqual(loadConfig({}));
    expect(DEFAULT_CONFIG.port).toBe(6001);
  });

  it('reads every variable', () => {
    expect(
      loadConfig({
        HOST: '0.0.0.0',
        PORT: '8080',
        LOG_LEVEL: 'DEBUG',
        TRUST_PROXY: '10.0.0.1, 192.168.0.0/16',
        CORS_ORIGINS: 'https://a.example, http://localhost:3000',
        HEALTH_CHECK_PATH: '/healthz',
        REDIS_URL: 'redis://10.0.0.5:6380',
        MAX_CONNECTIONS_PER_IP: '0',
        RATE_LIMIT_SCALE: '2.5',
        RESTART_SPREAD: '2500',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      }),
    ).toEqual({
      host: '0.0.0.0',
      port: 8080,
      logLevel: 'debug',
      trustProxy: ['10.0.0.1', '192.168.0.0/16'],
      corsOrigins: ['https://a.example', 'http://localhost:3000'],
      healthCheckPath: '/healthz',
      redisUrl: 'redis://10.0.0.5:6380',
      allowedHosts: null,
      maxConnectionsPerIp: 0,
      rateLimitScale: 2.5,
      metrics: false,
      restartSpread: 2500,
      otlpEndpoint: 'http://collector:4318',
    });
  });

  it('derives the allowed Host names from HOST and PUBLIC_URL, or reads ALLOWED_HOSTS', () => {
    expect(
      loadConfig({ HOST: '0.0.0.0', PUBLIC_URL: 'https://Chat.example.com/' }).allowedHosts,
    ).toEqual(['chat.example.com', 'localhost', '127.0.0.1', '[::1]']);
    expect(loadConfig({ HOST: '10.1.2.3' }).allowedHosts).toEqual(['10.1.2.3']);
    expect(loadConfig({ HOST: '0.0.0.0' }).allowedHosts).toBeNull();
    expect(loadConfig({ ALLOWED_HOSTS: 'a.example, .b.example,*' }).allowedHosts).toEqual([
      'a.example',
      '.b.example',
      '*',
    ]);
    expect(problemsOf({ ALLOWED_HOSTS: 'a b', PUBLIC_URL: 'nope' })).toHaveLength(1);
    expect(problemsOf({ PUBLIC_URL: 'nope' })[0]).toMatch(/PUBLIC_URL/);
  });

  it('allows the same origin only by default, any origin with CORS_ORIGINS=*', () => {
    expect(loadConfig({}).corsOrigins).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins).toEqual(['*']);
    expect(loadConfig({ CORS_ORIGINS: ' , ' }).corsOrigins).toEqual([]);
  });

  it('reads MAX_CONNECTIONS_PER_IP and RATE_LIMIT_SCALE for load tests', () => {
    expect(loadConfig({ MAX_CONNECTIONS_PER_IP: '5000' }).maxConnectionsPerIp).toBe(5000);
    expect(loadConfig({ RATE_LIMIT_SCALE: '100' }).rateLimitScale).toBe(100);
    expect(loadConfig({ RATE_LIMIT_SCALE: '0.5' }).rateLimitScale).toBe(0.5);
    expect(loadConfig({ RESTART_SPREAD: '0' }).restartSpread).toBe(0);
    expect(loadConfig({ RESTART_SPREAD: '2500' }).restartSpread).toBe(2500);
  });

  it('turns metrics on with METRICS=1 and refuses anything but a switch', () => {
    expect(loadConfig({ METRICS: '1' }).metrics).toBe(true);
    expect(loadConfig({ METRICS: 'off' }).metrics).toBe(false);
    expect(() => loadConfig({ METRICS: 'yes please' })).toThrow(/METRICS must be 1 or 0/);
  });

  it('reads TRUST_PROXY true / false and PORT 0', () => {
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: 'FALSE' }).trustProxy).toBe(false);
    expect(loadConfig({ PORT: '0' }).port).toBe(0);
  });

  it.each([
    [{ PORT: 'abc' }, /PORT must be a whole number from 0 to 65535 \(got "abc"\)/],
    [{ PORT: '65536' }, /PORT/],
    [{ PORT: '-1' }, /PORT/],
    [{ PORT: '80.5' }, /PORT/],
    [{ LOG_LEVEL: 'verbose' }, /LOG_LEVEL must be one of emergency, .*debug \(got "verbose"\)/],
    [{ TRUST_PROXY: '10.0.0.1,not-an-ip' }, /TRUST_PROXY .*"not-an-ip"/],
    [{ CORS_ORIGINS: 'https://a.example/' }, /CORS_ORIGINS .*"https:\/\/a\.example\/"/],
    [{ CORS_ORIGINS: 'example.com' }, /CORS_ORIGINS .*"example\.com"/],
    [{ HEALTH_CHECK_PATH: 'health' }, /HEALTH_CHECK_PATH must be a path that starts with "\/"/],
    [{ HOST: 'my host' }, /HOST/],
    [{ REDIS_URL: 'http://127.0.0.1:6379' }, /REDIS_URL must be a Redis URL/],
    [{ REDIS_URL: 'localhost:6379' }, /REDIS_URL/],
    [
      { MAX_CONNECTIONS_PER_IP: '-1' },
      /MAX_CONNECTIONS_PER_IP must be a whole number .*0 for no limit \(got "-1"\)/,
    ],
    [{ MAX_CONNECTIONS_PER_IP: '2.5' }, /MAX_CONNECTIONS_PER_IP/],
    [{ MAX_CONNECTIONS_PER_IP: 'many' }, /MAX_CONNECTIONS_PER_IP/],
    [{ RATE_LIMIT_SCALE: '0' }, /RATE_LIMIT_SCALE must be a number above 0 .*\(got "0"\)/],
    [{ RESTART_SPREAD: '-1' }, /RESTART_SPREAD must be a whole number of milliseconds/],
    [{ RESTART_SPREAD: '600001' }, /RESTART_SPREAD/],
    [{ RESTART_SPREAD: '1.5' }, /RESTART_SPREAD/],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, /OTEL_EXPORTER_OTLP_ENDPOINT must be/],
    [{ RATE_LIMIT_SCALE: '-2' }, /RATE_LIMIT_SCALE/],
    [{ RATE_LIMIT_SCALE: 'Infinity' }, /RATE_LIMIT_SCALE/],
    [{ RATE_LIMIT_SCALE: '1e3' }, /RATE_LIMIT_SCALE/],
    [{ RATE_LIMIT_SCALE: '2000000' }, /RATE_LIMIT_SCALE/],
  ])('rejects %j with a message that names the variable', (env, pattern) => {
    const problems = problemsOf(env);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(pattern);
  });

  it('reports every bad variable at once', () => {
    const problems = problemsOf({ PORT: 'x', LOG_LEVEL: 'loud', HEALTH_CHECK_PATH: 'h' });
    expect(problems).toHaveLength(3);
    try {
      loadConfig({ PORT: 'x', LOG_LEVEL: 'loud' });
    } catch (error) {
      expect((error as ConfigError).message).toMatch(
        /^Invalid configuration:\n {2}- PORT.*\n {2}- LOG_LEVEL/,
      );
      expect((error as ConfigError).code).toBe('DEMO_ERR_CONFIG');
    }
  });
});
