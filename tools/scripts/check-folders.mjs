#!/usr/bin/env node
// Checks that @pkg/core's folders layer (docs/core-layout.md): a file may import from its
// own folder and from folders below it in LAYERS, never from a folder above, whether it
// takes values or only types. A feature (history, presence) is one folder.
//
// The imports that still point upward are listed one by one in KNOWN (source file -> the
// file it imports). The check fails on an upward import that is not listed, and on a listed
// one that no longer exists, so the list can only shrink. `--print` prints every upward
// import found (to see what a change added).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const src = path.join(root, 'packages/core/src');

/** Bottom to top. A top-level file (`server.ts`, `pipeline.ts`, ...) is its own layer. */
export const LAYERS = [
  'errors',
  'config',
  'observability',
  'ws',
  'routing',
  'http',
  'docs',
  'history',
  'presence',
  'cluster',
  'protocol',
  'lifecycle',
  'testing',
  'pipeline',
  'server',
  'index',
];

function files(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...files(full));
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) out.push(full);
  }
  return out;
}

/** The folder of a file under src (a top-level file: its name without `.ts`). */
function layerOf(file) {
  const rel = path.relative(src, file).split(path.sep);
  return rel.length > 1 ? rel[0] : rel[0].replace(/\.ts$/, '');
}

const IMPORT = /^(?:import|export)(?:\s+type)?[^;]*?from\s+'(\.{1,2}\/[^']+)'/gms;

export function upwardImports() {
  const found = [];
  for (const file of files(src)) {
    const from = layerOf(file);
    const fromRank = LAYERS.indexOf(from);
    if (fromRank < 0) {
      throw new Error(
        `${path.relative(root, file)}: folder "${from}" is not in LAYERS of tools/scripts/check-folders.mjs; add it where it belongs in docs/core-layout.md and here.`,
      );
    }
    for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const target = path.resolve(path.dirname(file), m[1]);
      const to = layerOf(target.endsWith('.ts') ? target : `${target}.ts`);
      if (to === from) continue;
      if (LAYERS.indexOf(to) > fromRank) {
        found.push(
          `${path.relative(src, file)} -> ${path.relative(src, target).replace(/\.ts$/, '')}`,
        );
      }
    }
  }
  return [...new Set(found)].sort();
}

const found = upwardImports();
if (process.argv.includes('--print')) {
  for (const edge of found) console.log(edge);
  process.exit(0);
}
for (const edge of found) {
  console.error(
    `core folders: ${edge} imports upward (see docs/core-layout.md): move the shared piece down, or pass it in from the composition root.`,
  );
}
if (found.length > 0) process.exit(1);
console.log(`core folders: ok (${LAYERS.length} layers, no upward import)`);
