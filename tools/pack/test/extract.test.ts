/**
 * The extractor of examples.test.ts on small documents: what it picks up, what each marker
 * does, and that a block it cannot classify is reported instead of left out. Needs no build.
 */
import { describe, expect, it } from '@jest/globals';
import { extract } from './support/examples';

const doc = (...lines: string[]): string => `${lines.join('\n')}\n`;

describe('extract', () => {
  it('compiles ts and js blocks, names them by line or by a first-line comment', () => {
    const { blocks, problems } = extract(
      'x.md',
      doc(
        '# T',
        '```ts',
        'const a = 1;',
        '```',
        '```js',
        '// server.cjs, run with node',
        "require('x');",
        '```',
      ),
    );
    expect(problems).toEqual([]);
    expect(blocks.map((b) => [b.kind, b.line, b.file])).toEqual([
      ['code', 2, 'line-2.ts'],
      ['code', 5, 'server.cjs'],
    ]);
    expect(blocks[0]?.code).toBe('const a = 1;\n');
  });

  it('leaves commands, data and output out by language, and reports an unknown language', () => {
    const { blocks, problems } = extract(
      'x.md',
      doc('```sh', 'npm i', '```', '```json', '{}', '```', '```rust', 'fn main() {}', '```'),
    );
    expect(blocks.map((b) => b.kind)).toEqual(['text', 'text', 'text']);
    expect(problems).toEqual([expect.stringContaining('x.md:7: unknown fence language "rust"')]);
  });

  it('reports a fence without a language that holds code, and accepts one that holds output', () => {
    const { problems } = extract(
      'x.md',
      doc('```', '[INFO] started', '```', '', '```', "import { a } from 'b';", '```'),
    );
    expect(problems).toEqual([expect.stringContaining('x.md:5: a fence without a language')]);
  });

  it('applies skip (with its reason), prelude, file, run and labels', () => {
    const { blocks, problems } = extract(
      'x.md',
      doc(
        '<!-- example: skip a signature listing -->',
        '',
        '```ts',
        'f(a): b;',
        '```',
        '<!-- example: prelude',
        "import type { Server } from '@pkg/core';",
        'declare const server: Server;',
        '-->',
        '<!-- example: run server -->',
        '<!-- example: chat -->',
        '```ts',
        'server.run();',
        '```',
        '   <!-- example: file shared/events.ts -->',
        '   ```ts',
        '   export interface E {}',
        '   ```',
      ),
    );
    expect(problems).toEqual([]);
    expect(blocks[0]).toMatchObject({ kind: 'skip', skipReason: 'a signature listing' });
    expect(blocks[1]).toMatchObject({
      kind: 'code',
      run: 'server',
      prelude: "import type { Server } from '@pkg/core';\ndeclare const server: Server;\n",
    });
    expect(blocks[2]).toMatchObject({ file: 'shared/events.ts', code: 'export interface E {}\n' });
  });

  it('reports a skip without a reason, an unknown marker, a stray marker and a duplicate name', () => {
    const { problems } = extract(
      'x.md',
      doc(
        '<!-- example: skip -->',
        '```ts',
        'a;',
        '```',
        '<!-- example: compile please -->',
        '```ts',
        'b;',
        '```',
        '<!-- example: run -->',
        'Some prose.',
        '```ts',
        '// a.ts',
        '```',
        '```ts',
        '// a.ts',
        '```',
      ),
    );
    expect(problems).toEqual([
      expect.stringContaining('x.md:2: "example: skip" needs a reason'),
      expect.stringContaining('x.md:6: unknown example marker "compile"'),
      expect.stringContaining('x.md:9: an example marker not followed by a code block'),
      expect.stringContaining('x.md:14: a second block named a.ts'),
    ]);
  });
});
