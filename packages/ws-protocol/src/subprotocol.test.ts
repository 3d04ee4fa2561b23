import { describe, expect, it } from '@jest/globals';
import { PROTOCOL_V1_SUBPROTOCOL, selectSubprotocol } from './subprotocol';

describe('selectSubprotocol', () => {
  it('selects pkg.v1 wherever it is offered when the handler speaks version 1', () => {
    expect(selectSubprotocol(new Set(['pkg.v1']), true)).toBe(PROTOCOL_V1_SUBPROTOCOL);
    expect(selectSubprotocol(new Set(['chat.v2', 'pkg.v1']), true)).toBe('pkg.v1');
  });

  it('keeps the first offered otherwise, and never selects pkg.v1 without version 1', () => {
    expect(selectSubprotocol(new Set(['chat.v2', 'chat.v1']), true)).toBe('chat.v2');
    expect(selectSubprotocol(new Set(['pkg.v1', 'chat.v2']), false)).toBe('chat.v2');
    expect(selectSubprotocol(new Set(['pkg.v1']), false)).toBe(false);
    expect(selectSubprotocol(new Set(), true)).toBe(false);
  });
});
