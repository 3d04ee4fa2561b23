/**
 * Every code block of the READMEs and docs/ (see support/examples.ts for what is picked up
 * and the markers), compiled as a user would: the public packages packed, the tarballs
 * installed with npm into one new project outside the workspace (`"type": "module"`, with
 * `@types/node` and zod, which the examples import), each block written to a
 * file of its own, and `tsc` run once over all of them with the tsconfig the root README
 * recommends (JavaScript blocks type-checked too). Blocks marked `run` are then started with
 * node from the compiled output; servers with PORT=0, until they say `listening on` and
 * answer an HTTP request.
 *
 * tsc reports syntax errors alone when a file has one (the type errors of the other blocks
 * show once it is fixed); either way the failing block's test names the document and line.
 *
 * A new block in any of those documents is checked without a change here. Needs the built
 * packages (`pnpm build`) and the npm registry or its cache, like tarballs.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Block, docDir, extractAll } from './support/examples';
import { npmInstall, pack, publicPackages, root, tsc } from './support/packing';

const SETUP_TIMEOUT = 300_000;
const RUN_TIMEOUT = 20_000;

/** Extraction is cheap and synchronous: done at load, so each block gets a test of its own. */
const { blocks, problems } = extractAll(root);
const code = blocks.filter((b) => b.kind === 'code');
const skipped = blocks.filter((b) => b.kind === 'skip');
const runnable = code.filter((b) => b.run !== undefined);
const where = (b: Block): string => `${b.doc}:${b.line}`;

/** The options the harness adds to the README's tsconfig, and why. */
const HARNESS_OPTIONS = {
  // JavaScript blocks are type-checked as well, against the same declarations.
  allowJs: true,
  checkJs: true,
  // Each block is its own module even when it has no import (a fragment with a prelude).
  moduleDetection: 'force',
  outDir: 'out',
  rootDir: 'examples',
  // Emit even with errors, so a run test reports its own failure.
  noEmitOnError: false,
  // The packages' declarations are compiled with skipLibCheck off by tarballs.test.ts;
  // checking them (and zod's, node's...) again here would triple the time of this test.
  skipLibCheck: true,
};

/** The recommended tsconfig: the root README's block marked `example: tsconfig`. */
function recommendedTsconfig(): { compilerOptions: Record<string, unknown> } {
  const block = blocks.find((b) => b.kind === 'tsconfig' && b.doc === 'README.md');
  if (block === undefined) {
    throw new Error('README.md has no ```json block marked <!-- example: tsconfig -->');
  }
  return JSON.parse(block.code) as { compilerOptions: Record<string, unknown> };
}

/**
 * docs/testing.md shows jest tests. Installing jest would bring 116 packages and double the
 * time of this test, so its two functions get a declaration of their own here: what the
 * examples are checked for is this library's API, which they use inside the tests.
 */
const JEST_GLOBALS = `declare module '@jest/globals' {
  interface Matchers {
    toBe(expected: unknown): void;
    toEqual(expected: unknown): void;
    toMatchObject(expected: object): void;
    toContain(expected: unknown): void;
    toBeDefined(): void;
    toThrow(expected?: unknown): void;
    not: Matchers;
    resolves: Matchers;
    rejects: Matchers;
  }
  export function expect(actual: unknown): Matchers;
  export function test(name: string, fn: () => unknown, timeout?: number): void;
  export { test as it };
  export function describe(name: string, fn: () => void): void;
}
`;

const HEADER_LINES = 1;

function sourceOf(b: Block): string {
  const header = `// ${where(b)} (written by tools/pack/test/examples.test.ts)\n`;
  return `${header}${b.prelude}${b.code}`;
}

function outputOf(b: Block): string {
  const file = b.file
    .replace(/\.ts$/, '.js')
    .replace(/\.mts$/, '.mjs')
    .replace(/\.cts$/, '.cjs');
  return path.join('out', docDir(b.doc), file);
}

/** A compiler message, its line translated back to the document's line. */
function located(b: Block, line: number, message: string): string {
  const preludeLines = b.prelude === '' ? 0 : b.prelude.split('\n').length - 1;
  const inBlock = line - HEADER_LINES - preludeLines;
  const at = inBlock >= 1 ? `${b.doc}:${b.line + inBlock}` : `${where(b)} (its prelude)`;
  return `${at}: ${message}`;
}

let work: string;
let project: string;
let tscOutput = '';
const diagnostics = new Map<string, string[]>();
const elsewhere: string[] = [];

