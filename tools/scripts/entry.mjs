#!/usr/bin/env node
// The README's commands, runnable on a fresh clone with only Node 20 and npm:
//   node tools/scripts/entry.mjs setup   pnpm (pinned, installed where missing) + dependencies
//   node tools/scripts/entry.mjs test    setup, build every package, run every test with jest
//   node tools/scripts/entry.mjs demo    setup, build the demo and what it needs, start it
// Extra arguments after the command go to jest (test) or are ignored (demo).
import { spawnSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const pinned = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).packageManager; // pnpm@10.x.y
const pnpmVersion = pinned.split('@')[1];
const localPrefix = path.join(root, '.tools', 'pnpm');
const localBin = path.join(localPrefix, 'bin');

function run(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, {
    cwd: root,
    stdio: 'inherit',
    env: process.env,
    ...options,
  });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

function must(cmd, args, what) {
  const status = run(cmd, args);
  if (status !== 0) {
    console.error(`\n${what} failed (exit ${status}). See the output above.`);
    process.exit(status);
  }
}

function pnpmMajorOnPath() {
  const r = spawnSync('pnpm', ['--version'], { encoding: 'utf8', env: process.env });
  if (r.status !== 0 || !r.stdout) return null;
  return r.stdout.trim().split('.')[0];
}

function ensurePnpm() {
  process.env.PATH = `${localBin}${path.delimiter}${process.env.PATH ?? ''}`;
  if (pnpmMajorOnPath() === pnpmVersion.split('.')[0]) return;
  console.log(`Installing pnpm ${pnpmVersion} into .tools/pnpm (corepack is not used)...`);
  must(
    'npm',
    [
      'install',
      '--global',
      '--prefix',
      localPrefix,
      '--no-audit',
      '--no-fund',
      `pnpm@${pnpmVersion}`,
    ],
    'Installing pnpm',
  );
  if (!existsSync(path.join(localBin, 'pnpm'))) {
    console.error(
      'pnpm was installed but .tools/pnpm/bin/pnpm is missing; remove .tools and retry.',
    );
    process.exit(1);
  }
}

function setup() {
  ensurePnpm();
  const frozen = process.env.CI ? ['--frozen-lockfile'] : ['--frozen-lockfile', '--prefer-offline'];
  must('pnpm', ['install', ...frozen], 'Installing dependencies');
}

const [command = 'test', ...rest] = process.argv.slice(2);

switch (command) {
  case 'setup':
    setup();
    break;
  case 'test': {
    setup();
    must('pnpm', ['exec', 'turbo', 'run', 'build', '--output-logs=errors-only'], 'Building');
    process.exit(run('pnpm', ['exec', 'jest', ...rest]));
    break;
  }
  case 'demo': {
    setup();
    must(
      'pnpm',
      ['exec', 'turbo', 'run', 'build', '--filter=@pkg/demo...', '--output-logs=errors-only'],
      'Building the demo',
    );
    const main = path.join(root, 'apps', 'demo', 'dist', 'main.js');
    const child = spawn(process.execPath, [main], {
      cwd: root,
      stdio: 'inherit',
      env: process.env,
    });
    for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
    child.on('exit', (code, signal) => process.exit(code ?? (signal ? 0 : 1)));
    break;
  }
  default:
    console.error(`Unknown command "${command}". Use one of: setup, test, demo.`);
    process.exit(2);
}
