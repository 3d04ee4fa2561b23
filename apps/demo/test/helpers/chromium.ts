import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Debian's Chromium; playwright-core drives it instead of downloading a browser of its own. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Flags for headless Chromium on a machine with a closed network, running as root: without
 * the background-networking ones Chromium keeps dialling out and fails lookups. Playwright adds
 * `--headless` and a fresh `--user-data-dir` itself.
 */
export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

function run(command: string, args: string[]): void {
  const asRoot = typeof process.getuid !== 'function' || process.getuid() === 0;
  const [cmd, argv] = asRoot ? [command, args] : ['sudo', ['-n', command, ...args]];
  const result = spawnSync(cmd, argv, {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(
      `"${cmd} ${argv.join(' ')}" exited with ${result.status ?? result.signal}; install Debian's chromium package by hand (apt-get install -y chromium) and re-run the tests.`,
    );
  }
}

/**
 * Makes sure /usr/bin/chromium exists: when it is missing, runs `apt-get update` and
 * `apt-get install -y chromium` (as root, or through `sudo -n`). Waits up to five minutes for
 * another apt process to release its lock. Returns the executable path.
 */
export function ensureChromium(): string {
  if (existsSync(CHROMIUM_PATH)) return CHROMIUM_PATH;
  const lockWait = ['-o', 'DPkg::Lock::Timeout=300'];
  run('apt-get', [...lockWait, 'update']);
  run('apt-get', [...lockWait, 'install', '-y', '--no-install-recommends', 'chromium']);
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`apt-get installed chromium but ${CHROMIUM_PATH} is still missing.`);
  }
  return CHROMIUM_PATH;
}
