// The README's presence example, run as written against the real server with presence on:
// the client joins the lobby and logs who came in and who is there.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import ts from 'typescript';
import { RoomsController } from '@pkg/core';
import * as pkg from '../src/index';
import { Recorder, cleanup, startCoreServer } from './helpers';

afterEach(cleanup);

function example(): string {
  const readme = readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
  const match = /<!-- example: presence -->\s*```ts\n([\s\S]*?)```/.exec(readme);
  if (match?.[1] === undefined) throw new Error('README.md has no presence example block');
  return match[1];
}

describe('README presence example', () => {
  it('logs the arrival and the list of the lobby', async () => {
    const { url, server } = await startCoreServer(() => [new RoomsController()], undefined, {
      presence: [{ match: 'lobby' }],
    });
    server.onPresence(() => ({ name: 'Ada' }));
    const js = ts.transpileModule(example(), {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    const lines = new Recorder<string>();
    const clients: pkg.Client[] = [];
    const modules: Record<string, unknown> = {
      '@pkg/client': {
        ...pkg,
        Client: class extends pkg.Client {
          constructor(...args: ConstructorParameters<typeof pkg.Client>) {
            super(...args);
            clients.push(this);
          }
        },
      },
    };
    const fakeRequire = (id: string): unknown => {
      if (id in modules) return modules[id];
      throw new Error(`the example requires ${id}, which the test does not provide`);
    };
    const fakeProcess = { ...process, env: { ...process.env, SERVER_URL: url } };
    const run = new Function(
      'require',
      'exports',
      'process',
      'console',
      `return (async () => {\n${js}\n})();`,
    ) as (...args: unknown[]) => Promise<void>;
    try {
      await run(fakeRequire, {}, fakeProcess, { log: lines.push });
      expect(await lines.waitFor(2)).toEqual(['Ada came in', 'in the lobby: Ada (1)']);
    } finally {
      for (const c of clients) c.disconnect();
    }
  });
});
