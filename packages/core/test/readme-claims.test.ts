// What the READMEs state about the code, compared with the code: each package's table of
// runtime dependencies with its package.json, and the core README's error tables with
// `coreErrorCodes` and `CoreEventErrorCode` (src/errors.ts). The README is the page npm
// shows; a new dependency or error code makes this test fail until the README says so.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { CoreEventErrorCode, coreErrorCodes } from '../src/index';

const packagesDir = path.resolve(__dirname, '..', '..');
const coreReadme = readFileSync(path.join(packagesDir, 'core', 'README.md'), 'utf8');

interface Manifest {
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

/** The rows of every Markdown table in `text`, as trimmed cells. */
function tableRows(text: string): string[][] {
  return text
    .split('\n')
    .filter((line) => /^\|.*\|$/.test(line.trim()))
    .map((line) =>
      line
        .trim()
        .slice(1, -1)
        .split('|')
        .map((c) => c.trim()),
    );
}

/** The rows of the table whose header starts with "runtime dependency". */
function dependencyTable(readme: string): string[][] | undefined {
  const lines = readme.split('\n');
  const start = lines.findIndex((l) => /^\|\s*runtime dependency\s*\|/.test(l));
  if (start === -1) return undefined;
  const end = lines.findIndex((l, i) => i > start && !l.startsWith('|'));
  return tableRows(lines.slice(start + 2, end === -1 ? undefined : end).join('\n'));
}

/** How the README writes a range: `workspace:^` is released as `^` of the same version. */
function statedRange(range: string): string {
  const workspace = /^workspace:([~^*])$/.exec(range);
  if (workspace === null) return `\`${range}\``;
  return workspace[1] === '*' ? 'same release (exact)' : `same release (\`${workspace[1]}\`)`;
}

function expectedRows(manifest: Manifest): string[][] {
  const rows: string[][] = [];
  for (const [name, range] of Object.entries(manifest.dependencies ?? {})) {
    rows.push([`\`${name}\``, statedRange(range), 'dependency']);
  }
  for (const [name, range] of Object.entries(manifest.peerDependencies ?? {})) {
    const optional = manifest.peerDependenciesMeta?.[name]?.optional === true;
    rows.push([`\`${name}\``, statedRange(range), optional ? 'optional peer' : 'peer']);
  }
  if (rows.length === 0) return [['none', '', '']];
  return rows.sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? ''));
}

const packages = readdirSync(packagesDir)
  .filter((p) => existsSync(path.join(packagesDir, p, 'README.md')))
  .sort();

describe('each package README states its runtime dependencies as package.json does', () => {
  it('covers every package', () => {
    expect(packages).toEqual(expect.arrayContaining(['core', 'http', 'ws-protocol']));
  });

  it.each(packages)('%s', (pkg) => {
    const readme = readFileSync(path.join(packagesDir, pkg, 'README.md'), 'utf8');
    const manifest = JSON.parse(
      readFileSync(path.join(packagesDir, pkg, 'package.json'), 'utf8'),
    ) as Manifest;
    const table = dependencyTable(readme);
    if (table === undefined) {
      throw new Error(
        `packages/${pkg}/README.md has no "| runtime dependency | version | kind |" table`,
      );
    }
    const stated = [...table].sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? ''));
    expect({ pkg, rows: stated }).toEqual({ pkg, rows: expectedRows(manifest) });
  });
});

describe('the core README', () => {
  const errorSection = coreReadme.slice(
    coreReadme.indexOf('\n## Error codes'),
    coreReadme.indexOf('\n## ', coreReadme.indexOf('\n## Error codes') + 1),
  );

  it('lists every PKG_ERR_CORE_* code of src/errors.ts once, with its status and close code', () => {
    const rows = tableRows(errorSection).filter((r) => /^`PKG_ERR_CORE_/.test(r[0] ?? ''));
    const stated = rows.map(([code = '', status = '']) => [code.replace(/`/g, ''), status]);
    const expected = Object.entries(coreErrorCodes).map(([code, info]) => {
      const i = info as { status?: number; closeCode?: number };
      return [code, [i.status, i.closeCode].filter((n) => n !== undefined).join(' / ')];
    });
    expect(stated.sort()).toEqual(expected.sort());
  });

  it('names every code of the error event (CoreEventErrorCode)', () => {
    const paragraph = errorSection.slice(errorSection.indexOf('`CoreEventErrorCode`'));
    const missing = Object.values(CoreEventErrorCode).filter(
      (code) => !paragraph.includes(`\`${code}\``),
    );
    expect(missing).toEqual([]);
  });

  it('shows both APIs, schemas and validation_failed', () => {
    for (const needle of [
      '@SocketOn(',
      '@HttpRoute(',
      'server\n  .on(',
      '.route(',
      '{ schema:',
      'validation_failed',
      'PKG_ERR_CORE_VALIDATION_FAILED',
    ]) {
      expect({ needle, found: coreReadme.includes(needle) }).toEqual({ needle, found: true });
    }
  });
});
