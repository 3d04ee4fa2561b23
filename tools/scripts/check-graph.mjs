#!/usr/bin/env node
// Checks the package graph of ARCHITECTURE.md: only the allowed @pkg edges, no cycles,
// and no deep imports into another package's files (`@pkg/x/src/...`).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const allowed = {
  '@pkg/logger': [],
  '@pkg/decorators': ['@pkg/http'],
  '@pkg/http': ['@pkg/logger'],
  '@pkg/ws-protocol': ['@pkg/logger'],
  '@pkg/core': ['@pkg/logger', '@pkg/decorators', '@pkg/http', '@pkg/ws-protocol'],
  '@pkg/demo': ['@pkg/core', '@pkg/decorators'],
  '@pkg/bench': ['@pkg/core'],
};
const problems = [];

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (/\.(ts|mts|cts|js|mjs|cjs)$/.test(name)) out.push(p);
  }
  return out;
}

for (const group of ['packages', 'apps', 'tools']) {
  for (const name of readdirSync(path.join(root, group))) {
    const dir = path.join(root, group, name);
    let pkg;
    try {
      pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    } catch {
      continue;
    }
    const deps = Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies }).filter((d) =>
      d.startsWith('@pkg/'),
    );
    const ok = allowed[pkg.name];
    if (!ok) {
      problems.push(`${pkg.name}: not in the package graph (tools/scripts/check-graph.mjs)`);
      continue;
    }
    for (const d of deps) {
      if (!ok.includes(d)) problems.push(`${pkg.name} depends on ${d}, which the graph forbids`);
    }
    for (const file of walk(dir)) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/from\s+['"](@pkg\/[^'"]+)['"]/g)) {
        const spec = m[1];
        if (spec.split('/').length > 2)
          problems.push(`${path.relative(root, file)}: deep import ${spec}`);
        const target = spec.split('/').slice(0, 2).join('/');
        const isTest = /\.test\.ts$|\/test\//.test(file);
        if (target !== pkg.name && !ok.includes(target) && !isTest && group === 'packages') {
          problems.push(
            `${path.relative(root, file)}: imports ${target}, which ${pkg.name} may not use`,
          );
        }
      }
    }
  }
}

if (problems.length) {
  console.error(`Package graph check failed:\n- ${problems.join('\n- ')}`);
  process.exit(1);
}
console.log('Package graph: ok');
