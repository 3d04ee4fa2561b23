/**
 * Every public package as a user gets it: `pnpm pack` each one, `npm install` the tarballs
 * into a new project outside the workspace, compile a strict TypeScript consumer against
 * them (lib ES2020, skipLibCheck off; module nodenext for ESM and CommonJS, and module
 * commonjs), run it under Node, and check what installing a single package brings along.
 *
 * Needs the built packages (`pnpm build`; CI builds before the tests) and the npm registry
 * for the third-party dependencies (npm's cache is used when it has them).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '../../..');
const SETUP_TIMEOUT = 300_000;
const STEP_TIMEOUT = 120_000;

interface Manifest {
  name: string;
  private?: boolean;
  license?: string;
  repository?: { type?: string; url?: string; directory?: string };
  exports?: unknown;
  main?: string;
  module?: string;
  types?: string;
  dependencies?: Record<string, string>;
}

interface PackageUnderTest {
  name: string;
  dir: string;
  tarball: string;
  values: string[];
  types: string[];
}

function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

/** Runs a command; on failure the error carries its output, so the test report shows why. */
function run(cmd: string, args: string[], cwd: string): string {
  try {
    return execFileSync(cmd, args, {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, npm_config_update_notifier: 'false' },
    });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${cmd} ${args.join(' ')} failed in ${cwd}\n${e.stdout ?? ''}${e.stderr ?? ''}`,
    );
  }
}

/** The workspace's pnpm: the bootstrapped one in .tools/ if present, else the one on PATH. */
function pnpmBin(): string {
  const local = path.join(root, '.tools', 'pnpm', 'bin', 'pnpm');
  return existsSync(local) ? local : 'pnpm';
}

/**
 * The names a package's declarations export, split into values and types (`type X`, or
 * everything in an `export type { ... }`). The declaration bundler drops `type` from names
 * re-exported from a sibling package (`export { A, B } from '@pkg/x'`), so those are sorted
 * by what `lookup` says the sibling exports. Star re-exports are left to the package named.
 */
function exportedNames(
  dts: string,
  lookup: (pkg: string) => { values: string[]; types: string[] } | undefined,
): { values: string[]; types: string[] } {
  const values = new Set<string>();
  const types = new Set<string>();
  for (const m of dts.matchAll(/^export (type )?\{([^}]*)\}(?:\s*from\s*['"]([^'"]+)['"])?/gm)) {
    const allTypes = m[1] !== undefined;
    const source = m[3] === undefined ? undefined : lookup(m[3]);
    for (const raw of (m[2] ?? '').split(',')) {
      const item = raw.trim();
      if (item === '') continue;
      const original = item.replace(/^type\s+/, '').split(/\s+as\s+/)[0] ?? '';
      const name =
        item
          .replace(/^type\s+/, '')
          .split(/\s+as\s+/)
          .pop() ?? '';
      if (name === '' || name === 'default') continue;
      const isType =
        allTypes ||
        item.startsWith('type ') ||
        (source !== undefined && !source.values.includes(original));
      (isType ? types : values).add(name);
    }
  }
  return { values: [...values].sort(), types: [...types].sort() };
}

/** The public packages under packages/, which must have been built. */
function publicPackages(): Array<{ name: string; dir: string }> {
  const out: Array<{ name: string; dir: string }> = [];
  const missing: string[] = [];
  for (const entry of readdirSync(path.join(root, 'packages')).sort()) {
    const dir = path.join(root, 'packages', entry);
    const manifestFile = path.join(dir, 'package.json');
    if (!existsSync(manifestFile)) continue;
    const manifest = readJson<Manifest>(manifestFile);
    if (manifest.private === true) continue;
    for (const file of ['index.js', 'index.cjs', 'index.d.ts', 'index.d.cts']) {
      if (!existsSync(path.join(dir, 'dist', file))) missing.push(`packages/${entry}/dist/${file}`);
    }
    out.push({ name: manifest.name, dir });
  }
  if (missing.length > 0) {
    throw new Error(
      `The packages are not built (missing ${missing.join(', ')}): run \`pnpm build\` first.`,
    );
  }
  return out;
}

/** Every file path an `exports` map (or a condition inside it) points at. */
function exportTargets(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value === null || typeof value !== 'object') return [];
  return Object.values(value).flatMap(exportTargets);
}

/** The top-level packages in a project's node_modules, scoped ones as `@scope/name`. */
function installed(project: string): string[] {
  const modules = path.join(project, 'node_modules');
  const names: string[] = [];
  for (const entry of readdirSync(modules)) {
    if (entry.startsWith('.')) continue;
    if (entry.startsWith('@')) {
      for (const inner of readdirSync(path.join(modules, entry))) names.push(`${entry}/${inner}`);
    } else {
      names.push(entry);
    }
  }
  return names.sort();
}

