import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  // Read by browsers as well as Node 20: nothing Node-only in the output.
  platform: 'neutral',
  target: ['node20', 'es2022'],
  sourcemap: true,
  clean: true,
  dts: { compilerOptions: { composite: false, customConditions: [] } },
});
