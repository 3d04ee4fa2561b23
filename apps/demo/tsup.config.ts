import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/main.ts', 'src/cluster.ts'],
  format: ['esm'],
  target: 'node20',
  sourcemap: true,
  clean: true,
});
