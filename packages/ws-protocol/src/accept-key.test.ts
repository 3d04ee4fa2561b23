import { describe, expect, it } from '@jest/globals';
import { generateAcceptKey, isValidWebSocketKey } from './accept-key';

describe('generateAcceptKey', () => {
  it("matches RFC 6455's example (section 1.3)", () => {
    expect(generateAcceptKey('dGhlIHNhbXBsZSBub25jZQ==')).toBe('s3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
  });

  it('throws a TypeError with a code for a non-string key', () => {
    expect(() => generateAcceptKey(42 as unknown as string)).toThrow(
      expect.objectContaining({ name: 'TypeError', code: 'PKG_ERR_WS_INVALID_ARGUMENT' }),
    );
  });
});

describe('isValidWebSocketKey', () => {
  it('accepts 16 bytes in base64', () => {
    expect(isValidWebSocketKey('dGhlIHNhbXBsZSBub25jZQ==')).toBe(true);
    expect(isValidWebSocketKey(Buffer.alloc(16, 0xff).toString('base64'))).toBe(true);
  });

  it('refuses anything else', () => {
    expect(isValidWebSocketKey(undefined)).toBe(false);
    expect(isValidWebSocketKey('')).toBe(false);
    expect(isValidWebSocketKey('dGhlIHNhbXBsZSBub25jZQ')).toBe(false);
    expect(isValidWebSocketKey(Buffer.alloc(15).toString('base64'))).toBe(false);
    expect(isValidWebSocketKey(Buffer.alloc(17).toString('base64'))).toBe(false);
    expect(isValidWebSocketKey('dGhlIHNhbXBsZSBub25jZQ== ')).toBe(false);
  });
});
