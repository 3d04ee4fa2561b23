import { createApp, type CreateAppOptions, type DemoApp } from './app';
import { ConfigError, loadConfig, type Env } from './config';

/**
 * How long a graceful shutdown may take before the process exits anyway, in ms: the
 * server's own `shutdown_timeout` (10 s, after which it cuts what is left) plus a margin.
 */
export const SHUTDOWN_TIMEOUT_MS = 15_000;

export type ShutdownSignal = 'SIGINT' | 'SIGTERM';

/** The process-facing side of the CLI, replaceable in tests. */
export interface CliIo {
  log(message: string): void;
  error(message: string): void;
  exit(code: number): void;
  onSignal(signal: ShutdownSignal, handler: () => void): void;
}

export const processIo: CliIo = {
  log: (message) => console.log(message),
  error: (message) => console.error(message),
  exit: (code) => process.exit(code),
  onSignal: (signal, handler) => {
    process.on(signal, handler);
  },
};

function describeListenError(error: unknown, host: string, port: number): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'EADDRINUSE')
    return `Port ${port} on ${host} is already in use; set PORT to a free port.`;
  if (code === 'EACCES') return `Not allowed to listen on ${host}:${port}; use a port above 1023.`;
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return `HOST "${host}" is not an address of this machine; use 127.0.0.1 or 0.0.0.0.`;
  }
  return `Could not listen on ${host}:${port}: ${error instanceof Error ? error.message : String(error)}`;
}

/**
 * Starts the demo from environment variables: a bad variable prints every problem and exits
 * with 1; SIGINT / SIGTERM close the server gracefully and exit with 0 (a shutdown slower
 * than SHUTDOWN_TIMEOUT_MS exits with 1; repeated signals do not interrupt the close).
 * Resolves with the running app, or undefined when it could not start.
 */
export async function runCli(
  env: Env,
  io: CliIo = processIo,
  options: CreateAppOptions = {},
): Promise<DemoApp | undefined> {
  let app: DemoApp;
  try {
    app = createApp(loadConfig(env), options);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.error(`${error.message}\nSee apps/demo/README.md for the variables and their defaults.`);
    io.exit(1);
    return undefined;
  }

  let url: string;
  try {
    url = await app.listen();
  } catch (error) {
    io.error(describeListenError(error, app.config.host, app.config.port));
    io.exit(1);
    return undefined;
  }
  io.log(`Demo listening on ${url}/ (health check: ${url}${app.config.healthCheckPath})`);

  let stopping = false;
  const shutdown = (signal: ShutdownSignal): void => {
    // `npm run demo` passes Ctrl+C on through npm, sh and entry.mjs, so the same keypress
    // can arrive more than once; a repeated signal must not cut the graceful close short.
    if (stopping) {
      io.log(`${signal} received again; still closing (at most ${SHUTDOWN_TIMEOUT_MS} ms).`);
      return;
    }
    stopping = true;
    io.log(`${signal} received; closing connections...`);
    const timer = setTimeout(() => {
      io.error(`Shutdown took longer than ${SHUTDOWN_TIMEOUT_MS} ms; exiting.`);
      io.exit(1);
    }, SHUTDOWN_TIMEOUT_MS);
    timer.unref();
    app.close().then(
      () => {
        clearTimeout(timer);
        io.log('Demo stopped.');
        io.exit(0);
      },
      (error: unknown) => {
        clearTimeout(timer);
        io.error(`Shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
        io.exit(1);
      },
    );
  };
  io.onSignal('SIGINT', () => shutdown('SIGINT'));
  io.onSignal('SIGTERM', () => shutdown('SIGTERM'));
  return app;
}
