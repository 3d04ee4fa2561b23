import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  target: 'node20',
  sourcemap: true,
  clean: true,
  // @pkg/logger is used for its types alone: its interfaces are copied into this package's
  // declarations, so a consumer needs neither @pkg/logger nor winston installed.
  dts: { resolve: ['@pkg/logger'], compilerOptions: { composite: false, customConditions: [] } },
});
