import path from 'node:path';
import { build } from 'esbuild';

/** The page script's entry: TypeScript that imports @pkg/client. */
export const PAGE_SCRIPT_ENTRY = path.join(__dirname, 'browser', 'chat-page.ts');

/**
 * Bundles the page script and @pkg/client (read from its sources) into one minified
 * browser script. The build writes it to `dist/public/chat.js` (see tsup.config.ts); the
 * tests call this directly so they need no build. esbuild is a development dependency:
 * the running demo only reads the file.
 */
export async function bundlePageScript(): Promise<string> {
  const result = await build({
    entryPoints: [PAGE_SCRIPT_ENTRY],
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
  if (!file) throw new Error('esbuild produced no output for the page script.');
  return file.text;
}
