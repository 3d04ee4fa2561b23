import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { CHAT_PAGE_CSP, CHAT_PAGE_HTML } from './page';

function hashOf(tag: 'script' | 'style'): string {
  const match = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(CHAT_PAGE_HTML);
  expect(match).not.toBeNull();
  return `'sha256-${createHash('sha256').update(match![1]!, 'utf8').digest('base64')}'`;
}

describe('chat page', () => {
  it('is one self-contained document', () => {
    expect(CHAT_PAGE_HTML.startsWith('<!doctype html>')).toBe(true);
    expect(CHAT_PAGE_HTML).not.toMatch(/<script[^>]+src=/);
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
    ]) {
      expect(CHAT_PAGE_HTML).toContain(`id="${id}"`);
    }
  });

  it('allows exactly its inline script and style in the CSP', () => {
    expect(CHAT_PAGE_CSP).toContain(`script-src ${hashOf('script')}`);
    expect(CHAT_PAGE_CSP).toContain(`style-src ${hashOf('style')}`);
    expect(CHAT_PAGE_CSP).toContain("default-src 'none'");
    expect(CHAT_PAGE_CSP).toContain("connect-src 'self'");
  });

  it('writes received text with textContent, never as HTML', () => {
    expect(CHAT_PAGE_HTML).not.toMatch(/innerHTML|insertAdjacentHTML|document\.write/);
    expect(CHAT_PAGE_HTML).toContain('textContent');
  });
});
