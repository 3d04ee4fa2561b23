import { mkdir, writeFile } from 'node:fs/promises';
import { defineConfig } from 'tsup';
import { bundlePageScript } from './src/page-bundle';

export default defineConfig({
  entry: ['src/main.ts', 'src/cluster.ts'],
  format: ['esm'],
  target: 'node20',
  sourcemap: true,
  clean: true,
  // The chat page's script, with @pkg/client bundled in, for the browser.
  async onSuccess() {
    await mkdir('dist/public', { recursive: true });
    await writeFile('dist/public/chat.js', await bundlePageScript());
  },
});
