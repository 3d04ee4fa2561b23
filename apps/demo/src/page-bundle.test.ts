import { describe, expect, it } from '@jest/globals';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { PAGE_SCRIPT_ENTRY, bundleDocScript, bundlePageScript } from './page-bundle';

describe('the page script bundle', () => {
  it('is one browser script with @pkg/client inside and nothing left to load', async () => {
    const script = await bundlePageScript();
    // An immediately invoked function: no import or require left for the browser to resolve.
    expect(script.startsWith('"use strict";(()=>{')).toBe(true);
    expect(script).not.toMatch(/\brequire\(|^import |\bimport\s*\{/m);
    // The client's own texts made it in (its error messages are not minified away).
    expect(script).toContain('emitWithAck(');
    expect(script).toContain('$hello');
  });

  it('bundles the document page with yjs and @pkg/client, nothing left to load', async () => {
    const script = await bundleDocScript();
    expect(script.startsWith('"use strict";(()=>{')).toBe(true);
    expect(script).not.toMatch(/\brequire\(|^import |\bimport\s*\{/m);
    expect(script).toContain('doc.update');
    expect(script).toContain('$hello');
    // lib0's decoder (under yjs) made it in, with its error text.
    expect(script).toContain('Unexpected end of array');
  });

  it('writes received text with textContent, never as HTML', () => {
    const folder = path.dirname(PAGE_SCRIPT_ENTRY);
    const files = readdirSync(folder).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
    expect(files).toContain(path.basename(PAGE_SCRIPT_ENTRY));
    for (const file of files) {
      const source = readFileSync(path.join(folder, file), 'utf8');
      expect(source).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
    }
    const lines = readFileSync(path.join(folder, 'message-list.ts'), 'utf8');
    expect(lines).toContain('textContent');
  });
});
