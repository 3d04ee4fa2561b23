// The young-generation size instructions.mjs gives every counted server
// (lib/young-generation.mjs): the options must really fix V8's new space on this Node, so
// that the number of scavenges follows the bytes allocated and not valgrind's timing.
// lib/young-generation.mjs is an ES module: it runs in a child Node process.
import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const lib = pathToFileURL(path.join(__dirname, '..', 'lib', 'young-generation.mjs')).href;

function optionsFor(setting: string | undefined): { options?: string[]; error?: string } {
  const result = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { readSemiSpace, semiSpaceOptions } from ${JSON.stringify(lib)};
       try { process.stdout.write(JSON.stringify({ options: semiSpaceOptions(readSemiSpace(${
         setting === undefined ? 'undefined' : JSON.stringify(setting)
       })) })); }
       catch (err) { process.stdout.write(JSON.stringify({ error: err.message })); }`,
    ],
    { encoding: 'utf8' },
  );
  if (result.status !== 0) throw new Error(result.stderr);
  return JSON.parse(result.stdout) as { options?: string[]; error?: string };
}

/**
 * The new space's size (both semi-spaces, bytes) and the number of scavenges of a process
 * started with `options` (counted from `--trace-gc`) that allocates about 170 MB of
 * short-lived objects: with V8's own sizing the new space starts small and grows, so the
 * size and the count say whether the options took hold.
 */
function churn(options: string[]): { newSpace: number; scavenges: number } {
  const script = `
    const v8 = require('node:v8');
    let keep;
    for (let i = 0; i < 200_000; i++) keep = new Array(100).fill(i);
    const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    process.stdout.write('NEW_SPACE ' + space.space_size + ' ' + keep.length + '\\n');
  `;
  const result = spawnSync(process.execPath, [...options, '--trace-gc', '-e', script], {
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(result.stderr);
  const size = /^NEW_SPACE (\d+) /m.exec(result.stdout);
  if (size === null) throw new Error(`no new-space size in: ${result.stdout}`);
  return {
    newSpace: Number(size[1]),
    scavenges: result.stdout.split('\n').filter((line) => line.includes(' Scavenge ')).length,
  };
}

describe('young generation of counted servers', () => {
  test('defaults to 4 MB per semi-space, and a setting of 0 leaves V8 its own sizing', () => {
    expect(optionsFor(undefined).options).toEqual([
      '--min-semi-space-size=4',
      '--max-semi-space-size=4',
    ]);
    expect(optionsFor(' 16 ').options).toEqual([
      '--min-semi-space-size=16',
      '--max-semi-space-size=16',
    ]);
    expect(optionsFor('0').options).toEqual([]);
  });

  test('refuses a setting that is not a whole number of megabytes, saying what to set', () => {
    for (const bad of ['', 'four', '-1', '2.5', '4MB', '99999']) {
      expect(optionsFor(bad).error).toMatch(
        /^INSTR_SEMI_SPACE must be a whole number of megabytes per semi-space, such as 4, or 0/,
      );
    }
  });

  test('the options fix the new space: the same size and the scavenges the bytes call for', () => {
    const pinned = churn(optionsFor('16').options ?? []);
    // Two semi-spaces of 16 MB; about 170 MB of garbage fills one about ten times.
    expect(pinned.newSpace).toBe(32 * 1024 * 1024);
    expect(pinned.scavenges).toBeGreaterThanOrEqual(6);
    expect(pinned.scavenges).toBeLessThanOrEqual(20);
    // V8's own sizing starts at 1 MB per semi-space: the same garbage takes many more.
    const own = churn(optionsFor('0').options ?? []);
    expect(own.scavenges).toBeGreaterThan(pinned.scavenges * 2);
  });
});
