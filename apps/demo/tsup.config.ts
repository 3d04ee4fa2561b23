import { mkdir, writeFile } from 'node:fs/promises';
import { defineConfig } from 'tsup';
import { bundleDocScript, bundlePageScript } from './src/page-bundle';

export default defineConfig({
  entry: ['src/main.ts', 'src/cluster.ts'],
  format: ['esm'],
  target: 'node20',
  sourcemap: true,
  clean: true,
  // The pages' scripts, with @pkg/client (and yjs for the document) bundled in, for the browser.
  async onSuccess() {
    await mkdir('dist/public', { recursive: true });
    await writeFile('dist/public/chat.js', await bundlePageScript());
    await writeFile('dist/public/doc.js', await bundleDocScript());
  },
});
