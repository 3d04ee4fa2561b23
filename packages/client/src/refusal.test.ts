import { describe, expect, it } from '@jest/globals';
import { attemptFailure, refusalText } from './refusal';

describe('refusalText', () => {
  it("reads the message of the server's JSON error body, else its error, else the text", () => {
    expect(refusalText('{"error":"Unauthorized","code":"PKG_ERR_WS_HANDSHAKE_REFUSED","message":"Invalid key"}')).toBe('Invalid key'); // prettier-ignore
    expect(refusalText('{"error":"Service Unavailable","code":"PKG_ERR_CORE_DRAINING"}')).toBe('Service Unavailable'); // prettier-ignore
    expect(refusalText('Origin not allowed.')).toBe('Origin not allowed.');
    expect(refusalText('{not json')).toBe('{not json');
    expect(refusalText('')).toBe('');
  });

  it('gives a refused upgrade that text as its reason', () => {
    const err = attemptFailure(1006, '', { status: 503, body: '{"error":"Service Unavailable","code":"PKG_ERR_CORE_DRAINING"}' }); // prettier-ignore
    expect(err).toMatchObject({ code: 'PKG_ERR_CLIENT_HANDSHAKE_REFUSED', status: 503, reason: 'Service Unavailable' }); // prettier-ignore
  });
});
