/**
 * Runs the README's example as written: the first ```js block under "## Example" is
 * compiled from ESM to CommonJS and run here with `@pkg/ws-protocol` resolved to the
 * sources, PORT=0, and a `process` whose SIGTERM handler the test triggers at the end.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { WebSocket } from 'ws';
import { cleanup, closed, nextMessage, refusedClient } from './helpers';

function exampleSource(): string {
  const readme = readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Example'));
  const match = /```js\n([^]*?)```/.exec(section);
  if (!match) throw new Error('README.md has no ```js block under "## Example"');
  return match[1]!;
}

/** The header the README's client sends. */
const auth = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });

interface Running {
  port: number;
  logs: string[];
  sigterm: () => Promise<void>;
}

async function runExample(): Promise<Running> {
  const { outputText } = ts.transpileModule(exampleSource(), {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
  });
  const logs: string[] = [];
  let listening!: (line: string) => void;
  const firstLine = new Promise<string>((resolve) => {
    listening = resolve;
  });
  const fakeConsole = {
    log: (...args: unknown[]) => {
      const line = args.map(String).join(' ');
      logs.push(line);
      if (line.startsWith('Listening on')) listening(line);
    },
  };
  const signals = new Map<string, () => Promise<void>>();
  const fakeProcess = {
    env: { PORT: '0' },
    once: (signal: string, fn: () => Promise<void>) => signals.set(signal, fn),
  };
  const fakeRequire = (id: string): unknown =>
    id === '@pkg/ws-protocol' ? require('../src/index') : require(id);
  const moduleObject = { exports: {} };
  // Running the README's code as written is the point of this test.
  new Function('require', 'module', 'exports', 'process', 'console', outputText)(
    fakeRequire,
    moduleObject,
    moduleObject.exports,
    fakeProcess,
    fakeConsole,
  );
  const line = await firstLine;
  const port = Number(/127\.0\.0\.1:(\d+)\//.exec(line)?.[1]);
  const sigterm = signals.get('SIGTERM');
  if (!sigterm) throw new Error('the example registers no SIGTERM handler');
  return { port, logs, sigterm };
}

describe('README example', () => {
  let running: Running;
  let stopped = false;

  beforeAll(async () => {
    running = await runExample();
  });
  afterAll(async () => {
    if (!stopped) await running.sigterm();
    await cleanup();
  });

  it('listens and prints its address', () => {
    expect(running.port).toBeGreaterThan(0);
    expect(running.logs[0]).toBe(
      `Listening on ws://127.0.0.1:${running.port}/ (Authorization: Bearer let-me-in)`,
    );
  });

  it('refuses a wrong key, a key in the URL (?key=) with 401 and a foreign origin with 403', async () => {
    const base = `ws://127.0.0.1:${running.port}`;
    const refused = {
      status: 401,
      body: '{"error":"Unauthorized","code":"PKG_ERR_WS_HANDSHAKE_REFUSED","message":"Invalid key"}',
    };
    expect(await refusedClient(`${base}/`, { headers: auth('nope') })).toMatchObject(refused);
    // Credentials in the URL are not read: the example takes them from the header only.
    expect(await refusedClient(`${base}/?key=let-me-in`)).toMatchObject(refused);
    expect(
      (
        await refusedClient(`${base}/`, {
          origin: 'https://evil.example',
          headers: auth('let-me-in'),
        })
      ).status,
    ).toBe(403);
  });

  it('welcomes, broadcasts chat messages, answers unknown events, and shuts down on SIGTERM', async () => {
    const url = `ws://127.0.0.1:${running.port}/`;
    // The welcome follows the 101 at once: listen before the connection opens.
    const alice = new WebSocket(url, {
      origin: 'http://localhost:8080',
      headers: auth('let-me-in'),
    });
    const welcome = (await nextMessage(alice)) as {
      event: string;
      data: { id: string; user: string };
    };
    expect(welcome.event).toBe('welcome');
    expect(welcome.data.user).toBe(`guest-${welcome.data.id}`);

    const bob = new WebSocket(url, { headers: auth('let-me-in') });
    await nextMessage(bob);

    const toAlice = nextMessage(alice);
    const toBob = nextMessage(bob);
    alice.send(JSON.stringify({ event: 'chat.message', data: { text: 'hi' } }));
    const expected = { event: 'chat.message', data: { from: welcome.data.user, text: 'hi' } };
    expect(await toAlice).toEqual(expected);
    expect(await toBob).toEqual(expected);

    const reply = nextMessage(alice);
    alice.send(JSON.stringify({ event: 'dance', data: {} }));
    expect(await reply).toEqual({
      event: 'error',
      data: { code: 'unknown_event', message: 'No handler for "dance".' },
    });

    const aliceClosed = closed(alice);
    const bobClosed = closed(bob);
    stopped = true;
    await running.sigterm();
    expect(await aliceClosed).toEqual({ code: 1001, reason: 'Server shutting down' });
    expect((await bobClosed).code).toBe(1001);
    expect(running.logs.filter((l) => / left \(1001\)$/.test(l))).toHaveLength(2);
  });
});
