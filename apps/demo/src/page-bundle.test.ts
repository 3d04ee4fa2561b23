import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { PAGE_SCRIPT_ENTRY, bundlePageScript } from './page-bundle';

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

  it('writes received text with textContent, never as HTML', () => {
    const source = readFileSync(PAGE_SCRIPT_ENTRY, 'utf8');
    expect(source).not.toMatch(/innerHTML|insertAdjacentHTML|document\.write/);
    expect(source).toContain('textContent');
  });
});