beforeAll(() => {
  work = mkdtempSync(path.join(tmpdir(), 'pkg-examples-'));
  const tarballs = path.join(work, 'tarballs');
  mkdirSync(tarballs);
  const specs = publicPackages().map(({ name, dir }) => pack(dir, name, tarballs));
  project = path.join(work, 'project');
  npmInstall(project, ['@types/node@^20', 'zod@^4', ...specs], { type: 'module' });
  mkdirSync(path.join(project, 'examples'));
  writeFileSync(path.join(project, 'examples', 'jest-globals.d.ts'), JEST_GLOBALS);

  const byFile = new Map<string, Block>();
  for (const b of code) {
    const file = path.join('examples', docDir(b.doc), b.file);
    mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
    writeFileSync(path.join(project, file), sourceOf(b));
    byFile.set(file.split(path.sep).join('/'), b);
  }
  const recommended = recommendedTsconfig();
  writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify(
      {
        compilerOptions: { ...recommended.compilerOptions, ...HARNESS_OPTIONS },
        include: ['examples'],
      },
      null,
      2,
    ),
  );
  try {
    tscOutput = execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json', '--pretty', 'false'], {
      cwd: project,
      encoding: 'utf8',
    });
  } catch (err) {
    tscOutput = String((err as { stdout?: string }).stdout ?? err);
  }
  // Messages span lines: a located first line, then indented details.
  let current: string[] | undefined;
  for (const line of tscOutput.split('\n')) {
    const m = /^(.+?)\((\d+),\d+\): (error .*)$/.exec(line);
    if (m !== null) {
      const b = byFile.get(m[1] ?? '');
      if (b === undefined) {
        elsewhere.push(line);
        current = undefined;
        continue;
      }
      const list = diagnostics.get(where(b)) ?? [];
      list.push(located(b, Number(m[2]), m[3] ?? ''));
      diagnostics.set(where(b), list);
      current = list;
    } else if (line.startsWith('  ') && current !== undefined && current.length > 0) {
      current[current.length - 1] += `\n${line}`;
    } else if (line.trim() !== '') {
      elsewhere.push(line);
    }
  }
}, SETUP_TIMEOUT);

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe('the code blocks of the READMEs and docs/', () => {
  it('are each classified: compiled, marked skip with a reason, or not code (by language)', () => {
    expect(problems).toEqual([]);
    // A guard against an extractor that silently finds nothing.
    expect(code.length).toBeGreaterThanOrEqual(40);
    expect(runnable.length).toBeGreaterThanOrEqual(4);
  });

  it('recommend one tsconfig: every block marked tsconfig says what the root README says', () => {
    const recommended = recommendedTsconfig();
    expect(recommended.compilerOptions).toMatchObject({ strict: true, module: 'NodeNext' });
    for (const b of blocks.filter((x) => x.kind === 'tsconfig')) {
      expect({ at: where(b), config: JSON.parse(b.code) as unknown }).toEqual({
        at: where(b),
        config: recommended,
      });
    }
  });

  it('compile with no error outside the examples (the packages’ own declarations)', () => {
    expect(elsewhere).toEqual([]);
  });
});

describe('compiles under the recommended tsconfig, against the packed packages', () => {
  it.each(code.map((b) => [`${where(b)} (${b.file})`, b] as const))('%s', (_name, b) => {
    expect(diagnostics.get(where(b)) ?? []).toEqual([]);
    // tsc did see the file: it wrote its output.
    expect(existsSync(path.join(project, outputOf(b)))).toBe(true);
  });
});

describe('runs with node', () => {
  it.each(runnable.map((b) => [`${where(b)} (${b.run})`, b] as const))(
    '%s',
    async (_name, b) => {
      const cwd = mkdtempSync(path.join(work, 'run-'));
      const child = spawn(process.execPath, [path.join(project, outputOf(b))], {
        cwd,
        env: { ...process.env, PORT: '0', NODE_ENV: 'test' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      try {
        if (b.run === 'exit') {
          const status = await exited;
          expect({ status, stderr }).toEqual({ status: 0, stderr: expect.any(String) });
          return;
        }
        const url = await new Promise<string>((resolve, reject) => {
          const look = (): void => {
            const m = /listening on (?:\S+ )?((?:http|ws)s?:\/\/[^\s/]+)/i.exec(stdout);
            if (m?.[1] !== undefined) resolve(m[1].replace(/^ws/, 'http'));
          };
          child.stdout.on('data', look);
          void exited.then((status) =>
            reject(new Error(`exited with ${status} before listening:\n${stdout}${stderr}`)),
          );
        });
        // It serves: any HTTP answer will do (a WebSocket-only server answers 426).
        const res = await fetch(`${url}/`);
        expect(res.status).toBeGreaterThanOrEqual(200);
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        await exited;
        rmSync(cwd, { recursive: true, force: true });
      }
    },
    RUN_TIMEOUT,
  );
});

// A block marked skip is not compiled; its test checks that it says why, in words, so that
// "skip" never hides a block that merely stopped compiling without a reader noticing.
describe('left out on purpose (the reason is written above the block)', () => {
  for (const b of skipped) {
    it(`${where(b)}: ${b.skipReason ?? ''}`, () => {
      // At least two words: "skip" alone or "skip x" is no reason a reader can check.
      const words = (b.skipReason ?? '').trim().split(/\s+/).filter(Boolean);
      expect({ at: where(b), enough: words.length >= 2 }).toEqual({ at: where(b), enough: true });
    });
  }
});
