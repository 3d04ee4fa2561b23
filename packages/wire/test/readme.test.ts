// The README is where a reader in another language starts: its example runs as written, its
// export table names every export, and its close-code table is the package's table.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import ts from 'typescript';
import * as wire from '../src/index';

const readme = readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');

describe('README', () => {
  it('runs the example as written', () => {
    const match = /<!-- example: wire -->\s*```ts\n([\s\S]*?)```/.exec(readme);
    expect(match?.[1]).toBeDefined();
    const js = ts.transpileModule(match![1]!, {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    const printed: unknown[][] = [];
    const fakeRequire = (id: string): unknown => {
      if (id === '@pkg/wire') return wire;
      throw new Error(`the example requires ${id}`);
    };
    new Function('require', 'exports', 'console', js)(
      fakeRequire,
      {},
      { log: (...args: unknown[]) => printed.push(args) },
    );
    expect(printed).toEqual([
      [
        'pkg.v1',
        true,
        '{"event":"error","id":7,"data":{"code":"busy","message":"Too many unfinished handlers; wait."}}',
        false,
        'k3f9-1',
      ],
    ]);
  });

  it('lists every export in its table', () => {
    const section = readme.slice(readme.indexOf('## Exports'), readme.indexOf('## Close codes'));
    const named = new Set([...section.matchAll(/`([A-Za-z_0-9]+)/g)].map((m) => m[1]));
    const missing = Object.keys(wire).filter((name) => !named.has(name));
    expect(missing).toEqual([]);
  });

  it('states the reconnect rule of every code of the table', () => {
    for (const [code, info] of Object.entries(wire.closeCodes)) {
      const row = new RegExp(`^\\| \`${code}\` .*\\| ${info.reconnect ? 'yes' : 'no'} +\\|$`, 'm');
      expect({ code, documented: row.test(readme) }).toEqual({ code, documented: true });
    }
  });
});
