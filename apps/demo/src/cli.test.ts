import { afterEach, describe, expect, it } from '@jest/globals';
import { NullLogger } from '@pkg/core';
import { createServer, type Server as NetServer } from 'node:net';
import type { DemoApp } from './app';
import { runCli, type CliIo, type ShutdownSignal } from './cli';

class FakeIo implements CliIo {
  readonly out: string[] = [];
  readonly err: string[] = [];
  readonly exits: number[] = [];
  readonly handlers = new Map<ShutdownSignal, () => void>();
  private exited: Array<(code: number) => void> = [];

  log(message: string): void {
    this.out.push(message);
  }
  error(message: string): void {
    this.err.push(message);
  }
  exit(code: number): void {
    this.exits.push(code);
    for (const resolve of this.exited.splice(0)) resolve(code);
  }
  onSignal(signal: ShutdownSignal, handler: () => void): void {
    this.handlers.set(signal, handler);
  }
  nextExit(): Promise<number> {
    return new Promise((resolve) => this.exited.push(resolve));
  }
}

const quiet = { logger: new NullLogger() };
let app: DemoApp | undefined;
let blocker: NetServer | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
  await new Promise<void>((resolve) => (blocker ? blocker.close(() => resolve()) : resolve()));
  blocker = undefined;
});

describe('runCli', () => {
  it('exits with 1 and lists every problem for bad variables', async () => {
    const io = new FakeIo();
    expect(await runCli({ PORT: 'http', LOG_LEVEL: 'chatty' }, io, quiet)).toBeUndefined();
    expect(io.exits).toEqual([1]);
    expect(io.err.join('\n')).toMatch(/PORT must be a whole number.*\n.*LOG_LEVEL must be one of/);
    expect(io.err.join('\n')).toContain('README.md');
  });

  it('exits with 1 and says what to do when the port is taken', async () => {
    blocker = createServer();
    await new Promise<void>((resolve) => blocker!.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const io = new FakeIo();
    expect(await runCli({ HOST: '127.0.0.1', PORT: String(port) }, io, quiet)).toBeUndefined();
    expect(io.exits).toEqual([1]);
    expect(io.err[0]).toContain(`Port ${port} on 127.0.0.1 is already in use; set PORT`);
  });

  it.each(['SIGINT', 'SIGTERM'] as const)(
    'prints the URL, and on %s closes gracefully and exits with 0',
    async (signal) => {
      const io = new FakeIo();
      app = await runCli({ HOST: '127.0.0.1', PORT: '0' }, io, quiet);
      expect(app).toBeDefined();
      const url = app!.url()!;
      expect(io.out[0]).toBe(`Demo listening on ${url}/ (health check: ${url}/health)`);
      expect((await fetch(`${url}/health`)).status).toBe(200);

      const exited = io.nextExit();
      io.handlers.get(signal)!();
      expect(await exited).toBe(0);
      expect(io.out).toContain(`${signal} received; closing connections...`);
      await expect(fetch(`${url}/health`)).rejects.toThrow();
    },
  );

  it('keeps closing gracefully when the signal arrives twice', async () => {
    const io = new FakeIo();
    app = await runCli({ HOST: '127.0.0.1', PORT: '0' }, io, quiet);
    const exited = io.nextExit();
    io.handlers.get('SIGINT')!();
    io.handlers.get('SIGINT')!();
    expect(await exited).toBe(0);
    expect(io.exits).toEqual([0]);
    expect(io.out).toContain('SIGINT received again; still closing (at most 15000 ms).');
  });
});
