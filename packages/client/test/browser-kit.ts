// What the client's browser tests share: Debian's Chromium (required, with a message that
// says how to install it) and the client bundled for a page (an IIFE named PkgClient).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

export const CHROMIUM = '/usr/bin/chromium';

/** Throws with the install command when Chromium is missing. */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium).`,
    );
  }
}

/** The client's source bundled for a browser page, exposed as `PkgClient`. */
export async function bundleClient(): Promise<string> {
  const bundle = await build({
    entryPoints: [path.join(__dirname, '..', 'src', 'index.ts')],
    bundle: true,
    format: 'iife',
    globalName: 'PkgClient',
    platform: 'browser',
    target: 'chrome110',
    write: false,
    logLevel: 'silent',
  });
  return bundle.outputFiles[0]!.text;
}
