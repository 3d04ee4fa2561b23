// Colours with the default console stream, process.stdout, in a real process: plain when
// stdout is a pipe, coloured on a real terminal (a pseudo-terminal from util-linux
// `script`), plain on that terminal when NO_COLOR is set. The other console tests use a
// stream double whose isTTY is set by hand; this one checks that a real terminal is seen
// as one. It runs the built package: `pnpm build` (or `pnpm exec tsup` here) first.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { logLevelColors } from '../src/colors';

const dist = join(__dirname, '..', 'dist', 'index.cjs');
const RESET = '\x1b[0m';

// util-linux `script` (Linux only; BSD `script` takes other arguments) gives the child a
// pseudo-terminal. Where it is missing the terminal cases are reported as skipped.
const hasScript =
  process.platform === 'linux' &&
  spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout?.includes('util-linux') === true;

let dir: string;
let program: string;

beforeAll(() => {
  if (!existsSync(dist))
    throw new Error(`${dist} is missing: build @pkg/logger first (pnpm build)`);
  dir = mkdtempSync(join(tmpdir(), 'pkg-logger-tty-'));
  program = join(dir, 'log.cjs');
  writeFileSync(
    program,
    `const { Logger } = require(${JSON.stringify(dist)});
     const logger = new Logger('debug', true, false);
     logger.info('hello {who}', { who: 'terminal' });
     logger.error('failed');
     logger.close().then(() => process.stderr.write(String(logger.getUseColors())));`,
  );
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The environment of the child: this one without NO_COLOR, plus `extra`. */
function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const copy: NodeJS.ProcessEnv = { ...process.env, ...extra };
  if (!('NO_COLOR' in extra)) delete copy['NO_COLOR'];
  return copy;
}

/** Runs the program with stdout on a pseudo-terminal; returns what the terminal showed. */
function onTerminal(extra: Record<string, string> = {}): string {
  const command = `'${process.execPath}' '${program}' 2>/dev/null`;
  const result = spawnSync('script', ['-qec', command, '/dev/null'], {
    encoding: 'utf8',
    env: env(extra),
    input: '',
    timeout: 15000,
  });
  expect(result.status).toBe(0);
  return result.stdout.replace(/\r\n/g, '\n');
}

const terminalIt = hasScript ? it : it.skip;

describe('Logger on process.stdout', () => {
  it('writes plain lines when stdout is a pipe', () => {
    const result = spawnSync(process.execPath, [program], { encoding: 'utf8', env: env() });
    expect(result.status).toBe(0);
    expect(result.stderr).toBe('false');
    expect(result.stdout).not.toContain('\x1b[');
    expect(result.stdout).toMatch(
      /^\[[^\]]+\] \[INFO\] hello terminal\n\[[^\]]+\] \[ERROR\] failed\n$/,
    );
  });

  terminalIt('colours each line by level on a terminal', () => {
    const out = onTerminal();
    expect(out).toMatch(
      new RegExp(
        `^${literal(logLevelColors.info)}\\[[^\\]]+\\] \\[INFO\\] hello terminal${literal(RESET)}\n` +
          `${literal(logLevelColors.error)}\\[[^\\]]+\\] \\[ERROR\\] failed${literal(RESET)}\n$`,
      ),
    );
  });

  terminalIt('writes plain lines on a terminal when NO_COLOR is set', () => {
    const out = onTerminal({ NO_COLOR: '1' });
    expect(out).not.toContain('\x1b[');
    expect(out).toContain('[INFO] hello terminal\n');
  });
});

function literal(text: string): string {
  return text.replace(/[[\]\\^$.|?*+(){}]/g, '\\$&');
}
