#!/usr/bin/env node
// Bundles a micro-benchmark of this directory against the packages of another tree (say
// main's, exported with `git archive main packages | tar -x -C /tmp/main`), so that one
// benchmark file measures two builds side by side:
//
//   node tools/bench/micro/build-against.mjs /tmp/main json-send main
//   node tools/bench/micro/build-against.mjs . json-send this
//   node tools/bench/dist/json-send.main.js && node tools/bench/dist/json-send.this.js
//
// (both bundles made the same way: `<name>.<label>.js`, label `against` by default).
//
// Every `packages/<name>/src` import of the benchmark and every `@pkg/<name>` import of the
// packages resolves to `<tree>/packages/<name>/src/index.ts`; third-party modules are
// bundled from this workspace's store (the same versions for both builds).
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const [tree, name, label = 'against'] = process.argv.slice(2);
if (!tree || !name) {
  console.error('usage: node tools/bench/micro/build-against.mjs <tree> <micro name> [label]');
  process.exit(2);
}
const requireFromTsup = createRequire(createRequire(import.meta.url).resolve('tsup'));
const esbuild = requireFromTsup('esbuild');
const treePackages = path.resolve(tree, 'packages');

const againstTree = {
  name: 'against-tree',
  setup(build) {
    build.onResolve({ filter: /^@pkg\/[\w-]+$/ }, (args) => ({
      path: path.join(treePackages, args.path.slice('@pkg/'.length), 'src/index.ts'),
    }));
    build.onResolve({ filter: /\/packages\/[\w-]+\/src\/index$/ }, (args) => {
      if (!args.importer.startsWith(here)) return undefined;
      const pkg = /\/packages\/([\w-]+)\/src\/index$/.exec(args.path)[1];
      return { path: path.join(treePackages, pkg, 'src/index.ts') };
    });
  },
};

await esbuild.build({
  entryPoints: [path.join(here, `${name}.ts`)],
  outfile: path.resolve(here, '../dist', `${name}.${label}.js`),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  plugins: [againstTree],
  nodePaths: [path.join(root, 'node_modules/.pnpm/node_modules')],
  external: ['bufferutil', 'utf-8-validate', 'prom-client', '@opentelemetry/*'],
  banner: {
    js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
  },
  logLevel: 'warning',
});
console.log(`built tools/bench/dist/${name}.${label}.js against ${treePackages}`);
