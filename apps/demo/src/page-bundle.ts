import path from 'node:path';
import { build } from 'esbuild';

/** The chat page script's entry: TypeScript that imports @pkg/client. */
export const PAGE_SCRIPT_ENTRY = path.join(__dirname, 'browser', 'chat-page.ts');

/** The document page script's entry: TypeScript that imports @pkg/client and yjs. */
export const DOC_SCRIPT_ENTRY = path.join(__dirname, 'browser', 'doc-page.ts');

/**
 * Bundles a page script with what it imports (@pkg/client read from its sources, yjs from
 * its browser module) into one minified browser script. The build writes them to
 * `dist/public/` (see tsup.config.ts); the tests call this directly so they need no build.
 * esbuild is a development dependency: the running demo only reads the files.
 */
async function bundle(entry: string): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: ['es2020'],
    conditions: ['source'],
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const file = result.outputFiles[0];
  if (!file) throw new Error(`esbuild produced no output for ${path.basename(entry)}.`);
  return file.text;
}

/** The chat page's script (`dist/public/chat.js`). */
export function bundlePageScript(): Promise<string> {
  return bundle(PAGE_SCRIPT_ENTRY);
}

/** The document page's script (`dist/public/doc.js`). */
export function bundleDocScript(): Promise<string> {
  return bundle(DOC_SCRIPT_ENTRY);
}
