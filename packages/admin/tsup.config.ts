import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  target: 'node20',
  sourcemap: true,
  clean: true,
  // The page's files are read from ../page beside dist/: `__dirname` in both formats.
  shims: true,
  dts: { compilerOptions: { composite: false, customConditions: [] } },
});
