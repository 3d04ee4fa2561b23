import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { DOC_PAGE_CSP, DOC_PAGE_HTML, DOC_SCRIPT_PATH } from './doc-page';
import { CHAT_PAGE_CSP, CHAT_PAGE_HTML, PAGE_SCRIPT_PATH } from './page';

function styleHash(html = CHAT_PAGE_HTML): string {
  const match = /<style>([\s\S]*?)<\/style>/.exec(html);
  expect(match).not.toBeNull();
  return `'sha256-${createHash('sha256').update(match![1]!, 'utf8').digest('base64')}'`;
}

describe('chat page', () => {
  it('is one document with its inline style and one same-origin script', () => {
    expect(CHAT_PAGE_HTML.startsWith('<!doctype html>')).toBe(true);
    expect(CHAT_PAGE_HTML.match(/<script[^>]*>/g)).toEqual([`<script src="${PAGE_SCRIPT_PATH}">`]);
    expect(CHAT_PAGE_HTML).not.toMatch(/<link[^>]+stylesheet/);
    for (const id of [
      'name',
      'room',
      'token',
      'join',
      'messages',
      'message',
      'send',
      'client-count',
      'count-note',
      'identity',
      'reconnect',
    ]) {
      expect(CHAT_PAGE_HTML).toContain(`id="${id}"`);
    }
  });

  it('allows its own script and exactly its inline style in the CSP', () => {
    expect(CHAT_PAGE_CSP).toContain("script-src 'self'");
    expect(CHAT_PAGE_CSP).toContain(`style-src ${styleHash()}`);
    expect(CHAT_PAGE_CSP).toContain("default-src 'none'");
    expect(CHAT_PAGE_CSP).toContain("connect-src 'self'");
    expect(CHAT_PAGE_CSP).not.toContain('unsafe-inline');
  });
});

describe('document page', () => {
  it('is one document with its style, one same-origin script and a GET form to /doc', () => {
    expect(DOC_PAGE_HTML.match(/<script[^>]*>/g)).toEqual([`<script src="${DOC_SCRIPT_PATH}">`]);
    expect(DOC_PAGE_HTML).toContain('<form id="doc-form" method="get" action="/doc"');
    for (const id of ['doc-name', 'open', 'doc-state', 'doc']) {
      expect(DOC_PAGE_HTML).toContain(`id="${id}"`);
    }
  });

  it('allows its own script, its inline style and its own form in the CSP', () => {
    expect(DOC_PAGE_CSP).toContain("script-src 'self'");
    expect(DOC_PAGE_CSP).toContain(`style-src ${styleHash(DOC_PAGE_HTML)}`);
    expect(DOC_PAGE_CSP).toContain("form-action 'self'");
    expect(DOC_PAGE_CSP).toContain("connect-src 'self'");
    expect(DOC_PAGE_CSP).not.toContain('unsafe-inline');
  });
});
