#!/usr/bin/env node
// Checks the package graph of ARCHITECTURE.md: only the allowed @pkg edges, no cycles, no
// deep imports into another package's files (`@pkg/x/src/...`), and type-only edges that
// stay type-only.
//
// An edge is one of:
// - 'runtime': the code calls the other package; it belongs in `dependencies`.
// - 'types':   only types are taken (`import type`); the other package sits in
//              `devDependencies` (or is an optional peer), so that installing this package
//              does not install it. Its types reach consumers through the declarations.
// - 'any':     either of the above, for a package that decides for itself.
// - 'tests':   only the package's tests use it (a devDependency); its sources never import it.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const allowed = {
  '@pkg/wire': {},
  '@pkg/logger': {},
  '@pkg/decorators': { '@pkg/http': 'types' },
  '@pkg/http': { '@pkg/logger': 'types' },
  '@pkg/ws-protocol': { '@pkg/wire': 'runtime', '@pkg/logger': 'types' },
  '@pkg/core': {
    '@pkg/wire': 'runtime',
    '@pkg/logger': 'runtime',
    '@pkg/decorators': 'runtime',
    '@pkg/http': 'runtime',
    '@pkg/ws-protocol': 'runtime',
  },
  '@pkg/redis-adapter': { '@pkg/core': 'any', '@pkg/wire': 'runtime' },
  '@pkg/client': { '@pkg/wire': 'runtime', '@pkg/core': 'tests' },
  '@pkg/admin': { '@pkg/core': 'any', '@pkg/redis-adapter': 'tests' },
  '@pkg/demo': {
    '@pkg/core': 'any',
    '@pkg/decorators': 'any',
    '@pkg/client': 'any',
    '@pkg/redis-adapter': 'any',
    '@pkg/admin': 'any',
  },
  '@pkg/bench': { '@pkg/core': 'any', '@pkg/redis-adapter': 'any', '@pkg/admin': 'any' },
};
// Packages with no runtime dependency at all (not even a Node built-in): they run in any
// browser and are what a client in another language reads beside docs/protocol.md.
const standalone = new Set(['@pkg/wire']);
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

/** Every module specifier a file names, and whether the statement takes types only. */
function* imports(text) {
  const statement =
    /\b(import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]|\b(?:import|require)\s*\(\s*['"]([^'"]+)['"]\s*\)/g;
  for (const m of text.matchAll(statement)) {
    if (m[3] !== undefined) yield { spec: m[3], typeOnly: m[2] !== undefined };
    else yield { spec: m[4], typeOnly: false };
  }
}

const edges = new Map();

for (const group of ['packages', 'apps', 'tools']) {
  for (const name of readdirSync(path.join(root, group))) {
    const dir = path.join(root, group, name);
    let pkg;
    try {
      pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    } catch {
      continue;
    }
    const ok = allowed[pkg.name];
    if (!ok) {
      problems.push(`${pkg.name}: not in the package graph (tools/scripts/check-graph.mjs)`);
      continue;
    }
    const runtimeDeps = Object.keys({ ...pkg.dependencies }).filter((d) => d.startsWith('@pkg/'));
    const peers = Object.keys({ ...pkg.peerDependencies }).filter((d) => d.startsWith('@pkg/'));
    const devDeps = Object.keys({ ...pkg.devDependencies }).filter((d) => d.startsWith('@pkg/'));
    edges.set(pkg.name, new Set([...runtimeDeps, ...peers, ...devDeps]));
    for (const d of new Set([...runtimeDeps, ...peers, ...devDeps])) {
      if (!(d in ok)) problems.push(`${pkg.name} depends on ${d}, which the graph forbids`);
    }
    for (const d of [...runtimeDeps, ...peers]) {
      if (ok[d] === 'tests') {
        problems.push(
          `${pkg.name} lists ${d} in dependencies or peers, but only its tests may use it: move it to devDependencies`,
        );
      }
    }
    for (const d of runtimeDeps) {
      if (ok[d] === 'types') {
        problems.push(
          `${pkg.name} lists ${d} in dependencies, but uses it for types only: move it to devDependencies so that installing ${pkg.name} does not install ${d}`,
        );
      }
    }
    for (const d of peers) {
      const optional = pkg.peerDependenciesMeta?.[d]?.optional === true;
      if (ok[d] === 'types' && !optional) {
        problems.push(`${pkg.name}: the peer ${d} is for types only; mark it optional`);
      }
    }
    if (standalone.has(pkg.name)) {
      const deps = Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies });
      if (deps.length)
        problems.push(`${pkg.name} must have no dependencies, has ${deps.join(', ')}`);
    }
    for (const file of walk(dir)) {
      const text = readFileSync(file, 'utf8');
      const rel = path.relative(root, file);
      const isTest = /\.test\.ts$|\/test\//.test(file);
      for (const { spec, typeOnly } of imports(text)) {
        if (standalone.has(pkg.name) && !isTest && rel.includes('/src/') && !spec.startsWith('.')) {
          problems.push(
            `${rel}: imports ${spec}, but ${pkg.name} may import nothing outside itself`,
          );
        }
        if (!spec.startsWith('@pkg/')) continue;
        if (spec.split('/').length > 2) problems.push(`${rel}: deep import ${spec}`);
        const target = spec.split('/').slice(0, 2).join('/');
        if (target === pkg.name || isTest || group !== 'packages') continue;
        if (!(target in ok)) {
          problems.push(`${rel}: imports ${target}, which ${pkg.name} may not use`);
        } else if (ok[target] === 'tests') {
          problems.push(`${rel}: imports ${target}, which only ${pkg.name}'s tests may use`);
        } else if (ok[target] === 'types' && !typeOnly) {
          problems.push(
            `${rel}: imports ${target} at run time, but ${pkg.name} may take only types from it (use \`import type\`)`,
          );
        } else if (ok[target] === 'runtime' && !typeOnly && !runtimeDeps.includes(target)) {
          problems.push(`${rel}: imports ${target}, which is not in ${pkg.name}'s dependencies`);
        }
      }
    }
  }
}

// No cycles, counting every kind of edge (a type-only cycle still breaks the build order).
const state = new Map();
function visit(name, trail) {
  if (state.get(name) === 'done') return;
  if (state.get(name) === 'open') {
    problems.push(`dependency cycle: ${[...trail.slice(trail.indexOf(name)), name].join(' -> ')}`);
    return;
  }
  state.set(name, 'open');
  for (const next of edges.get(name) ?? []) visit(next, [...trail, name]);
  state.set(name, 'done');
}
for (const name of edges.keys()) visit(name, []);

if (problems.length) {
  console.error(`Package graph check failed:\n- ${problems.join('\n- ')}`);
  process.exit(1);
}
console.log('Package graph: ok');
