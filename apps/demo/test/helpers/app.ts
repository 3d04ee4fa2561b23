import { afterEach } from '@jest/globals';
import { NullLogger } from '@pkg/core';
import { startDemo, type CreateAppOptions, type DemoApp } from '../../src/app';
import type { DemoConfig } from '../../src/config';
import { TestClient, type Envelope } from './ws-client';

export interface RunningDemo {
  app: DemoApp;
  /** e.g. http://127.0.0.1:41234 */
  http: string;
  /** e.g. ws://127.0.0.1:41234 */
  ws: string;
  /** Opens a WebSocket (closed by stop()). */
  connect(path?: string, headers?: Record<string, string>): Promise<TestClient>;
  /** Opens a WebSocket and takes its welcome (closed by stop()). */
  join(path?: string, headers?: Record<string, string>): Promise<[TestClient, Envelope]>;
  stop(): Promise<void>;
}

/** Starts the demo on 127.0.0.1, a free port (unless `config.port`), with a silent logger. */
export async function startTestDemo(
  config: Partial<DemoConfig> = {},
  options: Omit<CreateAppOptions, 'logger'> = {},
): Promise<RunningDemo> {
  const app = await startDemo(
    { host: '127.0.0.1', port: 0, ...config },
    { ...options, logger: new NullLogger() },
  );
  const http = app.url()!;
  const ws = http.replace(/^http/, 'ws');
  const clients: TestClient[] = [];
  const track = async (promise: Promise<TestClient>): Promise<TestClient> => {
    const client = await promise;
    clients.push(client);
    return client;
  };
  return {
    app,
    http,
    ws,
    connect: (path = '/', headers = {}) => track(TestClient.connect(ws + path, headers)),
    join: async (path = '/', headers = {}) => {
      const client = await track(TestClient.connect(ws + path, headers));
      const welcome = await client.next();
      if (welcome.event !== 'welcome') throw new Error(`expected welcome, got ${welcome.event}`);
      return [client, welcome];
    },
    async stop() {
      await Promise.all(clients.map((c) => c.close()));
      await app.close();
    },
  };
}

/**
 * For a test file: returns `start(config)`, which starts a demo on a free port, and stops
 * whatever it started after each test.
 */
export function useDemo(): (
  config?: Partial<DemoConfig>,
  options?: Omit<CreateAppOptions, 'logger'>,
) => Promise<RunningDemo> {
  let demo: RunningDemo | undefined;
  afterEach(async () => {
    await demo?.stop();
    demo = undefined;
  });
  return async (config = {}, options = {}) => {
    demo = await startTestDemo(config, options);
    return demo;
  };
}
