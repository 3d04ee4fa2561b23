import { defineConfig } from 'tsup';

// The library's bench server uses decorators, so it is compiled; the peers are plain .mjs.
export default defineConfig({
  entry: { pkg: 'servers/pkg.ts' },
  format: ['esm'],
  target: 'node20',
  outDir: 'dist',
  clean: true,
});