function npmInstall(project: string, specs: string[]): void {
  mkdirSync(project, { recursive: true });
  writeFileSync(
    path.join(project, 'package.json'),
    `${JSON.stringify({ name: path.basename(project), private: true, version: '0.0.0' }, null, 2)}\n`,
  );
  run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', '--no-package-lock', ...specs],
    project,
  );
}

function consumerSource(packages: PackageUnderTest[], style: 'esm' | 'cjs'): string {
  const lines: string[] = [
    '// Generated by tools/pack/test/tarballs.test.ts: imports every export of every package.',
  ];
  const checks: string[] = [];
  let n = 0;
  for (const p of packages) {
    const items = [
      ...p.values.map((name) => {
        const alias = `v${n++}`;
        checks.push(`  [${JSON.stringify(`${p.name} ${name}`)}, ${alias}],`);
        return `${name} as ${alias}`;
      }),
      ...p.types.map((name) => `type ${name} as t${n++}`),
    ];
    lines.push(`import { ${items.join(', ')} } from '${p.name}';`);
  }
  lines.push(
    `const values: Array<[string, unknown]> = [\n${checks.join('\n')}\n];`,
    'const missing = values.filter(([, value]) => value === undefined).map(([name]) => name);',
    "if (missing.length > 0) throw new Error(`undefined at run time: ${missing.join(', ')}`);",
    `console.log(JSON.stringify({ style: '${style}', values: values.length }));`,
  );
  // Interfaces copied into a package's declarations stay compatible with the originals.
  const logger = packages.find((p) => p.name === '@pkg/logger');
  if (logger?.values.includes('NullLogger')) {
    lines.push(`import { NullLogger as NullLoggerCheck } from '@pkg/logger';`);
    const http = packages.find((p) => p.name === '@pkg/http');
    if (http?.types.includes('HttpHandlerOptions')) {
      lines.push(
        `import type { HttpHandlerOptions as HttpOptionsCheck } from '@pkg/http';`,
        `export const httpLogger: HttpOptionsCheck['logger'] = new NullLoggerCheck();`,
      );
    }
    const ws = packages.find((p) => p.name === '@pkg/ws-protocol');
    if (ws?.types.includes('WebSocketHandlerOptions')) {
      lines.push(
        `import type { WebSocketHandlerOptions as WsOptionsCheck } from '@pkg/ws-protocol';`,
        `export const wsLogger: WsOptionsCheck['logger'] = new NullLoggerCheck();`,
      );
    }
  }
  if (style === 'cjs') lines.push('export {};');
  return `${lines.join('\n')}\n`;
}

function tsconfig(
  module: 'nodenext' | 'commonjs',
  files: string[],
  outDir: string,
): Record<string, unknown> {
  return {
    compilerOptions: {
      strict: true,
      target: 'ES2020',
      lib: ['ES2020'],
      module,
      moduleResolution: module === 'nodenext' ? 'nodenext' : 'node10',
      types: ['node'],
      skipLibCheck: false,
      noEmitOnError: true,
      outDir,
      ...(module === 'commonjs' ? { esModuleInterop: true } : {}),
    },
    files,
  };
}

let work: string;
let consumer: string;
let packages: PackageUnderTest[] = [];
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');

