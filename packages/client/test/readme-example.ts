// Runs a `<!-- example: name -->` block of the client's README as a user would: compiled to
// CommonJS, `@pkg/client` from this package's source, SERVER_URL pointing at `url`, and
// `console.log` recorded. Every Client the example makes is handed to `use`, then closed.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import * as pkg from '../src/index';
import { Recorder } from './helpers';

function exampleBlock(name: string): string {
  const readme = readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
  const match = new RegExp(`<!-- example: ${name} -->\\s*\`\`\`ts\\n([\\s\\S]*?)\`\`\``).exec(
    readme,
  );
  if (match?.[1] === undefined) throw new Error(`README.md has no ${name} example block`);
  return match[1];
}

export async function runReadmeExample(
  name: string,
  url: string,
  use: (lines: Recorder<string>, clients: pkg.Client[]) => Promise<void>,
): Promise<void> {
  const js = ts.transpileModule(exampleBlock(name), {
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
    await use(lines, clients);
  } finally {
    for (const c of clients) c.disconnect();
  }
}
