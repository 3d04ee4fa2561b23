import { defineConfig } from 'tsup';

// The library's bench server uses decorators, so it is compiled; the peers are plain .mjs.
// The micro-benchmarks time functions inside the packages, so they are bundled from source.
export default defineConfig({
  entry: {
    pkg: 'servers/pkg.ts',
    'target-split': 'micro/target-split.ts',
    'binary-fanout': 'micro/binary-fanout.ts',
    'json-send': 'micro/json-send.ts',
  },
  format: ['esm'],
  target: 'node20',
  outDir: 'dist',
  clean: true,
});
