// The README's examples run as written: the `server.ts` block (and the one for several
// instances, against the Redis at 127.0.0.1:6379 when it answers) is compiled by TypeScript
// and started with PORT=0, then asked what the README's curl lines ask.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import ts from 'typescript';
import * as core from '@pkg/core';
import * as redisAdapter from '@pkg/redis-adapter';
import * as admin from '../src/index';
import { call } from './helpers';

const readme = readFileSync(path.resolve(__dirname, '..', 'README.md'), 'utf8');
const started: core.Server[] = [];

afterEach(async () => {
  for (const s of started.splice(0)) await s.close();
});

/** The TypeScript block after the line that `marker` matches. */
function block(marker: RegExp): string {
  const at = readme.search(marker);
  if (at < 0) throw new Error(`README.md has no ${String(marker)} block`);
  const match = /```ts\n([\s\S]*?)```/.exec(readme.slice(at));
  if (match?.[1] === undefined) throw new Error('README.md: no ts block after the marker');
  return match[1];
}

/** Runs an example (ESM with top-level await) as CommonJS in an async function. */
async function run(code: string, env: Record<string, string>): Promise<string[]> {
  const lastImport = code.lastIndexOf('\nimport ');
  const importEnd = code.indexOf(';', lastImport) + 1;
  const source = `${code.slice(0, importEnd)}\nexport async function main() {\n${code.slice(importEnd)}\n}\n`; // prettier-ignore
  const js = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
    reportDiagnostics: true,
  });
  expect(js.diagnostics ?? []).toEqual([]);
  class RecordedServer extends core.Server {
    constructor(...args: ConstructorParameters<typeof core.Server>) {
      super(args[0], args[1], args[2], args[3], args[4] ?? new core.NullLogger());
      started.push(this);
    }
  }
  const modules: Record<string, unknown> = {
    '@pkg/core': { ...core, Server: RecordedServer },
    '@pkg/admin': admin,
    '@pkg/redis-adapter': redisAdapter,
  };
  const logged: string[] = [];
  const module: { exports: { main?: () => Promise<void> } } = { exports: {} };
  new Function('require', 'module', 'exports', 'process', 'console', js.outputText)(
    (id: string) => {
      if (id in modules) return modules[id];
      throw new Error(`the example requires ${id}`);
    },
    module,
    module.exports,
    { env },
    { ...console, log: (line: string) => logged.push(line) },
  );
  await module.exports.main!();
  return logged;
}

function redisAnswers(): boolean {
  const probe = spawnSync(
    process.execPath,
    [
      '-e',
      "const s=require('net').connect(6379,'127.0.0.1',()=>s.write('PING\\r\\n'));s.setTimeout(1000,()=>process.exit(1));s.on('error',()=>process.exit(1));s.on('data',d=>process.exit(String(d).startsWith('+PONG')?0:1));",
    ],
    { stdio: 'ignore' },
  );
  if (probe.status === 0) return true;
  if (process.env['CI'] === 'true') throw new Error('Redis at 127.0.0.1:6379 is unreachable, and CI=true requires it.'); // prettier-ignore
  console.warn('@pkg/admin README test: the several-instances example is skipped, no Redis at 127.0.0.1:6379.'); // prettier-ignore
  return false;
}

describe('README examples', () => {
  it('server.ts serves the page, and the curl lines get JSON', async () => {
    const token = 'a-long-random-admin-token';
    const [line] = await run(block(/^`server\.ts`:/m), { PORT: '0', ADMIN_TOKEN: token });
    const url = /admin page: (http:\S+)/.exec(line ?? '')?.[1];
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/admin$/);
    expect((await fetch(url!)).status).toBe(200);
    const listed = await call(`${url}/api/connections?search=ann&sort=traffic&limit=20`);
    expect(listed.body).toMatchObject({ rows: [], total: 0, next: null });
    const nodes = await call(`${url}/api/nodes`, { headers: { Authorization: `Bearer ${token}` } });
    expect((nodes.body['rows'] as unknown[]).length).toBe(1);
    const session = await call(`${url}/api/session`);
    expect(session.body['actions']).toEqual({ disconnect: true, revoke: false });
  });

  (redisAnswers() ? it : it.skip)(
    'the several-instances example answers for both instances',
    async () => {
      const code = block(/^### Several instances/m);
      await run(code, { PORT: '0' });
      await run(code, { PORT: '0' });
      const [first] = started;
      const { body } = await call(`http://127.0.0.1:${first!.getPort()}/admin/api/nodes`);
      // Both answer (other instances on the same Redis and prefix may answer as well).
      expect((body['rows'] as unknown[]).length).toBeGreaterThanOrEqual(2);
    },
  );
});
