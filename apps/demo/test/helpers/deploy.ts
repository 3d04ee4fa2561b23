import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/** The repository root (apps/demo/test/helpers -> four levels up). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..', '..');

/** The pnpm the repository pins (.tools/pnpm), else the one on PATH. */
export function pnpmCommand(): string {
  const local = path.join(REPO_ROOT, '.tools', 'pnpm', 'bin', 'pnpm');
  return existsSync(local) ? local : 'pnpm';
}

/** Runs a command in the repository root; throws with its output when it fails. */
export function runInRepo(command: string, args: string[]): void {
  const result = spawnSync(command, args, { cwd: REPO_ROOT, encoding: 'utf8', env: process.env });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} exited with ${result.status}:\n${result.stdout}\n${result.stderr}`,
    );
  }
}

/**
 * The documented way to make the deploy folder: build the demo and the @pkg packages it
 * needs, then `pnpm deploy --legacy --prod` copies the demo with a production-only
 * node_modules (the @pkg packages as their published files, i.e. dist + package.json).
 */
export function buildDeployFolder(target: string): void {
  const pnpm = pnpmCommand();
  runInRepo(pnpm, [
    'exec',
    'turbo',
    'run',
    'build',
    '--filter=@pkg/demo...',
    '--output-logs=errors-only',
  ]);
  runInRepo(pnpm, ['--filter', '@pkg/demo', 'deploy', '--prod', '--legacy', target]);
}

export interface Started {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
}

/** A minimal environment: PATH and HOME only, so the test sees the defaults a user would. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...extra };
}

/** Starts `node dist/main.js` in `dir` and waits for its "listening" line. */
export function startNode(dir: string, env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, ['dist/main.js'], { cwd: dir, env: cleanEnv(env) });
  let out = '';
  let err = '';
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /Demo listening on (http:\/\/\S+?)\//.exec(out);
      if (match) resolve({ child, url: match[1]!, stdout: () => out, stderr: () => err, exit });
    });
    void exit.then((code) =>
      reject(new Error(`exited with ${code} before listening:\n${out}\n${err}`)),
    );
  });
}

/** Runs `node dist/main.js` to completion (for configurations that must fail). */
export function runNode(dir: string, env: Record<string, string>) {
  return spawnSync(process.execPath, ['dist/main.js'], {
    cwd: dir,
    env: cleanEnv(env),
    encoding: 'utf8',
  });
}
