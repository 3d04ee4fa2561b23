// The package runs in browsers: no runtime dependency, no Node built-in, no Node global.
import { describe, expect, it } from '@jest/globals';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

const src = path.resolve(__dirname, '../src');
const sources = readdirSync(src).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));

describe('@pkg/wire is browser-safe', () => {
  it('has no dependencies of any kind in its manifest', () => {
    const manifest = JSON.parse(readFileSync(path.resolve(__dirname, '../package.json'), 'utf8'));
    expect(manifest.dependencies ?? {}).toEqual({});
    expect(manifest.peerDependencies ?? {}).toEqual({});
  });

  it('imports only its own modules and uses no Node global', () => {
    expect(sources.length).toBeGreaterThan(3);
    for (const file of sources) {
      const text = readFileSync(path.join(src, file), 'utf8');
      const specs = [...text.matchAll(/from\s+'([^']+)'/g)].map((m) => m[1]);
      expect({ file, foreign: specs.filter((s) => !s?.startsWith('./')) }).toEqual({
        file,
        foreign: [],
      });
      expect({ file, node: /\b(Buffer\.|process\.|require\()/.test(text) }).toEqual({
        file,
        node: false,
      });
    }
  });
});
