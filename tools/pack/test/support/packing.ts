/**
 * Packing the public packages and installing the tarballs the way a user does, shared by
 * tarballs.test.ts and examples.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const root = path.resolve(__dirname, '../../../..');
export const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');

export interface Manifest {
  name: string;
  version?: string;
  private?: boolean;
  license?: string;
  repository?: { type?: string; url?: string; directory?: string };
  exports?: unknown;
  main?: string;
  module?: string;
  types?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

export function readJson<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

/** Runs a command; on failure the error carries its output, so the test report shows why. */
export function run(cmd: string, args: string[], cwd: string): string {
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
export function pnpmBin(): string {
  const local = path.join(root, '.tools', 'pnpm', 'bin', 'pnpm');
  return existsSync(local) ? local : 'pnpm';
}

/** The public packages under packages/, which must have been built. */
export function publicPackages(): Array<{ name: string; dir: string }> {
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

/** `pnpm pack`s one package into `destination`; returns the tarball's path. */
export function pack(dir: string, name: string, destination: string): string {
  const before = new Set(readdirSync(destination));
  run(pnpmBin(), ['pack', '--pack-destination', destination], dir);
  const tarball = readdirSync(destination).find((f) => !before.has(f));
  if (tarball === undefined) throw new Error(`pnpm pack wrote no tarball for ${name}`);
  return path.join(destination, tarball);
}

/** A new project at `project` (package.json with `extra` merged in) and `npm install specs`. */
export function npmInstall(
  project: string,
  specs: string[],
  extra: Record<string, unknown> = {},
): void {
  mkdirSync(project, { recursive: true });
  writeFileSync(
    path.join(project, 'package.json'),
    `${JSON.stringify({ name: path.basename(project), private: true, version: '0.0.0', ...extra }, null, 2)}\n`,
  );
  run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--prefer-offline', '--no-package-lock', ...specs],
    project,
  );
}