beforeAll(() => {
  const found = publicPackages();
  work = mkdtempSync(path.join(tmpdir(), 'pkg-tarballs-'));
  const tarballs = path.join(work, 'tarballs');
  mkdirSync(tarballs);
  const declarations = new Map(
    found.map(({ name, dir }) => [
      name,
      readFileSync(path.join(dir, 'dist', 'index.d.ts'), 'utf8'),
    ]),
  );
  const namesOf = (pkg: string): { values: string[]; types: string[] } | undefined => {
    const dts = declarations.get(pkg);
    return dts === undefined ? undefined : exportedNames(dts, namesOf);
  };
  packages = found.map(({ name, dir }) => {
    const before = new Set(readdirSync(tarballs));
    run(pnpmBin(), ['pack', '--pack-destination', tarballs], dir);
    const tarball = readdirSync(tarballs).find((f) => !before.has(f));
    if (tarball === undefined) throw new Error(`pnpm pack wrote no tarball for ${name}`);
    const names = namesOf(name) ?? { values: [], types: [] };
    return { name, dir, tarball: path.join(tarballs, tarball), ...names };
  });
  consumer = path.join(work, 'consumer');
  // @types/node: the declarations use Node's types, as any Node consumer's project has them.
  npmInstall(consumer, ['@types/node@^20', ...packages.map((p) => p.tarball)]);
  writeFileSync(path.join(consumer, 'esm.mts'), consumerSource(packages, 'esm'));
  writeFileSync(path.join(consumer, 'cjs.cts'), consumerSource(packages, 'cjs'));
  writeFileSync(path.join(consumer, 'legacy.ts'), consumerSource(packages, 'cjs'));
  writeFileSync(
    path.join(consumer, 'tsconfig.json'),
    JSON.stringify(tsconfig('nodenext', ['esm.mts', 'cjs.cts'], 'out'), null, 2),
  );
  writeFileSync(
    path.join(consumer, 'tsconfig.commonjs.json'),
    JSON.stringify(tsconfig('commonjs', ['legacy.ts'], 'out-commonjs'), null, 2),
  );
}, SETUP_TIMEOUT);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe('the packed packages', () => {
  it('each hold a LICENSE, a README, a repository with its directory, and every file their exports name', () => {
    expect(packages.length).toBeGreaterThanOrEqual(5);
    for (const p of packages) {
      const dir = path.join(consumer, 'node_modules', ...p.name.split('/'));
      const manifest = readJson<Manifest>(path.join(dir, 'package.json'));
      expect({ name: p.name, license: manifest.license }).toEqual({ name: p.name, license: 'MIT' });
      expect(readFileSync(path.join(dir, 'LICENSE'), 'utf8')).toContain('MIT License');
      expect(existsSync(path.join(dir, 'README.md'))).toBe(true);
      expect(manifest.repository).toMatchObject({
        type: 'git',
        url: expect.stringMatching(/^git\+https:\/\//),
        directory: path.relative(root, p.dir).split(path.sep).join('/'),
      });
      const targets = [
        ...exportTargets(manifest.exports),
        ...[manifest.main, manifest.module, manifest.types].filter((t) => t !== undefined),
      ];
      expect(targets.length).toBeGreaterThan(0);
      const absent = targets.filter((t) => !existsSync(path.join(dir, t)));
      expect({ name: p.name, absent }).toEqual({ name: p.name, absent: [] });
    }
  });

  it(
    'compile for a strict consumer with lib ES2020 and skipLibCheck off (module nodenext, ESM and CommonJS)',
    () => {
      run(process.execPath, [tsc, '-p', 'tsconfig.json'], consumer);
      expect(existsSync(path.join(consumer, 'out', 'esm.mjs'))).toBe(true);
      expect(existsSync(path.join(consumer, 'out', 'cjs.cjs'))).toBe(true);
    },
    STEP_TIMEOUT,
  );

  it(
    'compile for a consumer with module commonjs',
    () => {
      run(process.execPath, [tsc, '-p', 'tsconfig.commonjs.json'], consumer);
      expect(existsSync(path.join(consumer, 'out-commonjs', 'legacy.js'))).toBe(true);
    },
    STEP_TIMEOUT,
  );

  it(
    'load under Node with import and with require, every exported value defined',
    () => {
      const expected = packages.reduce((sum, p) => sum + p.values.length, 0);
      for (const [file, style] of [
        ['out/esm.mjs', 'esm'],
        ['out/cjs.cjs', 'cjs'],
        ['out-commonjs/legacy.js', 'cjs'],
      ] as const) {
        if (!existsSync(path.join(consumer, file))) {
          run(
            process.execPath,
            [tsc, '-p', file.startsWith('out/') ? 'tsconfig.json' : 'tsconfig.commonjs.json'],
            consumer,
          );
        }
        const output = run(process.execPath, [file], consumer).trim().split('\n').pop() ?? '';
        expect(JSON.parse(output)).toEqual({ style, values: expected });
      }
    },
    STEP_TIMEOUT,
  );
});

describe('a package installed alone', () => {
  function alone(name: string): string[] {
    const p = packages.find((q) => q.name === name);
    if (p === undefined) throw new Error(`${name} is not among the packed packages`);
    const project = path.join(work, `alone-${name.replace('/', '-')}`);
    npmInstall(project, [p.tarball]);
    return installed(project);
  }

  it(
    '@pkg/http brings ipaddr.js and no logger (no winston)',
    () => {
      const names = alone('@pkg/http');
      expect(names).toContain('ipaddr.js');
      expect(names).not.toContain('winston');
      expect(names).not.toContain('@pkg/logger');
      // secure-json-parse: the JSON parser of the request body (no dependencies of its own).
      expect(
        names.filter((n) => !['@pkg/http', 'ipaddr.js', 'secure-json-parse'].includes(n)),
      ).toEqual([]);
    },
    STEP_TIMEOUT,
  );

  it(
    '@pkg/wire brings nothing: the wire format has no dependencies',
    () => {
      expect(alone('@pkg/wire')).toEqual(['@pkg/wire']);
    },
    STEP_TIMEOUT,
  );

  it(
    '@pkg/decorators brings nothing: no @pkg/http, no ipaddr.js',
    () => {
      const names = alone('@pkg/decorators');
      expect(names).not.toContain('ipaddr.js');
      expect(names).toEqual(['@pkg/decorators']);
    },
    STEP_TIMEOUT,
  );
});
