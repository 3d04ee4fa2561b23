#!/usr/bin/env node
// Keeps the published packages honest: each built package loads with both `require` and
// `import`, both module formats expose the same names, the published exports map is the
// workspace's without the `source` condition, and publint plus @arethetypeswrong/cli find
// nothing wrong with the exports map. Run after the build.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(import.meta.url);
// publint and attw pack the package with the workspace's pnpm: make the bootstrapped one visible.
process.env.PATH = `${path.join(root, '.tools', 'pnpm', 'bin')}${path.delimiter}${process.env.PATH ?? ''}`;
const problems = [];

/** An exports map with every `source` condition removed. */
function withoutSource(map) {
  if (map === null || typeof map !== 'object') return map;
  return Object.fromEntries(
    Object.entries(map)
      .filter(([key]) => key !== 'source')
      .map(([key, value]) => [key, withoutSource(value)]),
  );
}
const only = process.argv.slice(2);

for (const name of readdirSync(path.join(root, 'packages'))) {
  if (only.length && !only.includes(name)) continue;
  const dir = path.join(root, 'packages', name);
  const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
  // The published manifest (publishConfig.exports, which pnpm pack puts in place of
  // exports) is the workspace's exports map without the `source` condition: src/ is not
  // packed, and a subpath added to one map and not the other would be missing or broken.
  const published = JSON.stringify(withoutSource(pkg.exports));
  if (JSON.stringify(pkg.publishConfig?.exports) !== published) {
    problems.push(
      `${pkg.name}: publishConfig.exports must be exports without the "source" condition: ${published}`,
    );
  }
  const cjsFile = path.join(dir, 'dist', 'index.cjs');
  const esmFile = path.join(dir, 'dist', 'index.js');
  if (!existsSync(cjsFile) || !existsSync(esmFile)) {
    problems.push(`${pkg.name}: dist/ is missing; run the build first (pnpm build)`);
    continue;
  }
  const cjs = require(cjsFile);
  const esm = await import(pathToFileURL(esmFile).href);
  const cjsNames = Object.keys(cjs).sort().join(',');
  const esmNames = Object.keys(esm)
    .filter((k) => k !== 'default')
    .sort()
    .join(',');
  if (cjsNames !== esmNames) {
    problems.push(`${pkg.name}: CJS and ESM builds export different names`);
  }
  if (Object.keys(esm).length <= 1) problems.push(`${pkg.name}: the build exports nothing`);
  for (const [tool, args] of [
    ['publint', ['--strict', dir]],
    ['attw', ['--pack', dir, '--profile', 'node16', '--format', 'ascii']],
  ]) {
    const bin = path.join(root, 'node_modules', '.bin', tool);
    if (!existsSync(bin)) {
      problems.push(`${tool} is not installed (${bin}); run pnpm install first`);
      continue;
    }
    const r = spawnSync(bin, args, { cwd: root, encoding: 'utf8' });
    if (r.error) problems.push(`${pkg.name}: ${tool} could not start: ${r.error.message}`);
    else if (r.status !== 0) problems.push(`${pkg.name}: ${tool} failed\n${r.stdout}${r.stderr}`);
  }
  console.log(
    `${pkg.name}: ${Object.keys(esm).length - ('default' in esm ? 1 : 0)} exports, ESM and CJS`,
  );
}

if (problems.length) {
  console.error(`Export check failed:\n- ${problems.join('\n- ')}`);
  process.exit(1);
}
console.log('Exports: ok');
