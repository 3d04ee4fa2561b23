// The README's walk from install to a running controller, run as written: the `server.ts`
// block is compiled by TypeScript (standard decorators) and started, then spoken to the way
// the README does (curl, a `ws` client), with PORT=0 and the default console logger
// silenced.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import ts from 'typescript';
import * as core from '../src/index';
import { TestClient, cleanup } from './helpers';

const readme = readFileSync(path.resolve(__dirname, '..', 'README.md'), 'utf8');

/** The TypeScript block that follows the "`server.ts`:" line. */
function serverExample(): string {
  // Markers for the examples harness (`<!-- example: ... -->`) may sit between the two.
  const match = /^`server\.ts`:\s*(?:<!--[^>]*-->\s*)*```ts\n([\s\S]*?)```/m.exec(readme);
  if (match?.[1] === undefined) throw new Error('README.md has no `server.ts` example block');
  return match[1];
}

const started: core.Server[] = [];

/**
 * Compiles the example to CommonJS with its statements after the imports inside an async
 * function (CommonJS has no top-level await), with `@pkg/core` being this package's source
 * and its Server recorded so the test can close it. Resolves with the URL it logs.
 */
async function runExample(code: string): Promise<{ url: string; server: core.Server }> {
  expect(code).toContain('Number(process.env.PORT ?? 6001)');
  const importEnd = code.indexOf("from '@pkg/core';") + "from '@pkg/core';".length;
  const source = `${code.slice(0, importEnd)}\nexport async function main() {\n${code.slice(
    importEnd,
  )}\n}\n`;
  const js = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
    reportDiagnostics: true,
  });
  expect(js.diagnostics ?? []).toEqual([]);

  class RecordedServer extends core.Server {
    constructor(...args: ConstructorParameters<typeof core.Server>) {
      const [config, port, debug, cors] = args;
      // Silence the default console logger; everything else as the example passed it.
      super(config, port, debug, cors, args[4] ?? new core.NullLogger());
      started.push(this);
    }
  }
  const modules: Record<string, unknown> = { '@pkg/core': { ...core, Server: RecordedServer } };
  const fakeRequire = (id: string): unknown => {
    if (id in modules) return modules[id];
    throw new Error(`the example requires ${id}, which the test does not provide`);
  };
  const logged: string[] = [];
  const fakeConsole = { ...console, log: (line: string) => logged.push(line) };
  const fakeProcess = { once: () => undefined, env: { PORT: '0', ADMIN_TOKEN: 'test-admin' } };
  const module: { exports: { main?: () => Promise<void> } } = { exports: {} };
  new Function('require', 'module', 'exports', 'process', 'console', js.outputText)(
    fakeRequire,
    module,
    module.exports,
    fakeProcess,
    fakeConsole,
  );
  await module.exports.main!();
  const url = logged.map((line) => /listening on (http:\/\/\S+)/.exec(line)?.[1]).find(Boolean);
  if (url === undefined) throw new Error(`the example logged no URL: ${JSON.stringify(logged)}`);
  return { url, server: started.at(-1)! };
}

afterAll(async () => {
  await cleanup();
  await Promise.all(started.map((server) => server.close()));
});

describe('README: from install to a running controller', () => {
  it('runs the server.ts example and answers as the README says', async () => {
    const { url, server } = await runExample(serverExample());
    expect(server.state).toBe('running');

    expect(await (await fetch(`${url}/api/status`)).json()).toEqual({ status: 'ok', clients: 0 });
    const health = (await (await fetch(`${url}/health`)).json()) as Record<string, unknown>;
    expect(health['status']).toBe('healthy');

    const wsUrl = url.replace(/^http/, 'ws');
    const a = await TestClient.connect(`${wsUrl}/`);
    const welcome = await a.next('welcome');
    expect(welcome.data).toEqual({ clientId: expect.any(String), online: 1 });
    a.send('chat.message', { text: 'hi' });
    expect((await a.next('chat.message')).data).toEqual({
      from: welcome.data['clientId'],
      text: 'hi',
    });

    // POST /api/broadcast is for the admin token, sent in a header as the curl line does.
    const post = (body: string, headers: Record<string, string> = {}): Promise<Response> =>
      fetch(`${url}/api/broadcast`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
    const admin = { authorization: 'Bearer test-admin' };
    const hello = JSON.stringify({ message: 'hello' });
    expect((await post(hello)).status).toBe(401);
    expect((await post(hello, { authorization: 'Bearer wrong' })).status).toBe(401);
    const posted = await post(hello, admin);
    expect(await posted.json()).toEqual({ success: true });
    expect((await a.next('api.message')).data).toEqual({ message: 'hello' });
    expect((await post('{}', admin)).status).toBe(400);

    a.send('room.join', { room: 'lobby' });
    expect((await a.next('room.joined')).data).toEqual({ clientId: welcome.data['clientId'] });
  });
});
