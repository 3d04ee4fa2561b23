import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  target: 'node20',
  sourcemap: true,
  clean: true,
  dts: { compilerOptions: { composite: false, customConditions: [] } },
});
