import { readFileSync } from 'node:fs';
import * as nodeHttp from 'node:http';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import ts from 'typescript';
import * as pkg from '../src/index';

const root = path.resolve(__dirname, '..');
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
const exampleFile = readFileSync(path.join(root, 'examples', 'plain-node-http.ts'), 'utf8');

/** The TypeScript block that follows the `<!-- example: plain-node-http -->` marker. */
function readmeExample(): string {
  const match = /<!-- example: plain-node-http -->\s*```ts\n([\s\S]*?)```/.exec(readme);
  if (match?.[1] === undefined) throw new Error('README.md has no plain-node-http example block');
  return match[1];
}

const servers: nodeHttp.Server[] = [];

/**
 * Runs the README's code as written, compiled by TypeScript to CommonJS: `@pkg/http` is this
 * package's source, `node:http` is Node's own except that the servers it creates are kept so
 * that the test can close them, and PORT=0 picks a free port.
 */
function runExample(code: string): Promise<string> {
  const js = ts.transpileModule(code, {
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
    },
  }).outputText;
  return new Promise((resolve, reject) => {
    const modules: Record<string, unknown> = {
      '@pkg/http': pkg,
      'node:http': {
        ...nodeHttp,
        createServer: (...args: Parameters<typeof nodeHttp.createServer>) => {
          const server = nodeHttp.createServer(...args);
          servers.push(server);
          server.on('error', reject);
          return server;
        },
      },
    };
    const fakeRequire = (id: string): unknown => {
      if (id in modules) return modules[id];
      throw new Error(`the example requires ${id}, which the test does not provide`);
    };
    const fakeConsole = {
      ...console,
      log: (line: string) => {
        const url = /listening on (http:\/\/\S+)/.exec(line)?.[1];
        if (url !== undefined) resolve(url);
      },
    };
    const fakeProcess = { ...process, env: { ...process.env, PORT: '0' } };
    const module = { exports: {} };
    new Function('require', 'module', 'exports', 'process', 'console', js)(
      fakeRequire,
      module,
      module.exports,
      fakeProcess,
      fakeConsole,
    );
  });
}

afterAll(async () => {
  await Promise.all(
    servers.map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

describe('README example', () => {
  it('is the same code as examples/plain-node-http.ts, which tsc and eslint check', () => {
    expect(readmeExample()).toBe(exampleFile);
  });

  it('lists every error code with its status', () => {
    for (const [code, info] of Object.entries(pkg.httpErrorCodes)) {
      const status = 'status' in info ? String(info.status) : '';
      expect(readme).toMatch(new RegExp(`\\|\\s*\`${code}\`\\s*\\|\\s*${status}\\s*\\|`));
    }
  });

  it('runs as written and answers as the README says', async () => {
    const base = await runExample(readmeExample());

    const hello = await fetch(`${base}/hello?name=Ada`, {
      headers: { origin: 'http://localhost:5173' },
    });
    expect(hello.status).toBe(200);
    expect(hello.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(await hello.json()).toEqual({ hello: 'Ada', from: '127.0.0.1' });

    // The peer is on loopback, which the example trusts, so X-Forwarded-For is believed.
    const proxied = await fetch(`${base}/hello`, { headers: { 'x-forwarded-for': '203.0.113.7' } });
    expect(await proxied.json()).toEqual({ hello: 'world', from: '203.0.113.7' });

    const post = (body: unknown): Promise<globalThis.Response> =>
      fetch(`${base}/notes`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const saved = await post({ text: 'first' });
    expect(saved.status).toBe(201);
    expect(saved.headers.get('x-ratelimit-remaining')).toBe('2');
    expect(await saved.json()).toEqual({ saved: 'first' });
    const missing = await post({});
    expect(missing.status).toBe(400);
    expect(missing.headers.get('x-ratelimit-limit')).toBe('3');
    expect(missing.headers.get('x-ratelimit-remaining')).toBe('1');
    expect(missing.headers.get('x-ratelimit-reset')).toBe(saved.headers.get('x-ratelimit-reset'));
    expect(await missing.json()).toEqual({ error: 'text is required' });
    expect((await post({ text: 'third' })).status).toBe(201);
    const limited = await post({ text: 'fourth' });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);

    const big = await fetch(`${base}/notes`, { method: 'POST', body: 'x'.repeat(65 * 1024) });
    expect(big.status).toBe(413);
    expect((await fetch(`${base}/elsewhere`)).status).toBe(404);
  });
});
